"""No test-split item ever reaches the optimizer: not as a demonstration, not in a metric call,
not in any prompt before the held-out evaluation (property test over seeds and splits)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attune_judge.align import AlignConfig, OptimizerSettings, align_judge
from attune_judge.testing import ScriptedEngine
from tests.align._engine import _reply, learner, write_labels


def _prompt_replies(messages: list[dict[str, str]]) -> list[str]:
    return [r for m in messages if m["role"] == "user" and (r := _reply(m["content"]))]


@settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    seed=st.integers(0, 10_000),
    optimizer=st.sampled_from(["labeled-fewshot", "bootstrap-fewshot", "mipro"]),
    test_share=st.floats(0.2, 0.5),
)
def test_no_test_item_reaches_the_optimizer(seed: int, optimizer: str, test_share: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        items, ratings = write_labels(root, conversations=15)
        texts = {
            json.loads(line)["item_id"]: json.loads(line)["candidate"]
            for line in items.read_text().splitlines()
        }
        engine = ScriptedEngine(learner)
        res = align_judge(
            AlignConfig(
                labels=str(ratings),
                items=items,
                rubric="empathic-communication-epitome",
                out=root / "a",
                optimizer=OptimizerSettings(name=optimizer, max_labeled_demos=6, num_candidates=1),  # type: ignore[arg-type]
                split=(0.6 - test_share / 2, 0.4 - test_share / 2, test_share),
                seed=seed,
                B=200,
                lm="scripted/judge",
            ),
            lm=engine.lm(),
            echo=lambda s: None,
        )
        test_ids = set(res.split.items["test"])
        test_texts = {texts[i] for i in test_ids}
        train_dev = set(res.split.items["train"]) | set(res.split.items["dev"])
        # the split is by conversation and covers every item once
        convs = {p: set(getattr(res.split, p)) for p in ("train", "dev", "test")}
        assert not (convs["train"] & convs["test"]) and not (convs["dev"] & convs["test"])
        assert sorted(test_ids | train_dev) == sorted(texts)
        # metric calls and saved demonstrations only ever see train/dev items
        assert set(res.metric_item_ids) <= train_dev
        assert not set(res.demo_item_ids) & test_ids
        # every prompt: test replies appear only as the question of the held-out evaluation
        # (each test item exactly twice: before and after), never inside demonstrations
        asked: dict[str, int] = {}
        for messages in engine.requests:
            replies = _prompt_replies(messages)
            if not replies:
                continue
            *demos, query = replies
            assert not test_texts & set(demos)
            if query in test_texts:
                asked[query] = asked.get(query, 0) + 1
        assert asked == dict.fromkeys(test_texts, 2)


@settings(
    max_examples=4,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    seed=st.integers(0, 10_000),
    optimizer=st.sampled_from(["labeled-fewshot", "bootstrap-fewshot", "mipro"]),
    test_share=st.floats(0.2, 0.5),
)
def test_no_test_pair_reaches_the_optimizer(seed: int, optimizer: str, test_share: float) -> None:
    from tests.align._pair_engine import pair_learner, pair_of, write_pairs

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pairs, prefs = write_pairs(root, conversations=12)
        texts = {}
        for line in pairs.read_text().splitlines():
            rec = json.loads(line)
            texts[rec["item_id"]] = frozenset((rec["candidate"], rec["metadata"]["other"]))
        engine = ScriptedEngine(pair_learner)
        res = align_judge(
            AlignConfig(
                labels=str(prefs),
                items=pairs,
                out=root / "a",
                optimizer=OptimizerSettings(name=optimizer, max_labeled_demos=6, num_candidates=1),
                split=(0.6 - test_share / 2, 0.4 - test_share / 2, test_share),
                seed=seed,
                B=200,
                lm="scripted/judge",
            ),
            lm=engine.lm(),
            echo=lambda s: None,
        )
        test_ids = set(res.split.items["test"])
        test_pairs = {texts[i] for i in test_ids}
        train_dev = set(res.split.items["train"]) | set(res.split.items["dev"])
        assert sorted(test_ids | train_dev) == sorted(texts)
        assert set(res.metric_item_ids) <= train_dev
        assert not set(res.demo_item_ids) & test_ids
        # a test pair is only ever the question of the held-out evaluation: 2 orders x
        # (before, after), never a demonstration
        asked: dict[frozenset[str], int] = {}
        for messages in engine.requests:
            shown = [
                frozenset(p)
                for m in messages
                if m["role"] == "user" and (p := pair_of(m["content"]))
            ]
            if not shown:
                continue
            *demos, query = shown
            assert not test_pairs & set(demos)
            if query in test_pairs:
                asked[query] = asked.get(query, 0) + 1
        assert asked == dict.fromkeys(test_pairs, 4)
