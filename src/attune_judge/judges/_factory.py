"""Build a judge from a rubric (or baseline name) and a model: the runner's and CLI's door."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attune_judge.errors import UserError
from attune_judge.judges._aligned import (
    CALIBRATED_FORMAT,
    FORMAT,
    AlignedJudge,
    aligned_rubric,
    is_aligned_judge,
    read_manifest,
)
from attune_judge.judges._baselines import LengthJudge, LexicalJudge
from attune_judge.judges._behaviour import BehaviourJudge
from attune_judge.judges._calibrated import CalibratedJudge, calibrated_parts
from attune_judge.judges._criterion import SCORE_MODES, CriterionJudge, default_score_mode
from attune_judge.judges._criterion_prompt import multi_token_levels
from attune_judge.judges._jury import Jury, JuryMethod
from attune_judge.judges._lexicon import LexiconJudge
from attune_judge.judges._pairwise import PairwiseJudge
from attune_judge.judges._protocol import Judge
from attune_judge.judges._reference import ReferenceJudge
from attune_judge.lm import LMSettings, resolve_lm
from attune_judge.rubrics import Rubric, load_rubric

__all__ = [
    "BASELINES",
    "JUDGE_KINDS",
    "JudgeBuilder",
    "JudgeOptions",
    "build_judge",
    "build_jury",
    "load_aligned_judge",
    "resolve_judge_lm",
]

BASELINES: dict[str, Callable[[], Judge]] = {
    "length": LengthJudge,
    "lexical": LexicalJudge,
    "lexicon": LexiconJudge,
}
"""Judges that need no model: name → constructor."""

_JUDGE_OPTIONS = ("use_reference", "reasoning", "score_mode", "per_criterion", "demos")


@dataclass(frozen=True)
class JudgeOptions:
    """The judge options of :func:`build_judge` (model settings are separate)."""

    use_reference: bool | None = None
    """Show the reference (``None``: the kind's default)."""
    reasoning: bool = False
    """Chain of thought before the answer (one sampled call)."""
    score_mode: str | None = None
    """``sampled`` / ``expected`` (``None``: by model, for the criterion judges)."""
    per_criterion: bool | None = None
    """One call per criterion (``None``: implied by the mode and the rubric)."""
    demos: tuple[Any, ...] = ()
    """Labelled examples for per-criterion calls."""


JudgeBuilder = Callable[[Rubric, Any, JudgeOptions], Judge]
"""Builds the judge of one rubric kind from the rubric, the model and the options."""


def _criterion_judge(rubric: Rubric, model: Any, o: JudgeOptions) -> Judge | None:
    """A :class:`CriterionJudge` where the options ask for one call per criterion (reference
    and checklist rubrics without reasoning); an error where they ask it of another judge."""
    mode = o.score_mode
    if rubric.kind in ("reference", "checklist") and not o.reasoning:
        mode = _score_mode(rubric, model, mode)
        if mode == "expected" and o.per_criterion is False:
            raise ValueError("score_mode 'expected' asks one criterion per call (per_criterion)")
        if rubric.kind == "checklist" or mode == "expected" or o.per_criterion or o.demos:
            return CriterionJudge(
                rubric,
                model,
                score_mode=mode,  # type: ignore[arg-type]
                use_reference=bool(
                    o.use_reference if o.use_reference is not None else rubric.kind == "reference"
                )
                and rubric.kind == "reference",
                demos=o.demos,
            )
    if mode == "expected" or o.per_criterion or o.demos:
        raise ValueError(
            "score_mode 'expected', per_criterion and demos apply to reference and checklist "
            f"rubrics without reasoning, not to a {rubric.kind!r} rubric"
            + (" with reasoning" if o.reasoning else "")
        )
    return None


def _score_mode(rubric: Rubric, model: Any, mode: str | None) -> str:
    """The score mode: ``mode``, else the model's default. Expected scores read one token, so
    a scale with two-digit levels (1-10) is scored from the sampled answer by default and
    refused with an explicit ``expected``."""
    wide = multi_token_levels(rubric)
    if mode == "expected" and wide:
        raise UserError(
            f"rubric {rubric.id!r}: {', '.join(wide)} has levels that are not one digit; "
            "--score-mode expected reads the score from one token (levels 0-9): use "
            "--score-mode sampled"
        )
    if mode is None:
        mode = default_score_mode(model)
        if mode == "expected" and wide:
            logging.getLogger(__name__).warning(
                "rubric %s: %s: levels not one digit each, so scored from the sampled "
                "answer (expected scores read one token)",
                rubric.id,
                ", ".join(wide),
            )
            mode = "sampled"
    return mode


def _no_reference_option(rubric: Rubric, o: JudgeOptions) -> None:
    if o.use_reference is not None:
        raise ValueError(f"use_reference only applies to reference rubrics, not {rubric.kind!r}")


def _reference(rubric: Rubric, model: Any, o: JudgeOptions) -> Judge:
    return _criterion_judge(rubric, model, o) or ReferenceJudge(
        rubric,
        model,
        use_reference=bool(o.use_reference if o.use_reference is not None else True),
        reasoning=o.reasoning,
    )


def _checklist(rubric: Rubric, model: Any, o: JudgeOptions) -> Judge:
    judge = _criterion_judge(rubric, model, o)
    if judge is not None:
        return judge
    _no_reference_option(rubric, o)
    raise ValueError("checklist rubrics are scored one question per call, without reasoning")


def _pairwise(rubric: Rubric, model: Any, o: JudgeOptions) -> Judge:
    _criterion_judge(rubric, model, o)
    _no_reference_option(rubric, o)
    return PairwiseJudge(rubric, model, reasoning=o.reasoning)


def _behaviour(rubric: Rubric, model: Any, o: JudgeOptions) -> Judge:
    _criterion_judge(rubric, model, o)
    _no_reference_option(rubric, o)
    return BehaviourJudge(rubric, model, reasoning=o.reasoning)


JUDGE_KINDS: dict[str, JudgeBuilder] = {
    "reference": _reference,
    "checklist": _checklist,
    "pairwise": _pairwise,
    "behaviour": _behaviour,
}
"""Rubric kind → the builder of its judge. A new judge kind is one entry here."""


def resolve_judge_lm(lm: Any, **lm_settings: Any) -> Any:
    """A ``dspy.LM`` from a model string (``ATTUNE_*`` settings, then ``lm_settings``).

    A ``dspy.LM`` is returned unchanged; ``None`` means ``ATTUNE_LM`` (default ``local``).
    """
    import dspy

    if isinstance(lm, dspy.BaseLM):
        return lm
    check_connection = lm_settings.pop("check_connection", True)
    settings = LMSettings.from_env(lm=lm, **lm_settings)
    return resolve_lm(settings, check_connection=check_connection)


def build_judge(kind_or_rubric: str | Path | Rubric, lm: Any = None, **settings: Any) -> Judge:
    """A judge for a rubric (object, built-in name or YAML path) or a baseline name.

    Parameters
    ----------
    kind_or_rubric
        ``length``, ``lexical`` or ``lexicon`` (no model), a :class:`Rubric`, a built-in rubric name
        (``attunebench-reference``), the path of a rubric YAML file, or the directory of an
        aligned judge (``attune-judge align``; its own rubric, program and options). The
        rubric's ``kind``
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
        return BASELINES[kind_or_rubric]()
    if is_aligned_judge(kind_or_rubric):
        return load_aligned_judge(kind_or_rubric, lm, **settings)  # type: ignore[arg-type]
    rubric = kind_or_rubric if isinstance(kind_or_rubric, Rubric) else load_rubric(kind_or_rubric)
    options = {k: settings.pop(k) for k in _JUDGE_OPTIONS if k in settings}
    model = resolve_judge_lm(lm, **settings)
    mode = options.get("score_mode")
    if mode is not None and mode not in SCORE_MODES:
        raise ValueError(f"score_mode must be one of {SCORE_MODES}, not {mode!r}")
    opts = JudgeOptions(
        use_reference=options.get("use_reference"),
        reasoning=bool(options.get("reasoning", False)),
        score_mode=mode,
        per_criterion=options.get("per_criterion"),
        demos=tuple(options.get("demos") or ()),
    )
    builder = JUDGE_KINDS.get(rubric.kind)
    if builder is None:
        raise ValueError(f"no judge for rubric kind {rubric.kind!r}; kinds: {sorted(JUDGE_KINDS)}")
    return builder(rubric, model, opts)


def build_jury(
    kind_or_rubric: str | Path | Rubric,
    lms: Sequence[Any],
    method: JuryMethod = "mean",
    **settings: Any,
) -> Jury:
    """A jury: one judge per model in ``lms`` (same rubric and settings), combined by ``method``."""
    rubric = kind_or_rubric if isinstance(kind_or_rubric, Rubric) else load_rubric(kind_or_rubric)
    return Jury([build_judge(rubric, lm, **dict(settings)) for lm in lms], method=method)


def load_aligned_judge(
    path: Path | str, lm: Any = None, *, apply_score_map: bool = True, **settings: Any
) -> AlignedJudge | CalibratedJudge:
    """Rebuild an aligned judge from its directory (a calibrated one from ``align --method
    calibrate``: :class:`~attune_judge.judges._calibrated.CalibratedJudge`).

    Parameters
    ----------
    path
        The artifact directory (written by ``attune-judge align``).
    lm
        The model (string or ``dspy.LM``); ``None`` = the model it was aligned on. Another model
        works but is logged as a warning: the demonstrations were chosen for the recorded one.
    apply_score_map
        Map the judge's scores to the human scale with the saved monotone map.
    **settings
        Model settings as in :func:`attune_judge.judges.build_judge`; the judge options
        (``use_reference``, ``reasoning``) come from the artifact.
    """

    import hashlib
    import logging

    log = logging.getLogger(__name__)
    root = Path(path)
    manifest = read_manifest(root)
    if manifest.format == CALIBRATED_FORMAT:
        model, options, head = calibrated_parts(root, manifest, lm, settings)
        base = build_judge(aligned_rubric(root, manifest), model, **options, **settings)
        return CalibratedJudge(base, manifest, head)
    if manifest.format != FORMAT:
        raise UserError(f"{root}: unsupported aligned-judge format {manifest.format!r}")
    rubric = aligned_rubric(root, manifest)
    program_file = root / "program.json"
    if not program_file.is_file():
        raise UserError(f"{root}: program.json is missing")
    digest = hashlib.sha256(program_file.read_bytes()).hexdigest()
    if digest != manifest.program_sha256:
        raise UserError(f"{program_file}: sha256 differs from the manifest's (edited?)")
    for key in ("use_reference", "reasoning"):
        settings.pop(key, None)
    mode, per_criterion, demos = (
        settings.pop(k, None) for k in ("score_mode", "per_criterion", "demos")
    )
    if mode == "expected" or per_criterion or demos:
        raise UserError(
            f"{root}: an aligned judge runs its optimised one-call program (score mode "
            "sampled); --score-mode expected, --per-criterion and extra demonstrations do not "
            "apply to it"
        )
    model = manifest.lm if lm is None else lm
    if isinstance(model, str) and model != manifest.lm:
        log.warning(
            "aligned judge %s was aligned on %s; running it on %s", root, manifest.lm, model
        )
    options = {**manifest.judge_options, "score_mode": "sampled", "per_criterion": False}
    if rubric.kind != "reference":
        options.pop("use_reference", None)
    base = build_judge(rubric, model, **options, **settings)
    base.program.load(str(program_file))  # type: ignore[attr-defined]
    return AlignedJudge(base, manifest, apply_score_map=apply_score_map)
