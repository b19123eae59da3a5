"""The run viewer on a synthetic 100,000-judgment run (issue 46): index build, first page, a
filter, a sort by disagreement and one judgment's page, each through the real app (HTTP
requests to Starlette's test client, the pages rendered), against a baseline in the same run:
reading ``judgments.jsonl`` the way every reader of a run does (``read_judgments``).

Usage: .venv/bin/python benchmarks/bench_view.py [--n 100000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from attune_judge.data import ChatMessage, JudgeItem, Judgment, Rating, read_judgments, write_jsonl


def synthetic_run(folder: Path, n: int, seed: int = 0) -> Path:
    """``n`` judgments of 20 models over ``n / 20`` conversations (3 criteria on 1..5, 2 %
    failed, a rationale each), their items and two people's labels on a tenth of them."""
    rng = random.Random(seed)
    models = [f"provider/model-{k:02d}" for k in range(20)]
    items, judgments, labels = [], [], []
    for i in range(n):
        conv, m = f"c{i // 20}", models[i % 20]
        item_id = f"{conv}:1:{m}"
        items.append(
            JudgeItem(
                item_id=item_id,
                conversation_id=conv,
                turn=1,
                context=[ChatMessage(role="user", content=f"I had a hard week at work ({i}).")],
                candidate=f"That sounds exhausting. What was the hardest part? ({i})",
                candidate_model=m,
            )
        )
        base = {
            "item_id": item_id,
            "judge_id": "judge-x",
            "conversation_id": conv,
            "candidate_model": m,
            "latency_s": rng.uniform(0.2, 3),
            "cost": 1e-4,
        }
        if rng.random() < 0.02:
            judgments.append(Judgment(**base, status="parse_error", error="no score"))
            continue
        scores = {c: float(rng.randint(1, 5)) for c in ("warmth", "fit", "curiosity")}
        judgments.append(
            Judgment(
                **base,
                scores=scores,
                overall=sum(scores.values()) / 3,
                rationale=f"The reply acknowledges the feeling; seed {rng.random():.6f}.",
            )
        )
        if i % 10 == 0:
            for who in ("ann1", "ann2"):
                for c in scores:
                    labels.append(
                        Rating(
                            item_id=item_id,
                            rater=who,
                            dimension=c,
                            value=float(rng.randint(1, 5)),
                            cluster=conv,
                        )
                    )
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(folder / "items.jsonl", items)
    write_jsonl(folder / "judgments.jsonl", judgments)
    write_jsonl(folder / "labels.jsonl", labels)
    return folder


def _time(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tiny", action="store_true", help="200 judgments, 1 run (the suite)")
    args = parser.parse_args()
    if args.tiny:
        args.n, args.repeat = 200, 1
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["ATTUNE_VIEW_CACHE"] = str(Path(tmp) / "cache")
        from starlette.testclient import TestClient

        from attune_judge.annotate._view_app import make_view_app
        from attune_judge.annotate._view_runs import open_runs

        start = time.perf_counter()
        run = synthetic_run(Path(tmp) / "run", args.n)
        print(f"synthetic run: {args.n} judgments written in {time.perf_counter() - start:.1f} s")
        size = (run / "judgments.jsonl").stat().st_size / 1e6
        baseline = _time(lambda: read_judgments(run / "judgments.jsonl"), 1)
        print(f"baseline: read_judgments of {size:.0f} MB: {baseline:.2f} s")
        start = time.perf_counter()
        runs = open_runs(run, run / "labels.jsonl")
        build = time.perf_counter() - start
        print(
            f"index build (once; items and labels joined): {build:.2f} s = "
            f"{build / baseline:.2f}× the baseline"
        )
        start = time.perf_counter()
        open_runs(run, run / "labels.jsonl")
        print(f"reopen (index up to date): {time.perf_counter() - start:.3f} s")
        client = TestClient(make_view_app(runs, str(run)))
        cases = {
            "first page": "/r/0/",
            "landing page (5 worst)": "/",
            "filter: model + criterion + score range": (
                "/r/0/?model=provider%2Fmodel-07&criterion=fit&lo=4"
            ),
            "filter: text search": "/r/0/?q=seed+0.12",
            "filter: failures": "/r/0/?status=__failed__",
            "sort by |judge − people|": "/r/0/?sort=diff&desc=1",
            "sort by latency, page 1000": "/r/0/?sort=latency&page=1000",
            "disagreements by criterion": "/r/0/disagreements",
            "one judgment": f"/r/0/j/{min(54321, args.n - 1)}",
        }
        print(f"| request ({args.n:,} judgments) | median of {args.repeat} | × baseline |")
        print("|---|---:|---:|")
        for name, url in cases.items():
            assert client.get(url).status_code == 200, url
            t = _time(lambda u=url: client.get(u), args.repeat)
            print(f"| {name} | {t:.3f} s | {t / baseline:.3f} |")


if __name__ == "__main__":
    main()
