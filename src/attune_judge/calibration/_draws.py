"""Cluster weights of the bootstrap: the ``(B × C)`` matrix of how often each cluster is drawn.

A multinomial row is C draws with replacement, counted. The draws are the ones
``numpy.random.default_rng(seed).integers(0, C, size, dtype=np.int32)`` makes (Lemire's
multiply-and-reject on 32-bit halves of PCG64 outputs), but computed on whole blocks of raw
generator outputs with array arithmetic instead of one C call per draw: the same numbers, about
four times faster (``tests/calibration/test_bootstrap_draws.py`` compares them with numpy's
own, rejections and an odd leftover half-output included).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
Scheme = str

__all__ = ["bootstrap_weights", "iter_bootstrap_weights"]


def bootstrap_weights(
    n_clusters: int, B: int = 10_000, seed: int = 0, scheme: Scheme = "multinomial"
) -> FloatArray:
    """Draw the ``(B × C)`` cluster-weights matrix.

    Parameters
    ----------
    n_clusters
        Number of clusters ``C``.
    B
        Number of replicates.
    seed
        Seed of ``numpy.random.default_rng``; the same seed gives the same matrix.
    scheme
        ``multinomial``: each row is Multinomial(C, 1/C) (C clusters drawn with replacement);
        ``poisson``: independent Poisson(1) weights (for streaming data).

    Returns
    -------
    numpy.ndarray
        Float matrix of shape ``(B, C)``.
    """
    parts = list(iter_bootstrap_weights(n_clusters, B, seed, scheme))
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def iter_bootstrap_weights(
    n_clusters: int,
    B: int = 10_000,
    seed: int = 0,
    scheme: Scheme = "multinomial",
    chunk_cells: int = 4_000_000,
) -> Iterator[FloatArray]:
    """The rows of ``bootstrap_weights`` in blocks of about ``chunk_cells`` cells.

    One generator draws the blocks in sequence, so for a given seed the rows are the same
    whatever the memory budget; use it when ``B × C`` is too large to hold at once.
    """
    if n_clusters < 1 or B < 1:
        raise ValueError("bootstrap_weights needs n_clusters >= 1 and B >= 1")
    if scheme not in ("multinomial", "poisson"):
        raise ValueError(f"unknown weight scheme {scheme!r} (multinomial or poisson)")
    if n_clusters >= 1 << 32:
        raise ValueError("bootstrap_weights supports fewer than 2**32 clusters")
    rng = np.random.default_rng(seed)
    rows = max(1, chunk_cells // n_clusters)
    for start in range(0, B, rows):
        b = min(rows, B - start)
        if scheme == "poisson":
            yield rng.poisson(1.0, size=(b, n_clusters)).astype(np.float64)
        else:  # C draws with replacement per row == Multinomial(C, 1/C) counts
            yield _multinomial_counts(rng, b, n_clusters)


_COUNT_BLOCK_CELLS = 1 << 16
"""Draws counted per block: the block's draws and counts stay in the CPU cache."""


def _multinomial_counts(rng: np.random.Generator, b: int, n_clusters: int) -> FloatArray:
    """``b`` rows of Multinomial(C, 1/C) counts: C draws with replacement per row, counted."""
    out = np.empty((b, n_clusters), dtype=np.float64)
    if n_clusters == 1:  # numpy draws nothing for a range of one value
        out.fill(1.0)
        return out
    block = max(1, _COUNT_BLOCK_CELLS // n_clusters)
    offsets = (np.arange(block, dtype=np.int64) * n_clusters)[:, None]
    stream = _Uint32Stream(rng)
    for start in range(0, b, block):
        k = min(block, b - start)
        idx = stream.bounded(n_clusters, k * n_clusters).reshape(k, n_clusters)
        idx += offsets[:k]  # row r's clusters become cells r·C .. r·C + C − 1
        out[start : start + k] = np.bincount(idx.ravel(), minlength=k * n_clusters).reshape(
            k, n_clusters
        )
    stream.close()
    return out


class _Uint32Stream:
    """PCG64's 32-bit outputs as numpy's ``next_uint32`` hands them out, taken in blocks.

    ``next_uint32`` returns the low half of a fresh 64-bit output and keeps the high half for
    the next call (``has_uint32``/``uinteger`` in the generator's state); the stream reads raw
    outputs with ``random_raw`` and writes that buffered half back on :meth:`close`.
    """

    def __init__(self, rng: np.random.Generator) -> None:
        self._bg = rng.bit_generator
        state = self._bg.state
        if state.get("bit_generator") != "PCG64":
            raise ValueError("the vectorised draws follow numpy's PCG64 generator")
        self._carry: int | None = int(state["uinteger"]) if state["has_uint32"] else None
        self._uinteger = int(state["uinteger"])

    def bounded(self, n_values: int, n: int) -> NDArray[np.int64]:
        """Lemire's method as numpy's ``buffered_bounded_lemire_uint32``: ``m = u·C``, keep
        ``m >> 32`` unless ``m mod 2**32 < 2**32 mod C`` (then the next u is taken)."""
        threshold = (1 << 32) % n_values
        scale = np.uint64(n_values)
        parts: list[NDArray[np.uint64]] = []
        while n > 0:
            head = 0 if self._carry is None else 1
            raw = self._bg.random_raw((n - head + 1) // 2)
            # low half first, as next_uint32 takes them (little-endian view on any platform)
            u = np.asarray(raw, dtype="<u8").view("<u4")
            if head:
                u = np.concatenate([np.array([self._carry], dtype="<u4"), u])
            if len(raw):
                self._uinteger = int(raw[-1] >> np.uint64(32))
            self._carry = int(u[n]) if len(u) > n else None
            u = u[:n]
            if threshold:
                keep = u * np.uint32(n_values) >= threshold  # the product's low 32 bits
                if not keep.all():
                    u = u[keep]
            v = u.astype(np.uint64)
            v *= scale
            v >>= np.uint64(32)
            parts.append(v)
            n -= len(v)
        out = parts[0] if len(parts) == 1 else np.concatenate(parts or [np.empty(0, np.uint64)])
        return out.view(np.int64)

    def close(self) -> None:
        """Write the buffered half-output back into the generator's state."""
        state = dict(self._bg.state)
        state["has_uint32"] = 0 if self._carry is None else 1
        state["uinteger"] = self._uinteger if self._carry is None else self._carry
        self._bg.state = state
