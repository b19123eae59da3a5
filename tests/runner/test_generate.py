"""``generate``: the DSPy responder drafts a reply per annotated turn (scripted engine)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from attune_judge.data import attunebench_to_judge_items, load_attunebench
from attune_judge.lm import lm_response_format, make_adapter
from attune_judge.runner import RetryPolicy, ScoreConfig, generate_candidates, run_score
from attune_judge.testing import ScriptedEngine, rate_limit_error
from tests.conftest import SAMPLES


def _items():  # type: ignore[no-untyped-def]
    return attunebench_to_judge_items(load_attunebench(SAMPLES), candidate="original")


def _reply(messages: list[dict[str, str]]) -> str:
    # echo the length of the request so each turn gets its own reply
    return json.dumps({"reply": f"draft for a request of {len(messages[-1]['content'])} chars"})


def test_generate_drafts_one_reply_per_turn_from_its_context_and_resumes(tmp_path: Path) -> None:
    items = _items()
    engine = ScriptedEngine(_reply)
    lm = engine.lm()
    out = tmp_path / "cands.jsonl"
    res = generate_candidates(
        items, out, lm=lm, model="scripted", adapter=make_adapter(lm_response_format(lm))
    )
    assert (res.n_written, res.n_skipped, res.errors) == (len(items), 0, [])
    cands = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert {(c["conversation_id"], c["turn"]) for c in cands} == {
        (it.conversation_id, it.turn) for it in items
    }
    assert all(c["model"] == "scripted" and c["response"].startswith("draft for") for c in cands)
    # each request carried that turn's participant message (the conversation so far)
    for it in items:
        last = it.context[-1].content
        assert any(last in m[-1]["content"] for m in engine.requests), it.item_id

    again = ScriptedEngine(_reply)
    res2 = generate_candidates(items, out, lm=again.lm(), model="scripted")
    assert (res2.n_written, res2.n_skipped, again.calls) == (0, len(items), 0)


def test_rate_limits_are_retried_and_hard_failures_reported_then_retried_on_rerun(
    tmp_path: Path,
) -> None:
    items = _items()[:6]
    seen: set[str] = set()
    lock = threading.Lock()

    def which(text: str) -> str:
        # later turns repeat earlier messages: the turn asked about is the one whose
        # participant message comes last in the request
        return max(items, key=lambda it: text.rfind(it.context[-1].content)).item_id

    def fail(messages: list[dict[str, str]]) -> BaseException | None:
        item_id = which(messages[-1]["content"])
        if item_id == items[0].item_id:
            return ValueError("400 bad request")  # not transient: reported, not retried
        with lock:
            first = item_id not in seen
            seen.add(item_id)
        return rate_limit_error() if first else None  # every turn's first call is rate limited

    engine = ScriptedEngine(_reply, fail=fail)
    out = tmp_path / "cands.jsonl"
    res = generate_candidates(
        items, out, lm=engine.lm(), model="m", retry=RetryPolicy(max_retries=2, base_delay_s=0.001)
    )
    assert res.n_written == 5 and len(res.errors) == 1
    assert "400 bad request" in res.errors[0] and items[0].conversation_id in res.errors[0]
    assert engine.calls == 5 * 2 + 1  # five turns: rate limit + success; the broken one once

    fixed = ScriptedEngine(_reply)
    res2 = generate_candidates(items, out, lm=fixed.lm(), model="m")
    assert (res2.n_written, res2.n_skipped, fixed.calls) == (1, 5, 1)


def test_generated_candidates_can_be_scored(tmp_path: Path) -> None:
    items = _items()
    engine = ScriptedEngine(_reply)
    out = tmp_path / "cands.jsonl"
    generate_candidates(items, out, lm=engine.lm(), model="drafter")
    from attune_judge.judges import build_judge

    result = run_score(
        ScoreConfig(data=SAMPLES, out=tmp_path / "run", candidates=out, quiet=True),
        judges=[build_judge("lexical")],
    )
    assert result.complete
    (block,) = result.summary.judges.values()
    assert block.models["drafter"].n_ok == len(items)
