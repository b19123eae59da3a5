"""``rank`` as library calls: a leaderboard with rank sets from a run directory or a scores
file (:func:`rank_scores`), and the judge's leaderboard corrected with human labels by
prediction-powered inference (:func:`ppi_rank`).

The statistics are :func:`attune_judge.calibration.leaderboard` and
:func:`attune_judge.calibration.ppi_leaderboard`; a scoring run's stored leaderboard is read
back through :func:`attune_judge.runner.run_leaderboard` (computed once, by the runner).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attune_judge import calibration as cal
from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.data import Judgment, Rating, read_judgments, read_utf8, reading_utf8
from attune_judge.data.adapters import is_inspect_log
from attune_judge.errors import UserError
from attune_judge.runner import pairwise_ranking, run_leaderboard, run_pairwise_ranking
from attune_judge.runner._leaderboard import judgments_of
from attune_judge.runs import PpiBlock, PpiSummary
from attune_judge.validate._corrected import check_method, corrected_rank
from attune_judge.validate._files import (
    check_human_labels,
    check_level,
    inclusion_weights,
    jsonl_path,
    read_labels,
    record_kind,
    weighting_note,
)
from attune_judge.validate._fitted import fitted_on_labels
from attune_judge.validate._inspect import (
    check_labels_name_samples,
    inspect_judge_id,
    scorer_judgments,
)
from attune_judge.validate._rundir import write_run_dir

if TYPE_CHECKING:
    from attune_judge.runner import PairwiseRanking

__all__ = [
    "PPIRank",
    "pairwise_ranking_markdown",
    "ppi_rank",
    "rank_pairwise",
    "rank_scores",
    "read_scores",
]

FIELDS = ("normalized", "overall")


def rank_scores(
    source: Path,
    *,
    field: str = "normalized",
    judge_id: str | None = None,
    B: int = DEFAULT_B,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
    scorer: str | None = None,
    scale: tuple[float, float] | None = None,
) -> cal.Leaderboard:
    """The leaderboard (paired cluster-bootstrap intervals, rank sets) of ``source``.

    Every interval stays on the scores' scale and keeps its coverage near a bound (the
    bounded intervals of :func:`attune_judge.calibration.paired_cluster_bootstrap`). The
    scale of judgments (a run directory, a Judgment JSONL, an Inspect log) is the one they
    record (:func:`attune_judge.calibration.judgments_scale`: 0–1 for ``normalized``, the
    rubric's for ``overall``); ``scale`` (LOW, HIGH) must agree with it. A scores table's
    scale is ``scale`` (a score outside it is refused), else 0–1 when every score is 0 or 1,
    else none.

    ``source`` is a scoring run directory (its stored leaderboard when the settings match,
    else computed from its judgments), a Judgment JSONL, {model, cluster, score} rows in
    JSONL or CSV, or an Inspect AI log or folder of logs (one per model): the models ranked
    by ``scorer``'s scores (default: the only scorer, or the jury of several 0-1 scorers).
    """
    check_level(level)
    if field not in FIELDS:
        raise UserError(f"--field must be normalized or overall, not {field!r}")
    log = _inspect_source(source, scorer)
    if log is not None:
        js = _inspect_judge(log, scorer)
        models, clusters, scores = _scores_of(js, field, log)
        bounds = _on_scale(log, field, cal.judgments_scale(js, field), scale, models, scores)  # type: ignore[arg-type]
        return cal.leaderboard(models, clusters, scores, B=B, seed=seed, level=level, bounds=bounds)
    if _pairwise_judgments(Path(source), judge_id) is not None:
        raise UserError(
            f"{source}: a pairwise judge's score only says whether the first-listed reply "
            "won, so it ranks no models by mean: rank the compared replies by their verdicts "
            "(rank_pairwise; `attune-judge rank RUN` does)"
        )
    log_path = Path(source) / "judgments.jsonl"
    if Path(source).is_dir():
        if scale is not None and log_path.is_file():  # --scale must agree with the run's
            js = judgments_of(read_judgments(log_path), judge_id, log_path)
            models, _, scores = cal.judgments_to_scores(js, field=field)  # type: ignore[arg-type]
            _on_scale(source, field, cal.judgments_scale(js, field), scale, models, scores)  # type: ignore[arg-type]
        return run_leaderboard(
            source,
            judge_id,
            field=field,  # type: ignore[arg-type]
            B=B,
            seed=seed,
            level=level,
            scale=scale,
        )
    path = jsonl_path(source)
    models, clusters, scores = read_scores(path, field, judge_id)
    if not scores:
        raise UserError(f"{source}: no usable scores (status ok with a {field} score)")
    judged = path.suffix.lower() != ".csv" and record_kind(path) == "judgment"
    known = (
        cal.judgments_scale(judgments_of(read_judgments(path), judge_id, path), field)  # type: ignore[arg-type]
        if judged
        else None
    )
    bounds = _on_scale(path, field, known, scale, models, scores)
    board = cal.leaderboard(models, clusters, scores, B=B, seed=seed, level=level, bounds=bounds)
    if not judged and not _has_clusters(path):
        board.warnings.insert(
            0,
            f"{path}: no cluster (or conversation_id) column: every row is treated as its own "
            "conversation, so rows from one conversation count as independent and the "
            "intervals are too narrow if they are not; add the conversation of each row",
        )
    return board


def _on_scale(
    where: Path,
    field: str,
    known: tuple[float, float] | None,
    given: tuple[float, float] | None,
    models: Sequence[str],
    scores: Sequence[float],
) -> tuple[float, float] | None:
    """The bounds of ``rank``'s intervals: the scale the scores are known to lie on
    (``known``, recorded by judgments), or ``--scale`` (``given``), which must agree with a
    known one and hold every score (a ``UserError`` naming the file otherwise)."""
    if given is None:
        return known
    lo, hi = given
    if known is not None and not all(map(math.isclose, given, known)):
        how = (
            "normalised scores lie on 0-1; rank on the rubric's scale with --field overall"
            if field == "normalized"
            else "every judgment records it: normalized = (overall - low) / (high - low)"
        )
        raise UserError(
            f"{where}: --scale {lo:g},{hi:g} contradicts the scale of its {field} scores, "
            f"{known[0]:g}-{known[1]:g} ({how}); leave --scale out"
        )
    outside = [i for i, v in enumerate(scores) if not lo <= v <= hi]
    if outside:
        i = outside[0]
        raise UserError(
            f"{where}: row {i + 1} (model {models[i]!r}): score {scores[i]:g} lies outside "
            f"--scale {lo:g},{hi:g}"
        )
    return given


def _has_clusters(path: Path) -> bool:
    """Whether a scores file's rows name their conversation (``cluster`` or
    ``conversation_id`` in any row)."""
    keys = ("cluster", "conversation_id")
    if path.suffix.lower() == ".csv":
        with reading_utf8(path), path.open(encoding="utf-8", newline="") as fh:
            return any(r.get(k) for r in csv.DictReader(fh) for k in keys)
    rows = (json.loads(x) for x in read_utf8(path).splitlines() if x.strip())
    return any(isinstance(r, dict) and r.get(k) for r in rows for k in keys)


def _inspect_source(source: Path, scorer: str | None) -> Path | None:
    """``source`` when it is an Inspect log; ``--scorer`` on anything else is refused."""
    if is_inspect_log(Path(source)):
        return Path(source)
    if scorer is not None:
        raise UserError(f"--scorer picks an Inspect scorer; {source} is not an Inspect log")
    return None


def _inspect_judge(log: Path, scorer: str | None) -> list[Judgment]:
    """The judgments of the Inspect scorer ``rank`` ranks by (see :func:`inspect_judge_id`)."""
    js = scorer_judgments(log, None if scorer in (None, "jury") else [scorer])
    return judgments_of(js, inspect_judge_id(log, js, scorer), log)


def _scores_of(
    js: Sequence[Judgment], field: str, where: Path
) -> tuple[list[str], list[str], list[float]]:
    models, clusters, scores = cal.judgments_to_scores(js, field=field)  # type: ignore[arg-type]
    if not scores:
        raise UserError(
            f"{where}: the scorer's values are not all on 0-1, so it has no normalized score; "
            "rank by --field overall"
            if field == "normalized"
            else f"{where}: no usable scores (status ok with a {field} score)"
        )
    return models, clusters, scores


def _pairwise_judgments(source: Path, judge_id: str | None) -> tuple[str, list[Judgment]] | None:
    """``(judge id, its judgments)`` when ``source`` (a run directory or Judgment JSONL) holds
    one pairwise judge's verdicts; ``None`` otherwise (scores, other records, several judges
    and none chosen: the score path explains those)."""
    path = Path(source) / "judgments.jsonl" if Path(source).is_dir() else Path(source)
    if not path.is_file() or path.suffix.lower() == ".csv" or record_kind(path) != "judgment":
        return None
    js = read_judgments(path)
    ids = sorted({j.judge_id for j in js})
    if judge_id is None and len(ids) == 1:
        judge_id = ids[0]
    mine = [j for j in js if j.judge_id == judge_id]
    if not any(j.verdict is not None for j in mine):
        return None
    return str(judge_id), mine


def rank_pairwise(
    source: Path,
    *,
    judge_id: str | None = None,
    B: int = DEFAULT_B,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
) -> list[PairwiseRanking] | None:
    """The Bradley–Terry rankings of the options a pairwise judge compared in ``source`` (a
    run directory: those stored in its summary when the settings match), one per group of
    options compared with each other; ``None`` when ``source`` is not one pairwise judge's
    judgments.

    Ties are half a win for each side, ``inconsistent`` verdicts count as ties; intervals
    from a cluster bootstrap over conversations (see
    :func:`attune_judge.runner.pairwise_ranking`).

    Raises
    ------
    UserError
        No group of options has a Bradley–Terry estimate (the reasons are named).
    """
    check_level(level)
    found = _pairwise_judgments(source, judge_id)
    if found is None:
        return None

    jid, js = found
    rankings = (
        run_pairwise_ranking(source, js, jid, B=B, seed=seed, level=level)
        if Path(source).is_dir()
        else pairwise_ranking(js, B=B, seed=seed, level=level)
    )
    if all(r.result is None for r in rankings):
        raise UserError(
            f"{source}: the pairwise verdicts rank no replies: "
            + "; ".join(f"{', '.join(r.options)}: {r.note}" for r in rankings)
        )
    return rankings


def _ranking_table(res: cal.BradleyTerryResult) -> list[str]:
    pct = f"{res.strengths[0].level * 100:g}%"

    def strength(i: int) -> float:
        est = res.strengths[i].estimate
        return est if est is not None else float("-inf")

    order = sorted(range(len(res.labels)), key=lambda i: -strength(i))
    sim, mar = res.rank_sets_simultaneous, res.rank_sets_marginal
    p1 = res.rank_probabilities.p_rank_1
    lines = [
        f"| rank | option | strength β [{pct} CI] | Elo-like | rank set (simultaneous) "
        "| rank set (marginal) | P(rank 1) | n |",
        "|---|---|---|---|---|---|---|---|",
    ]
    # stable: a model without a rank claim last, and without a rank (its reason below); the
    # others' point rank counts every higher strength (as the leaderboard and the report)
    order.sort(key=lambda i: res.labels[i] in res.no_rank_claim)
    for i in order:
        rank = 1 + sum(strength(k) > strength(i) for k in range(len(res.labels)))
        m, elo = res.strengths[i], res.elo[i]
        claim = res.rank_claims and res.labels[i] not in res.no_rank_claim
        sets = f"{sim.lower[i]}–{sim.upper[i]} | {mar.lower[i]}–{mar.upper[i]}"
        lines.append(
            f"| {'—' if res.labels[i] in res.no_rank_claim else rank} | {res.labels[i]} "
            f"| {cal.fmt_metric(m)} | "
            f"{'—' if elo is None else f'{elo:.0f}'} | {sets if claim else '— | —'} | "
            f"{'—' if p1[i] is None else f'{p1[i]:.3f}'} | {m.n} |"
        )
    if res.no_rank_claim:
        lines += [
            "",
            "No rank claim (comparable to every option: no rank, rank set or P(rank 1)): "
            + "; ".join(f"{m} ({why})" for m, why in res.no_rank_claim.items()),
        ]
    if res.warnings:
        lines += ["", *[f"> **Warning:** {w}" for w in res.warnings]]
    if res.note:
        lines += ["", f"Note: {res.note}."]
    return lines


def pairwise_ranking_markdown(rankings: Sequence[PairwiseRanking]) -> str:
    """The Bradley–Terry rankings as Markdown (strengths, Elo-like ratings, rank sets)."""
    lines = [
        "# Ranking of the compared replies (Bradley–Terry)",
        "",
        "A pairwise judge's verdicts, reconciled over both orders, as comparisons of the two "
        "options of each pair (a tie is half a win each; an inconsistent verdict counts as a "
        "tie). Strength β on the logit scale (mean 0 within a group, over its options compared in "
        "at least 10 conversations when two or more are), cluster-bootstrap "
        "intervals over conversations. Options never compared with each other are ranked "
        "in separate groups.",
    ]
    for r in rankings:
        lines += ["", f"## {', '.join(r.options)}", ""]
        if r.result is None:
            lines.append(f"No ranking: {r.note}")
        else:
            lines.append(f"{r.result.n_comparisons:g} comparisons.")
            lines += ["", *_ranking_table(r.result)]
    return "\n".join(lines) + "\n"


def read_scores(
    path: Path, field: str = "normalized", judge_id: str | None = None
) -> tuple[list[str], list[str], list[float]]:
    """(models, clusters, scores) of a Judgment JSONL (one judge) or of {model, cluster,
    score} rows in JSONL or CSV."""
    if path.suffix.lower() == ".csv":
        with reading_utf8(path), path.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
    elif (kind := record_kind(path)) in ("rating", "preference"):
        raise UserError(
            f"{path}: expected Judgment records or {{model, cluster, score}} rows, found {kind} "
            "records (rank ranks models; use calibrate for human labels)"
        )
    elif kind == "judgment":
        js = judgments_of(read_judgments(path), judge_id, path)
        try:
            return cal.judgments_to_scores(js, field=field)  # type: ignore[arg-type]
        except UserError as exc:
            raise UserError(f"{path}: {exc}") from None
    else:
        rows = [json.loads(x) for x in read_utf8(path).splitlines() if x.strip()]
    models, clusters, scores, bad = [], [], [], []
    for n, r in enumerate(rows, 1):
        try:
            models.append(str(r["model"]))
            clusters.append(str(r.get("cluster") or r.get("conversation_id") or n))
            scores.append(float(r["score"]))
            if math.isinf(scores[-1]):
                raise UserError(
                    f"{path}: row {n}: field 'score' is {r['score']!r} (infinite); scores must "
                    "be finite"
                )
        except KeyError as exc:
            bad.append(f"{path}: row {n}: missing field {exc}")
        except (TypeError, ValueError) as exc:
            bad.append(f"{path}: row {n}: {type(exc).__name__}: {exc}")
    if bad:
        raise UserError(f"{path}: rows need model, cluster and a numeric score", bad[:5])
    return models, clusters, scores


@dataclass
class PPIRank:
    """What :func:`ppi_rank` computed."""

    markdown: str
    """The leaderboard and the join of the human labels, as Markdown."""
    data: dict[str, Any]
    """The leaderboard (``PPILeaderboard`` fields) and the join, JSON-ready."""
    report_files: tuple[Path, Path] | None = None
    """``report.md`` and ``report.html`` when ``report_dir`` was given."""


def ppi_rank(
    source: Path,
    human: Path,
    *,
    judge_id: str | None = None,
    field: str = "normalized",
    dimension: str | None = None,
    raters: Sequence[str] | None = None,
    human_scale: tuple[float, float] | None = None,
    level: float = DEFAULT_LEVEL,
    clip: bool = False,
    report_dir: Path | None = None,
    scorer: str | None = None,
    method: str = "ppi",
    B: int = DEFAULT_B,
    seed: int = 0,
) -> PPIRank:
    """The PPI++ leaderboard of a run's judgments against human ratings on some items.

    ``source`` is a run directory or its Judgment JSONL; ``human`` a Rating JSONL; the
    ratings of ``dimension`` (default overall) by ``raters`` (default all, averaged) are
    mapped from ``human_scale`` (LOW, HIGH) to 0-1. ``clip`` clips the power-tuning λ to
    [0, 1]. With ``report_dir`` the run directory (summary kind ``ppi``) is written.
    ``source`` may be an Inspect AI log (``scorer`` as in :func:`rank_scores`); every human
    label must then name one of its samples. ``method="rogan-gladen"``: pass/fail scores and
    labels, the Rogan–Gladen corrected pass rates with PPI++ beside (``validate/_corrected``;
    ``B``, ``seed`` its bootstrap; no ``report_dir`` yet).
    """
    check_level(level)
    check_method(method, report_dir)
    if field not in FIELDS:
        raise UserError(f"--field must be normalized or overall, not {field!r}")
    log = _inspect_source(source, scorer)
    judgments_path, human_path = log or jsonl_path(source), jsonl_path(human)
    check_human_labels(human_path, "interval")
    weights = inclusion_weights(human_path)
    if log is not None:
        js = _inspect_judge(log, scorer)
        judge_id = js[0].judge_id
        labelled = {r.item_id for r in read_labels(human_path, Rating)}
        check_labels_name_samples(human_path, labelled, js, log)
    else:
        try:
            js = read_judgments(judgments_path)
        except UserError as exc:
            raise UserError(
                f"{judgments_path}: --human needs Judgment records (a run directory): {exc}"
            ) from None
    ids = sorted({j.judge_id for j in js})
    if judge_id is None and len(ids) > 1:
        raise UserError(f"{judgments_path}: several judges {ids[:5]}; choose one with --judge-id")
    js = [j for j in js if judge_id is None or j.judge_id == judge_id]
    if not js:
        raise UserError(f"{judgments_path}: no judgments of judge {judge_id!r}")
    if any(j.verdict is not None for j in js):
        raise UserError(
            f"{judgments_path}: a pairwise judge's verdicts have no score means for PPI to "
            "correct: compare them with people's choices (calibrate --human PREFS.jsonl "
            "--judge RUN), or rank the compared replies with rank RUN (no --human)"
        )
    ratings = read_labels(human_path, Rating)
    if raters:
        ratings = [r for r in ratings if r.rater in raters]
        if not ratings:
            raise UserError(f"{human_path}: no rating by {', '.join(raters)} (--human-raters)")
    cols = cal.ppi_columns(
        js,
        ratings,
        field=field,  # type: ignore[arg-type]
        dimension=dimension,
        human_scale=human_scale,
        weights=weights,
    )
    if human_scale is not None:  # the labels PPI maps to 0-1 must lie on the declared scale
        check_human_labels(
            human_path,
            "interval",
            scale=human_scale,
            scale_option="--human-scale",
            dimensions={cols.dimension},
        )
    if cols.n_matched == 0:
        raise UserError(
            f"{human_path}: no human-labelled item was scored by the judge "
            f"(human item ids such as {cols.unmatched_examples[:3]})"
        )
    if method != "ppi":
        rg_text, rg_data = corrected_rank(cols, level=level, B=B, seed=seed, weighted=bool(weights))
        return PPIRank(rg_text, rg_data, None)
    fitted = fitted_on_labels(judgments_path, js, {r.item_id for r in ratings})
    board = cal.ppi_leaderboard(
        cols.models,
        cols.clusters,
        cols.judge,
        cols.human,
        level=level,
        clip=(0.0, 1.0) if clip else None,
        weights=cols.weights,
        bounds=(0.0, 1.0) if human_scale is not None else None,
        judge_bounds=(0.0, 1.0) if field == "normalized" else None,
    )
    board.warnings += _unbounded(human_scale)
    weighting = weighting_note(weights, human_path)
    text = cal.ppi_leaderboard_markdown(board)
    text += (
        f"\nHuman dimension `{cols.dimension}`: {cols.n_matched} of {cols.n_human_items} "
        "human-labelled items were scored by the judge"
        + (
            f" (not scored: {', '.join(cols.unmatched_examples)} ...)"
            if cols.unmatched_examples
            else ""
        )
        + ".\n"
    ) + (f"\n{weighting}\n" if weighting else "")
    if fitted:
        text += f"\n**Warning:** {fitted}\n"
    data: dict[str, Any] = {
        **board.model_dump(mode="json"),
        "dimension": cols.dimension,
        "n_human_items": cols.n_human_items,
        "n_matched": cols.n_matched,
        "human_scale": list(human_scale) if human_scale else None,
        "field": field,
    }
    if fitted:  # beside the leaderboard's own warnings (the report shows them all)
        data["warnings"] = [*(data.get("warnings") or []), fitted]
    files = None
    if report_dir is not None:
        files = _write_report(report_dir, data, judgments_path, human_path, weighting)
    return PPIRank(text, data, files)


def _unbounded(human_scale: tuple[float, float] | None) -> list[str]:
    """The warning that the PPI intervals are not bounded (no ``--human-scale``)."""
    if human_scale is not None:
        return []
    return [
        "no --human-scale: the human labels' scale is not known, so the PPI++ and human-only "
        "intervals are not bounded to it (give LOW,HIGH, e.g. 1,7)"
    ]


def _write_report(
    out: Path, data: dict[str, Any], source: Path, human: Path, weighting: str
) -> tuple[Path, Path]:
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: --report must be a directory")
    if (out / "judgments.jsonl").exists():
        raise UserError(f"{out}: holds a scoring run; choose a new directory for --report")
    arguments = {"source": str(source), "human": str(human)}
    summary = PpiSummary(ppi=PpiBlock.model_validate(data), label_weighting=weighting or None)
    return write_run_dir(out, arguments, summary=summary, command="rank")
