"""Model strings → configured ``dspy.LM`` objects, with early, named configuration errors."""

from __future__ import annotations

import os
import socket
import threading
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from attune_judge._secrets import redact_url, register_url
from attune_judge.errors import UserError
from attune_judge.lm._cache import SerialDiskCache, redact_request_cache
from attune_judge.lm._calls import memoize_model_metadata, send_json_object_natively
from attune_judge.lm._handle import register_model, server_of
from attune_judge.lm._local import local_lm
from attune_judge.lm._prefix import check_provider_prefix
from attune_judge.lm._server import ServerAddress, server_engine
from attune_judge.lm._settings import (
    LMSettings,
    ResponseFormat,
    env_setting,
    has_model_settings,
    parse_model_spec,
)

if TYPE_CHECKING:
    import dspy

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "KEY_ENV_VARS",
    "check_api_base",
    "check_model",
    "configure_cache",
    "default_response_format",
    "resolve_lm",
]

KEY_ENV_VARS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "groq": ("GROQ_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY"),
    "openrouter": ("OPENROUTER_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "cohere": ("COHERE_API_KEY",),
    "fireworks_ai": ("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY"),
    "perplexity": ("PERPLEXITYAI_API_KEY",),
    "azure": ("AZURE_API_KEY",),
}
"""Provider prefix → environment variables that may hold its key (first one is named in errors)."""

_NO_KEY_PLACEHOLDER = "no-key-needed"


def cache_enabled_from_env() -> bool:
    """``ATTUNE_CACHE`` as a bool (unset or empty: on; ``0``/``false``/``no``/``off``: off)."""
    raw = os.environ.get("ATTUNE_CACHE", "").strip().lower()
    if raw in ("", "1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise UserError(f"ATTUNE_CACHE: expected 0 or 1 (or true/false), got {raw!r}")


_APPLIED: list[Any] = [None, None]
"""The request cache :func:`configure_cache` last set: its ``(directory, enabled)`` and the
``dspy.cache`` object it made (a repeat with the same settings keeps that object)."""
_APPLIED_LOCK = threading.Lock()


def configure_cache(directory: str | Path | None, *, enabled: bool | None = None) -> None:
    """Point DSPy's request cache (memory + disk) at ``directory``.

    :func:`resolve_lm` calls it for every model it builds (with its ``cache_dir``): the one
    place attune-judge configures the cache, which is the process's, not one model's, and so
    the one place it reads the cache's variables: ``directory=None`` is ``ATTUNE_CACHE_DIR``
    (unset: DSPy's current location); ``enabled=False`` turns both caches off;
    ``enabled=None`` (default) reads ``ATTUNE_CACHE`` (``0`` turns them off). A call with the
    settings of the previous one keeps DSPy's cache object while nobody replaced it (no
    reopening of its disk shards). The cache stores answers redacted
    (:mod:`attune_judge.lm._cache`).
    """
    import dspy

    if enabled is None:
        enabled = cache_enabled_from_env()
    directory = directory if directory is not None else env_setting("cache_dir")
    path = None if directory is None else Path(directory).expanduser()
    key = (None if path is None else str(path), enabled)
    with _APPLIED_LOCK:
        if _APPLIED[0] == key and dspy.cache is _APPLIED[1]:
            return
        if not enabled:
            dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
        elif path is not None:
            path.mkdir(parents=True, exist_ok=True)
            _open_in_background(path)
        elif _APPLIED[0] is not None and not _APPLIED[0][1]:  # off before: on, DSPy's place
            _open_in_background(None)
        if enabled:
            redact_request_cache()  # no credential is ever stored (see lm/_cache.py)
        _APPLIED[:] = [key, dspy.cache]


def start_request_cache(directory: str | Path | None) -> None:
    """:func:`configure_cache` for ``directory`` now, at the start of a command that will
    judge, so that the disk shards open while the command imports and reads its inputs (the
    judges' own call with the same settings keeps that cache). DSPy and diskcache are
    imported here, in the calling thread, so the cache's thread imports nothing. A problem
    (a bad ``ATTUNE_CACHE``, a directory that cannot be made) is left for the judges to
    report where they always did."""
    import diskcache  # noqa: F401  (imported here: the cache's thread then imports nothing)
    import dspy  # noqa: F401

    try:
        configure_cache(directory)
    except (UserError, OSError):
        return


def _open_in_background(path: Path | None) -> None:
    """``dspy.cache`` becomes DSPy's memory + disk cache at ``path`` (``None``: DSPy's default
    directory), built as ``dspy.configure_cache`` builds it, redacting, its disk shards opened
    by the :class:`~attune_judge.lm._cache.SerialDiskCache` thread that then does its disk
    work."""
    import dspy
    from dspy.clients import DISK_CACHE_DIR, DISK_CACHE_LIMIT, Cache

    directory = str(path) if path is not None else DISK_CACHE_DIR
    cache = Cache(False, True, directory, DISK_CACHE_LIMIT)  # the memory cache now
    cache.enable_disk_cache = True
    cache.disk_cache = SerialDiskCache(
        lambda: Cache(True, False, directory, DISK_CACHE_LIMIT).disk_cache  # DSPy's FanoutCache
    )
    redact_request_cache(cache)
    with dspy._cache_lock:  # the lock dspy.configure_cache holds to install its cache
        dspy.cache = cache


def check_api_base(api_base: str, *, timeout_s: float = 3.0) -> None:
    """Open (and close) a TCP connection to ``api_base``; a failure names the address.

    Raises
    ------
    UserError
        Malformed URL, or nothing answers at the host and port.
    """
    parsed = urlparse(api_base)
    shown = redact_url(api_base)  # an error message never shows a credential
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise UserError(f"api_base {shown!r} is not an http(s) URL like http://127.0.0.1:8000/v1")
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        with socket.create_connection((parsed.hostname, port), timeout=timeout_s):
            pass
    except OSError as exc:
        raise UserError(
            f"cannot reach the model server at {shown} ({parsed.hostname}:{port}): {exc}; "
            "is the server running and is the address right?"
        ) from None


def _check_key(model: str, api_base: str | None) -> str | None:
    """Return an api_key to pass explicitly (a placeholder for keyless local servers)."""
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    variables = KEY_ENV_VARS.get(provider)
    if variables is None:
        return None
    if any(os.environ.get(var) for var in variables):
        return None
    if api_base is not None and provider == "openai":
        return _NO_KEY_PLACEHOLDER
    raise UserError(
        f"model {model!r} needs an API key: set the environment variable {variables[0]}"
        + (f" (or {', '.join(variables[1:])})" if len(variables) > 1 else "")
    )


def _check_provider(model: str) -> None:
    """A ``provider/model`` string must name a provider LiteLLM knows (else no call can work)."""
    if "/" not in model:
        return
    try:  # DSPy's native router knows the common providers without importing LiteLLM (~2 s)
        from dspy.clients.engines.lm15_engine import LM15Engine
        from dspy.lm15 import RouterConfig

        LM15Engine(RouterConfig(env={}, providers=()), model_type="chat").resolve(model)
        return
    except Exception:  # not a native route (or another DSPy): ask LiteLLM's provider list
        pass
    try:
        import litellm
    except ImportError:  # another engine may route it; let it try
        return
    litellm.suppress_debug_info = True  # no "Give Feedback" banners: the judgment records it
    provider = model.split("/", 1)[0]
    known = {getattr(p, "value", p) for p in litellm.provider_list}
    if provider not in known:
        raise UserError(
            f"model {model!r}: unknown provider {provider!r}; write provider/model, e.g. "
            "openai/gpt-4.1-mini, anthropic/claude-3-5-haiku-latest, ollama_chat/llama3.1, or "
            "openai/<served-name> with --api-base for an OpenAI-compatible server"
        )


def load_litellm() -> None:
    """Load LiteLLM completely in this thread (DSPy otherwise loads it lazily, at the first
    call or the first cached LiteLLM answer read back, in whichever worker thread comes first).
    Nothing when LiteLLM or this DSPy helper is missing."""
    try:
        from dspy.clients._litellm import get_litellm

        get_litellm(feature="attune-judge's hosted-provider route")
    except ImportError:
        pass


def default_response_format(model: str, api_base: str | None) -> ResponseFormat:
    """``json_schema`` for the embedded model, ``json_object`` for OpenAI-compatible servers.

    Hosted providers get ``auto`` (DSPy's own choice by model capabilities).
    """
    if model == "local" or model.startswith("local:"):
        return "json_schema"
    if api_base is not None and model.startswith("openai/"):
        return "json_object"
    return "auto"


def check_model(model: str | None, api_base: str | None = None) -> str:
    """The model string, stripped, after the checks that need no import: one is given, the
    embedded model gets no ``api_base``, any other names its provider.

    Raises
    ------
    UserError
        One line naming the problem (and, for a missing prefix, the likely full string).
    """
    if not model or not model.strip():
        raise UserError("no model given: pass --lm or set ATTUNE_LM")
    model = model.strip()
    name = model
    if has_model_settings(model):  # MODEL@http://host/v1: the member's own server
        name, own = parse_model_spec(model)
        api_base = str(own["api_base"]) if "api_base" in own else api_base
    if name == "local" or name.startswith("local:"):
        if api_base is not None:
            raise UserError("api_base cannot be used with the embedded model 'local'")
    else:
        check_provider_prefix(name)
    return model


def resolve_lm(
    settings: LMSettings, *, check_connection: bool = True, engine: str | None = None
) -> dspy.LM:
    """The configured ``dspy.LM`` of ``settings`` (read no environment variable: build the
    settings with :meth:`LMSettings.from_env` for ``ATTUNE_*``).

    ``settings.lm`` is ``local`` (embedded SmolLM2), ``local:<file.gguf>``, or any DSPy model
    string (``openai/gpt-4.1-mini``, ``anthropic/...``, ``ollama_chat/llama3.1``, or
    ``openai/<served-name>`` with ``api_base`` for vLLM / llama.cpp / any OpenAI-compatible
    server), with its own settings after ``@`` overriding the others. DSPy's own retries are
    always 0: the runner is the one retry layer, so that every request is counted as an
    attempt. ``timeout`` (default 120 s) bounds one request; the embedded model runs
    in-process and ignores it. :func:`configure_cache` points DSPy's request cache at
    ``cache_dir`` (``None``: its current location). ``check_connection``: check that
    ``api_base`` answers before returning. ``engine``: DSPy's engine for a model that is not
    the embedded one (``litellm``: through LiteLLM; ``None``: attune-judge's choice).

    Returns
    -------
    dspy.LM
        With its :class:`~attune_judge.lm.ModelHandle` recorded (the model string given, the
        response format, the timeout): read it with :func:`attune_judge.lm.model_handle`.

    Raises
    ------
    UserError
        Missing API key (names the variable), unreachable ``api_base`` (names the address),
        missing local model files, a model string without a provider prefix (suggests one).
    """
    # LiteLLM would otherwise try to download its price list on first use (offline: slow).
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    model = check_model(settings.lm, settings.api_base)  # before any heavy import: fast errors
    if has_model_settings(model):  # MODEL@http://host/v1 or MODEL@key=value: its own settings
        model, own = parse_model_spec(model)
        settings = settings.model_copy(update=own)
    api_base = settings.api_base
    is_local = model == "local" or model.startswith("local:")
    import dspy

    configure_cache(settings.cache_dir)

    mode = settings.response_format or default_response_format(model, api_base)
    lm_kwargs: dict[str, Any] = {
        "temperature": 0.0 if settings.temperature is None else settings.temperature,
        "max_tokens": settings.max_tokens or 1024,
        "num_retries": 0,  # the runner is the one retry layer (ATTUNE_NUM_RETRIES is ignored)
        "cache": settings.cache,
    }
    request_timeout = settings.timeout or DEFAULT_TIMEOUT_S
    if settings.seed is not None:
        lm_kwargs["seed"] = settings.seed
    if is_local:
        path = model.split(":", 1)[1] if ":" in model else None
        lm = local_lm(path, **lm_kwargs)
    else:
        _check_provider(model)
        api_key = _check_key(model, api_base)
        if api_base is not None:
            register_url(api_base)
            if check_connection:
                check_api_base(api_base)
            lm_kwargs["api_base"] = api_base
        # A server URL gets DSPy's own lm15 engine, given explicitly (no engine selection per
        # call), credentials in the URL sent as a header and query (lm/_server.py): every
        # OpenAI-compatible server takes one route, LiteLLM is for hosted providers only.
        address = ServerAddress.parse(api_base) if api_base is not None else None
        native = address is not None and send_json_object_natively()
        if engine is not None:
            lm_kwargs["engine"] = engine
        elif address is not None and native:
            lm_kwargs.pop("api_base")
            lm_kwargs["engine"], lm_kwargs["async_engine"] = server_engine(
                model, api_base or "", api_key=api_key, timeout=request_timeout
            )
        elif mode == "json_object" and not native:
            lm_kwargs.setdefault("engine", "litellm")
        if api_key is not None and "async_engine" not in lm_kwargs:
            lm_kwargs["api_key"] = api_key
        if "async_engine" not in lm_kwargs:
            lm_kwargs.setdefault("timeout", request_timeout)
        if lm_kwargs.get("engine") == "litellm":
            # the OpenAI SDK under LiteLLM retries on its own (2 by default): not under us
            lm_kwargs.setdefault("max_retries", 0)
            # LiteLLM loaded now, in the thread that resolves the judges, before any worker:
            # DSPy loads it lazily, and a worker thread unpickling a cached LiteLLM answer
            # while another materialised it saw a partially initialised module (issue 44)
            load_litellm()
        memoize_model_metadata()  # DSPy's per-call price lookup: once per model
        server, salt = server_of(api_base)
        if salt is not None:
            # DSPy's cache key leaves api_base out: two servers would share their answers.
            # rollout_id is in the key and never sent (DSPy warns that it does not change
            # sampling at temperature 0: here it only separates the caches, as intended).
            lm_kwargs.setdefault("rollout_id", salt)
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="rollout_id has no effect")
                lm = dspy.LM(model, **lm_kwargs)
        else:
            lm = dspy.LM(model, **lm_kwargs)
        return register_model(
            lm,
            model=model,
            response_format=mode,
            timeout_s=request_timeout,
            server=server,
            cache_salt=salt,
        )
    return register_model(lm, model=model, response_format=mode, timeout_s=request_timeout)


DEFAULT_TIMEOUT_S = 120.0
"""Default bound on one model request, in seconds (``--timeout`` / ``ATTUNE_TIMEOUT``)."""
