"""``calibrate`` as a library call: a judge's labels against people's, from files.

:func:`calibrate_files` reads the human and judge files (ratings, preferences, judgments or a
run directory), picks the analysis from what they hold (rating agreement, behaviour
agreement, pairwise preference agreement), optionally adds the no-model baselines, and with
``out`` writes the run directory (``manifest.json``, ``summary.json``, ``report.md`` /
``report.html`` with figures). The statistics come from :mod:`attune_judge.calibration`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attune_judge import calibration as cal
from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.data import JudgeItem, Judgment, Rating, read_jsonl, read_judgments
from attune_judge.data.adapters import is_inspect_log
from attune_judge.errors import UserError
from attune_judge.report import calibration_figure_data
from attune_judge.runs import CalibrateSummary, CalibrationBlock, Confusion, record_json
from attune_judge.validate._baselines import baseline_comparison
from attune_judge.validate._files import (
    check_human_labels,
    check_level,
    inclusion_weights,
    jsonl_path,
    read_labels,
    record_kind,
    weighting_note,
)
from attune_judge.validate._fitted import fitted_check, fitted_check_lines, judge_fit
from attune_judge.validate._inspect import check_labels_name_samples, scorer_judgments
from attune_judge.validate._preferences import calibrate_preferences
from attune_judge.validate._rundir import check_out_dir, write_run_dir

__all__ = ["LEVELS", "TIE_POLICIES", "CalibrationOutcome", "calibrate_files"]

LEVELS = ("nominal", "ordinal", "interval", "ratio")
"""Levels of measurement of Krippendorff's α."""
TIE_POLICIES = ("strict", "half", "exclude")
"""How a tie of the judge or the people counts in preference agreement."""


@dataclass
class CalibrationOutcome:
    """What :func:`calibrate_files` computed."""

    markdown: str
    """The report as Markdown (what ``calibrate`` prints)."""
    data: dict[str, Any]
    """The result as JSON-ready data (what ``calibrate --json`` prints)."""
    report_files: tuple[Path, Path] | None = None
    """``report.md`` and ``report.html`` of the run directory, when ``out`` was given."""
    arguments: dict[str, Any] = field(default_factory=dict)
    """The settings, as recorded in the run directory's manifest."""


def _check_options(measurement: str, tie_policy: str, level: float) -> None:
    check_level(level)
    if measurement not in LEVELS:
        raise UserError(
            f"--measurement must be nominal, ordinal, interval or ratio, not {measurement!r}"
        )
    if tie_policy not in TIE_POLICIES:
        raise UserError(f"--tie-policy must be strict, half or exclude, not {tie_policy!r}")


def calibrate_files(
    human: Path,
    judge: Path,
    *,
    measurement: str = "ordinal",
    dimensions: Sequence[str] | None = None,
    scale: Sequence[float] | None = None,
    B: int = DEFAULT_B,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
    epsilon: float = 0.2,
    tie_policy: str = "strict",
    margin: float = 0.0,
    items: Path | None = None,
    out: Path | None = None,
    scorers: Sequence[str] | None = None,
) -> CalibrationOutcome:
    """Agreement of a judge with people, from their files (``attune-judge calibrate``).

    Parameters
    ----------
    human
        Human Rating or Preference JSONL. Rating values must be finite numbers or text
        (categories), not both unless ``measurement="nominal"``; booleans are refused.
    judge
        The judge's Rating / Preference / Judgment JSONL, or a run directory; or an Inspect
        AI log (or folder of logs): its scorers' scores are the judges (several: a panel,
        plus their mean as a jury when all score on 0-1; see :mod:`attune_judge.validate._inspect`).
    measurement, dimensions, scale, epsilon
        Level of measurement for α, only these dimensions, the declared rating scale
        (weighted κ uses its index), ε of the alternative annotator test.
    B, seed, level
        Bootstrap replicates, seed and confidence level of every interval.
    tie_policy, margin
        Preferences: how ties count; with judge scores, ``|Δscore| <= margin`` is a tie.
    items
        JudgeItem JSONL of the judged items: adds the length-only and lexicon baselines
        (needs the judge's Judgment records).
    out
        Run directory to write (refused if it holds another command's run).
    scorers
        With an Inspect log: only these scorers (default all).

    Raises
    ------
    UserError
        Bad option, missing file, unreadable or unusable record (file and line named).
    """
    _check_options(measurement, tie_policy, level)
    log = Path(judge) if is_inspect_log(Path(judge)) else None
    if scorers and log is None:
        raise UserError(f"--scorer picks an Inspect scorer; {judge} is not an Inspect log")
    hpath, jpath = jsonl_path(human), log or jsonl_path(judge)
    if out is not None:
        check_out_dir(out)
    arguments: dict[str, Any] = {
        "human": str(hpath),
        "judge": str(jpath),
        "level": measurement,  # manifest keys kept: "level" (measurement), "ci" (confidence)
        "dimension": list(dimensions) if dimensions else None,
        "scale": ",".join(f"{v:g}" for v in scale) if scale else None,
        "B": B,
        "seed": seed,
        "ci": level,
        "epsilon": epsilon,
        "tie_policy": tie_policy,
        "margin": margin,
        "items": str(items) if items is not None else None,
    }
    if log is not None:
        arguments["scorer"] = list(scorers) if scorers else None
    hkind = record_kind(hpath)
    if log is not None and hkind != "rating":
        raise UserError(
            f"{hpath}: an Inspect scorer's scores are compared with human ratings (Rating "
            f"records), not {hkind} records"
        )
    weights = inclusion_weights(hpath)
    if hkind == "preference":
        text, data, block = calibrate_preferences(
            hpath, jpath, tie_policy=tie_policy, margin=margin, B=B, seed=seed, level=level
        )
        note = _unweighted(weights, hpath, "preference agreement")
        outcome = CalibrationOutcome(text, data, arguments=arguments)
        if out is not None:
            summary = CalibrateSummary(calibration=block, label_weighting=note)
            outcome.report_files = write_run_dir(out, arguments, summary=summary)
        return _with_note(outcome, note)
    if hkind != "rating":
        raise UserError(f"{hpath}: expected Rating or Preference records, found {hkind}")
    check_human_labels(
        hpath,
        measurement,
        scale=(min(scale), max(scale)) if scale else None,
        dimensions=dimensions or None,
    )
    hum = read_labels(hpath, Rating)
    judgments = None
    if log is not None:
        judgments = scorer_judgments(log, scorers)
        check_labels_name_samples(hpath, {r.item_id for r in hum}, judgments, log)
    outcome = _calibrate_ratings(
        hum,
        jpath,
        arguments,
        measurement=measurement,
        dimensions=dimensions,
        scale=scale,
        epsilon=epsilon,
        items=items,
        out=out,
        weights=weights,
        judgments=judgments,
    )
    return outcome


def _unweighted(weights: dict[str, float] | None, hpath: Path, what: str) -> str | None:
    """The statement that labels drawn with unequal probabilities were NOT weighted."""
    if weights is None:
        return None
    probs = [1 / w for w in weights.values()]
    return (
        f"Labels of {hpath.name} were drawn with unequal inclusion probabilities "
        f"({min(probs):.3g} to {max(probs):.3g}) but {what} is NOT weighted: it describes the "
        "labelled sample, not all items."
    )


def _behaviour_binary(res: Any) -> list[cal.BinaryAgreement]:
    """The pass/fail figures of every scope of a behaviour agreement: all, categories, items."""
    groups = [res.overall, *res.per_category, *res.per_item]
    return [g.binary for g in groups if g.binary is not None]


def _behaviour_confusion(res: Any) -> Confusion | None:
    """The judge's yes/no against the participants' over all items (rows: participants)."""
    b = res.overall.binary
    if b is None:
        return None
    return Confusion(
        categories=["no", "yes"],
        counts=[[b.tn, b.fp], [b.fn, b.tp]],
        human_label=f"participants ({res.view})",
        judge_label="judge",
    )


def _with_note(outcome: CalibrationOutcome, note: str | None) -> CalibrationOutcome:
    """The weighting statement appended to the console text and kept in the JSON data."""
    if note:
        outcome.markdown += f"\n{note}\n"
        outcome.data["label_weighting"] = note
    return outcome


def _calibrate_ratings(
    hum: list[Rating],
    jpath: Path,
    arguments: dict[str, Any],
    *,
    measurement: str,
    dimensions: Sequence[str] | None,
    scale: Sequence[float] | None,
    epsilon: float,
    items: Path | None,
    out: Path | None,
    weights: dict[str, float] | None = None,
    judgments: list[Judgment] | None = None,
) -> CalibrationOutcome:
    """Ratings against the judge's ratings, judgments (read from ``jpath``, or given) or
    behaviour judgments."""
    B, seed, level = arguments["B"], arguments["seed"], arguments["ci"]
    inspect = judgments is not None  # an Inspect log's scorers: no aligned judge to check
    jkind = "judgment" if judgments is not None else record_kind(jpath)
    if jkind == "judgment":
        judgments = judgments if judgments is not None else read_judgments(jpath)
        behaviour = cal.judgments_to_behaviour_ratings(judgments)
        if behaviour and any(cal.is_behaviour_dimension(r.dimension) for r in hum):
            res = cal.behaviour_agreement(hum, behaviour, B=B, seed=seed, level=level)
            note = _unweighted(weights, Path(arguments["human"]), "behaviour agreement")
            outcome = CalibrationOutcome(
                cal.behaviour_markdown(res), res.model_dump(), arguments=arguments
            )
            if out is not None:
                summary = CalibrateSummary(
                    calibration=CalibrationBlock(
                        metrics=cal.behaviour_metrics(res),
                        join=res.join,
                        view=res.view,
                        binary=_behaviour_binary(res),
                        confusion=_behaviour_confusion(res),
                        warnings=res.warnings,
                    ),
                    label_weighting=note,
                )
                outcome.report_files = write_run_dir(out, arguments, summary=summary)
            return _with_note(outcome, note)
        jud = cal.judgments_to_ratings(judgments)
    elif jkind == "rating":
        jud = read_jsonl(jpath, Rating)
    else:
        raise UserError(f"{jpath}: expected Rating or Judgment records, found {jkind}")
    settings: dict[str, Any] = {
        "measurement": measurement,
        "dimensions": list(dimensions) if dimensions else None,
        "scale": list(scale) if scale else None,
        "B": B,
        "level": level,
        "seed": seed,
        "epsilon": epsilon,
        "weights": weights,
    }
    rep = cal.calibrate(hum, jud, **settings)
    text, data = cal.calibration_markdown(rep), rep.model_dump()
    if items is not None:
        if judgments is None:
            raise UserError("--items needs the judge's Judgment records (or its run directory)")
        judged = read_jsonl(jsonl_path(items), JudgeItem)
        _, md, base = baseline_comparison(judged, judgments, hum, B=B, seed=seed)
        text, data = (
            text + "\n".join(md) + "\n",
            {**data, "baselines": record_json(base)},
        )
    note = weighting_note(weights, Path(arguments["human"])) or None
    if note and items is not None:
        note += " The baselines comparison is NOT weighted."
    check = None
    if judgments and not inspect:

        def recompute(keep: set[str]) -> cal.CalibrationReport:
            kept = [r for r in hum if r.item_id in keep], [r for r in jud if r.item_id in keep]
            return cal.calibrate(*kept, **settings)

        judged_ids = {r.item_id for r in jud}
        compared = {r.item_id: r.cluster or r.item_id for r in hum if r.item_id in judged_ids}
        check = fitted_check(judge_fit(jpath, judgments), compared, rep, recompute)
    if check is not None:
        text += "\n" + "\n".join(fitted_check_lines(check)) + "\n"
        data["fitted_check"] = check.model_dump(mode="json")
        if check.status == "overlap":
            data["warnings"] = [*(data.get("warnings") or []), check.message]
    outcome = CalibrationOutcome(text, data, arguments=arguments)
    if out is not None:
        block = CalibrationBlock(report=rep, figures=calibration_figure_data(hum, jud))
        summary = CalibrateSummary(calibration=block, label_weighting=note, fitted_check=check)
        outcome.report_files = write_run_dir(out, arguments, summary=summary)
    return _with_note(outcome, note)
