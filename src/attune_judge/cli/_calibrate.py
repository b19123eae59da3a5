"""CLI: ``calibrate`` (judge vs human labels) and ``rank`` (leaderboard with rank sets).

Thin shell: read files, call ``attune_judge.calibration``, print Markdown or JSON. Heavy
imports stay inside the commands so ``attune-judge --help`` is fast.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from attune_judge.cli._options import split_csv
from attune_judge.cli._stats import DEFAULT_B, DEFAULT_LEVEL, BootstrapOption, CiOption
from attune_judge.errors import UserError

__all__ = ["register"]


def _jsonl_path(path: Path) -> Path:
    if path.is_dir():
        cand = path / "judgments.jsonl"
        if not cand.exists():
            raise UserError(f"{path}: a run directory must contain judgments.jsonl")
        return cand
    if not path.exists():
        raise UserError(f"{path}: file not found")
    return path


def _check_ci(ci: float) -> None:
    """``--ci`` is a confidence level strictly between 0 and 1."""
    if not 0.0 < ci < 1.0:
        raise UserError(f"--ci is a confidence level between 0 and 1 (e.g. 0.95), not {ci!r}")


def _record_kind(path: Path) -> str:
    """``rating``, ``preference``, ``judgment`` or ``scores`` from the first record's keys."""
    from attune_judge.data import reading_utf8

    with reading_utf8(path), path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UserError(f"{path}:{n}: not valid JSON: {exc.msg}") from None
            if not isinstance(obj, dict):
                raise UserError(f"{path}:{n}: expected a JSON object per line")
            if "judge_id" in obj:
                return "judgment"
            if "winner" in obj:
                return "preference"
            if "value" in obj and "rater" in obj:
                return "rating"
            if {"model", "score"} <= set(obj):
                return "scores"
            raise UserError(
                f"{path}:{n}: cannot tell the record type (expected Rating, Preference, "
                "Judgment or {model, cluster, score} rows)"
            )
    raise UserError(f"{path}: empty file")


def _emit(text: str, data: dict[str, Any], as_json: bool, out: Path | None) -> None:
    """Print the result, then write it to ``out`` (printed first: a bad ``out`` loses nothing)."""
    body = json.dumps(data, indent=2, default=str) + "\n" if as_json else text
    if as_json or not sys.stdout.isatty():
        sys.stdout.write(body)
        sys.stdout.flush()
    else:
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(text))
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(body, encoding="utf-8")


def _length_effect(judge: list[Any]) -> Any:
    """Length effect of the judge's verdicts when both texts are known (else ``None``)."""
    from attune_judge import calibration as cal

    rows = [p for p in judge if p.text_a is not None and p.text_b is not None and p.winner]
    try:
        return cal.length_effect(
            [p.winner for p in rows],
            [len(p.text_a) for p in rows],
            [len(p.text_b) for p in rows],
            [p.cluster or p.item_id for p in rows],
        )
    except UserError:
        return None


def _calibrate_preferences(
    human_path: Path, judge_path: Path, **opts: Any
) -> tuple[str, dict, dict[str, Any]]:
    from attune_judge import calibration as cal
    from attune_judge.data import Judgment, Preference, read_jsonl

    human = read_jsonl(human_path, Preference)
    kind = _record_kind(judge_path)
    bias, note = None, ""
    if kind == "preference":
        judge = read_jsonl(judge_path, Preference)
    elif kind == "judgment":
        js = [
            j for j in read_jsonl(judge_path, Judgment, tolerate_torn_tail=True) if j.status == "ok"
        ]
        if any(j.verdict is not None for j in js):
            judge, n_inconsistent = cal.judgments_to_preferences(js, human)
            note = f"\n{n_inconsistent} inconsistent verdicts (opposite winners) counted as ties.\n"
            ab, ba, cl = cal.judgments_both_orders(js)
            if ab:
                bias = cal.position_bias(ab, ba, cl, B=opts["B"], seed=opts["seed"])
        else:
            scores: dict[str, float] = {}
            for j in js:
                val = j.normalized if j.normalized is not None else j.overall
                if val is not None:
                    scores[j.item_id] = float(val)
            judge = cal.judge_preferences_from_scores(human, scores, margin=opts["margin"])
            note = f"\nJudge verdicts from scores with tie margin {opts['margin']}.\n"
    else:
        raise UserError(f"{judge_path}: expected Preference or Judgment records, found {kind}")
    res = cal.preference_agreement(
        human,
        judge,
        tie_policy=opts["tie_policy"],
        B=opts["B"],
        seed=opts["seed"],
        level=opts["level_ci"],
    )
    comparison = cal.compare_preferences(
        human, judge, B=opts["B"], seed=opts["seed"], level=opts["level_ci"]
    )
    text = (
        cal.preference_markdown(res) + note + "\n" + cal.preference_comparison_markdown(comparison)
    )
    data: dict[str, Any] = {"agreement": res.model_dump(), "comparison": comparison.model_dump()}
    length = _length_effect(judge)
    if length is not None:
        text += (
            f"\nLength effect of the judge (OLS, cluster-robust): P(A preferred) changes by "
            f"{length.slope:+.3f} [{length.slope_lower:+.3f}, {length.slope_upper:+.3f}] "
            f"{length.unit} of length difference (n={length.n}).\n"
        )
        data["length_effect"] = length.model_dump()
    if bias is not None:
        text += (
            f"\nPosition bias ({bias.n_pairs} pairs judged in both orders): flip rate "
            f"{cal.fmt_metric(bias.flip_rate)}, first-position win rate "
            f"{cal.fmt_metric(bias.first_position_win_rate)}\n"
        )
        data["position_bias"] = bias.model_dump()
    return text, data, _preference_block(human, judge, res, comparison)


def _preference_block(
    human: list[Any], judge: list[Any], res: Any, comparison: Any
) -> dict[str, Any]:
    """The ``calibration`` block of ``summary.json`` for pairwise preferences: the agreement
    metrics (overall, κ, per question, accuracy excluding ties, the no-judge baselines), the
    join, and the confusion counts of the choices."""
    metrics: dict[str, Any] = {"agreement (overall)": res.overall.model_dump(mode="json")}
    if res.kappa is not None:
        metrics["Cohen's κ (A / B / tie)"] = res.kappa.model_dump(mode="json")
    for row in comparison.rows:
        who = "judge" if row.rater == "judge" else f"{row.rater} baseline"
        if row.excluding_ties is not None:
            metrics[f"{who}: accuracy excluding ties"] = row.excluding_ties.model_dump(mode="json")
        if row.rater != "judge":
            metrics[f"{who}: agreement (A / B / tie)"] = row.three_class.model_dump(mode="json")
            if row.kappa is not None:
                metrics[f"{who}: Cohen's κ"] = row.kappa.model_dump(mode="json")
    for q, m in sorted(res.per_question.items()):
        metrics[f"agreement: {q}"] = m.model_dump(mode="json")
    part: dict[str, Any] = {"metrics": metrics, "join": res.join.model_dump(mode="json")}
    jwin = {p.item_id: p.winner for p in judge if p.winner is not None}
    pairs = [(p.winner, jwin[p.item_id]) for p in human if p.winner and p.item_id in jwin]
    if pairs:
        cats = [c for c in ("A", "B", "tie") if any(c in pair for pair in pairs)]
        part["confusion"] = {
            "categories": cats,
            "counts": [[sum(p == (h, j) for p in pairs) for j in cats] for h in cats],
            "human_label": "participants' choice",
            "judge_label": "judge's verdict",
        }
    return part


def calibrate(
    human: Annotated[Path, typer.Option("--human", help="Human Rating or Preference JSONL.")],
    judge: Annotated[
        Path, typer.Option("--judge", help="Judge Rating/Preference JSONL, or a run directory.")
    ],
    level: Annotated[
        str, typer.Option(help="Level of measurement for α: nominal, ordinal, interval, ratio.")
    ] = "ordinal",
    by: Annotated[str, typer.Option(help="Split the report by: dimension.")] = "dimension",
    dimension: Annotated[
        list[str] | None, typer.Option(help="Only these dimensions (repeatable).")
    ] = None,
    scale: Annotated[
        str | None,
        typer.Option(help="Declared rating scale, e.g. 1,2,3,4,5 (weighted κ uses its index)."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON instead of Markdown.")
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--out",
            help="Run directory: summary.json, report.md and report.html with figures.",
        ),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", help="Also write the Markdown (or JSON) here.")
    ] = None,
    B: BootstrapOption = DEFAULT_B,
    seed: Annotated[int, typer.Option(help="Seed of the cluster bootstrap.")] = 0,
    ci: CiOption = DEFAULT_LEVEL,
    epsilon: Annotated[float, typer.Option(help="ε of the alternative annotator test.")] = 0.2,
    tie_policy: Annotated[
        str, typer.Option(help="Preferences: strict, half or exclude.")
    ] = "strict",
    margin: Annotated[
        float, typer.Option(help="Preferences from scores: |Δscore| ≤ margin is a tie.")
    ] = 0.0,
    items: Annotated[
        Path | None,
        typer.Option(
            "--items",
            help="JudgeItem JSONL of the judged items: adds the length-only and lexicon "
            "baselines beside the judge (needs Judgment records or a run directory).",
        ),
    ] = None,
) -> None:
    """Agreement of a judge with people (ratings or pairwise preferences), with intervals."""
    _check_ci(ci)
    if level not in ("nominal", "ordinal", "interval", "ratio"):
        raise UserError(f"--level must be nominal, ordinal, interval or ratio, not {level!r}")
    if by != "dimension":
        raise UserError(f"--by supports only 'dimension', not {by!r}")
    if tie_policy not in ("strict", "half", "exclude"):
        raise UserError(f"--tie-policy must be strict, half or exclude, not {tie_policy!r}")
    try:
        scale_vals = [float(v) for v in scale.split(",")] if scale else None
    except ValueError:
        raise UserError(f"--scale must be comma-separated numbers, not {scale!r}") from None
    hpath, jpath = _jsonl_path(human), _jsonl_path(judge)
    if out is not None:
        _check_out_dir(out)
    arguments: dict[str, Any] = {
        "human": str(hpath),
        "judge": str(jpath),
        "level": level,
        "dimension": dimension,
        "scale": scale,
        "B": B,
        "seed": seed,
        "ci": ci,
        "epsilon": epsilon,
        "tie_policy": tie_policy,
        "margin": margin,
        "items": str(items) if items is not None else None,
    }
    hkind = _record_kind(hpath)
    if hkind == "preference":
        text, data, block = _calibrate_preferences(
            hpath, jpath, tie_policy=tie_policy, margin=margin, B=B, seed=seed, level_ci=ci
        )
        _emit(text, data, as_json, output)
        if out is not None:
            _write_run(out, {"kind": "calibration", "calibration": block}, arguments)
        return
    if hkind != "rating":
        raise UserError(f"{hpath}: expected Rating or Preference records, found {hkind}")
    from attune_judge import calibration as cal
    from attune_judge.data import Judgment, Rating, read_jsonl

    hum = read_jsonl(hpath, Rating)
    jkind = _record_kind(jpath)
    judgments: list[Judgment] = []
    if jkind == "judgment":
        judgments = read_jsonl(jpath, Judgment, tolerate_torn_tail=True)
        behaviour = cal.judgments_to_behaviour_ratings(judgments)
        if behaviour and any(cal.is_behaviour_dimension(r.dimension) for r in hum):
            res = cal.behaviour_agreement(hum, behaviour, B=B, seed=seed, level=ci)
            _emit(cal.behaviour_markdown(res), res.model_dump(), as_json, output)
            if out is not None:
                block = cal.behaviour_block(res)
                _write_run(out, {"kind": "calibration", "calibration": block}, arguments)
            return
        jud = cal.judgments_to_ratings(judgments)
    elif jkind == "rating":
        jud = read_jsonl(jpath, Rating)
    else:
        raise UserError(f"{jpath}: expected Rating or Judgment records, found {jkind}")
    rep = cal.calibrate(
        hum,
        jud,
        level=level,  # type: ignore[arg-type]
        dimensions=dimension,
        scale=scale_vals,
        B=B,
        conf_level=ci,
        seed=seed,
        epsilon=epsilon,
    )
    text, data = cal.calibration_markdown(rep), rep.model_dump()
    if items is not None:
        records = judgments if jkind == "judgment" else None
        text, data = _with_baselines(text, data, items, records, hum, B=B, seed=seed)
    _emit(text, data, as_json, output)
    if out is not None:
        _write_run(out, None, arguments, rep=rep, human=hum, judge=jud)


def _with_baselines(
    text: str, data: dict[str, Any], items: Path, judgments: Any, hum: Any, *, B: int, seed: int
) -> tuple[str, dict[str, Any]]:
    """The report with the length-only and lexicon baselines on the judged items added."""
    if judgments is None:
        raise UserError("--items needs the judge's Judgment records (or its run directory)")
    from attune_judge.data import JudgeItem, read_jsonl
    from attune_judge.demo._baselines import baseline_comparison

    judged = read_jsonl(_jsonl_path(items), JudgeItem)
    _, md, base = baseline_comparison(judged, judgments, hum, B=B, seed=seed)
    return text + "\n".join(md) + "\n", {**data, "baselines": base}


CALIBRATE_MANIFEST = "calibrate"
"""``command`` of the manifest of a ``calibrate`` run directory."""


def _check_out_dir(out: Path) -> None:
    """Refuse to write into a file, or into a run directory of another command."""
    if (out.exists() and not out.is_dir()) or out.suffix.lower() in (".md", ".json", ".txt"):
        raise UserError(f"{out}: --out must be a directory (use --output for a single file)")
    manifest = out / "manifest.json"
    other = (out / "judgments.jsonl").exists()
    if manifest.exists() and not other:
        try:
            other = json.loads(manifest.read_text(encoding="utf-8")).get("command") not in (
                CALIBRATE_MANIFEST,
                None,
            )
        except (json.JSONDecodeError, AttributeError):
            other = True
    if other:
        raise UserError(
            f"{out}: holds another command's run (judgments.jsonl or manifest.json); "
            "choose a new directory for --out"
        )


def _write_run(
    out: Path,
    summary: dict[str, Any] | None,
    arguments: dict[str, Any],
    **calibration: Any,
) -> None:
    """Write the run directory: manifest.json, summary.json, report.md/.html, figures."""
    import datetime as dt

    from attune_judge._schema_version import SCHEMA_VERSION
    from attune_judge._version import __version__
    from attune_judge.report import write_calibration_run, write_report

    out.mkdir(parents=True, exist_ok=True)
    manifest = {
        "command": CALIBRATE_MANIFEST,
        "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "arguments": {k: v for k, v in arguments.items() if v is not None},
        "versions": {"attune-judge": __version__},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    if summary is None:
        md, html = write_calibration_run(
            out, calibration["rep"], human=calibration["human"], judge=calibration["judge"]
        )
    else:
        (out / "summary.json").write_text(
            json.dumps(
                {"schema_version": SCHEMA_VERSION, **summary},
                indent=2,
                ensure_ascii=False,
                default=str,
            )
            + "\n",
            encoding="utf-8",
        )
        md, html = write_report(out)
    print(f"report: {md} and {html.name}", file=sys.stderr)


def _read_scores(path: Path, field: str, judge_id: str | None) -> tuple[list, list, list]:
    import csv

    from attune_judge import calibration as cal
    from attune_judge.data import Judgment, read_jsonl, read_utf8, reading_utf8

    if path.suffix.lower() == ".csv":
        with reading_utf8(path), path.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
    elif (kind := _record_kind(path)) in ("rating", "preference"):
        raise UserError(
            f"{path}: expected Judgment records or {{model, cluster, score}} rows, found {kind} "
            "records (rank ranks models; use calibrate for human labels)"
        )
    elif kind == "judgment":
        js = read_jsonl(path, Judgment, tolerate_torn_tail=True)
        ids = sorted({j.judge_id for j in js})
        if judge_id is None and len(ids) > 1:
            raise UserError(f"{path}: several judges {ids[:5]}; choose one with --judge-id")
        if judge_id is not None and judge_id not in ids:
            raise UserError(f"{path}: no judge {judge_id!r} (--judge-id); judges: {ids[:10]}")
        js = [j for j in js if judge_id is None or j.judge_id == judge_id]
        return cal.judgments_to_scores(js, field=field)  # type: ignore[arg-type]
    else:
        rows = [json.loads(x) for x in read_utf8(path).splitlines() if x.strip()]
    models, clusters, scores, bad = [], [], [], []
    for n, r in enumerate(rows, 1):
        try:
            models.append(str(r["model"]))
            clusters.append(str(r.get("cluster") or r.get("conversation_id") or n))
            scores.append(float(r["score"]))
        except KeyError as exc:
            bad.append(f"{path}: row {n}: missing field {exc}")
        except (TypeError, ValueError) as exc:
            bad.append(f"{path}: row {n}: {type(exc).__name__}: {exc}")
    if bad:
        raise UserError(f"{path}: rows need model, cluster and a numeric score", bad[:5])
    return models, clusters, scores


def rank(
    source: Annotated[
        Path, typer.Argument(help="Run directory, or scores JSONL/CSV (model, cluster, score).")
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON instead of Markdown.")
    ] = False,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Also write here.")] = None,
    field: Annotated[
        str, typer.Option(help="Judgment score: normalized or overall.")
    ] = "normalized",
    judge_id: Annotated[str | None, typer.Option(help="Judge to rank by (run dirs).")] = None,
    B: BootstrapOption = DEFAULT_B,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap and of the rank sets.")] = 0,
    ci: CiOption = DEFAULT_LEVEL,
    human: Annotated[
        Path | None,
        typer.Option(
            "--human",
            help="Human Rating JSONL on some of the judged items: correct the judge's means "
            "and differences with prediction-powered inference (PPI++).",
        ),
    ] = None,
    dimension: Annotated[
        str | None, typer.Option(help="--human: the human dimension (default overall).")
    ] = None,
    human_raters: Annotated[
        str | None,
        typer.Option(help="--human: only these raters (comma-separated; default all, averaged)."),
    ] = None,
    human_scale: Annotated[
        str | None,
        typer.Option(help="--human: LOW,HIGH of the human scale, mapped to 0-1 (e.g. 1,5)."),
    ] = None,
    clip_lambda: Annotated[
        bool, typer.Option(help="--human: clip the power-tuning λ to [0, 1].")
    ] = False,
    report: Annotated[
        Path | None,
        typer.Option(help="--human: also write summary.json and report.md/.html here."),
    ] = None,
) -> None:
    """Leaderboard with paired cluster-bootstrap intervals and confidence sets for ranks.

    With ``--human``: the prediction-powered leaderboard (PPI++): judge-only, human-only and
    corrected means and differences side by side, with the effective-sample-size gain.
    """
    from attune_judge import calibration as cal

    _check_ci(ci)
    if field not in ("normalized", "overall"):
        raise UserError(f"--field must be normalized or overall, not {field!r}")
    if human is not None:
        from attune_judge.cli._rank_ppi import parse_scale, ppi_rank

        text, data = ppi_rank(
            _jsonl_path(source),
            _jsonl_path(human),
            judge_id=judge_id,
            field=field,
            dimension=dimension,
            raters=split_csv(human_raters),
            human_scale=parse_scale(human_scale),
            level=ci,
            clip=clip_lambda,
            report_dir=report,
        )
        _emit(text, data, as_json, output)
        return
    if source.is_dir():
        # a run directory: the leaderboard its summary stores (computed once by the runner)
        from attune_judge.runner import run_leaderboard

        lb = run_leaderboard(source, judge_id, field=field, B=B, seed=seed, level=ci)  # type: ignore[arg-type]
        _emit(cal.leaderboard_markdown(lb), lb.model_dump(), as_json, output)
        return
    models, clusters, scores = _read_scores(_jsonl_path(source), field, judge_id)
    if not scores:
        raise UserError(f"{source}: no usable scores (status ok with a {field} score)")
    lb = cal.leaderboard(models, clusters, scores, B=B, seed=seed, level=ci)
    _emit(cal.leaderboard_markdown(lb), lb.model_dump(), as_json, output)


def register(app: typer.Typer) -> None:
    """Add ``calibrate`` and ``rank`` to the app."""
    app.command("calibrate")(calibrate)
    app.command("rank")(rank)
