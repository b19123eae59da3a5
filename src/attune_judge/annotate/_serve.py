"""``attune-judge annotate``: set up (or reopen) a labels database and serve the page."""

from __future__ import annotations

import ipaddress
import socket
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attune_judge._bootstrap import DEFAULT_B
from attune_judge.annotate._export import open_store, store_rubric
from attune_judge.annotate._items import check_task, load_items
from attune_judge.annotate._store import LabelStore
from attune_judge.errors import UserError
from attune_judge.rubrics import load_rubric

__all__ = ["is_loopback", "prepare", "serve"]


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_address(host: str, port: int) -> None:
    """One clear error when ``host:port`` cannot be listened on (in use, not this machine's)."""
    if not 0 < port < 65536:
        raise UserError(f"--port must be 1 to 65535, not {port}")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        with socket.socket(infos[0][0], socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(infos[0][4])
    except OSError as exc:
        raise UserError(f"{host}:{port}: cannot listen there ({exc.strerror or exc})") from None


def prepare(
    db: Path,
    items: Path | None,
    *,
    task: str | None,
    rubric: str | None,
    k: int,
    annotators: Sequence[str],
) -> tuple[LabelStore, dict[str, str]]:
    """Open ``db`` (made from ``items`` on first use, its new items added later), add the
    annotators; returns the store and every annotator's token."""
    if items is None:
        store = open_store(db)
        store_rubric(store)
    else:
        if task is None:
            raise UserError("--task is required with ITEMS (ratings, pairwise or behaviours)")
        found, name = load_items(items, rubric)
        rub = load_rubric(name)
        check_task(task, rub)
        store = open_store(db, must_exist=False)
        store.set_up(task, rub.model_dump(mode="json"), k, found)
    for who in annotators:
        store.add_annotator(who)
    tokens = store.annotators()
    if not tokens:
        store.close()
        raise UserError("name at least one annotator (--annotator NAME, repeatable)")
    return store, tokens


HEADER_TIMEOUT_S = 5.0
"""Seconds a connection has, from when it opens (or its last answer), to send a whole request
head; a client that stalls is closed."""


def _timed_protocol() -> type[Any]:
    """uvicorn's h11 protocol with a deadline on each request head (uvicorn has none: a client
    that connects and sends nothing, or half a header, kept its socket forever)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class TimedH11Protocol(H11Protocol):
        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm(self.loop.time() + HEADER_TIMEOUT_S)

        def _arm(self, deadline: float) -> None:
            self.head_deadline = deadline
            self.timeout_keep_alive_task = self.loop.call_at(
                deadline, self.timeout_keep_alive_handler
            )

        def data_received(self, data: bytes) -> None:
            super().data_received(data)  # cancels the timer
            if self.cycle is None and not self.transport.is_closing():  # head not complete
                self._unset_keepalive_if_required()
                self._arm(self.head_deadline)

    return TimedH11Protocol


def serve(
    store: LabelStore,
    tokens: dict[str, str],
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    judge: Path | None = None,
    B: int = DEFAULT_B,
) -> None:
    """Serve the labelling page until interrupted; prints each annotator's link."""
    import uvicorn

    from attune_judge.annotate._agreement import agreement
    from attune_judge.annotate._app import make_app

    task, rubric = store_rubric(store)
    if judge is not None and not Path(judge).exists():
        raise UserError(f"{judge}: no such run directory (--judge)")
    _check_address(host, port)
    cache: dict[str, Any] = {}
    lock = threading.Lock()

    def live() -> dict[str, Any]:
        key = store.progress()["labels"]
        with lock:
            if cache.get("key") != key:
                cache.update(key=key, value=agreement(store, task, rubric, judge, B=B))
            return dict(cache["value"])

    shown = f"[{host}]" if ":" in host else host
    # a loopback server answers only requests addressed to it (no DNS rebinding): its Host
    # header must name the bound address; --host with another address opens it
    hosts = None
    if is_loopback(host):
        hosts = {f"{h}:{port}" for h in ("127.0.0.1", "localhost", "[::1]", shown)}
    app = make_app(store, task, rubric, live, hosts=hosts)  # type: ignore[arg-type]
    p = store.progress()
    print(
        f"attune-judge annotate: {task} on {p['items']} items, k = {p['k']}, "
        f"{p['labels']} labels so far ({store.path})"
    )
    if not is_loopback(host):
        print(
            f"bound to {host}: reachable from other machines; every request needs a token, "
            "and the traffic is plain HTTP (use a trusted network or a TLS proxy)"
        )
    for name, token in tokens.items():
        print(f"  {name}: http://{shown}:{port}/?token={token}")
    sys.stdout.flush()
    try:
        uvicorn.run(
            app,
            host=host,
            port=port,
            log_level="warning",
            access_log=False,
            # no connection limit: stalled sockets would fill it and every annotator would get
            # 503 before any token check; each connection has HEADER_TIMEOUT_S to send a request
            http=_timed_protocol(),
            timeout_keep_alive=5,
        )
    finally:
        store.close()
