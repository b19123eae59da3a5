"""Fit the embedded model's calibration heads on the shipped sets (``align --method calibrate``).

For each set: judge all its items once with the embedded model in expected-score mode through
``validate`` (a resumable run directory: a killed run loses nothing, a re-run costs no model
call), fit the ordinal head on the train + dev conversations from those distributions, prove
it on the test conversations, and write the calibrated judge to ``calibration/heads/<set>/``
(shipped: ``validate --lm local --set <set>`` prints its calibrated row). The held-out tables
are printed and written to ``<runs>/calibrated-heads.md``.

    python benchmarks/fit_calibrated_heads.py [--sets a,b] [--runs runs/heads] [--reply]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from attune_judge._resources import shipped_dir
from attune_judge.align import AlignConfig, calibrate_judge, proof_markdown
from attune_judge.data import Judgment, read_jsonl
from attune_judge.validate import validate_judge

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
    args = ap.parse_args()
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


if __name__ == "__main__":
    main()
