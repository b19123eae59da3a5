"""Fit the embedded model's calibration heads on the shipped sets (``align --method calibrate``).

For each set: judge all its items once with the embedded model in expected-score mode through
``validate`` (a resumable run directory: a killed run loses nothing, a re-run costs no model
call), fit the ordinal head on the train + dev conversations from those distributions, prove
it on the test conversations, and write the calibrated judge to ``calibration/heads/<set>/``
(shipped: ``validate --lm local --set <set>`` prints its calibrated row). The held-out tables
are printed and written to ``<runs>/calibrated-heads.md``. Lend an Ear (50 long conversations,
6 criteria, one call each) took 25 min on 2 shared cores (ESConv 23, DUO 12): one set at a time.

``--recorded`` instead calibrates the recorded frontier-model ratings shipped with the
empathic-communication sets (GPT-4o, Claude 3.7 Sonnet, Gemini 2.5 Pro: levels, no
probabilities, so each rating is a one-hot distribution) with the same split, head and proof,
and prints the overall rows (no model is run, nothing is shipped).

    python benchmarks/fit_calibrated_heads.py [--sets a,b] [--runs runs/heads] [--reply]
    python benchmarks/fit_calibrated_heads.py --recorded [--sets a,b]
    python benchmarks/fit_calibrated_heads.py --table

``--table`` prints the README's held-out tables (overall rows) from the shipped heads' proofs
and, when ``--recorded`` was run, ``<runs>/calibrated-recorded.json``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from attune_judge._resources import shipped_dir
from attune_judge.align import (
    AlignConfig,
    calibrate_judge,
    calibration_proof,
    cluster_split,
    load_align_data,
)
from attune_judge.align._calibrate import fit_heads, head_systems
from attune_judge.align._calibrate_run import proof_markdown
from attune_judge.data import Judgment, read_jsonl
from attune_judge.validate import VALIDATION_SETS, load_calibration_set, validate_judge

SETS = (
    "empathic-communication-empatheticdialogues",
    "empathic-communication-epitome",
    "empathic-communication-lend_an_ear",
    "duo",
    "esconv",
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--runs", type=Path, default=Path("runs/heads"))
    ap.add_argument("--lm", default="local")
    ap.add_argument("--reply", action="store_true", help="Save the head with reply features.")
    ap.add_argument("--B", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-ship", action="store_true", help="Do not write calibration/heads/.")
    ap.add_argument("--recorded", action="store_true", help="Calibrate the recorded judges.")
    ap.add_argument("--table", action="store_true", help="Print the README's tables.")
    ap.add_argument("--judges", default="gpt,claude,gemini", help="recorded judges (--recorded)")
    ap.add_argument("--items", type=int, default=0, help="the first N items of a set (--recorded)")
    ap.add_argument("--tiny", action="store_true", help="--recorded, 1 set, 1 judge, 40 items")
    args = ap.parse_args()
    if args.tiny:  # no model: recorded ratings, B = 50, into a temporary folder (the suite)
        args.recorded, args.sets, args.judges, args.items, args.B = True, SETS[0], "gpt", 40, 50
        args.runs = Path(tempfile.mkdtemp(prefix="heads-tiny-"))
    if args.table:
        print(table(args.runs))
        return
    if args.recorded:
        recorded(args)
        return
    md: list[str] = []
    for name in [s for s in args.sets.split(",") if s]:
        start = time.monotonic()
        run = args.runs / f"validate-{name}-{args.lm}"
        print(f"== {name}: judging every item in expected mode ({run}, resumed)", flush=True)
        validate_judge(name, args.lm, run, B=200, seed=args.seed, quiet=False, report_files=False)
        judgments = read_jsonl(run / "run" / "judgments.jsonl", Judgment, tolerate_torn_tail=True)
        tmp = Path(tempfile.mkdtemp(prefix=f"head-{name}-")) / "judge"
        config = AlignConfig(
            labels=name,
            out=tmp,
            lm=args.lm,
            method="calibrate",
            reply_features=args.reply,
            B=args.B,
            seed=args.seed,
        )
        res = calibrate_judge(config, judgments=judgments)
        text = proof_markdown(res.proof, f"{name} ({args.lm})")
        print(text, flush=True)
        md.append(text.replace("\n# ", "\n## "))
        if not args.no_ship:
            dest = shipped_dir("calibration") / "heads" / name
            shutil.rmtree(dest, ignore_errors=True)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(tmp, dest)
            print(f"shipped: {dest} ({time.monotonic() - start:.0f} s)", flush=True)
        shutil.rmtree(tmp.parent, ignore_errors=True)
    args.runs.mkdir(parents=True, exist_ok=True)
    (args.runs / "calibrated-heads.md").write_text("\n".join(md), encoding="utf-8")


def recorded(args: argparse.Namespace) -> None:
    """The recorded judges' levels as one-hot distributions, calibrated like a model's."""
    md: list[str] = []
    proofs: dict[str, dict] = {}
    for name in [s for s in args.sets.split(",") if s.startswith("empathic-communication")]:
        data, rubric = load_align_data(name)
        items = data.items[: args.items] if args.items else data.items
        split = cluster_split(
            [li.item.item_id for li in items], [li.cluster for li in items], seed=args.seed
        )
        spec = VALIDATION_SETS[name]
        ratings = [r for r in load_calibration_set(spec.calibration) if spec.recorded(r)]
        for judge in args.judges.split(","):
            levels: dict[str, dict[str, float]] = {}
            for r in ratings:
                if r.rater == judge and isinstance(r.value, int | float):
                    levels.setdefault(r.item_id, {})[r.dimension] = float(r.value)
            judged: list[Judgment | None] = []
            for li in items:
                got = levels.get(li.item.item_id, {})
                if any(c.id not in got for c in rubric.criteria):
                    judged.append(None)
                    continue
                dists = {
                    c.id: {
                        "probabilities": {
                            str(lv): float(lv == round(got[c.id]))
                            for lv in rubric.scale_of(c.id).levels
                        }
                    }
                    for c in rubric.criteria
                }
                judged.append(
                    Judgment(
                        item_id=li.item.item_id,
                        judge_id=f"recorded:{judge}",
                        scores=got,
                        details={"distributions": dists},
                    )
                )
            heads = fit_heads(data, rubric, items, judged, split, reply=False)
            part = {iid: n for n, ids in split.items.items() for iid in ids}
            test = [k for k, li in enumerate(items) if part[li.item.item_id] == "test"]
            fit = [li for li in items if part[li.item.item_id] != "test"]
            test_items = [items[k] for k in test]
            systems, dists_ = head_systems(
                heads, fit, test_items, [judged[k] for k in test], data.criteria
            )
            proof = calibration_proof(
                clusters=[li.cluster for li in test_items],
                human={c: [li.human.get(c) for li in test_items] for c in data.criteria},
                raters=[li.raters for li in test_items],
                systems=systems,
                distributions=dists_,
                levels={c: list(rubric.scale_of(c).levels) for c in data.criteria},
                headline="calibrated",
                n_failed=sum(judged[k] is None for k in test),
                B=args.B,
                seed=args.seed,
            )
            text = proof_markdown(proof, f"{name}: recorded {judge}")
            print(text, flush=True)
            md.append(text)
            proofs[f"{name}|{judge}"] = proof.model_dump(mode="json")
    args.runs.mkdir(parents=True, exist_ok=True)
    (args.runs / "calibrated-recorded.md").write_text("\n".join(md), encoding="utf-8")
    (args.runs / "calibrated-recorded.json").write_text(json.dumps(proofs), encoding="utf-8")


def _m(metric: dict | None, ci: bool = False) -> str:
    if not metric or metric.get("estimate") is None:
        return "—"
    text = f"{metric['estimate']:+.2f}" if ci else f"{metric['estimate']:.2f}"
    if ci and metric.get("lower") is not None and metric.get("upper") is not None:
        text += f" [{metric['lower']:+.2f}, {metric['upper']:+.2f}]"
    return text.replace("-", "−")


def table(runs: Path) -> str:
    """One table per shipped head (its held-out proof's overall), then the recorded judges'."""
    rows = (
        ("uncalibrated expected score", "uncalibrated"),
        ("calibrated head", "calibrated"),
        ("calibrated head + reply features", "calibrated+reply"),
        ("length baseline", "length"),
        ("lexicon baseline", "lexicon"),
    )
    diffs = (
        "calibrated − length",
        "calibrated+reply − length",
        "calibrated − lexicon",
        "calibrated − uncalibrated",
        "calibrated+reply − calibrated",
    )
    out: list[str] = []
    for name in SETS:
        path = shipped_dir("calibration") / "heads" / name / "summary.json"
        if not path.is_file():
            continue
        proof = json.loads(path.read_text(encoding="utf-8"))["align"]["calibration_proof"]
        o = proof["criteria"].get("overall")
        if not o:
            continue
        s, d = o["systems"], o["differences"]
        out += [
            f"**{name}** ({o['n_items']} held-out items, {o['n_clusters']} conversations; "
            f"{proof['n_failed']} failed)",
            "",
            "| overall | RMSE | Spearman ρ | κ_qw |",
            "|---|---|---|---|",
        ]
        for label, key in rows:
            m = s[key]
            out.append(
                f"| {label} | {_m(m['rmse'])} | {_m(m['spearman'], True)} | "
                f"{_m(m['kappa_qw'], True)} |"
            )
        c = o.get("human_ceiling") or {}
        if c:
            out.append(
                f"| human ceiling (one person vs the others) | {_m(c.get('rmse'))} | "
                f"{_m(c.get('spearman'), True)} | {_m(c.get('kappa_qw'), True)} |"
            )
        else:
            out.append("| human ceiling | — (one person per item) | — | — |")
        for key in diffs:
            m = d[key]
            label = "Δ " + key.replace("+reply", " + reply")
            out.append(
                f"| {label} | {_m(m['rmse'], True)} | {_m(m['spearman'], True)} | "
                f"{_m(m['kappa_qw'], True)} |"
            )
        out.append("")
    rec = runs / "calibrated-recorded.json"
    if rec.is_file():
        out += [
            "",
            "| set (held-out items) | recorded judge | RMSE raw → calibrated | human ceiling "
            "RMSE | ρ raw → calibrated | human ceiling ρ | Δρ calibrated − raw | ΔRMSE "
            "calibrated − raw |",
            "|" + "---|" * 8,
        ]
        for key, proof in json.loads(rec.read_text(encoding="utf-8")).items():
            name, judge = key.split("|")
            o = proof["criteria"]["overall"]
            s, d, c = o["systems"], o["differences"], o["human_ceiling"]
            out.append(
                f"| {name} ({o['n_items']}) | {judge} | {_m(s['uncalibrated']['rmse'])} → "
                f"{_m(s['calibrated']['rmse'])} | {_m(c.get('rmse'))} | "
                f"{_m(s['uncalibrated']['spearman'])} → {_m(s['calibrated']['spearman'])} | "
                f"{_m(c.get('spearman'))} | "
                f"{_m(d['calibrated − uncalibrated']['spearman'], True)} | "
                f"{_m(d['calibrated − uncalibrated']['rmse'], True)} |"
            )
    return "\n".join(out)


if __name__ == "__main__":
    main()
