"""``bench`` with a jury of draft judges: members kept, scores combined, panels in the summary
and the report (as for ``score``)."""

from __future__ import annotations

import json
import re

import pytest

from attune_judge.runs import summary_json
from attune_judge.tasks import BenchConfig, run_bench
from attune_judge.testing import ScriptedEngine
from tests.tasks._fixtures import _section, model_engine, write_data


def _judge(good_score: int) -> ScriptedEngine:
    """A draft judge scoring DRAFT-GOOD ``good_score`` and DRAFT-BAD 4 on every dimension;
    behaviour answers all yes."""

    def respond(messages: list[dict[str, str]]) -> str:
        system, user = messages[0]["content"], messages[-1]["content"]
        if "`overall_score`" in system:
            score = good_score if "DRAFT-GOOD" in _section(user, "candidate_reply") else 4
            dims = ("overall_score", "emotional_appropriateness", "helpfulness", "tone_match")
            return json.dumps({**dict.fromkeys(dims, score), "rationale": "scripted"})
        return json.dumps(dict.fromkeys(re.findall(r"`(B\d+)`", system), "yes"))

    return ScriptedEngine(respond)


def test_bench_jury_keeps_members_and_reports_panels(tmp_path) -> None:
    data = write_data(tmp_path / "data")
    engines = {"alpha": model_engine(True), "beta": model_engine(False)}
    judges = [_judge(7).lm("openai/gpt-judge"), _judge(5).lm("anthropic/claude-judge")]
    config = BenchConfig(
        data=data,
        models=["alpha", "beta"],
        judge_lm=["openai/gpt-judge", "anthropic/claude-judge"],
        jury="mean",
        tasks=["drafting"],
        out=tmp_path / "run",
        B=200,
    )
    result = run_bench(config, lms={n: e.lm() for n, e in engines.items()}, judge_lm=judges)
    s = summary_json(result.summary)
    scores = s["bench"]["tasks"]["drafting"]["metrics"]["judge_score"]["models"]
    # mean of the members on the 1-7 scale: good (7 + 5) / 2 = 6 -> (6 - 1) / 6; bad 4 -> 1/2
    assert scores["alpha"]["estimate"] == pytest.approx(5 / 6)
    assert scores["beta"]["estimate"] == pytest.approx(0.5)
    lines = (tmp_path / "run" / "judgments.jsonl").read_text("utf-8").splitlines()
    for line in lines:
        members = json.loads(line)["details"]["draft_judge_members"]
        assert len(members) == 2 and all(m["status"] == "ok" for m in members)
    (panel,) = s["panels"]
    assert len(panel["raters"]) == 2
    assert panel["n_items"] == 4  # 2 drafting turns x 2 evaluated models
    from attune_judge.report import write_report

    write_report(tmp_path / "run")
    report = (tmp_path / "run" / "report.md").read_text("utf-8")
    assert "Agreement among judges" in report
