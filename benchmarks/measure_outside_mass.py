"""How much of the embedded judge's answer-token probability lies outside the scale, per set.

Runs ``validate --lm local`` (expected-score mode) on the first ``--limit`` items of every
shipped validation set (resumable: the run folders are kept under ``--out``) and prints, per
set, the items judged ok and the outside share per criterion answer: quartiles, maximum, and
how many answers were above 0.5 (the old parse-error limit, issue 23). The README's table of
the embedded judge comes from this script.

    .venv/bin/python benchmarks/measure_outside_mass.py [--limit 20] [--out runs/outside-mass]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from attune_judge.data import Judgment, read_jsonl
from attune_judge.runner import effective_judgments
from attune_judge.validate import VALIDATION_SETS, validate_judge


def _quartiles(values: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[1], q[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--out", type=Path, default=Path("runs/outside-mass"))
    parser.add_argument("--sets", nargs="*", default=sorted(VALIDATION_SETS))
    parser.add_argument(
        "--tiny",
        action="store_true",
        help="2 items (validate's least) of the set with the shortest prompts, 50 bootstrap "
        "draws, into a temporary folder (the suite)",
    )
    args = parser.parse_args()
    B = 200
    if args.tiny:
        args.limit, args.sets, B = 2, ["empathic-communication-empatheticdialogues"], 50
        args.out = Path(tempfile.mkdtemp(prefix="outside-mass-tiny-"))
    rows = []
    for name in args.sets:
        start = time.monotonic()
        res = validate_judge(
            name, "local", args.out / name, limit=args.limit, B=B, report_files=False
        )
        seconds = time.monotonic() - start
        logged = read_jsonl(args.out / name / "run" / "judgments.jsonl", Judgment)
        judgments = list(effective_judgments(logged).values())
        outside = [
            float(d["out_of_scale"])
            for j in judgments
            for d in (j.details or {}).get("distributions", {}).values()
        ]
        q1, med, q3 = _quartiles(outside) if len(outside) > 1 else (float("nan"),) * 3
        above = sum(v > 0.5 for v in outside)
        rows.append(
            f"| {name} | {res.n_ok}/{res.n_items} | {len(outside)} | {q1:.2f} / {med:.2f} / "
            f"{q3:.2f} | {max(outside, default=float('nan')):.2f} | {above}/{len(outside)} | "
            f"{seconds / max(res.n_items, 1):.1f} |"
        )
        print(rows[-1], flush=True)
    print()
    print(
        "| set | judged ok | criterion answers | outside share (q1 / median / q3) | max | "
        "above 0.5 (old limit) | s/item (this run) |"
    )
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
