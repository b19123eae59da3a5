"""The variants file: a base rubric and judge, named perturbations, and which to combine.

A YAML file validated by a strict schema (unknown fields are errors; every error names the file
and the field)::

    name: attunebench-reference-sensitivity
    base:
      rubric: attunebench-reference      # built-in name, or a path relative to this file
      judge: {lm: local, reasoning: false, use_reference: true}
    perturbations:
      - {name: shuffled, kind: shuffle_criteria, seed: 1}
      - {name: scale-1-5, kind: change_scale, min: 1, max: 5, anchors: rescale}
      - {name: no-helpfulness, kind: remove_criterion, criterion: helpfulness}
      - {name: no-reference, kind: withhold_reference}
      - {name: no-anchors, kind: drop_anchors}
      - {name: paraphrased, kind: paraphrase, criteria: {tone_match: "..."}}
      - {name: reasoning-on, kind: reasoning, enabled: true}
      - {name: other-judge, kind: judge_model, lm: openai/gpt-4.1-mini}
    # which variants to run (besides the base); pick one of:
    variants:                             # explicit combinations
      - {name: shuffled+no-anchors, apply: [shuffled, no-anchors]}
    full_factorial: true                  # or every combination of the factors' levels
    factors:
      - {name: order, levels: [shuffled]}          # each factor also has its base level
      - {name: judge, levels: [other-judge]}
    # with neither: one variant per perturbation (one at a time)
    analysis: {alpha: 0.05, tau_threshold: 0.8, adjust: bonferroni,
               B: 2000, seed: 0}
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict, Field, model_validator

from attune_judge._bootstrap import DEFAULT_B, Replicates
from attune_judge.rubrics import read_yaml, validate_mapping

__all__ = [
    "BASE_VARIANT",
    "AnalysisSettings",
    "BaseSpec",
    "ChangeScale",
    "DropAnchors",
    "Factor",
    "JudgeModel",
    "JudgeSettings",
    "Paraphrase",
    "Perturbation",
    "ReasoningToggle",
    "RemoveCriterion",
    "ShuffleCriteria",
    "VariantSpec",
    "VariantsFile",
    "WithholdReference",
    "load_variants",
    "parse_variants",
]

BASE_VARIANT = "base"
"""Name of the unperturbed variant (reserved)."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_name(value: str) -> str:
    if not _NAME.match(value):
        raise ValueError(
            f"name {value!r} must start with a letter or digit and contain only letters, "
            "digits, '_', '-' and '.'"
        )
    if value == BASE_VARIANT:
        raise ValueError(f"{BASE_VARIANT!r} is reserved for the unperturbed variant")
    return value


_Name = Annotated[str, AfterValidator(_check_name)]
"""A perturbation's or variant's name (see :func:`_check_name`)."""


class JudgeSettings(_Strict):
    """Judge options of the base variant."""

    lm: str | None = None
    """Judge model string; ``None``: the command's ``--lm`` (or ``ATTUNE_LM``)."""
    reasoning: bool = False
    """Chain-of-thought before the scores."""
    use_reference: bool = True
    """Show the participant-preferred reference reply to the judge."""


class BaseSpec(_Strict):
    """The unperturbed rubric and judge."""

    rubric: str | None = None
    """Built-in rubric name or YAML path (relative to the variants file); ``None``: the
    command's ``--rubric``."""
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    """Judge options."""


class _Perturbation(_Strict):
    name: _Name
    """Unique name, used in ``variants``, ``factors`` and the rubric version tag."""


class ShuffleCriteria(_Perturbation):
    """Criteria presented in a shuffled order."""

    kind: Literal["shuffle_criteria"]
    seed: int = 0
    """Seed of the shuffle."""


class ChangeScale(_Perturbation):
    """Every criterion rated on another integer scale."""

    kind: Literal["change_scale"]
    min: int = 1
    """Lowest score of the new scale."""
    max: int
    """Highest score of the new scale (5, 7, 10 ...)."""
    anchors: Literal["rescale", "drop"] = "rescale"
    """Move anchors to the nearest new level, or drop them."""
    instructions: str | None = None
    """Replacement instructions (say the new range); default: rewrite ``from a to b``."""

    @model_validator(mode="after")
    def _ordered(self) -> ChangeScale:
        if self.min >= self.max:
            raise ValueError(f"min ({self.min}) must be less than max ({self.max})")
        return self


class RemoveCriterion(_Perturbation):
    """One criterion left out."""

    kind: Literal["remove_criterion"]
    criterion: str
    """Id of the criterion to remove."""


class WithholdReference(_Perturbation):
    """The judge does not see the participant-preferred reference reply."""

    kind: Literal["withhold_reference"]
    instructions: str | None = None
    """Optional replacement instructions that do not mention a reference (changes the rubric)."""


class DropAnchors(_Perturbation):
    """Every anchor description removed (scales kept)."""

    kind: Literal["drop_anchors"]


class Paraphrase(_Perturbation):
    """Criterion descriptions replaced by paraphrases given here."""

    kind: Literal["paraphrase"]
    criteria: dict[str, str] = Field(min_length=1)
    """Criterion id → paraphrased description."""
    names: dict[str, str] = Field(default_factory=dict)
    """Optional criterion id → paraphrased short name."""
    instructions: str | None = None
    """Optional paraphrased instructions."""


class ReasoningToggle(_Perturbation):
    """Chain-of-thought switched on or off."""

    kind: Literal["reasoning"]
    enabled: bool
    """Reasoning on (``true``) or off (``false``)."""


class JudgeModel(_Perturbation):
    """Another judge model."""

    kind: Literal["judge_model"]
    lm: str
    """Model string of the other judge."""


Perturbation = Annotated[
    ShuffleCriteria
    | ChangeScale
    | RemoveCriterion
    | WithholdReference
    | DropAnchors
    | Paraphrase
    | ReasoningToggle
    | JudgeModel,
    Field(discriminator="kind"),
]
"""One declared perturbation (discriminated by ``kind``)."""


class VariantSpec(_Strict):
    """One explicit combination of perturbations."""

    name: _Name
    """Variant name (unique, not ``base``)."""
    apply: list[str] = Field(min_length=1)
    """Perturbation names, applied in this order."""


class Factor(_Strict):
    """A factor of a full-factorial design: its levels are perturbations (plus the base)."""

    name: str
    """Factor name."""
    levels: list[str] = Field(min_length=1)
    """Perturbation names; the factor's base level (no perturbation) is implicit."""


class AnalysisSettings(_Strict):
    """Statistics of the analysis and of the verdicts."""

    alpha: float = Field(default=0.05, gt=0, lt=1)
    """Declared α: intervals at 1 − α, verdict rule at α."""
    tau_threshold: float = Field(default=0.8, ge=-1, le=1)
    """A variant whose Kendall τ upper bound is below this is unstable."""
    adjust: Literal["bonferroni", "none"] = "bonferroni"
    """Multiplicity adjustment over the model pairs of a variant."""
    B: Replicates = Field(
        default=DEFAULT_B, validation_alias=AliasChoices("B", "bootstrap_replicates")
    )
    """Replicates of the paired cluster bootstrap (its earlier name ``bootstrap_replicates``
    is read too)."""
    seed: int = 0
    """Seed of the cluster weights."""
    variance_method: Literal["auto", "anova", "mixedlm"] = "auto"
    """Variance decomposition method."""


class VariantsFile(_Strict):
    """A variants file (see the module docstring)."""

    name: str
    """Name of the sensitivity study."""
    description: str | None = None
    """What the study asks."""
    base: BaseSpec = Field(default_factory=BaseSpec)
    """The unperturbed rubric and judge."""
    perturbations: list[Perturbation] = Field(min_length=1)
    """Declared perturbations."""
    variants: list[VariantSpec] = Field(default_factory=list)
    """Explicit combinations to run."""
    full_factorial: bool = False
    """Run every combination of the ``factors``' levels instead."""
    factors: list[Factor] = Field(default_factory=list)
    """Factors of the full-factorial design."""
    analysis: AnalysisSettings = Field(default_factory=AnalysisSettings)
    """Statistics settings."""

    @model_validator(mode="after")
    def _consistent(self) -> VariantsFile:
        names = [p.name for p in self.perturbations]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"duplicate perturbation names: {dup}")
        known = set(names)
        vnames = [v.name for v in self.variants]
        dupv = sorted({n for n in vnames if vnames.count(n) > 1})
        if dupv:
            raise ValueError(f"duplicate variant names: {dupv}")
        for v in self.variants:
            unknown = [a for a in v.apply if a not in known]
            if unknown:
                raise ValueError(f"variant {v.name!r} applies unknown perturbation(s) {unknown}")
            if len(set(v.apply)) != len(v.apply):
                raise ValueError(f"variant {v.name!r} applies a perturbation twice")
        if self.full_factorial:
            if self.variants:
                raise ValueError("give either 'variants' or 'full_factorial: true', not both")
            if not self.factors:
                raise ValueError("full_factorial needs 'factors'")
        elif self.factors:
            raise ValueError("'factors' are only used with 'full_factorial: true'")
        seen: dict[str, str] = {}
        for f in self.factors:
            for level in f.levels:
                if level not in known:
                    raise ValueError(f"factor {f.name!r} has unknown perturbation {level!r}")
                if level in seen:
                    raise ValueError(
                        f"perturbation {level!r} is a level of factors {seen[level]!r} "
                        f"and {f.name!r}"
                    )
                seen[level] = f.name
        return self

    def perturbation(self, name: str) -> Any:
        """The perturbation called ``name``."""
        for p in self.perturbations:
            if p.name == name:
                return p
        raise KeyError(name)

    def combinations(self) -> list[tuple[str, list[str]]]:
        """``(variant name, perturbation names)`` of every non-base variant to run.

        Explicit ``variants``; or, with ``full_factorial``, every combination of factor levels
        except all-base, named by joining the applied perturbations with ``+``; or one variant
        per perturbation.
        """
        if self.variants:
            return [(v.name, list(v.apply)) for v in self.variants]
        if self.full_factorial:
            out = []
            for combo in itertools.product(*[[None, *f.levels] for f in self.factors]):
                applied = [c for c in combo if c is not None]
                if applied:
                    out.append(("+".join(applied), applied))
            return out
        return [(p.name, [p.name]) for p in self.perturbations]


def parse_variants(data: Any, source: str) -> VariantsFile:
    """Validate variants-file data; ``UserError`` lists every problem as ``source: field: msg``."""
    return validate_mapping(VariantsFile, data, source, "variants file", name_key="name")


def load_variants(path: str | Path) -> VariantsFile:
    """Read and validate a variants YAML file.

    Raises
    ------
    UserError
        Missing file, invalid YAML, or schema problems (each naming file and field).
    """
    path = Path(path).expanduser()
    return parse_variants(read_yaml(path, "variants file"), str(path))
