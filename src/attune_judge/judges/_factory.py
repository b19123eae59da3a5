"""Build a judge from a rubric (or baseline name) and a model: the runner's and CLI's door."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from attune_judge.judges._calibrated import CalibratedJudge, calibrated_head
from attune_judge.judges._criterion import SCORE_MODES, CriterionJudge, default_score_mode
from attune_judge.judges._criterion_prompt import multi_token_levels
from attune_judge.judges._jury import Jury, JuryMethod
from attune_judge.judges._lexicon import LexiconJudge
from attune_judge.judges._pairwise import PairwiseJudge
from attune_judge.judges._protocol import Judge
from attune_judge.judges._reference import ReferenceJudge
from attune_judge.lm import LMSettings, resolve_lm
from attune_judge.rubrics import Rubric, load_rubric

if TYPE_CHECKING:
    import dspy

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

Model = LMSettings | str | None
"""A judge model as :func:`build_judge` takes it besides a ``dspy.BaseLM``: its settings, a
model string (with the ``ATTUNE_*`` settings: :meth:`LMSettings.from_env`), or ``None``
(``ATTUNE_LM``, default ``local``)."""


@dataclass(frozen=True)
class JudgeOptions:
    """The judge options of :func:`build_judge` (model settings are the model's:
    :class:`~attune_judge.lm.LMSettings`)."""

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

    def __post_init__(self) -> None:
        if self.score_mode is not None and self.score_mode not in SCORE_MODES:
            raise ValueError(f"score_mode must be one of {SCORE_MODES}, not {self.score_mode!r}")


JudgeBuilder = Callable[[Rubric, "dspy.BaseLM", JudgeOptions], Judge]
"""Builds the judge of one rubric kind from the rubric, the model and the options."""


def _criterion_judge(rubric: Rubric, model: dspy.BaseLM, o: JudgeOptions) -> Judge | None:
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


def _score_mode(rubric: Rubric, model: dspy.BaseLM, mode: str | None) -> str:
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


def _reference(rubric: Rubric, model: dspy.BaseLM, o: JudgeOptions) -> Judge:
    return _criterion_judge(rubric, model, o) or ReferenceJudge(
        rubric,
        model,
        use_reference=bool(o.use_reference if o.use_reference is not None else True),
        reasoning=o.reasoning,
    )


def _checklist(rubric: Rubric, model: dspy.BaseLM, o: JudgeOptions) -> Judge:
    judge = _criterion_judge(rubric, model, o)
    if judge is not None:
        return judge
    _no_reference_option(rubric, o)
    raise ValueError("checklist rubrics are scored one question per call, without reasoning")


def _pairwise(rubric: Rubric, model: dspy.BaseLM, o: JudgeOptions) -> Judge:
    _criterion_judge(rubric, model, o)
    _no_reference_option(rubric, o)
    return PairwiseJudge(rubric, model, reasoning=o.reasoning)


def _behaviour(rubric: Rubric, model: dspy.BaseLM, o: JudgeOptions) -> Judge:
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


def resolve_judge_lm(model: dspy.BaseLM | Model) -> dspy.BaseLM:
    """The ``dspy.LM`` of ``model``: a ``dspy.BaseLM`` as it is, else resolved
    (:func:`attune_judge.lm.resolve_lm`; a string or ``None`` with the ``ATTUNE_*`` settings)."""
    if model is None or isinstance(model, str):
        model = LMSettings.from_env(lm=model)
    if isinstance(model, LMSettings):
        return resolve_lm(model)
    return model


def build_judge(
    kind_or_rubric: str | Path | Rubric,
    model: dspy.BaseLM | Model = None,
    options: JudgeOptions = JudgeOptions(),
) -> Judge:
    """A judge for a rubric (object, built-in name or YAML path) or a baseline name.

    Parameters
    ----------
    kind_or_rubric
        ``length``, ``lexical`` or ``lexicon`` (no model), a :class:`Rubric`, a built-in rubric
        name (``attunebench-reference``), the path of a rubric YAML file, or the directory of
        an aligned judge (``attune-judge align``; its own rubric, program and options). The
        rubric's ``kind`` picks the judge (:data:`JUDGE_KINDS`).
    model
        The model: a ``dspy.BaseLM``, its :class:`~attune_judge.lm.LMSettings`, a model string
        (``local``, ``openai/...``; with the ``ATTUNE_*`` settings) or ``None`` (``ATTUNE_LM``).
    options
        The judge options (:class:`JudgeOptions`).

    Raises
    ------
    UserError
        Unknown rubric, invalid rubric file, missing key, unreachable server.
    """
    if isinstance(kind_or_rubric, str) and kind_or_rubric in BASELINES:
        return BASELINES[kind_or_rubric]()
    if is_aligned_judge(kind_or_rubric):
        return load_aligned_judge(kind_or_rubric, model, options)  # type: ignore[arg-type]
    rubric = kind_or_rubric if isinstance(kind_or_rubric, Rubric) else load_rubric(kind_or_rubric)
    builder = JUDGE_KINDS.get(rubric.kind)
    if builder is None:
        raise ValueError(f"no judge for rubric kind {rubric.kind!r}; kinds: {sorted(JUDGE_KINDS)}")
    return builder(rubric, resolve_judge_lm(model), options)


def build_jury(
    kind_or_rubric: str | Path | Rubric,
    models: Sequence[dspy.BaseLM | Model],
    method: JuryMethod = "mean",
    options: JudgeOptions = JudgeOptions(),
) -> Jury:
    """A jury: one judge per model of ``models`` (same rubric and options), combined by
    ``method``."""
    rubric = kind_or_rubric if isinstance(kind_or_rubric, Rubric) else load_rubric(kind_or_rubric)
    return Jury([build_judge(rubric, m, options) for m in models], method=method)


def load_aligned_judge(
    path: Path | str,
    model: dspy.BaseLM | Model = None,
    options: JudgeOptions | None = None,
    *,
    apply_score_map: bool = True,
) -> AlignedJudge | CalibratedJudge:
    """Rebuild an aligned judge from its directory (a calibrated one from ``align --method
    calibrate``: :class:`~attune_judge.judges._calibrated.CalibratedJudge`).

    Parameters
    ----------
    path
        The artifact directory (written by ``attune-judge align``).
    model
        The model, as :func:`build_judge` takes it; ``None`` = the model it was aligned on
        (with the ``ATTUNE_*`` settings). Another model works but is logged as a warning: the
        demonstrations were chosen for the recorded one.
    options
        Judge options asked of it: the artifact fixes them, so only the defaults and the ones
        it fixes the same way are accepted (a ``UserError`` names the others).
    apply_score_map
        Map the judge's scores to the human scale with the saved monotone map.
    """

    import hashlib

    root = Path(path)
    manifest = read_manifest(root)
    if model is None:
        model = manifest.lm
    asked = options or JudgeOptions()
    if manifest.format == CALIBRATED_FORMAT:
        asking = (asked.score_mode, asked.reasoning)
        head = calibrated_head(root, manifest, asking, _model_name(model))
        own = _fixed_options(manifest.judge_options, score_mode="expected")
        return CalibratedJudge(
            build_judge(aligned_rubric(root, manifest), model, own), manifest, head
        )
    if manifest.format != FORMAT:
        raise UserError(f"{root}: unsupported aligned-judge format {manifest.format!r}")
    rubric = aligned_rubric(root, manifest)
    program_file = root / "program.json"
    if not program_file.is_file():
        raise UserError(f"{root}: program.json is missing")
    digest = hashlib.sha256(program_file.read_bytes()).hexdigest()
    if digest != manifest.program_sha256:
        raise UserError(f"{program_file}: sha256 differs from the manifest's (edited?)")
    if asked.score_mode == "expected" or asked.per_criterion or asked.demos:
        raise UserError(
            f"{root}: an aligned judge runs its optimised one-call program (score mode "
            "sampled); --score-mode expected, --per-criterion and extra demonstrations do not "
            "apply to it"
        )
    name = _model_name(model)
    if name is not None and name != manifest.lm:
        logging.getLogger(__name__).warning(
            "aligned judge %s was aligned on %s; running it on %s", root, manifest.lm, name
        )
    fixed = dict(manifest.judge_options)
    if rubric.kind != "reference":
        fixed.pop("use_reference", None)
    own = _fixed_options(fixed, score_mode="sampled", per_criterion=False)
    base = build_judge(rubric, model, own)
    base.program.load(str(program_file))  # type: ignore[attr-defined]
    return AlignedJudge(base, manifest, apply_score_map=apply_score_map)


def _fixed_options(
    fixed: dict[str, bool], score_mode: str, per_criterion: bool | None = None
) -> JudgeOptions:
    """The judge options an aligned judge's artifact fixes (``use_reference``, ``reasoning``)."""
    return JudgeOptions(
        use_reference=fixed.get("use_reference"),
        reasoning=fixed.get("reasoning", False),
        score_mode=score_mode,
        per_criterion=per_criterion,
    )


def _model_name(model: dspy.BaseLM | Model) -> str | None:
    """The model string of a model given by name or settings (``None`` for a ``dspy.BaseLM``)."""
    return model.lm if isinstance(model, LMSettings) else model
