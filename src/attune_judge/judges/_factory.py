"""Build a judge from a rubric (or baseline name) and a model: the runner's and CLI's door."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attune_judge.judges._baselines import LengthJudge, LexicalJudge
from attune_judge.judges._behaviour import BehaviourJudge
from attune_judge.judges._criterion import SCORE_MODES, CriterionJudge, default_score_mode
from attune_judge.judges._jury import Jury, JuryMethod
from attune_judge.judges._pairwise import PairwiseJudge
from attune_judge.judges._protocol import Judge
from attune_judge.judges._reference import ReferenceJudge
from attune_judge.rubrics import Rubric, load_rubric

__all__ = ["BASELINES", "build_judge", "build_jury", "resolve_judge_lm"]

BASELINES = ("length", "lexical")
"""Judges that need no model."""

_JUDGE_OPTIONS = ("use_reference", "reasoning", "score_mode", "per_criterion", "demos")


def resolve_judge_lm(lm: Any, **lm_settings: Any) -> Any:
    """A ``dspy.LM`` from a model string (``ATTUNE_*`` settings, then ``lm_settings``).

    A ``dspy.LM`` is returned unchanged; ``None`` means ``ATTUNE_LM`` (default ``local``).
    """
    import dspy

    from attune_judge.lm import LMSettings, resolve_lm_from_settings

    if isinstance(lm, dspy.BaseLM):
        return lm
    check_connection = lm_settings.pop("check_connection", True)
    settings = LMSettings.from_env(lm=lm, **lm_settings)
    return resolve_lm_from_settings(
        settings, set_cache_dir=False, check_connection=check_connection
    )


def build_judge(kind_or_rubric: str | Path | Rubric, lm: Any = None, **settings: Any) -> Judge:
    """A judge for a rubric (object, built-in name or YAML path) or a baseline name.

    Parameters
    ----------
    kind_or_rubric
        ``length`` or ``lexical`` (no model), a :class:`Rubric`, a built-in rubric name
        (``attunebench-reference``) or the path of a rubric YAML file. The rubric's ``kind``
        picks :class:`ReferenceJudge`, :class:`PairwiseJudge` or :class:`BehaviourJudge`.
    lm
        A model string (``local``, ``openai/...``), a ``dspy.LM``, or ``None`` (``ATTUNE_LM``).
    **settings
        Judge options ``use_reference`` (reference rubrics), ``reasoning`` (chain of thought,
        one sampled call), ``score_mode`` (``sampled`` or ``expected``; default ``expected``
        for the embedded model, else ``sampled``), ``per_criterion`` (one call per criterion;
        implied by ``expected`` and by checklist rubrics) and ``demos`` (labelled
        :class:`CriterionDemo` examples for per-criterion calls); every other key is a model
        setting of :class:`attune_judge.lm.LMSettings` (``api_base``,
        ``temperature``, ``max_tokens``, ``seed``, ``num_retries``, ``cache``,
        ``response_format``) or ``check_connection``.

    Raises
    ------
    UserError
        Unknown rubric, invalid rubric file, missing key, unreachable server.
    """
    if isinstance(kind_or_rubric, str) and kind_or_rubric in BASELINES:
        return LengthJudge() if kind_or_rubric == "length" else LexicalJudge()
    rubric = kind_or_rubric if isinstance(kind_or_rubric, Rubric) else load_rubric(kind_or_rubric)
    options = {k: settings.pop(k) for k in _JUDGE_OPTIONS if k in settings}
    model = resolve_judge_lm(lm, **settings)
    reasoning = bool(options.get("reasoning", False))
    mode = options.get("score_mode")
    if mode is not None and mode not in SCORE_MODES:
        raise ValueError(f"score_mode must be one of {SCORE_MODES}, not {mode!r}")
    per_criterion = options.get("per_criterion")
    demos = options.get("demos") or ()
    if rubric.kind in ("reference", "checklist") and not reasoning:
        mode = mode or default_score_mode(model)
        if mode == "expected" and per_criterion is False:
            raise ValueError("score_mode 'expected' asks one criterion per call (per_criterion)")
        if rubric.kind == "checklist" or mode == "expected" or per_criterion or demos:
            return CriterionJudge(
                rubric,
                model,
                score_mode=mode,
                use_reference=bool(options.get("use_reference", rubric.kind == "reference"))
                and rubric.kind == "reference",
                demos=demos,
            )
    if mode == "expected" or per_criterion or demos:
        raise ValueError(
            "score_mode 'expected', per_criterion and demos apply to reference and checklist "
            f"rubrics without reasoning, not to a {rubric.kind!r} rubric"
            + (" with reasoning" if reasoning else "")
        )
    if rubric.kind == "reference":
        return ReferenceJudge(
            rubric,
            model,
            use_reference=bool(options.get("use_reference", True)),
            reasoning=reasoning,
        )
    if "use_reference" in options:
        raise ValueError(f"use_reference only applies to reference rubrics, not {rubric.kind!r}")
    if rubric.kind == "checklist":
        raise ValueError("checklist rubrics are scored one question per call, without reasoning")
    if rubric.kind == "pairwise":
        return PairwiseJudge(rubric, model, reasoning=reasoning)
    return BehaviourJudge(rubric, model, reasoning=reasoning)


def build_jury(
    kind_or_rubric: str | Path | Rubric,
    lms: Sequence[Any],
    method: JuryMethod = "mean",
    **settings: Any,
) -> Jury:
    """A jury: one judge per model in ``lms`` (same rubric and settings), combined by ``method``."""
    rubric = kind_or_rubric if isinstance(kind_or_rubric, Rubric) else load_rubric(kind_or_rubric)
    return Jury([build_judge(rubric, lm, **dict(settings)) for lm in lms], method=method)
