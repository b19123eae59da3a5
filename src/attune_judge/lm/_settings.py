"""Model settings from ``ATTUNE_*`` environment variables, overridden by CLI flags.

The library reads ``ATTUNE_*`` variables through one mechanism: :func:`read_env` (the
settings of :data:`ENV_VARS` through :meth:`LMSettings.from_env` or :func:`env_setting`; the
embedded engine's knobs ``ATTUNE_LOCAL_THREADS`` / ``ATTUNE_LOCAL_N_CTX`` /
``ATTUNE_LOCAL_PREFIX_CACHE_MB`` through :func:`env_int`). The CLI declares the same variables
on its options (Typer's ``envvar``), so ``--help`` shows them; a flag given wins over the
variable either way.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from attune_judge.errors import UserError

__all__ = [
    "ENV_VARS",
    "LMSettings",
    "ResponseFormat",
    "env_int",
    "env_setting",
    "has_model_settings",
    "member_api_base",
    "parse_model_spec",
    "read_env",
]

ResponseFormat = Literal["auto", "json_schema", "json_object", "none"]
"""How a judge asks the model for JSON.

``json_schema``: OpenAI structured outputs (OpenAI, vLLM). ``json_object``: ``{"type":
"json_object", "schema": ...}`` (llama-cpp-python's server and the embedded model).
``none``: no ``response_format``. ``auto``: DSPy's own choice for the provider.
"""

ENV_VARS: dict[str, str] = {
    "lm": "ATTUNE_LM",
    "api_base": "ATTUNE_API_BASE",
    "temperature": "ATTUNE_TEMPERATURE",
    "max_tokens": "ATTUNE_MAX_TOKENS",
    "seed": "ATTUNE_SEED",
    "num_retries": "ATTUNE_NUM_RETRIES",
    "cache": "ATTUNE_CACHE",
    "cache_dir": "ATTUNE_CACHE_DIR",
    "response_format": "ATTUNE_RESPONSE_FORMAT",
    "timeout": "ATTUNE_TIMEOUT",
}
"""Settings field → environment variable."""


def read_env(var: str, env: Mapping[str, str] | None = None) -> str | None:
    """The value of environment variable ``var``, stripped; ``None`` when unset or blank.

    >>> read_env("ATTUNE_LM", {"ATTUNE_LM": " local "}), read_env("ATTUNE_LM", {"ATTUNE_LM": ""})
    ('local', None)
    """
    raw = (os.environ if env is None else env).get(var)
    if raw is None or not raw.strip():
        return None
    return raw.strip()


def env_setting(field: str, env: Mapping[str, str] | None = None) -> str | None:
    """The raw ``ATTUNE_*`` value of settings field ``field`` (``cache_dir`` →
    ``ATTUNE_CACHE_DIR``), or ``None`` (see :func:`read_env`)."""
    return read_env(ENV_VARS[field], env)


def env_int(var: str, default: int, env: Mapping[str, str] | None = None) -> int:
    """Environment variable ``var`` as a non-negative integer (``default`` when unset).

    Raises
    ------
    UserError
        Not a non-negative integer (the message names the variable).
    """
    raw = read_env(var, env)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise UserError(f"environment variable {var}: expected a non-negative integer, got {raw!r}")
    return value


class LMSettings(BaseModel):
    """One model and every setting of its requests, built once: by the CLI from its options
    and the ``ATTUNE_*`` variables (:meth:`from_env`, the one place they are read), or directly
    (``LMSettings(lm="openai/x", temperature=0.2)`` reads no variable). Judges and run configs
    hold it; :func:`attune_judge.lm.resolve_lm` turns it into the ``dspy.LM``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lm: str = "local"
    """Model string: ``local``, ``local:<file.gguf>`` or any DSPy/LiteLLM model string; its
    own settings may follow (``MODEL@http://host:port/v1``, ``MODEL@temperature=0.7,seed=1``)."""
    api_base: str | None = None
    """Base URL of an OpenAI-compatible server (``http://host:port/v1``)."""
    temperature: float | None = Field(default=None, ge=0)
    """Sampling temperature (``None``: 0, as deterministic as the provider allows)."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Maximum tokens per model answer (``None``: 1024)."""
    seed: int | None = None
    """Sampling seed, passed to providers that accept one."""
    num_retries: int = 0
    """Read for compatibility and ignored: DSPy's own retries are always 0, because the runner
    is the one retry layer (``--max-retries``), so that attempts equal requests sent."""
    cache: bool = True
    """Use DSPy's request cache (a repeated request makes no model call)."""
    cache_dir: str | Path | None = None
    """DSPy disk-cache directory (``ATTUNE_CACHE_DIR``); ``None`` keeps DSPy's current one."""
    response_format: ResponseFormat | None = None
    """How to request JSON; ``None`` picks by model (see :func:`default_response_format`)."""
    timeout: float | None = Field(default=None, gt=0)
    """Seconds one request may take before it fails as a timeout (``None``: 120 s)."""

    @classmethod
    def from_env(
        cls, env: Mapping[str, str] | None = None, /, **overrides: str | float | bool | None
    ) -> LMSettings:
        """Settings from ``ATTUNE_*`` variables, then ``overrides`` (``None`` values ignored).

        Raises
        ------
        UserError
            An unknown setting, or a variable or option with an invalid value (the message
            names the variable or option).
        """
        unknown = sorted(set(overrides) - set(ENV_VARS))
        if unknown:
            raise UserError(
                f"unknown model setting {', '.join(map(repr, unknown))}; the settings are "
                + ", ".join(ENV_VARS)
            )
        values: dict[str, object] = {}
        origin: dict[str, str] = {}
        for field, var in ENV_VARS.items():
            raw = read_env(var, env)
            if raw is not None:
                values[field] = raw
                origin[field] = f"environment variable {var}"
        for field, value in overrides.items():
            if value is not None:
                values[field] = value
                origin[field] = f"option {field.replace('_', '-')}"
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            problems = []
            for err in exc.errors():
                field = str(err["loc"][0]) if err["loc"] else "?"
                where = origin.get(field, field)
                problems.append(f"{where}: {err['msg']} (got {values.get(field)!r})")
            raise UserError("invalid model settings", problems=problems) from None

    def decoding_options(self) -> dict[str, float | int | str]:
        """The decoding and request options that were set (``temperature``, ``max_tokens``,
        ``response_format``, ``timeout``): what a run's manifest records as ``model_options``."""
        values = (self.temperature, self.max_tokens, self.response_format, self.timeout)
        names = ("temperature", "max_tokens", "response_format", "timeout")
        return {k: v for k, v in zip(names, values, strict=True) if v is not None}

    def member(self, lm: str, *, jury: bool = False, seed: int | None = None) -> LMSettings:
        """These settings for model ``lm`` of several (a jury, a bench's evaluated models):
        the embedded model of a jury gets no ``api_base`` (:func:`member_api_base`);
        ``seed`` (when given) replaces the seed."""
        update: dict[str, object] = {
            "lm": lm,
            "api_base": member_api_base(lm, self.api_base, jury=jury),
        }
        if seed is not None:
            update["seed"] = seed
        return self.model_copy(update=update)


_SPEC_SETTINGS: dict[str, type[float | int | str]] = {
    "temperature": float,
    "seed": int,
    "max_tokens": int,
    "api_base": str,
}


def parse_model_spec(spec: str) -> tuple[str, dict[str, float | int | str]]:
    """A model string with its own settings: ``MODEL@http://host:port/v1`` (its server) or
    ``MODEL@key=value,...`` (``temperature``, ``seed``, ``max_tokens``, ``api_base``), so
    that each member of a jury (or each evaluated model) can have its own. The settings
    override the command's.

    >>> parse_model_spec("local@temperature=0.7,seed=1")
    ('local', {'temperature': 0.7, 'seed': 1})
    >>> parse_model_spec("openai/qwen@http://10.0.0.2:8000/v1")
    ('openai/qwen', {'api_base': 'http://10.0.0.2:8000/v1'})

    Raises
    ------
    UserError
        A setting that is not ``key=value`` with a known key and a valid value.
    """
    name, _, rest = spec.partition("@")
    rest = rest.strip()
    url = rest.lower().startswith(("http://", "https://"))  # a URL may hold "," and "@"
    parts = ["api_base=" + rest] if url else rest.split(",")
    settings: dict[str, float | int | str] = {}
    for part in filter(None, (p.strip() for p in parts)):
        key, eq, value = part.partition("=")
        if not eq or key.strip() not in _SPEC_SETTINGS:
            raise UserError(
                f"model {spec!r}: bad setting {part!r}",
                [
                    "write MODEL@http://host:port/v1 or MODEL@key=value,... with key one of "
                    + ", ".join(_SPEC_SETTINGS)
                ],
            )
        try:
            settings[key.strip()] = _SPEC_SETTINGS[key.strip()](value.strip())
        except ValueError:
            raise UserError(
                f"model {spec!r}: {key.strip()}={value.strip()!r} is not valid"
            ) from None
    if not name.strip():
        raise UserError(f"model {spec!r}: no model name before '@'")
    return name.strip(), settings


def has_model_settings(spec: str) -> bool:
    """Whether ``spec`` carries settings after ``@`` (a URL or ``key=value``); a provider's
    own ``name@version`` (Vertex AI) does not."""
    rest = spec.partition("@")[2].strip().lower()
    return rest.startswith(("http://", "https://")) or "=" in rest


def member_api_base(lm: str, api_base: str | None, *, jury: bool) -> str | None:
    """The command's ``--api-base`` for one judge model of several: not for the embedded model
    of a jury (it runs in-process), so ``--lm local --lm openai/x --api-base URL`` works; a
    member's own ``MODEL@URL`` wins over it anyway.

    >>> member_api_base("local", "http://h:1/v1", jury=True)
    >>> member_api_base("openai/x", "http://h:1/v1", jury=True)
    'http://h:1/v1'
    """
    local = lm == "local" or lm.startswith(("local:", "local@"))
    return None if jury and local else api_base
