"""What a judgment cost: its tokens at the model's price.

Prices per token come from LiteLLM's price table (the local copy shipped with LiteLLM; no
download), or from ``--price-in`` / ``--price-out`` (US dollars per million tokens), which
override the table for every judge model of the run. The embedded model costs nothing. A model
behind ``--api-base`` (a server of your own) has no table price: give prices to count its cost.
Cost is ``None`` ("unknown") only when no price is known; never a guessed 0.

A jury's cost is the sum of its members' costs (each member at its own model's price); each
member entry of the jury judgment (``details["members"]``) gets its own ``cost`` too, so the
summary can sum tokens and cost per member model. When a member has no price, the jury's cost
is unknown, and ``details["cost_known"]`` / ``details["members_unpriced"]`` keep the priced
members' part and how many answers had no price (neither when no member had a price: nothing
is known, which is not $0).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from attune_judge.data import JudgeSpec, Judgment
from attune_judge.errors import UserError
from attune_judge.runner._plan import Task

__all__ = [
    "Pricing",
    "check_prices",
    "cost_message",
    "judgment_cost",
    "spent_usd",
    "token_prices",
]


class Pricing(BaseModel):
    """How judgments are priced (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    price_in: float | None = Field(default=None, ge=0)
    """USD per million prompt tokens (with ``price_out``: overrides the table)."""
    price_out: float | None = Field(default=None, ge=0)
    """USD per million completion tokens."""
    api_base: str | None = None
    """The run's OpenAI-compatible server, whose models have no table price."""

    def model_post_init(self, __context: Any) -> None:
        """Both prices or neither."""
        if (self.price_in is None) != (self.price_out is None):
            raise UserError("give both --price-in and --price-out (USD per million tokens)")


def token_prices(
    model: str | None, pricing: Pricing, server: str | None = None
) -> tuple[float, float] | None:
    """``(USD per prompt token, USD per completion token)`` of ``model`` (answering from
    ``server``, its own ``api_base``), or ``None``."""
    if pricing.price_in is not None and pricing.price_out is not None:
        return pricing.price_in / 1e6, pricing.price_out / 1e6
    if not model:
        return None
    if model == "local" or model.startswith(("local:", "local/")):
        return 0.0, 0.0
    if (server or pricing.api_base) is not None and model.startswith("openai/"):
        return None
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError:  # pragma: no cover - a dependency of dspy
        return None
    names = [model]
    if "/" in model:
        names.append(model.split("/", 1)[1])
    for name in names:
        info = litellm.model_cost.get(name)
        if isinstance(info, dict):
            p_in, p_out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
            if isinstance(p_in, int | float) and isinstance(p_out, int | float):
                return float(p_in), float(p_out)
    return None


def _priced(
    model: tuple[str | None, str | None], prompt: int, completion: int, pricing: Pricing
) -> float | None:
    if prompt == 0 and completion == 0:
        return 0.0
    prices = token_prices(model[0], pricing, model[1])
    if prices is None:
        return None
    return prompt * prices[0] + completion * prices[1]


def judgment_cost(
    judgment: Judgment, spec: JudgeSpec | Mapping[str, Any], pricing: Pricing
) -> float | None:
    """The cost of ``judgment`` by the judge of ``spec`` (``None``: a price is unknown).

    For a jury, every member entry of ``judgment.details["members"]`` also gets its ``cost``
    (``None`` when its model has no price) — in place."""
    members = judgment.details.get("members")
    spec = JudgeSpec.of(spec)
    if spec.is_jury and isinstance(members, list):
        models = {m.judge_id(): (m.model_name(), m.server()) for m in spec.members or []}
        total: float | None = 0.0
        known, unpriced = 0.0, 0
        for member in members:
            usage = member.get("usage") or {}
            cost = _priced(
                models.get(str(member.get("judge_id")), (None, None)),
                int(usage.get("prompt_tokens") or 0),
                int(usage.get("completion_tokens") or 0),
                pricing,
            )
            member["cost"] = cost
            total = None if cost is None or total is None else total + cost
            known, unpriced = known + (cost or 0.0), unpriced + (cost is None)
        if total is None and unpriced < len(members):  # the priced members' part is known
            judgment.details["cost_known"] = known
            judgment.details["members_unpriced"] = unpriced
        return total
    usage = judgment.usage
    return _priced(
        (spec.model_name(), spec.server()), usage.prompt_tokens, usage.completion_tokens, pricing
    )


def spent_usd(judgments: Iterable[Judgment]) -> float:
    """What ``judgments`` cost (those with a known cost)."""
    return math.fsum(j.cost for j in judgments if j.cost is not None)


def cost_message(spent: float, max_cost: float) -> str:
    """Why a run stopped at its ``--max-cost``."""
    return (
        f"cost budget reached: ${spent:.4f} spent of --max-cost ${max_cost:g}; no new request "
        "was started after that (judgments in flight were kept); raise --max-cost and run the "
        "same command again to go on"
    )


def check_prices(tasks: Sequence[Task], pricing: Pricing) -> None:
    """Every judge model of ``tasks`` must have a price (for ``--max-cost``).

    Raises
    ------
    UserError
        Naming the models without a price and the options that give one.
    """
    unknown: set[str] = set()
    for spec in {t.judge.judge_id: JudgeSpec.of(t.judge.spec) for t in tasks}.values():
        for part in [spec, *(spec.members or [])]:
            model, server = part.model_name(), part.server()
            if model is not None and token_prices(model, pricing, server) is None:
                unknown.add(model)
    if unknown:
        raise UserError(
            f"--max-cost needs prices, and none is known for {', '.join(sorted(unknown))}: "
            "give --price-in and --price-out (USD per million tokens)"
        )
