"""The judges of a sensitivity run: one per variant (a jury on the base models), identical
judges shared, built in the main process or, from the config alone, in each worker."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attune_judge.errors import UserError
from attune_judge.judges import Judge, JudgeOptions, Jury, JuryMethod, build_judge
from attune_judge.lm import resolve_lm
from attune_judge.rubrics import Rubric, load_rubric
from attune_judge.sensitivity._config import SensitivityConfig
from attune_judge.sensitivity._resolve import Variant, resolve_variants
from attune_judge.sensitivity._variants import VariantsFile, load_variants

if TYPE_CHECKING:
    import dspy

__all__ = ["LMFactory", "sensitivity_judges"]

LMFactory = Callable[[str | None], "dspy.BaseLM"]
"""Model string (``None`` = the default) → ``dspy.LM``."""


def _base_rubric(config: SensitivityConfig, spec: VariantsFile) -> Rubric:
    ref = config.rubric or spec.base.rubric
    if ref is None:
        raise UserError(
            f"{config.variants}: no base rubric; set base.rubric in the file or pass --rubric"
        )
    if config.rubric is None and (ref.endswith((".yaml", ".yml")) or "/" in ref):
        path = Path(ref).expanduser()
        if not path.is_absolute():
            path = Path(config.variants).parent / path
        return load_rubric(path)
    return load_rubric(ref)


def _jury_lms(config: SensitivityConfig) -> list[str]:
    """The base judge's jury models (empty: one model), duplicates refused."""
    lms = list(config.jury_lms or [])
    if len(lms) < 2:
        return []
    twice = sorted({m for m in lms if lms.count(m) > 1})
    if twice:
        raise UserError(f"--lm given twice for {', '.join(twice)}; a jury needs distinct models")
    if config.lm is not None and config.lm != lms[0]:
        raise ValueError("SensitivityConfig.lm must be the first of jury_lms")
    return lms


def _variants(config: SensitivityConfig) -> tuple[VariantsFile, list[Variant]]:
    _jury_lms(config)
    spec = load_variants(config.variants)
    rubric = _base_rubric(config, spec)
    variants = resolve_variants(
        spec,
        rubric,
        lm=config.lm or spec.base.judge.lm or config.lm_settings.lm,
        source=str(config.variants),
        only=config.only,
    )
    return spec, list(variants)


def _unique(judges: dict[str, Judge]) -> dict[str, Judge]:
    """Judges by id: variants with identical judges share one."""
    unique: dict[str, Judge] = {}
    for j in judges.values():
        unique.setdefault(j.judge_id, j)
    return unique


def sensitivity_judges(config: SensitivityConfig) -> list[Judge]:
    """The distinct judges of a sensitivity run, built from its config (module level: worker
    processes and Ray actors build them with this)."""
    _, variants = _variants(config)
    judges = _build_judges(variants, _default_lm_factory(config), **_jury_options(config))
    return list(_unique(judges).values())


def _jury_options(config: SensitivityConfig) -> dict[str, Any]:
    lms = _jury_lms(config)
    return {"jury_lms": lms, "jury": config.jury} if lms else {}


def _default_lm_factory(config: SensitivityConfig) -> LMFactory:
    """Models built as ``attune-judge score`` builds them, so the base judge has the same
    judge_id and request-cache keys as a ``score`` run of the same rubric and model."""
    settings = config.lm_settings

    def make(lm: str | None) -> dspy.BaseLM:
        model = lm or settings.lm
        base = _jury_lms(config) or [config.lm or settings.lm]
        api_base = settings.api_base if model in base else None
        return resolve_lm(
            settings.model_copy(update={"lm": model, "api_base": api_base, "seed": config.seed})
        )

    return make


def _build_judges(
    variants: Sequence[Variant],
    lm_factory: LMFactory,
    *,
    jury_lms: Sequence[str] = (),
    jury: JuryMethod = "mean",
) -> dict[str, Judge]:
    """One judge per variant; with ``jury_lms``, a variant on the base model (the first of
    them) is a jury of the same rubric and settings on every one of those models."""
    lms: dict[str | None, dspy.BaseLM] = {}
    judges: dict[str, Judge] = {}
    for v in variants:
        members = list(jury_lms) if jury_lms and v.lm == jury_lms[0] else [v.lm]
        for m in members:
            if m not in lms:
                lms[m] = lm_factory(m)
        reference = v.use_reference if v.rubric.kind == "reference" else None
        options = JudgeOptions(use_reference=reference, reasoning=v.reasoning)
        if v.rubric.kind != "reference" and not v.use_reference:
            raise UserError(
                f"variant {v.name!r}: withholding the reference needs a reference rubric, "
                f"not {v.rubric.kind!r}"
            )
        if len(members) > 1:
            judges[v.name] = Jury(
                [build_judge(v.rubric, lms[m], options) for m in members],
                method=jury,
            )
        else:
            judges[v.name] = build_judge(v.rubric, lms[v.lm], options)
    return judges
