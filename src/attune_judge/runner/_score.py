"""``run_score``: the Python equivalent of ``attune-judge score``.

Reads the data and candidates, builds the judge for the rubric and model, plans the (item,
judge) tasks and hands them to :func:`run_tasks`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL, Replicates
from attune_judge.data import JudgeItem, attunebench_to_ratings, load_attunebench, turn_context
from attune_judge.errors import UserError
from attune_judge.judges import Judge, JudgeOptions
from attune_judge.lm import LMSettings
from attune_judge.rubrics import load_rubric
from attune_judge.runner._execution import RunSettings
from attune_judge.runner._executor import RetryPolicy
from attune_judge.runner._inputs import (
    inspect_log_input,
    is_judge_item_jsonl,
    load_judge_items,
)
from attune_judge.runner._pairs import load_pairwise_items
from attune_judge.runner._result import FailureBudget

__all__ = [
    "ScoreConfig",
    "build_score_judge",
    "build_score_judges",
    "execution_options",
    "judge_mode_options",
    "rubric_kind",
    "score_items",
    "score_lms",
]


class ScoreConfig(RunSettings):
    """The arguments of ``attune-judge score`` (recorded in ``manifest.json``)."""

    model_config = ConfigDict(extra="forbid")

    data: Path
    """AttuneBench data (folder, .json or .jsonl of conversations), a JudgeItem JSONL, or an
    Inspect AI log (or folder of logs; the same path as ``candidates`` then)."""
    out: Path
    """The run directory."""
    rubric: str = "attunebench-reference"
    """A built-in rubric name or a rubric YAML file."""
    lm: str | list[str] = "local"
    """The judge model string (``local``, ``openai/gpt-4.1-mini``, ...), or several: a jury
    (or, with ``jury="none"``, one judge per model)."""
    jury: Literal["mean", "median", "majority", "none"] = "mean"
    """How several models' judgments combine (``none``: each model is its own judge)."""
    price_in: float | None = Field(default=None, ge=0)
    """USD per million prompt tokens for every judge model (overrides LiteLLM's table)."""
    price_out: float | None = Field(default=None, ge=0)
    """USD per million completion tokens (with ``price_in``)."""
    max_cost: float | None = Field(default=None, gt=0)
    """Stop (exit 3) once the run's judgments cost this many US dollars."""
    lm_settings: LMSettings = LMSettings()
    """The settings every judge model of ``lm`` shares (server, decoding, request timeout,
    cache; its own ``lm`` is not used): each gets them by :meth:`LMSettings.member`."""
    score_mode: Literal["sampled", "expected"] | None = None
    """``sampled`` or ``expected`` (token probabilities); ``None``: by model."""
    per_criterion: bool = False
    """One call per criterion (implied by ``expected`` and checklist rubrics)."""
    use_reference: bool | None = None
    """Show the judge the reference reply (``None``: as the rubric's kind does: reference
    rubrics show it); ``False`` (``--no-reference``) judges items that have none."""
    candidates: Path | None = None
    """Candidates JSONL, or an Inspect AI log whose samples' outputs are the candidates;
    without it the pseudo-models are scored."""
    models: list[str] | None = None
    """Candidate models to score (default: all in the candidates, or the pseudo-models)."""
    B: Replicates = DEFAULT_B
    """Bootstrap replicates for the summary's intervals."""
    level: float = Field(default=DEFAULT_LEVEL, gt=0.0, lt=1.0)
    """Confidence level of the summary's intervals and rank sets."""
    fsync_interval_s: float | None = Field(default=0.2, ge=0.0)
    """Group commit: each judgment is flushed at once, fsynced at most this often (0: each)."""
    batch: bool = False
    """Send the model calls through the provider's batch API (OpenAI-compatible ``openai/``
    models; ids kept in ``out/batch/``, so a killed run resumes polling)."""
    batch_poll_s: float = Field(default=30.0, gt=0.0)
    """Seconds between batch status polls."""


def execution_options(config: RunSettings) -> dict[str, Any]:
    """``run_tasks`` keywords for how a command executes: seed, concurrency, retries with
    backoff, failure budget and progress bar, from its config's fields of those names."""
    return {
        "seed": config.seed,
        "max_concurrency": config.max_concurrency,
        "retry": RetryPolicy(
            max_retries=config.max_retries,
            base_delay_s=config.retry_base_delay_s,
            seed=config.seed,
            parse_retries=config.parse_retries,
        ),
        "budget": FailureBudget(config.max_failure_rate, config.min_attempts),
        "quiet": config.quiet,
        "retry_failed": config.retry_failed,
        "adaptive": config.adaptive,
    }


def score_lms(config: ScoreConfig) -> list[str]:
    """The judge model strings of ``config`` (one or several, duplicates refused)."""
    lms = [config.lm] if isinstance(config.lm, str) else list(config.lm)
    if not lms:
        return ["local"]
    twice = sorted({m for m in lms if lms.count(m) > 1})
    if twice:
        raise UserError(f"--lm given twice for {', '.join(twice)}; a jury needs distinct models")
    return lms


def build_score_judges(config: ScoreConfig) -> list[Judge]:
    """The judges of ``config``: one per model with ``jury="none"``, else one (a
    :class:`~attune_judge.judges.Jury` of the models when there are several)."""
    lms = score_lms(config)
    if len(lms) > 1 and config.jury == "none":
        return [_one_judge(config, lm, jury=True) for lm in lms]
    return [build_score_judge(config)]


def build_score_judge(config: ScoreConfig) -> Judge:
    """The judge for ``config.rubric`` on ``config.lm`` (a jury for several models), DSPy's
    cache under ATTUNE_CACHE_DIR.

    DSPy's own retries are turned off (``num_retries=0``): the runner retries rate limits and
    timeouts itself, with backoff and jitter, so attempts do not multiply.
    """
    lms = score_lms(config)
    if len(lms) == 1:
        return _one_judge(config, lms[0])
    if config.jury == "none":
        raise ValueError("jury='none' gives one judge per model: use build_score_judges")
    from attune_judge.judges import Jury

    return Jury([_one_judge(config, lm, jury=True) for lm in lms], method=config.jury)


def _one_judge(config: ScoreConfig, lm: str, *, jury: bool = False) -> Judge:
    from attune_judge.judges import build_judge

    return build_judge(
        config.rubric,
        config.lm_settings.member(lm, jury=jury, seed=config.seed),
        judge_mode_options(
            config.rubric, config.score_mode, config.per_criterion, config.use_reference
        ),
    )


def judge_mode_options(
    rubric: str, score_mode: str | None, per_criterion: bool, use_reference: bool | None = None
) -> JudgeOptions:
    """The :class:`~attune_judge.judges.JudgeOptions` of a run's judge (``use_reference`` only
    where the rubric has a reference to withhold).

    Raises
    ------
    UserError
        ``use_reference`` given for a pairwise or behaviour rubric (they have none).
    """
    from attune_judge.judges import BASELINES

    if rubric in BASELINES:
        return JudgeOptions()
    kind = rubric_kind(rubric) if use_reference is not None else None
    if kind not in (None, "reference", "checklist"):  # checklist questions never show it
        raise UserError(
            f"--no-reference: rubric {rubric!r} is a {kind} rubric, which shows no reference"
        )
    return JudgeOptions(
        use_reference=use_reference if kind == "reference" else None,
        score_mode=score_mode,
        per_criterion=True if per_criterion else None,
    )


def rubric_kind(rubric: str) -> str:
    """``reference``, ``pairwise`` or ``behaviour`` of a rubric name/file (baselines:
    ``reference``)."""
    from attune_judge.judges import BASELINES

    if rubric in BASELINES:
        return "reference"
    from attune_judge.judges._aligned import aligned_rubric, is_aligned_judge

    if is_aligned_judge(rubric):
        return aligned_rubric(rubric).kind
    return load_rubric(rubric).kind


def score_items(config: ScoreConfig) -> list[JudgeItem]:
    """The items ``config`` judges: pairs for a pairwise rubric (the participants'
    comparisons, plus candidate pairs with ``--candidates``), else one item per candidate.

    For a behaviour rubric on AttuneBench data each item lists the behaviour items that apply
    to its turn (``metadata["behaviour_items"]``, from the participants' answers).
    """
    kind = rubric_kind(config.rubric)
    log = inspect_log_input(config.data, config.candidates)
    if log is not None and kind == "pairwise":
        raise UserError(
            f"{log}: a pairwise rubric compares two replies to one turn; an Inspect log gives "
            "one reply per sample: score it with a single-reply rubric"
        )
    if kind == "pairwise":
        return load_pairwise_items(config.data, candidates=config.candidates, models=config.models)
    items = load_judge_items(config.data, candidates=config.candidates, models=config.models)
    if kind == "behaviour" and log is None and not is_judge_item_jsonl(config.data):
        from attune_judge.judges import attach_behaviour_items

        conversations = load_attunebench(config.data)
        if config.candidates is None and "original" in (config.models or ["original"]):
            items = _original_on_every_turn(conversations, items)
        items = attach_behaviour_items(items, attunebench_to_ratings(conversations))
    return items


def _original_on_every_turn(conversations: Any, items: list[JudgeItem]) -> list[JudgeItem]:
    """``items`` plus the original reply of turns without a human-edited reference: the
    participants answered the behaviour items about the original reply on every turn, and a
    behaviour judge needs no reference."""
    have = {i.item_id for i in items}
    extra = []
    for conv in conversations:
        turns = conv.sorted_turns()
        for n, turn in enumerate(turns):
            item_id = f"{conv.conversation_id}:{turn.turn_number}:original"
            if item_id in have or not turn.llm_response:
                continue
            extra.append(
                JudgeItem(
                    item_id=item_id,
                    conversation_id=conv.conversation_id,
                    turn=turn.turn_number,
                    context=turn_context(turns, n),
                    candidate=turn.llm_response,
                    candidate_model="original",
                    metadata={"source": "attunebench", "reference": "none"},
                )
            )
    return items + extra
