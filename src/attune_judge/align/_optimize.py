"""DSPy optimizers over a judge's program: examples from labelled items, a budget estimate
before the start, and the optimizer run under the judge's own model and adapter.

Optimizers (DSPy 3.4): ``labeled-fewshot`` (``LabeledFewShot``: k labelled demonstrations,
shuffled with the seed), ``bootstrap-fewshot`` (``BootstrapFewShotWithRandomSearch``: bootstrapped
plus labelled demonstrations, candidate programs scored on the dev split), ``mipro``
(``MIPROv2(auto="light")``: instructions and demonstrations by Bayesian search; needs the
``align`` extra, optuna) and ``gepa`` (``GEPA``: reflective instruction evolution, capped at a
number of metric calls).
"""

from __future__ import annotations

import math
import random
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from attune_judge.align._data import LabelledItem
from attune_judge.data._aligned import OptimizerName, OptimizerSettings
from attune_judge.errors import UserError
from attune_judge.rubrics import Rubric

if TYPE_CHECKING:
    import dspy

__all__ = [
    "GEPA_ROUND_EXTRA",
    "OPTIMIZERS",
    "BudgetEstimate",
    "CallCounter",
    "OptimizerName",
    "OptimizerSettings",
    "estimate_budget",
    "gepa_metric_cap",
    "run_optimizer",
    "to_examples",
]

OPTIMIZERS: tuple[str, ...] = ("labeled-fewshot", "bootstrap-fewshot", "mipro", "gepa")


class BudgetEstimate(BaseModel):
    """Upper-bound estimate of LM calls (and cost) before anything runs."""

    model_config = ConfigDict(extra="forbid")

    optimizer_calls: int
    """Calls the optimizer may make (judge model, and the prompt/reflection model)."""
    evaluation_calls: int
    """Held-out evaluation: every test item judged before and after."""
    total_calls: int
    prompt_tokens_per_call: int
    """Estimated prompt size of one call with demonstrations."""
    cost_usd: float | None
    """Estimated cost; ``None`` when the model's price is unknown (0 for local models)."""
    detail: str
    """How the optimizer calls were counted."""


def _nearest(value: float, levels: list[int]) -> int:
    return min(levels, key=lambda v: (abs(v - value), v))


def to_examples(judge: Any, items: Sequence[LabelledItem], rubric: Rubric) -> list[Any]:
    """``dspy.Example`` per item: the judge's inputs, the human scores rounded to the scale as
    labels, plus ``human_scores`` (unrounded, for the metric) and ``item_id``."""
    import dspy

    out = []
    for li in items:
        inputs = judge._inputs(li.item)
        labels = {c: _nearest(v, rubric.scale_of(c).levels) for c, v in li.human.items()}
        ex = dspy.Example(**inputs, **labels, human_scores=dict(li.human), item_id=li.item.item_id)
        out.append(ex.with_inputs(*inputs))
    return out


def _cost(lm: dspy.BaseLM, calls: int, prompt_tokens: int, completion_tokens: int) -> float | None:
    model = str(getattr(lm, "model", "") or "")
    if model.startswith(("local", "scripted", "replay")):
        return 0.0
    try:
        import litellm

        info = litellm.model_cost.get(model) or litellm.model_cost.get(model.split("/", 1)[-1])
    except Exception:  # pricing is best-effort
        info = None
    if not info or info.get("input_cost_per_token") is None:
        return None
    per_call = prompt_tokens * float(info["input_cost_per_token"]) + completion_tokens * float(
        info.get("output_cost_per_token") or 0.0
    )
    return calls * per_call


GEPA_ROUND_EXTRA = 6
"""GEPA checks its metric-call cap only between rounds, and a round evaluates a minibatch (3)
before and after a reflection, plus the whole dev set when the new program does better: one
round begun just below the cap may spend up to ``n_dev + 6`` more metric calls."""


def gepa_metric_cap(calls: int, *, n_dev: int) -> int:
    """The largest metric-call cap for GEPA whose worst case (the cap, one more round, and a
    reflection per 3 metric calls; see :func:`estimate_budget`) stays within ``calls``.

    >>> cap = gepa_metric_cap(200, n_dev=20)
    >>> cap, cap + 20 + 6 + -(-(cap + 20 + 6) // 3) <= 200
    (124, True)
    """
    metric = (max(calls, 0) * 3) // 4
    while metric > 0 and metric + math.ceil(metric / 3) > calls:
        metric -= 1
    return metric - n_dev - GEPA_ROUND_EXTRA


def estimate_budget(
    settings: OptimizerSettings,
    *,
    n_train: int,
    n_dev: int,
    n_test: int,
    zero_shot_prompt_tokens: int,
    lm: dspy.BaseLM | None = None,
    completion_tokens: int = 120,
) -> BudgetEstimate:
    """Upper bound of the LM calls of an align run (optimizer + held-out evaluation).

    ``bootstrap-fewshot``: (K + 3) candidate programs scored on dev, and up to K + 1
    bootstrapping passes over train. ``mipro`` (light): DSPy's own count — 15 prompt-model
    calls, bootstrapping 6 demo sets, 10 trials on dev (minibatches of 35 when dev > 50).
    ``gepa``: the metric-call cap, plus the round begun below it (:data:`GEPA_ROUND_EXTRA`
    and the dev set), plus one reflection call per 3 metric calls.
    """
    name = settings.name
    k = settings.num_candidates
    if name == "labeled-fewshot":
        opt, detail = 0, "labelled demonstrations need no model call"
    elif name == "bootstrap-fewshot":
        opt = (k + 3) * n_dev + (k + 1) * n_train
        detail = f"({k}+3) programs × {n_dev} dev items + ({k}+1) bootstrap passes × {n_train}"
    elif name == "mipro":
        trials = 10
        val = min(n_dev, 100)
        task = 35 * trials + val * (trials // 5 + 1) if val > 50 else val * trials
        opt = 15 + 6 * n_train + task
        detail = f"15 proposal calls + 6 demo sets × {n_train} + {task} trial calls on dev"
    else:
        cap = settings.gepa_metric_calls or 0
        metric = cap + n_dev + GEPA_ROUND_EXTRA  # the round begun below the cap is finished
        opt = metric + math.ceil(metric / 3)
        detail = (
            f"{cap} metric calls + up to {n_dev + GEPA_ROUND_EXTRA} of the round begun below "
            f"the cap + {math.ceil(metric / 3)} reflection calls"
        )
    evaluation = 2 * n_test
    demos = settings.max_labeled_demos + (
        settings.max_bootstrapped_demos if name in ("bootstrap-fewshot", "mipro") else 0
    )
    per_item = max(zero_shot_prompt_tokens // 2, 50)
    prompt = zero_shot_prompt_tokens + demos * per_item
    total = opt + evaluation
    return BudgetEstimate(
        optimizer_calls=opt,
        evaluation_calls=evaluation,
        total_calls=total,
        prompt_tokens_per_call=prompt,
        cost_usd=_cost(lm, total, prompt, completion_tokens),
        detail=detail,
    )


class CallCounter:
    """A DSPy callback counting LM calls (and optionally printing progress)."""

    def __init__(self, echo: Callable[[str], None] | None = None, every: int = 25) -> None:
        from dspy.utils.callback import BaseCallback

        counter = self

        class _CB(BaseCallback):
            def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
                counter._tick()

        self.callback = _CB()
        self._lock = threading.Lock()
        self.calls = 0
        self._echo = echo
        self._every = every

    def _tick(self) -> None:
        with self._lock:
            self.calls += 1
            n = self.calls
        if self._echo is not None and n % self._every == 0:
            self._echo(f"  ... {n} model calls")


def run_optimizer(
    judge: Any,
    trainset: list[Any],
    devset: list[Any],
    settings: OptimizerSettings,
    metric: Callable[..., Any],
    *,
    reflection_lm: dspy.BaseLM | None = None,
) -> Any:
    """Optimise ``judge.program`` on ``trainset`` (candidates scored on ``devset``).

    Returns the optimised program (same structure, new demonstrations/instructions).
    """
    import dspy

    student = judge.program.reset_copy()
    name = settings.name
    with dspy.context(lm=judge.lm, adapter=judge.adapter):
        if name == "labeled-fewshot":
            shuffled = list(trainset)
            random.Random(settings.seed).shuffle(shuffled)
            opt = dspy.LabeledFewShot(k=settings.max_labeled_demos)
            return opt.compile(student, trainset=shuffled, sample=False)
        if name == "bootstrap-fewshot":
            rs = dspy.BootstrapFewShotWithRandomSearch(
                metric=metric,
                max_bootstrapped_demos=settings.max_bootstrapped_demos,
                max_labeled_demos=settings.max_labeled_demos,
                num_candidate_programs=settings.num_candidates,
                num_threads=settings.num_threads,
                metric_threshold=None,
            )
            return rs.compile(student, trainset=trainset, valset=devset)
        if name == "mipro":
            try:
                import optuna  # noqa: F401
            except ImportError:
                raise UserError(
                    "--optimizer mipro needs optuna: pip install 'attune-judge[align]'"
                ) from None
            mipro = dspy.MIPROv2(
                metric=metric,
                auto="light",
                max_bootstrapped_demos=settings.max_bootstrapped_demos,
                max_labeled_demos=settings.max_labeled_demos,
                num_threads=settings.num_threads,
                seed=settings.seed,
            )
            return mipro.compile(student, trainset=trainset, valset=devset)
        if name == "gepa":
            cap = settings.gepa_metric_calls
            if not cap:
                raise UserError("--optimizer gepa needs a metric-call cap (--max-calls)")
            gepa = dspy.GEPA(
                metric=metric,
                max_metric_calls=cap,
                reflection_lm=reflection_lm or judge.lm,
                num_threads=settings.num_threads,
                seed=settings.seed,
                track_stats=False,
            )
            return gepa.compile(student, trainset=trainset, valset=devset)
    raise UserError(f"--optimizer must be one of {', '.join(OPTIMIZERS)}, not {name!r}")
