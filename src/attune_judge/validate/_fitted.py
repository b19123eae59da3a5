"""Was the judge fitted on the labels it is checked against? One check for ``calibrate``,
``validate`` and ``rank --human``.

An aligned or calibrated judge (``attune-judge align``) was fitted on the train and dev items of
its ``split.json``. A run's ``manifest.json`` names it: its judge spec carries the artifact's
hash (``aligned`` or ``calibrated``) and its ``rubric`` argument the artifact's directory
(``score --judge DIR``, ``validate --judge DIR``). :func:`judge_fit` reads that for a judgments
file; :func:`fitted_on_labels` turns it into ``rank --human``'s warning and :func:`fitted_check`
into the typed :class:`~attune_judge.runs.FittedCheck` of ``calibrate`` and ``validate``: the
warning plus the headline statistics recomputed on the held-out items only, beside the overall
ones. When the check cannot be made (judgments copied out of their run directory, the artifact
not found or changed) each says that it was skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from attune_judge import runs
from attune_judge.calibration import CalibrationReport, few_clusters_warning, fmt_metric
from attune_judge.errors import UserError
from attune_judge.judges._aligned import fitted_items, is_aligned_judge, read_manifest
from attune_judge.runs import FittedCheck, HeldOutRow

if TYPE_CHECKING:
    from attune_judge.data import Judgment

__all__ = [
    "MIN_HELD_OUT",
    "JudgeFit",
    "fitted_check",
    "fitted_check_lines",
    "fitted_on_labels",
    "judge_fit",
]

MIN_HELD_OUT = 3
"""Fewest held-out items (in at least two conversations) with a held-out figure: on two items a
rank correlation is ±1 whatever the judge does, and a cluster bootstrap needs two clusters."""
HEADLINE = ("spearman", "cohen_kappa_quadratic", "cohen_kappa", "raw_agreement")
"""The statistics shown held out only: the first two a judge has (categorical: the last two)."""


@dataclass(frozen=True)
class JudgeFit:
    """What a judgments file tells of the items its judge was fitted on."""

    kind: str = "aligned"
    """``aligned`` (an optimised program) or ``calibrated`` (a calibration head)."""
    artifact: str | None = None
    """The judge's directory."""
    items: frozenset[str] | None = None
    """Its train and dev items; ``None`` when the check cannot be made."""
    skipped: str | None = None
    """Why the check cannot be made (the statement printed)."""


def _skipped(reason: str) -> JudgeFit:
    return JudgeFit(
        skipped=f"{reason}: the check that the judge was not fitted on these human labels (an "
        "aligned or calibrated judge's train/dev split) was skipped"
    )


def judge_fit(source: Path, js: Sequence[Judgment]) -> JudgeFit | None:
    """The aligned or calibrated judge behind ``js`` (read from ``source``) and the items it was
    fitted on, from the run's ``manifest.json``; ``None`` when the judge is neither (nothing to
    check). ``skipped`` says why the check cannot be made: no manifest beside ``source``, an
    unreadable one, or an artifact directory that is not the one the run recorded."""
    if not (source.parent / "manifest.json").is_file():
        return _skipped(
            f"no manifest.json beside {source.name} (judgments outside their run directory)"
        )
    try:
        manifest = runs.read_manifest(source.parent)
    except UserError as exc:
        return _skipped(f"the run's manifest.json is unreadable ({exc})")
    if not isinstance(manifest, runs.RunManifest):
        return None
    for judge_id in dict.fromkeys(j.judge_id for j in js):
        spec = manifest.judges.get(judge_id)
        for kind in ("aligned", "calibrated"):
            entry = getattr(spec, kind, None)
            if isinstance(entry, dict):
                return _artifact_fit(kind, entry.get("artifact_hash"), manifest)
    return None


def _artifact_fit(kind: str, recorded: object, manifest: runs.RunManifest) -> JudgeFit:
    """The fitted items of the run's artifact directory (its ``rubric`` argument), when its
    hash is the judge's."""
    where = str(manifest.arguments.get("rubric") or "")
    if not is_aligned_judge(where) or read_manifest(where).artifact_hash != recorded:
        return _skipped(
            f"the judge is {'an' if kind == 'aligned' else 'a'} {kind} judge (artifact "
            f"{recorded}) whose directory was not found (the run's rubric {where!r} is not it)"
        )
    return JudgeFit(kind=kind, artifact=where, items=frozenset(fitted_items(where)))


def _overlap_warning(fit: JudgeFit, n_fitted: int, n_items: int, consequence: str) -> str:
    return (
        f"{n_fitted} of the {n_items} human-labelled items scored are in the train/dev split "
        f"of the {fit.kind} judge {fit.artifact} (it was fitted on them): {consequence}; use "
        "labels outside its train/dev split (e.g. only its test split)"
    )


def fitted_on_labels(
    source: Path,
    js: Sequence[Judgment],
    labelled: set[str],
    consequence: str = "the PPI correction is not valid",
    say_skipped: bool = True,
) -> str | None:
    """A warning when the judge is an aligned or calibrated judge fitted (train/dev split) on
    some of the human-labelled items it scored: PPI's correction assumes it was not; also when
    the check cannot be made, saying it was skipped (unless ``say_skipped`` is false);
    ``None`` otherwise."""
    fit = judge_fit(source, js)
    if fit is None or (fit.items is None and not say_skipped):
        return None
    if fit.items is None:
        return fit.skipped
    scored = labelled & {j.item_id for j in js}
    overlap = fit.items & scored
    if not overlap:
        return None
    return _overlap_warning(fit, len(overlap), len(scored), consequence)


def fitted_check(
    fit: JudgeFit | None,
    compared: Mapping[str, str],
    overall: CalibrationReport,
    recompute: Callable[[set[str]], CalibrationReport],
    *,
    judges: Collection[str] | None = None,
    consequence: str = "its agreement with people on them is not held out and may overstate it",
) -> FittedCheck | None:
    """The typed check of ``calibrate`` and ``validate``; ``None`` when there is nothing to say
    (not an aligned or calibrated judge, or none of its fitted items compared).

    Parameters
    ----------
    fit
        :func:`judge_fit` of the judgments.
    compared
        Item id → conversation of every item compared (labelled by people and judged).
    overall
        The calibration on all of them.
    recompute
        The same calibration on the given items only (``UserError`` when it cannot be made).
    judges
        Only these judges' rows (default every judge of ``overall``).
    """
    if fit is None:
        return None
    if fit.items is None:
        return FittedCheck(status="skipped", message=fit.skipped or "")
    fitted = fit.items & compared.keys()
    if not fitted:
        return None
    keep = set(compared) - fitted
    n_conv = len({compared[i] for i in keep})
    check = FittedCheck(
        status="overlap",
        message=_overlap_warning(fit, len(fitted), len(compared), consequence),
        artifact=fit.artifact,
        n_items=len(compared),
        n_fitted=len(fitted),
        n_held_out_conversations=n_conv,
    )
    if len(keep) < MIN_HELD_OUT or n_conv < 2:
        check.held_out_note = (
            f"too few held-out items for a held-out figure: {len(keep)} in {n_conv} "
            f"conversation(s) (at least {MIN_HELD_OUT} in two are needed)"
        )
        return check
    try:
        held = recompute(keep)
    except UserError as exc:
        check.held_out_note = f"no held-out figure on the {len(keep)} held-out items: {exc}"
        return check
    check.held_out = _rows(overall, held, judges)
    check.held_out_note = few_clusters_warning(n_conv)
    return check


def _rows(
    overall: CalibrationReport, held: CalibrationReport, judges: Collection[str] | None
) -> list[HeldOutRow]:
    """The headline statistics of each judge and dimension: overall and held out only."""
    held_by = {
        (d.dimension, j.judge): j.vs_humans.metrics for d in held.dimensions for j in d.judges
    }
    rows = []
    for d in overall.dimensions:
        for j in d.judges:
            if judges is not None and j.judge not in judges:
                continue
            metrics = j.vs_humans.metrics
            there = held_by.get((d.dimension, j.judge), {})
            for name in [m for m in HEADLINE if m in metrics][:2]:
                rows.append(
                    HeldOutRow(
                        dimension=d.dimension,
                        judge=j.judge,
                        metric=name,
                        overall=metrics[name],
                        held_out=there.get(name),
                    )
                )
    return rows


def fitted_check_lines(check: FittedCheck) -> list[str]:
    """The check as console Markdown: the warning (or the skipped check) and the table of the
    held-out-only figures beside the overall ones (or why there are none)."""
    if check.status == "skipped":
        return [f"Note: {check.message}."]
    lines = [f"**Warning:** {check.message}.", ""]
    n_all, n_held = check.n_items or 0, (check.n_items or 0) - (check.n_fitted or 0)
    if not check.held_out:
        return [*lines, f"Held out only: {check.held_out_note}."]
    lines += [
        f"Held out only: the {n_held} items ({check.n_held_out_conversations} conversations) "
        "the judge was not fitted on, beside all items compared:",
        "",
        f"| dimension | judge | metric | all {n_all} items | {n_held} held-out items |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {r.dimension} | {r.judge} | {r.metric} | {fmt_metric(r.overall)} | "
        f"{fmt_metric(r.held_out)} |"
        for r in check.held_out
    ]
    if check.held_out_note:
        lines += ["", f"Caution (held out only): {check.held_out_note}."]
    return lines
