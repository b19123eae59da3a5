"""All judge kinds and a jury, end to end on the sample AttuneBench conversations.

Scripted: a deterministic stand-in model. Replay: the embedded SmolLM2's recorded answers
(tests/judges/recordings/local-samples.json, made by ``python -m tests.judges.record_local``),
replayed through the real DSPy path; a changed prompt fails with a missing recording.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from attune_judge.judges import JudgeOptions, Jury, build_judge
from attune_judge.lm import register_model
from attune_judge.testing import Messages, ReplayEngine, ScriptedEngine
from tests.judges.sample_items import RECORDING_MODEL, sample_items

RECORDINGS = Path(__file__).parent / "recordings" / "local-samples.json"


def _stand_in(messages: Messages) -> str:
    """Answers every judge's fields from the output-field list in the user message."""
    user = messages[-1]["content"]
    fields = re.findall(r"`(\w+)`", user.split("Respond with a JSON object")[-1])
    answers: dict[str, object] = {}
    for name in fields:
        if name == "verdict":
            answers[name] = "A"
        elif name in ("rationale", "reasoning"):
            answers[name] = "stand-in"
        elif re.fullmatch(r"B\d+", name):
            answers[name] = "yes"
        else:
            answers[name] = 4
    return json.dumps(answers)


def test_every_kind_runs_on_the_samples_with_a_scripted_model() -> None:
    reference, pairs, behaviour = sample_items(n=3)
    assert reference and pairs and behaviour
    engine = ScriptedEngine(_stand_in)
    lm = engine.lm()
    for item in reference:
        result = build_judge("attunebench-reference", lm).judge(item)
        assert result.status == "ok" and result.overall == 4.0 and result.normalized == 0.5
    for item in pairs:
        result = build_judge("attunebench-pairwise", lm).judge(item)
        # "A" in both orders = position bias, reported as such
        assert result.status == "ok" and result.verdict == "inconsistent"
    for item in behaviour:
        result = build_judge("attunebench-behaviours", lm).judge(item)
        assert result.status == "ok"
        assert set(result.scores) == {f"{b}:observed" for b in item.metadata["behaviour_items"]}
    jury = Jury(
        [build_judge("attunebench-reference", lm, JudgeOptions(reasoning=r)) for r in (False, True)]
    )
    for item in reference:
        assert jury.judge(item).overall == 4.0


# the recordings are committed: only a local checkout without them may skip, CI fails
@pytest.mark.skipif(
    not RECORDINGS.exists() and os.environ.get("CI") != "true",
    reason="no local-model recordings",
)
def test_local_model_recordings_replay_for_every_kind() -> None:
    engine = ReplayEngine(RECORDINGS)  # replay only: a missing recording is an error
    lm = engine.lm(RECORDING_MODEL)
    register_model(lm, response_format="json_schema")
    reference, pairs, behaviour = sample_items()
    results = [build_judge("attunebench-reference", lm).judge(i) for i in reference]
    results += [build_judge("attunebench-pairwise", lm).judge(i) for i in pairs]
    results += [build_judge("attunebench-behaviours", lm).judge(i) for i in behaviour]
    jury = Jury(
        [build_judge("attunebench-reference", lm, JudgeOptions(reasoning=r)) for r in (False, True)]
    )
    results += [jury.judge(i) for i in reference]
    # constrained decoding: every recorded answer parses and lies on its scale
    assert [r.status for r in results] == ["ok"] * len(results), [r.error for r in results]
    for r in results[: len(reference)]:
        assert all(1 <= v <= 7 for v in r.scores.values())
    for r in results[len(reference) : len(reference) + len(pairs)]:
        assert r.verdict in {"A", "B", "tie", "inconsistent"}
        assert {r.details["order_ab"], r.details["order_ba"]} <= {"A", "B", "tie"}
    assert engine.hits == engine.calls > 0
