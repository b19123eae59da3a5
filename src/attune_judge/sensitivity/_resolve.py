"""From a variants file and a base rubric to concrete variants: rubric + judge options each."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from attune_judge.errors import UserError
from attune_judge.rubrics import Rubric
from attune_judge.sensitivity._perturb import (
    change_scale,
    drop_anchors,
    paraphrase_criteria,
    remove_criterion,
    replace_instructions,
    shuffle_criteria,
)
from attune_judge.sensitivity._variants import (
    BASE_VARIANT,
    ChangeScale,
    DropAnchors,
    JudgeModel,
    Paraphrase,
    ReasoningToggle,
    RemoveCriterion,
    ShuffleCriteria,
    VariantsFile,
    WithholdReference,
)

__all__ = ["Variant", "apply_perturbation", "resolve_variants"]

DEFAULT_LM_LABEL = "default"
"""Judge-factor label of a variant whose model is the command's default (``ATTUNE_LM``)."""


@dataclass(frozen=True)
class Variant:
    """One concrete variant: the rubric and judge options to build its judge from."""

    name: str
    """``base`` or the variant's name."""
    perturbations: tuple[str, ...]
    """Perturbation names applied, in order (empty for the base)."""
    rubric: Rubric
    """The (perturbed) rubric; its content hash differs from the base's when changed."""
    lm: str | None
    """Judge model string (``None``: the command's default)."""
    reasoning: bool
    """Chain-of-thought on or off."""
    use_reference: bool
    """Reference reply shown to the judge."""
    kinds: tuple[str, ...] = field(default=())
    """Kinds of the perturbations applied."""

    @property
    def rubric_condition(self) -> str:
        """The rubric/prompt part of the variant (everything but the judge model): the level
        of the ``variant`` factor of the variance decomposition."""
        parts = [
            p for p, k in zip(self.perturbations, self.kinds, strict=True) if k != "judge_model"
        ]
        return "+".join(parts) or BASE_VARIANT

    @property
    def judge_label(self) -> str:
        """The level of the ``judge`` factor: the model string."""
        return self.lm or DEFAULT_LM_LABEL

    def describe(self) -> dict[str, Any]:
        """JSON-ready description (for summary.json)."""
        return {
            "name": self.name,
            "perturbations": list(self.perturbations),
            "rubric": self.rubric.spec(),
            "lm": self.lm,
            "reasoning": self.reasoning,
            "use_reference": self.use_reference,
            "factors": {"variant": self.rubric_condition, "judge": self.judge_label},
        }


def apply_perturbation(variant: Variant, perturbation: Any) -> Variant:
    """The variant with one more perturbation applied (rubric, judge options or model)."""
    rubric, lm = variant.rubric, variant.lm
    reasoning, use_reference = variant.reasoning, variant.use_reference
    p = perturbation
    tag = p.name
    if isinstance(p, ShuffleCriteria):
        rubric = shuffle_criteria(rubric, p.seed, tag=tag)
    elif isinstance(p, ChangeScale):
        rubric = change_scale(
            rubric, p.min, p.max, anchors=p.anchors, instructions=p.instructions, tag=tag
        )
    elif isinstance(p, RemoveCriterion):
        rubric = remove_criterion(rubric, p.criterion, tag=tag)
    elif isinstance(p, DropAnchors):
        rubric = drop_anchors(rubric, tag=tag)
    elif isinstance(p, Paraphrase):
        rubric = paraphrase_criteria(
            rubric, p.criteria, names=p.names, instructions=p.instructions, tag=tag
        )
    elif isinstance(p, WithholdReference):
        use_reference = False
        if p.instructions is not None:
            rubric = replace_instructions(rubric, p.instructions, tag=tag)
    elif isinstance(p, ReasoningToggle):
        reasoning = p.enabled
    elif isinstance(p, JudgeModel):
        lm = p.lm
    else:  # pragma: no cover - the schema admits only the kinds above
        raise TypeError(f"unknown perturbation {p!r}")
    return Variant(
        name=variant.name,
        perturbations=(*variant.perturbations, p.name),
        rubric=rubric,
        lm=lm,
        reasoning=reasoning,
        use_reference=use_reference,
        kinds=(*variant.kinds, p.kind),
    )


def resolve_variants(
    spec: VariantsFile,
    rubric: Rubric,
    *,
    lm: str | None = None,
    source: str = "variants file",
    only: Sequence[str] | None = None,
) -> list[Variant]:
    """The base variant and every variant the file asks for, in file order.

    Parameters
    ----------
    spec
        The validated variants file.
    rubric
        The base rubric.
    lm
        The base judge model (overrides ``base.judge.lm``); ``None`` keeps the file's.
    source
        The file name, for error messages.
    only
        Keep only these variant names (the base is always kept).

    Raises
    ------
    UserError
        A perturbation that does not fit the rubric (unknown criterion, a scale change that
        the rubric kind forbids ...), a variant applying two perturbations of one kind, or an
        unknown name in ``only``.
    """
    settings = spec.base.judge
    base = Variant(
        name=BASE_VARIANT,
        perturbations=(),
        rubric=rubric,
        lm=lm or settings.lm,
        reasoning=settings.reasoning,
        use_reference=settings.use_reference,
    )
    combos = spec.combinations()
    if only is not None:
        names = {n for n, _ in combos}
        unknown = [n for n in only if n not in names and n != BASE_VARIANT]
        if unknown:
            raise UserError(
                f"{source}: no variant named {', '.join(map(repr, unknown))}",
                [f"variants: {', '.join(sorted(names))}"],
            )
        combos = [(n, a) for n, a in combos if n in only]
    out = [base]
    for name, applied in combos:
        kinds = [spec.perturbation(a).kind for a in applied]
        repeated = sorted({k for k in kinds if kinds.count(k) > 1})
        if repeated:
            raise UserError(
                f"{source}: variant {name!r} applies two perturbations of kind "
                f"{', '.join(map(repr, repeated))}; combine at most one of each kind"
            )
        variant = Variant(
            name=name,
            perturbations=(),
            rubric=rubric,
            lm=base.lm,
            reasoning=base.reasoning,
            use_reference=base.use_reference,
        )
        for a in applied:
            try:
                variant = apply_perturbation(variant, spec.perturbation(a))
            except UserError as exc:
                raise UserError(
                    f"{source}: variant {name!r}: {exc.message}", exc.problems
                ) from None
        out.append(variant)
    return out
