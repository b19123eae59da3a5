"""Seconds per judgment of the embedded judge in each score mode, on the same items, one run.

Run ``.venv/bin/python benchmarks/bench_score_modes.py`` (options: ``--n`` items, ``--set``).
On the first ``--n`` items of a shipped validation set (empathic-communication,
EmpatheticDialogues by default; three criteria, 1-5) it judges every item with:

- ``sampled``: one call writing all criteria as JSON under a grammar (the one-call judge);
- ``sampled-per-criterion``: one call per criterion, the written digit read;
- ``expected``: one call per criterion, the score read from the token probabilities;
- ``checklist-expected``: one call per yes/no question of the set's checklist rubric;

and prints the median seconds per judgment of each, and its ratio to the one-call sampled
judge measured in the same run (the baseline). The model is loaded (and warmed on one item,
except at ``--tiny``) before timing; the request cache is off. Timings depend on the machine
and on its load: the ratios are the figures to compare.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any


def _judges(set_name: str) -> dict[str, Any]:
    from attune_judge.judges import JudgeOptions, build_judge
    from attune_judge.lm import LMSettings
    from attune_judge.validate import VALIDATION_SETS

    rubric = VALIDATION_SETS[set_name].rubric
    local = LMSettings(lm="local", cache=False, seed=0)
    judges = {
        "sampled": build_judge(
            rubric, local, JudgeOptions(score_mode="sampled", use_reference=False)
        ),
        "sampled-per-criterion": build_judge(
            rubric,
            local,
            JudgeOptions(score_mode="sampled", per_criterion=True, use_reference=False),
        ),
        "expected": build_judge(
            rubric, local, JudgeOptions(score_mode="expected", use_reference=False)
        ),
    }
    from attune_judge.rubrics import available_rubrics

    if f"{rubric}-checklist" in available_rubrics():
        judges["checklist-expected"] = build_judge(f"{rubric}-checklist", local)
    return judges


def _chars(item: Any) -> int:
    """The item's length in characters (its conversation and the candidate reply)."""
    return len(item.candidate) + sum(len(turn.content) for turn in item.context)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=6, help="items judged per mode")
    parser.add_argument("--set", default="empathic-communication-empatheticdialogues")
    parser.add_argument(
        "--tiny",
        action="store_true",
        help="the shortest item, once per mode, no warm-up (the suite: code paths, not figures)",
    )
    args = parser.parse_args()
    from attune_judge._resources import shipped_dir
    from attune_judge.data import JudgeItem, read_jsonl
    from attune_judge.validate import VALIDATION_SETS

    spec = VALIDATION_SETS[args.set]
    items = sorted(
        (
            i
            for i in read_jsonl(shipped_dir("data") / spec.calibration / "items.jsonl", JudgeItem)
            if spec.items(i)
        ),
        key=lambda i: i.item_id,
    )
    judges = _judges(args.set)
    if args.tiny:
        timed = [min(items, key=_chars)]
    else:
        warm, *timed = items[: args.n + 1]
        for judge in judges.values():
            judge.judge(warm)
    seconds: dict[str, list[float]] = {name: [] for name in judges}
    failed: dict[str, int] = dict.fromkeys(judges, 0)
    # interleaved, so that a change of the machine's load hits every mode alike
    for item in timed:
        for name, judge in judges.items():
            started = time.perf_counter()
            result = judge.judge(item)
            seconds[name].append(time.perf_counter() - started)
            failed[name] += result.status != "ok"
    base = statistics.median(seconds["sampled"])
    print(
        f"{args.set}: {len(timed)} items per mode; cores {os.cpu_count()}, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    print(f"{'mode':24s} {'s/judgment (median)':>20s} {'ratio to sampled':>17s} {'failed':>7s}")
    for name, values in seconds.items():
        median = statistics.median(values)
        print(f"{name:24s} {median:20.2f} {median / base:17.2f} {failed[name]:7d}")


if __name__ == "__main__":
    main()
