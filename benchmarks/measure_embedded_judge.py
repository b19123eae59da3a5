"""Which configuration of the embedded judge agrees best with the experts? (issue 16, item 5)

Held-out measurement on a shipped validation set of the empathic-communication data: items are
split by a hash of their id into a demonstration pool (``--train`` items, the "training split")
and held-out items; every configuration judges the same held-out items, and its agreement with
the experts' median is printed beside the length and lexicon baselines on the same items, with
the judge-minus-baseline difference as a paired cluster-bootstrap interval.

    python benchmarks/measure_embedded_judge.py run --set empathic-communication-epitome
    python benchmarks/measure_embedded_judge.py report --set empathic-communication-epitome

``run`` appends judgments to ``--out`` (resumable: items already judged are skipped);
``report`` prints the table (and writes ``report.json`` beside the judgments).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from attune_judge._resources import shipped_dir
from attune_judge.data import JudgeItem, Judgment, read_jsonl
from attune_judge.judges import (
    CriterionDemo,
    JudgeOptions,
    LengthJudge,
    build_judge,
    format_conversation,
)
from attune_judge.judges._lexicon import LexiconJudge
from attune_judge.lm import LMSettings
from attune_judge.validate import VALIDATION_SETS

CONFIGS: dict[str, dict[str, Any]] = {
    "expected": {"score_mode": "expected"},
    "expected+demos3": {"score_mode": "expected", "demos": 3},
    "sampled-per-criterion": {"score_mode": "sampled", "per_criterion": True},
    "checklist-expected": {"score_mode": "expected", "checklist": True},
    "sampled-one-call": {"score_mode": "sampled"},
}


def split(set_name: str, n_train: int) -> tuple[list[JudgeItem], list[JudgeItem], dict]:
    """(demonstration pool, held-out items, expert ratings by item and dimension)."""
    spec = VALIDATION_SETS[set_name]
    ratings = [
        json.loads(line)
        for line in (shipped_dir("calibration") / spec.calibration / "ratings.jsonl")
        .read_text("utf-8")
        .splitlines()
        if line.strip()
    ]
    from attune_judge.data import Rating

    human: dict[str, dict[str, dict[str, float]]] = {}  # item -> dimension -> rater -> value
    for raw in ratings:
        r = Rating.model_validate(raw)
        if spec.humans(r) and isinstance(r.value, int | float):
            human.setdefault(r.item_id, {}).setdefault(r.dimension, {})[r.rater] = float(r.value)
    items = [
        i
        for i in read_jsonl(shipped_dir("data") / spec.calibration / "items.jsonl", JudgeItem)
        if spec.items(i) and i.item_id in human
    ]
    items.sort(key=lambda i: hashlib.sha256(i.item_id.encode()).hexdigest())
    return items[:n_train], items[n_train:], human


def demos(pool: list[JudgeItem], human: dict, rubric: Any, k: int) -> list[CriterionDemo]:
    """Per criterion: ``k`` pool items spread over the experts' median (low, middle, high)."""
    out = []
    for c in rubric.criteria:
        scored = sorted(
            (statistics.median(human[i.item_id][c.id].values()), i.item_id, i)
            for i in pool
            if c.id in human[i.item_id]
        )
        picks = [scored[round(j * (len(scored) - 1) / max(k - 1, 1))] for j in range(k)]
        for median, _, item in picks:
            out.append(
                CriterionDemo(
                    criterion=c.id,
                    conversation=format_conversation(item.context),
                    candidate=item.candidate,
                    score=round(median),
                )
            )
    return out


def make_judge(set_name: str, config: str, pool: list[JudgeItem], human: dict) -> Any:
    from attune_judge.rubrics import load_rubric

    spec = VALIDATION_SETS[set_name]
    options = dict(CONFIGS[config])
    rubric_name = spec.rubric + ("-checklist" if options.pop("checklist", False) else "")
    rubric = load_rubric(rubric_name)
    k = options.pop("demos", 0)
    if k:
        options["demos"] = demos(pool, human, rubric, k)
    use_reference = {} if rubric.kind == "checklist" else {"use_reference": False}
    return build_judge(
        rubric, LMSettings(cache=False, seed=0), JudgeOptions(**use_reference, **options)
    )


def run(args: argparse.Namespace) -> None:
    pool, held, human = split(args.set, args.train)
    held = held[: args.limit] if args.limit else held
    out = Path(args.out) / args.set
    out.mkdir(parents=True, exist_ok=True)
    for config in args.configs.split(","):
        judge = make_judge(args.set, config, pool, human)
        path = out / f"{config}.jsonl"
        done = {j.item_id for j in read_jsonl(path, Judgment)} if path.exists() else set()
        started = time.perf_counter()
        n = 0
        with path.open("a", encoding="utf-8") as f:
            for item in held:
                if item.item_id in done:
                    continue
                f.write(judge.judge(item).model_dump_json() + "\n")
                f.flush()
                n += 1
        spent = time.perf_counter() - started
        print(f"{config}: {n} judged in {spent:.0f} s ({spent / max(n, 1):.1f} s each)")


def _total(scores: dict[str, float]) -> float:
    return sum(scores.values()) / len(scores)


def report(args: argparse.Namespace) -> None:
    from attune_judge.calibration import baseline_agreement

    _pool, held, human = split(args.set, args.train)
    held = held[: args.limit] if args.limit else held
    out = Path(args.out) / args.set
    ids = [i.item_id for i in held]
    # the experts' total: each expert's mean over the dimensions, then the median over experts
    experts = {}
    for iid in ids:
        raters = {r for by_rater in human[iid].values() for r in by_rater}
        experts[iid] = statistics.median(
            statistics.mean(v[r] for v in human[iid].values() if r in v) for r in raters
        )
    base = {
        "length": {i.item_id: LengthJudge().judge(i).overall for i in held},
        "lexicon": {i.item_id: LexiconJudge().judge(i).overall for i in held},
    }
    table: dict[str, Any] = {"set": args.set, "n_held_out": len(ids), "configs": {}}
    for config in args.configs.split(","):
        path = out / f"{config}.jsonl"
        if not path.exists():
            continue
        judged = {j.item_id: j for j in read_jsonl(path, Judgment)}
        ok = [i for i in ids if i in judged and judged[i].status == "ok"]
        if len(ok) < 3:
            print(f"{config}: {len(ok)} usable judgments")
            continue
        judge = {i: _total(judged[i].scores) for i in ok}
        res = baseline_agreement(
            [experts[i] for i in ok],
            [judge[i] for i in ok],
            {name: [vals[i] for i in ok] for name, vals in base.items()},
            clusters=ok,
            B=args.B,
            seed=0,
        )
        lat = [judged[i].latency_s or 0.0 for i in ok]
        row = {
            "n_ok": len(ok),
            "n_failed": len(ids) - len(ok),
            "distinct_totals": len({round(v, 6) for v in judge.values()}),
            "seconds_per_judgment_median": statistics.median(lat),
            "agreement": res.model_dump(mode="json"),
        }
        table["configs"][config] = row
        print(
            f"\n{config}: ok {len(ok)}/{len(ids)}, distinct totals {row['distinct_totals']}, "
            f"median {row['seconds_per_judgment_median']:.1f} s/judgment"
        )
        for line in res.lines():
            print("  " + line)
    (out / "report.json").write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["run", "report"])
    parser.add_argument("--set", default="empathic-communication-empatheticdialogues")
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--train", type=int, default=10, help="items in the demonstration pool")
    parser.add_argument("--limit", type=int, default=None, help="held-out items to judge")
    parser.add_argument("--out", default="runs/measure-embedded")
    parser.add_argument("--B", type=int, default=2000)
    parser.add_argument(
        "--tiny",
        action="store_true",
        help="1 held-out item, one configuration, temporary folder (the suite)",
    )
    args = parser.parse_args()
    if args.tiny:  # ``run --tiny``: judge, then report, in a temporary folder
        args.limit, args.configs, args.B = 1, next(iter(CONFIGS)), 50
        args.out = tempfile.mkdtemp(prefix="measure-embedded-tiny-")
        run(args)
        report(args)
        return
    run(args) if args.command == "run" else report(args)


if __name__ == "__main__":
    main()
