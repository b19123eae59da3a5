"""``rank --pairs FILE`` and ``rank RUN --control``: rankings with style under control.

The long table of comparisons (JSONL or CSV, one row per comparison):

=================  ==========================================================================
``model``          the model whose reply is judged
``opponent``       the other reply's model (``baseline`` is accepted as the column name)
``cluster``        the instruction or conversation (``instruction`` / ``conversation_id``)
``len_model``      the model's reply length (characters; ``len_opponent`` / ``len_baseline``)
``preference``     P(the model's reply wins): 1, 0, 0.5 for a tie, or a probability
                   (``winner`` = ``model`` / ``opponent`` / ``tie`` instead is accepted)
``headers_model``  optional Markdown counts for ``--control length,markdown``:
``bold_model``     ``headers_*``, ``bold_*``, ``list_items_*`` for both replies
``list_items_…``
=================  ==========================================================================

When every row has the same opponent and that opponent is never a ``model``, the table is
one baseline's comparisons and :func:`length_controlled_winrates` (AlpacaEval's GLM) ranks it;
otherwise :func:`style_bradley_terry` does.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from attune_judge import calibration as cal
from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.data import read_utf8, reading_utf8
from attune_judge.errors import UserError

__all__ = [
    "PairTable",
    "controlled_markdown",
    "length_means_markdown",
    "parse_control",
    "rank_controlled_run",
    "rank_length_controlled_scores",
    "rank_pairs",
    "read_pairs",
    "write_controlled_report",
]

_ALIASES = {
    "opponent": ("opponent", "baseline"),
    "cluster": ("cluster", "instruction", "conversation_id"),
    "len_opponent": ("len_opponent", "len_baseline"),
}
_MARKDOWN = ("headers", "bold", "list_items")


def parse_control(text: str) -> tuple[str, ...]:
    """``"length,markdown"`` → the style features (``length`` first)."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    bad = [p for p in parts if p not in ("length", "markdown")]
    if bad or "length" not in parts:
        raise UserError(f"--control must be length or length,markdown, not {text!r}")
    return cal.STYLE_FEATURES if "markdown" in parts else ("length",)


@dataclass
class PairTable:
    """Comparisons read from a long table (see the module notes)."""

    model: list[str] = field(default_factory=list)
    opponent: list[str] = field(default_factory=list)
    cluster: list[str] = field(default_factory=list)
    preference: list[float] = field(default_factory=list)
    style_model: list[list[float]] = field(default_factory=list)
    style_opponent: list[list[float]] = field(default_factory=list)


def _get(row: dict[str, object], name: str) -> object:
    for key in _ALIASES.get(name, (name,)):
        if key in row and row[key] not in (None, ""):
            return row[key]
    keys = _ALIASES.get(name, (name,))
    alias = " (or " + ", ".join(repr(k) for k in keys[1:]) + ")" if len(keys) > 1 else ""
    raise KeyError(repr(keys[0]) + alias)


def _number(value: object, what: str) -> float:
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"field {what!r} is {value!r}, not a number") from None
    if not math.isfinite(x):
        raise ValueError(f"field {what!r} is {value!r}, not a finite number")
    return x


def _preference(r: dict[str, object]) -> float:
    if "preference" in r and r["preference"] not in (None, ""):
        pref = _number(r["preference"], "preference")
        if not 0 <= pref <= 1:
            raise ValueError(f"field 'preference' is {pref}, not in [0, 1]")
        return pref
    w = str(_get(r, "winner"))
    if w not in ("model", "opponent", "tie"):
        raise ValueError(f"field 'winner' is {w!r}, not model, opponent or tie")
    return {"model": 1.0, "opponent": 0.0, "tie": 0.5}[w]


def _append_row(out: PairTable, r: dict[str, object], covariates: Sequence[str]) -> None:
    model, opponent, cluster = (str(_get(r, k)) for k in ("model", "opponent", "cluster"))
    pref = _preference(r)
    sm, so = [], []
    for cov in covariates:
        a = "len_model" if cov == "length" else f"{cov}_model"
        b = "len_opponent" if cov == "length" else f"{cov}_opponent"
        va, vb = _number(_get(r, a), a), _number(_get(r, b), b)
        if va < 0 or vb < 0:
            raise ValueError(f"field {a if va < 0 else b!r} is negative")
        sm.append(va)
        so.append(vb)
    out.model.append(model)
    out.opponent.append(opponent)
    out.cluster.append(cluster)
    out.preference.append(pref)
    out.style_model.append(sm)
    out.style_opponent.append(so)


def read_pairs(path: Path, covariates: Sequence[str] = ("length",)) -> PairTable:
    """Read the long table of comparisons (JSONL or CSV); a bad row is a one-line error
    naming the file, the row and the field."""
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    if path.suffix.lower() == ".csv":
        with reading_utf8(path), path.open(encoding="utf-8", newline="") as fh:
            rows: list[dict[str, object]] = list(csv.DictReader(fh))
    else:
        rows = []
        for n, line in enumerate(read_utf8(path).splitlines(), 1):
            if line.strip():
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise UserError(f"{path}: row {n}: not JSON ({exc.msg})") from None
                if not isinstance(rec, dict):
                    raise UserError(f"{path}: row {n}: not a JSON object")
                rows.append(rec)
    if not rows:
        raise UserError(f"{path}: no comparisons")
    out = PairTable()
    for n, r in enumerate(rows, 1):
        try:
            _append_row(out, r, covariates)
        except KeyError as exc:
            raise UserError(f"{path}: row {n}: missing field {exc.args[0]}") from None
        except ValueError as exc:
            raise UserError(f"{path}: row {n}: {exc}") from None
    return out


def rank_pairs(
    path: Path,
    *,
    control: Sequence[str] = ("length",),
    B: int = DEFAULT_B,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
) -> cal.LengthControlledResult | cal.StyleControlledResult:
    """Controlled ranking of a long table: length-controlled win rates when every row has
    one baseline as opponent (``control`` must then be length only), else style-controlled
    Bradley–Terry."""
    t = read_pairs(path, control)
    opponents = set(t.opponent)
    try:
        if len(opponents) == 1 and not opponents & set(t.model):
            if tuple(control) != ("length",):
                raise UserError(
                    "--control markdown needs comparisons between models (Bradley–Terry); "
                    "against one baseline only length is controlled (AlpacaEval's GLM)"
                )
            return cal.length_controlled_winrates(
                t.model,
                t.cluster,
                [s[0] for s in t.style_model],
                [s[0] for s in t.style_opponent],
                t.preference,
                baseline=next(iter(opponents)),
                B=B,
                level=level,
                seed=seed,
            )
        return cal.style_bradley_terry(
            t.model,
            t.opponent,
            t.preference,
            t.cluster,
            t.style_model,
            t.style_opponent,
            tuple(control),
            B=B,
            level=level,
            seed=seed,
        )
    except UserError as exc:
        raise UserError(f"{path}: {exc}") from None


def rank_controlled_run(
    source: Path,
    items: Path | None,
    *,
    control: Sequence[str] = ("length",),
    judge_id: str | None = None,
    B: int = DEFAULT_B,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
) -> cal.StyleControlledResult:
    """Style-controlled Bradley–Terry of a pairwise run's verdicts; the replies' texts come
    from ``items`` (the pairwise JudgeItem JSONL the run judged: runs keep no texts)."""
    from attune_judge.data import JudgeItem, read_jsonl
    from attune_judge.runner._pairwise_rank import pairwise_outcomes
    from attune_judge.validate._rank import _pairwise_judgments

    found = _pairwise_judgments(source, judge_id)
    if found is None:
        raise UserError(
            f"{source}: --control needs one pairwise judge's verdicts (a pairwise run or its "
            "judgments.jsonl)"
        )
    if items is None:
        raise UserError(
            f"{source}: --control on a run needs --items, the pairwise JudgeItem JSONL it judged "
            "(runs keep no reply texts)"
        )
    _, js = found
    texts: dict[str, tuple[str, str]] = {}
    for it in read_jsonl(items, JudgeItem):
        other = it.metadata.get("other")
        if isinstance(other, str):
            texts[it.item_id] = (it.candidate, other)
    keep = [j for j in js if j.item_id in texts and j.status == "ok" and j.verdict is not None]
    if not keep:
        raise UserError(f"{items}: no pairwise item matches the run's verdicts (item_id)")
    a, b, w, c = pairwise_outcomes(keep)
    kept = [  # the judgments pairwise_outcomes keeps, in its order
        j
        for j in keep
        if j.verdict in ("A", "B", "tie", "inconsistent")
        and isinstance(j.details.get("option_a"), str)
        and isinstance(j.details.get("option_b"), str)
    ]
    y = [{"A": 1.0, "B": 0.0, "tie": 0.5}[v] for v in w]
    feats = [
        (cal.style_features(texts[j.item_id][0]), cal.style_features(texts[j.item_id][1]))
        for j in kept
    ]
    sa = [[fa[k] for k in control] for fa, _ in feats]
    sb = [[fb[k] for k in control] for _, fb in feats]
    try:
        return cal.style_bradley_terry(
            a, b, y, c, sa, sb, tuple(control), B=B, level=level, seed=seed
        )
    except UserError as exc:
        raise UserError(f"{source}: {exc}") from None


def _order(values: Sequence[float | None]) -> list[int]:
    """Indices from the highest value down (missing values last)."""
    keys = [float("-inf") if v is None else v for v in values]
    return sorted(range(len(keys)), key=lambda i: -keys[i])


def controlled_markdown(res: cal.LengthControlledResult | cal.StyleControlledResult) -> str:
    """The controlled ranking beside the raw one, and the style coefficients, as Markdown."""
    fm = cal.fmt_metric
    if isinstance(res, cal.LengthControlledResult):
        pct = f"{res.controlled[0].level * 100:g}%"
        ests = [m.estimate for m in res.controlled]
        raw_rank = {i: r for r, i in enumerate(_order([m.estimate for m in res.raw]), 1)}
        sc, sr = res.rank_sets_controlled, res.rank_sets_raw
        lines = [
            f"# Length-controlled win rates against {res.baseline}",
            "",
            "AlpacaEval 2's GLM (Dubois et al. 2024): the judge's preference on the model, "
            "tanh(Δlength / sd) and instruction difficulty; the controlled win rate is the "
            "prediction at equal length. Paired cluster bootstrap over "
            f"{res.n_instructions} instructions ({res.n_comparisons} comparisons).",
            "",
            f"| rank | model | controlled win rate % [{pct} CI] | rank set | raw win rate % "
            "| raw rank | raw rank set | mean Δlength | length slope |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r, i in enumerate(_order(ests), 1):
            lines.append(
                f"| {r} | {res.labels[i]} | {fm(res.controlled[i], 1)} "
                f"| {sc.lower[i]}–{sc.upper[i]} "
                f"| {fm(res.raw[i], 1)} | {raw_rank[i]} | {sr.lower[i]}–{sr.upper[i]} "
                f"| {res.mean_length_difference[i]:+.0f} | {res.length_slope[i]:.2f} |"
            )
        lines += [
            "",
            f"Pooled length slope φ̄ = {res.pooled_length_slope:.2f} "
            "(logit per unit of tanh(Δ/sd)).",
        ]
    else:
        pct = f"{res.strengths[0].level * 100:g}%"
        ests = [m.estimate for m in res.strengths]
        raw = res.raw
        raw_rank = {i: r for r, i in enumerate(_order([m.estimate for m in raw.strengths]), 1)}
        sim = res.rank_sets_simultaneous
        rsim = raw.rank_sets_simultaneous
        lines = [
            "# Style-controlled ranking (Bradley–Terry with style covariates)",
            "",
            "Li, Angelopoulos, Chiang 2024: the strengths the judge's verdicts give once the "
            f"normalised differences in {', '.join(res.covariates)} are accounted for; "
            f"cluster bootstrap over {res.n_clusters} conversations ({res.n_comparisons} "
            "comparisons), studentized intervals.",
            "",
            f"| rank | model | controlled β [{pct} CI] | rank set | raw β | raw rank "
            "| raw rank set |",
            "|---|---|---|---|---|---|---|",
        ]
        ri = {m: k for k, m in enumerate(raw.labels)}
        for r, i in enumerate(_order(ests), 1):
            k = ri[res.labels[i]]
            lines.append(
                f"| {r} | {res.labels[i]} | {fm(res.strengths[i])} | {sim.lower[i]}–{sim.upper[i]} "
                f"| {fm(raw.strengths[k])} | {raw_rank[k]} | {rsim.lower[k]}–{rsim.upper[k]} |"
            )
        lines += [
            "",
            "## Style coefficients",
            "",
            f"| feature | γ per sd of the normalised difference [{pct} CI] | sd |",
            "|---|---|---|",
        ]
        for m, name, sd in zip(res.style, res.covariates, res.style_sd, strict=True):
            lines.append(f"| {name} | {fm(m)} | {sd:.3f} |")
    lines += [
        "",
        "Controlling asks who wins at equal length (and formatting): a model that is better "
        "*because* its replies are longer loses that credit too.",
    ]
    for w in res.warnings:
        lines.append(f"\nWarning: {w}.")
    return "\n".join(lines) + "\n"


def _score_rows(path: Path) -> list[dict[str, object]]:
    if path.suffix.lower() == ".csv":
        with reading_utf8(path), path.open(encoding="utf-8", newline="") as fh:
            return list(csv.DictReader(fh))
    rows = []
    for n, line in enumerate(read_utf8(path).splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise UserError(f"{path}: row {n}: not JSON ({exc.msg})") from None
    return rows


def rank_length_controlled_scores(
    source: Path,
    items: Path | None,
    *,
    field: str = "normalized",
    judge_id: str | None = None,
    B: int = DEFAULT_B,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
    scale: tuple[float, float] | None = None,
) -> cal.LengthControlledMeans:
    """Length-controlled means of a rated run (run directory or Judgment JSONL, the replies'
    texts from ``items``: candidate and reference) or of a scores table with ``model``,
    ``cluster``, ``score``, ``length`` and optionally ``reference_length`` columns. The
    intervals keep to the scale the judgments record, or to ``scale`` (a table's; with
    judgments it must agree), as ``rank``'s do."""
    from attune_judge.data import JudgeItem, read_jsonl
    from attune_judge.validate._files import record_kind
    from attune_judge.validate._rank import _on_scale

    path = source / "judgments.jsonl" if source.is_dir() else source
    if not path.is_file():
        raise UserError(f"{source}: no such file (nor a run directory with judgments.jsonl)")
    models: list[str] = []
    clusters: list[str] = []
    scores: list[float] = []
    lengths: list[float] = []
    refs: list[float | None] = []
    if path.suffix.lower() != ".csv" and record_kind(path) == "judgment":
        from attune_judge.data import read_judgments
        from attune_judge.runner._leaderboard import judgments_of

        if items is None:
            raise UserError(
                f"{source}: --control on a rated run needs --items, the JudgeItem JSONL it "
                "judged (runs keep no reply texts)"
            )
        by_id = {it.item_id: it for it in read_jsonl(items, JudgeItem)}
        judgments = judgments_of(read_judgments(path), judge_id, path)
        known = cal.judgments_scale(judgments, "overall" if field == "overall" else "normalized")
        for j in judgments:
            val = j.normalized if field == "normalized" else j.overall
            it = by_id.get(j.item_id)
            if j.status != "ok" or val is None or it is None:
                continue
            models.append(str(j.candidate_model or it.candidate_model))
            clusters.append(str(j.conversation_id or it.conversation_id))
            scores.append(float(val))
            lengths.append(float(len(it.candidate)))
            refs.append(None if it.reference is None else float(len(it.reference)))
        if not models:
            raise UserError(f"{items}: no item matches the run's scored judgments (item_id)")
    else:
        known = None  # a table records no scale: --scale gives it
        for n, r in enumerate(_score_rows(path), 1):
            try:
                models.append(str(_get(r, "model")))
                clusters.append(str(_get(r, "cluster")))
                scores.append(_number(_get(r, "score"), "score"))
                lengths.append(_number(_get(r, "length"), "length"))
                ref = r.get("reference_length")
                refs.append(None if ref in (None, "") else _number(ref, "reference_length"))
            except KeyError as exc:
                raise UserError(f"{path}: row {n}: missing field {exc.args[0]}") from None
            except ValueError as exc:
                raise UserError(f"{path}: row {n}: {exc}") from None
    bounds = _on_scale(path, field, known, scale, models, scores)
    if any(r is not None for r in refs) and any(r is None for r in refs):
        refs = [None] * len(refs)  # some conversations without a reference: centre all
    try:
        return cal.length_controlled_means(
            models, clusters, scores, lengths, refs, B=B, level=level, seed=seed, bounds=bounds
        )
    except UserError as exc:
        raise UserError(f"{source}: {exc}") from None


def length_means_markdown(res: cal.LengthControlledMeans) -> str:
    """Controlled means beside the raw ones, as Markdown."""
    fm = cal.fmt_metric
    pct = f"{res.controlled[0].level * 100:g}%"
    raw_rank = {i: r for r, i in enumerate(_order([m.estimate for m in res.raw]), 1)}
    sc, sr = res.rank_sets_controlled, res.rank_sets_raw
    where = (
        "each conversation's reference reply"
        if res.reference == "reference"
        else "the mean reply length"
    )
    lines = [
        "# Length-controlled means",
        "",
        f"Scores regressed on the model and the reply's length relative to {where}; the "
        f"controlled mean is the expected score at that length. Cluster bootstrap over "
        f"{res.n_clusters} conversations ({res.n} scores). Length slope: "
        f"{fm(res.length_slope)} per 100 characters.",
        "",
        f"| rank | model | controlled mean [{pct} CI] | rank set | raw mean | raw rank "
        "| raw rank set | mean Δlength |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r, i in enumerate(_order([m.estimate for m in res.controlled]), 1):
        lines.append(
            f"| {r} | {res.labels[i]} | {fm(res.controlled[i])} | {sc.lower[i]}–{sc.upper[i]} "
            f"| {fm(res.raw[i])} | {raw_rank[i]} | {sr.lower[i]}–{sr.upper[i]} "
            f"| {res.mean_length_difference[i]:+.0f} |"
        )
    lines += [
        "",
        "A model whose replies are better *because* they are longer loses that credit too.",
    ]
    lines += [f"\nWarning: {w}." for w in res.warnings]
    return "\n".join(lines) + "\n"


def write_controlled_report(
    out: Path,
    res: cal.LengthControlledResult | cal.StyleControlledResult | cal.LengthControlledMeans,
    *,
    source: Path,
    arguments: dict[str, object],
) -> tuple[Path, Path]:
    """``out``: manifest.json, summary.json (kind ``controlled``) and report.md/.html with
    the rank slope chart and the style terms."""
    from attune_judge.runs import ControlledBlock, ControlledSummary
    from attune_judge.validate._rundir import check_out_dir, write_run_dir

    check_out_dir(out, "rank", "--report")
    key = (
        "winrates"
        if isinstance(res, cal.LengthControlledResult)
        else "style"
        if isinstance(res, cal.StyleControlledResult)
        else "means"
    )
    block = ControlledBlock.model_validate({key: res, "source": str(source)})
    return write_run_dir(
        out,
        {k: str(v) for k, v in arguments.items()},
        summary=ControlledSummary(controlled=block),
        command="rank",
    )
