"""``attune-judge validate``: run a judge model on a shipped calibration set's conversations with
the rubric that matches the set's human dimensions, then report its agreement with the people
next to the recorded judges and the human-to-human ceiling, with cluster-bootstrap intervals.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attune_judge._bootstrap import DEFAULT_B
from attune_judge._resources import shipped_dir
from attune_judge.calibration import (
    CalibrationReport,
    calibrate,
    calibration_markdown,
    few_clusters_warning,
    judgments_to_ratings,
)
from attune_judge.data import JudgeItem, Judgment, read_jsonl, read_judgments, write_jsonl
from attune_judge.errors import UserError
from attune_judge.lm import LMSettings
from attune_judge.report import calibration_figure_data
from attune_judge.runner import ExecutionOptions, degenerate_judgments, failure_reasons
from attune_judge.runs import (
    CalibrationBlock,
    JudgeRow,
    ValidateSummary,
    ValidationInfo,
    ValidationResult,
    write_summary,
)
from attune_judge.validate._baselines import baseline_comparison
from attune_judge.validate._calibrated import calibrated_comparison
from attune_judge.validate._fitted import fitted_check, fitted_check_lines, judge_fit
from attune_judge.validate._recorded import judge_rows, judge_rows_markdown
from attune_judge.validate._report import write_validation_report
from attune_judge.validate._scoring import run_validation_judge
from attune_judge.validate._sets import VALIDATION_SETS, ValidationSet, load_calibration_set

__all__ = [
    "ValidationResult",
    "validate_judge",
]

log = logging.getLogger("attune_judge.validate")


def _items(spec: ValidationSet, human_ids: set[str], limit: int | None) -> list[JudgeItem]:
    path = shipped_dir("data") / spec.calibration / "items.jsonl"
    items = [i for i in read_jsonl(path, JudgeItem) if spec.items(i) and i.item_id in human_ids]
    items.sort(key=lambda i: i.item_id)
    return items[:limit] if limit else items


def validate_judge(
    set_name: str,
    lm: str,
    out_dir: Path,
    *,
    limit: int | None = None,
    B: int = DEFAULT_B,
    seed: int = 0,
    lm_settings: LMSettings | None = None,
    execution: ExecutionOptions | None = None,
    judge: Any = None,
    quiet: bool = True,
    report_files: bool = True,
    only_items: set[str] | None = None,
    score_mode: str | None = None,
    per_criterion: bool = False,
    rubric: str | None = None,
    jury_lms: Sequence[str] | None = None,
    jury: str = "mean",
    retry_failed: bool = False,
) -> ValidationResult:
    """Judge a shipped set's items and compare the judge with the set's people.

    Parameters
    ----------
    set_name
        One of ``VALIDATION_SETS``.
    lm
        Judge model string (``local``, ``openai/gpt-4.1-mini``, ...).
    out_dir
        Run folder (resumed if it exists: judgments already made are not redone).
    limit
        Judge only the first ``limit`` items (by item id).
    B, seed
        Bootstrap replicates and seed.
    lm_settings
        The judge model's server, decoding, timeout and cache (its ``lm`` is ``lm``'s; the
        members of a jury get them too); default :class:`~attune_judge.lm.LMSettings`'s.
    execution
        Where the judgments run and how many are in flight (:class:`ExecutionOptions`:
        ``thread`` by default; ``process`` or ``ray`` workers each build the judge; adapted to
        rate limits unless ``adaptive`` is ``False``).
    judge
        A ready ``Judge`` to use instead of building one from the rubric and ``lm`` (tests).
    quiet
        No progress bar.
    report_files
        Write ``report.md`` / ``report.html`` with figures (``summary.json`` and
        ``validation.md`` are always written).
    jury_lms, jury
        Several judge models combined by ``jury`` (``mean``, ``median``, ``majority``);
        ``lm`` is then the judge's label.
    only_items
        Judge only these item ids (e.g. the held-out split of a judge aligned on this set).
    score_mode, per_criterion
        ``sampled`` / ``expected`` (``None``: by model) and one call per criterion.
    rubric
        Another rubric to judge with (e.g. a checklist); its dimensions must be the set's.
    retry_failed
        Judge again only the failed judgments of the existing run (``--retry-failed``).
    """
    start = time.monotonic()
    if set_name not in VALIDATION_SETS:
        raise UserError(f"unknown set {set_name!r}; choose from {sorted(VALIDATION_SETS)}")
    spec = VALIDATION_SETS[set_name]
    ratings = load_calibration_set(spec.calibration)
    humans = [r for r in ratings if spec.humans(r)]
    human_ids = {r.item_id for r in humans}
    items = _items(spec, human_ids if only_items is None else human_ids & only_items, limit)
    if len(items) < 2:
        raise UserError(f"set {set_name!r}: fewer than two items to judge")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / "items.jsonl", items)
    judge = run_validation_judge(
        out,
        rubric or spec.rubric,
        lm,
        judge,
        settings=(lm_settings or LMSettings()).model_copy(update={"lm": lm}),
        execution=execution or ExecutionOptions(),
        seed=seed,
        B=B,
        quiet=quiet,
        score_mode=score_mode,
        per_criterion=per_criterion,
        jury_lms=jury_lms,
        retry_failed=retry_failed,
        jury=jury,
    )
    judgments = read_judgments(out / "run" / "judgments.jsonl")  # a retried item counts once
    ids = {i.item_id for i in items}
    name = lm if lm not in {r.rater for r in ratings} else f"judge:{lm}"
    new = [
        r.model_copy(update={"rater": name})
        for r in judgments_to_ratings(judgments, include_overall=False)
        if r.item_id in ids
    ]
    failed: dict[str, int] = {}
    for j in judgments:
        if j.status != "ok":
            failed[j.status] = failed.get(j.status, 0) + 1
    reasons = failure_reasons(judgments)
    result = ValidationResult(
        set_name=set_name,
        run_dir=str(out),
        n_items=len(items),
        n_ok=sum(j.status == "ok" for j in judgments),
        n_failed=failed,
        failure_reasons=reasons,
        distinct_score_vectors=len(
            {tuple(sorted(j.scores.items())) for j in judgments if j.status == "ok"}
        ),
    )
    humans = [r for r in humans if r.item_id in ids]
    recorded = [r for r in ratings if spec.recorded(r) and r.item_id in ids]
    md = [f"# Validating `{lm}` on `{set_name}`", "", spec.description + ".", ""]
    md.append(f"Items judged: {len(items)}; ok: {result.n_ok}; failed: {_counts(reasons) or 0}.")
    degenerate = _degenerate([j for j in judgments if j.item_id in ids])
    blocks: dict[str, Any] = {}
    for finding in degenerate:
        md.append(f"\n**Warning: degenerate judge** — {name} {finding['message']}.")
    notes: list[str] = []
    usable = len({r.item_id for r in new})
    if usable < 2:
        result.not_compared = (
            f"{usable} of {len(items)} items have a usable judgment; agreement needs at least "
            "two, so the judge is not compared with the people"
        )
    else:
        try:
            compared = _compare(
                out, items, judgments, humans, new, recorded, set_name, name, B, seed
            )
        except UserError as exc:  # an undefined statistic on the judge's own answers
            result.not_compared = f"the comparison could not be made: {exc}"
        else:
            rows, lines, more_md, blocks, base_lines = compared
            result.rows = rows
            result.summary = lines
            result.summary += [
                f"warning: degenerate judge {name}: {f['message']}" for f in degenerate
            ]
            md += more_md
            if result.distinct_score_vectors == 1 and result.n_ok > 1:
                note = f"{name} gave the same scores to all {result.n_ok} items (ρ undefined)"
                result.summary.append("   note: " + note)
                md.append(f"\nNote: {note}.")
                notes.append(note)
            result.summary += base_lines
            _fitted_check(out, judgments, humans, new, blocks, name, (result.summary, md), B, seed)
            # the shipped calibration head applies to the plain model judge it was fitted on
            from attune_judge.judges import CriterionJudge

            if not jury_lms and rubric is None and isinstance(judge, CriterionJudge):
                ok_here = [j for j in judgments if j.item_id in ids]
                shipped = calibrated_comparison(
                    set_name, lm, items, ok_here, humans, B=B, seed=seed, judge_name=name
                )
                if shipped is not None:
                    result.summary += shipped[0]
                    md += shipped[1]
                    blocks["calibrated"] = shipped[2]
    if result.not_compared is not None:
        why = f"; failures: {_counts(reasons)}" if reasons else ""
        md.append(f"\n**Not compared:** {result.not_compared}{why}.")
        result.summary = [f"{set_name}: {lm} not compared: {result.not_compared}{why}"]
        result.summary += [f"warning: degenerate judge {name}: {f['message']}" for f in degenerate]
        notes.append(result.not_compared)
    elif reasons:
        result.summary.append(
            f"   {result.n_ok} of {len(items)} items judged; failures: {_counts(reasons)}"
        )
    info = ValidationInfo(
        set_name=set_name,
        lm=lm,
        judge_name=name,
        rubric=rubric or spec.rubric,
        judge_spec=getattr(judge, "spec", None),
        description=spec.description,
        n_items=result.n_items,
        n_ok=result.n_ok,
        n_failed=failed,
        failure_reasons=reasons,
        not_compared=result.not_compared,
        distinct_score_vectors=result.distinct_score_vectors,
        B=B,
        seed=seed,
        notes=notes,
    )
    write_summary(out, ValidateSummary(validation=info, degenerate=degenerate, **blocks))
    # the hand-written summary stays beside the full report (which replaces report.md)
    (out / "validation.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    if report_files:
        write_validation_report(out)
    result.seconds = time.monotonic() - start
    return result


def _compare(
    out: Path,
    items: Sequence[JudgeItem],
    judgments: Sequence[Judgment],
    humans: Sequence[Any],
    new: Sequence[Any],
    recorded: Sequence[Any],
    set_name: str,
    name: str,
    B: int,
    seed: int,
) -> tuple[list[JudgeRow], list[str], list[str], dict[str, Any], list[str]]:
    """The judge beside the people, the recorded judges and the baselines: rows, terminal
    lines, Markdown, the summary blocks and the baselines' terminal lines.

    Raises
    ------
    UserError
        A statistic that cannot be computed on these answers (e.g. fewer than two items in
        common with the people on a dimension).
    """
    report = calibrate(list(humans), [*new, *recorded], measurement="ordinal", B=B, seed=seed)
    rows = judge_rows(report, [*humans, *new, *recorded], set_name, B=B, seed=seed)
    rows = sorted(rows, key=lambda r: (r.dimension, r.judge != name, r.judge))
    ids = {i.item_id for i in items}
    base_lines, base_md, base_data = baseline_comparison(
        list(items),
        [j for j in judgments if j.item_id in ids],
        list(humans),
        B=B,
        seed=seed,
        judge_name=name,
    )
    (out / "calibration.md").write_text(calibration_markdown(report), encoding="utf-8")
    blocks: dict[str, Any] = {
        "baselines": base_data,
        "recorded_judges": rows,
        "calibration": CalibrationBlock(
            report=report, figures=calibration_figure_data(list(humans), list(new))
        ),
    }
    # the report has it among the calibration's flags
    few = few_clusters_warning(len({i.conversation_id or i.item_id for i in items}))
    md = ["", *([f"**Warning:** {few}", ""] if few else []), judge_rows_markdown(rows), *base_md]
    length_lines = rating_length_effects(items, humans, new, B=B, seed=seed)
    md += [f"\n{line}" for line in length_lines]
    lines = [*_summary(set_name, name, rows), *([f"warning: {few}"] if few else [])]
    return rows, lines, md, blocks, [*base_lines, *length_lines]


def _fitted_check(
    out: Path,
    judgments: Sequence[Judgment],
    humans: Sequence[Any],
    new: Sequence[Any],
    blocks: dict[str, Any],
    name: str,
    text: tuple[list[str], list[str]],
    B: int,
    seed: int,
) -> None:
    """When the judge (an aligned or calibrated one, ``--judge DIR``) was fitted on some of the
    items judged: the warning and its figures on the other items, added to the console lines
    and Markdown of ``text`` and to ``blocks`` (``fitted_check``)."""
    judged = {r.item_id for r in new}
    compared = {r.item_id: r.cluster or r.item_id for r in humans if r.item_id in judged}

    def recompute(keep: set[str]) -> CalibrationReport:
        kept = [r for r in humans if r.item_id in keep], [r for r in new if r.item_id in keep]
        return calibrate(*kept, measurement="ordinal", B=B, seed=seed)

    fit = judge_fit(out / "run" / "judgments.jsonl", judgments)
    overall = blocks["calibration"].report
    check = fitted_check(fit, compared, overall, recompute, judges=[name])
    if check is not None:
        lines, md = text
        lines += fitted_check_lines(check)
        md += ["", *fitted_check_lines(check)]
        blocks["fitted_check"] = check


def rating_length_effects(
    items: Sequence[JudgeItem],
    humans: Sequence[Any],
    judge: Sequence[Any],
    *,
    B: int,
    seed: int,
) -> list[str]:
    """Per dimension both rated: people's (mean per item) and the judge's length effects on
    the same replies, in standard deviations of each side's ratings per 100 characters, and
    their difference with a paired cluster bootstrap; one line each (none when undefined)."""
    from attune_judge.calibration import compare_rating_length_effects, fmt_metric

    by_id = {i.item_id: i for i in items}

    def means(ratings: Sequence[Any], dim: str) -> dict[str, float]:
        acc: dict[str, list[float]] = {}
        for r in ratings:
            if r.dimension == dim and isinstance(r.value, int | float) and r.item_id in by_id:
                acc.setdefault(r.item_id, []).append(float(r.value))
        return {k: sum(v) / len(v) for k, v in acc.items()}

    lines = []
    dims = sorted({r.dimension for r in humans} & {r.dimension for r in judge})
    for dim in dims:
        hp, jp = means(humans, dim), means(judge, dim)
        ids = sorted(set(hp) & set(jp))
        try:
            res = compare_rating_length_effects(
                [hp[i] for i in ids],
                [jp[i] for i in ids],
                [len(by_id[i].candidate) for i in ids],
                [by_id[i].conversation_id for i in ids],
                B=B,
                seed=seed,
            )
        except UserError:
            continue
        lines.append(
            f"Length effect on {dim} ({res.n} replies; sd of ratings per 100 characters): "
            f"people {fmt_metric(res.people)}, judge {fmt_metric(res.judge)}, judge − people "
            f"{fmt_metric(res.difference)}"
        )
    return lines


def _counts(counts: dict[str, int]) -> str:
    """``3 parse_error (out_of_scale), 1 lm_error (timeout)``."""
    return ", ".join(f"{n} {why}" for why, n in sorted(counts.items()))


def _summary(set_name: str, name: str, rows: Sequence[JudgeRow]) -> list[str]:
    lines = [f"{set_name}: agreement with the people (Spearman; κ_qw)"]
    for judge in sorted({r.judge for r in rows}, key=lambda j: (j != name, j)):
        mine = [r for r in rows if r.judge == judge]
        sp = [r.spearman.estimate for r in mine if r.spearman and r.spearman.estimate is not None]
        kq = [r.kappa_qw.estimate for r in mine if r.kappa_qw and r.kappa_qw.estimate is not None]
        ceil = [r.spearman_ceiling_humans for r in mine if r.spearman_ceiling_humans is not None]
        mean_sp = f"{sum(sp) / len(sp):.2f}" if sp else "—"
        mean_kq = f"{sum(kq) / len(kq):.2f}" if kq else "—"
        mean_c = f"; human ceiling ρ {sum(ceil) / len(ceil):.2f}" if ceil else ""
        lines.append(f"   {judge:12s} mean ρ {mean_sp}; mean κ_qw {mean_kq}{mean_c}")
    return lines


def _degenerate(judgments: list[Judgment]) -> list[dict[str, Any]]:
    """Degenerate-judge findings per judge_id (:func:`attune_judge.runner.degenerate_judgments`)."""
    by_judge: dict[str, list[Judgment]] = {}
    for j in judgments:
        by_judge.setdefault(j.judge_id, []).append(j)
    return [
        {**finding, "judge_id": jid}
        for jid, group in by_judge.items()
        for finding in degenerate_judgments(group)
    ]
