"""Derive the compact AlpacaEval 2 table the length-control benchmark reads (issue 43).

Source: the public AlpacaEval repository (https://github.com/tatsu-lab/alpaca_eval,
Apache-2.0, Dubois, Galambosi, Liang, Hashimoto 2024), read from a bare git snapshot:
``results/<model>/weighted_alpaca_eval_gpt4_turbo/annotations.json`` (the GPT-4-turbo judge's
preference of each model's output over the gpt4_1106_preview baseline's, on the 805
instructions) and
``src/alpaca_eval/leaderboards/data_AlpacaEval_2/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv``
(the published ``length_controlled_winrate`` and ``win_rate``). Large annotation files absent
from the snapshot are skipped and listed.

Writes ``benchmarks/data/alpaca_eval2_pairs.csv.gz`` (model, instruction, len_model,
len_baseline, preference: AlpacaEval's preference in [1, 2] minus 1, the probability that the
model's output wins; 0, AlpacaEval's code for a failed annotation, becomes a tie, 0.5, as
AlpacaEval itself does) and ``benchmarks/data/alpaca_eval2_published.csv`` (model: the
results directory's name,
length_controlled_winrate, win_rate). Instruction ids are positions in the baseline's own
annotation file. Lengths are characters, as AlpacaEval counts them.

    .venv/bin/python benchmarks/extract_alpaca_eval.py [GIT_DIR] [--out DIR]

(the suite runs it on a few records in a repository of the same layout it builds.)
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import subprocess
from pathlib import Path

GIT_DIR = "/work/.mirror/tatsu-lab+alpaca_eval/repo"
ANNOTATOR = "weighted_alpaca_eval_gpt4_turbo"
BASELINE = "gpt4_1106_preview"
OUT = Path(__file__).parent / "data"


def _show(git_dir: str, path: str) -> bytes:
    return subprocess.run(
        ["git", "-C", git_dir, "show", f"HEAD:{path}"], check=True, capture_output=True
    ).stdout


def _present(git_dir: str) -> list[str]:
    listing = subprocess.run(
        ["git", "-C", git_dir, "ls-tree", "-r", "-l", "HEAD", "results"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    dirs = []
    for line in listing.splitlines():
        meta, path = line.split("\t")
        if path.endswith(f"/{ANNOTATOR}/annotations.json") and meta.split()[3] != "BAD":
            dirs.append(path.split("/")[1])
    return sorted(set(dirs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("git_dir", nargs="?", default=GIT_DIR, help="the AlpacaEval repository")
    parser.add_argument("--out", type=Path, default=OUT, help="folder written (benchmarks/data)")
    args = parser.parse_args()
    extract(args.git_dir, args.out)


def extract(git_dir: str, out_dir: Path) -> None:
    """Write the two tables from the repository at ``git_dir`` (its HEAD) into ``out_dir``."""
    text = _show(
        git_dir, f"src/alpaca_eval/leaderboards/data_AlpacaEval_2/{ANNOTATOR}_leaderboard.csv"
    )
    board = list(csv.DictReader(io.StringIO(text.decode())))
    by_dir = {row[""]: row for row in board}
    present = _present(git_dir)
    base = json.loads(_show(git_dir, f"results/{BASELINE}/{ANNOTATOR}/annotations.json"))
    ids = {rec["instruction"]: i for i, rec in enumerate(base)}
    out_dir.mkdir(exist_ok=True)
    published = []
    skipped = []
    with gzip.open(out_dir / "alpaca_eval2_pairs.csv.gz", "wt", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["model", "instruction", "len_model", "len_baseline", "preference"])
        for d in present:
            if d not in by_dir or d == BASELINE:
                skipped.append(d)
                continue
            recs = json.loads(_show(git_dir, f"results/{d}/{ANNOTATOR}/annotations.json"))
            for rec in recs:
                if rec["generator_1"] != BASELINE:
                    raise SystemExit(f"{d}: baseline {rec['generator_1']}")
                pref = rec.get("preference")
                if pref is None or pref != pref:
                    continue
                p = float(pref)
                p = 0.5 if p == 0 else p - 1.0
                out.writerow(
                    [
                        d,
                        ids[rec["instruction"]],
                        len(rec["output_2"] or ""),
                        len(rec["output_1"] or ""),
                        f"{p:.6g}",
                    ]
                )
            row = by_dir[d]
            published.append([d, row["length_controlled_winrate"], row["win_rate"]])
    with open(out_dir / "alpaca_eval2_published.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["model", "length_controlled_winrate", "win_rate"])
        w.writerows(published)
    print(f"{len(published)} models written; not on the leaderboard or the baseline: {skipped}")
    print(f"absent from the snapshot: {sum(r[''] not in present for r in board)} leaderboard rows")


if __name__ == "__main__":
    main()
