"""A model string must name its provider: ``openai/gpt-4o``, not ``gpt4o``.

Without a prefix LiteLLM guesses (and asks for an OpenAI key for anything it does not know),
so a typo becomes a confusing key error. :func:`check_provider_prefix` stops earlier with a
sentence that suggests the likely full string, found in LiteLLM's local model table.
"""

from __future__ import annotations

import difflib
import os
import re
from functools import lru_cache

from attune_judge.errors import UserError

__all__ = ["check_provider_prefix", "suggest_model"]

_PREFERRED = (
    "openai",
    "anthropic",
    "gemini",
    "mistral",
    "deepseek",
    "xai",
    "groq",
    "cohere",
    "together_ai",
    "fireworks_ai",
    "openrouter",
)
"""Providers preferred when one model name is sold by several (first-party APIs first)."""

_FAMILIES = (
    ("gpt", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("claude", "anthropic"),
    ("gemini", "gemini"),
    ("mistral", "mistral"),
    ("deepseek", "deepseek"),
    ("grok", "xai"),
    ("command", "cohere"),
    ("llama", "ollama_chat"),
    ("qwen", "ollama_chat"),
)
"""Name starts → provider, for names the table does not hold (``claude-3-5-haiku-latest``)."""


def _normal(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


@lru_cache(maxsize=1)
def _catalogue() -> dict[str, str]:
    """``provider/name`` suggestions keyed by the bare name, from LiteLLM's model table."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError:  # pragma: no cover - litellm is a dependency of dspy
        return {}
    rank = {p: i for i, p in enumerate(_PREFERRED)}
    best: dict[str, tuple[int, str]] = {}
    for key, info in litellm.model_cost.items():
        provider = info.get("litellm_provider") if isinstance(info, dict) else None
        if not isinstance(provider, str) or info.get("mode", "chat") != "chat":
            continue
        bare = key.split("/", 1)[1] if key.startswith(provider + "/") else key
        if "/" in bare or ":" in bare or "." in bare.split("-", 1)[0]:
            continue  # regional or deployment ids (us.anthropic.claude-...) are no good hint
        order = rank.get(provider, len(rank))
        if bare not in best or order < best[bare][0]:
            best[bare] = (order, f"{provider}/{bare}")
    return {bare: full for bare, (_, full) in best.items()}


def suggest_model(name: str) -> str | None:
    """The likely ``provider/model`` for a bare model name (``gpt4o`` → ``openai/gpt-4o``).

    Same name up to case and punctuation in LiteLLM's table first, then a known family's
    provider (``claude-...`` → ``anthropic/claude-...``), then the closest name by spelling;
    ``None`` when nothing is close.
    """
    catalogue = _catalogue()
    if not name.strip():
        return None
    target = _normal(name)
    same = sorted((b for b in catalogue if _normal(b) == target), key=len)
    if same:
        return catalogue[same[0]]
    for start, provider in _FAMILIES:
        if name.lower().startswith(start):
            return f"{provider}/{name}"
    close = difflib.get_close_matches(name.lower(), list(catalogue), n=1, cutoff=0.8)
    return catalogue[close[0]] if close else None


def check_provider_prefix(model: str) -> None:
    """Raise a :class:`UserError` for a model string without ``provider/`` (except ``local``).

    Raises
    ------
    UserError
        ``model 'gpt4o' has no provider prefix; did you mean 'openai/gpt-4o'? ...``
    """
    if model == "local" or model.startswith("local:") or "/" in model:
        return
    suggestion = suggest_model(model)
    hint = f"did you mean {suggestion!r}? " if suggestion else ""
    raise UserError(
        f"model {model!r} has no provider prefix; {hint}write provider/model, e.g. "
        "openai/gpt-4.1-mini, anthropic/claude-3-5-haiku-latest, ollama_chat/llama3.1, "
        "openai/<served-name> with --api-base, or local for the embedded model"
    )
