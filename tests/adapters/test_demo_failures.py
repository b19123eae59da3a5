"""The demo always completes (issue 23): a judge that fails every item, or all but one, gives
exit 0, a report, and a sentence saying how many items were judged, why the rest failed and
which comparison could not be made."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

import attune_judge.demo
from attune_judge.cli import main
from attune_judge.data import JudgeItem, Judgment
from attune_judge.demo import run_demo
from attune_judge.testing import ScriptedEngine


class _FailingJudge:
    """Fails every item (an out-of-scale parse error) except the first ``keep`` item ids seen
    in sorted order, which get expert-like scores."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.spec = {"program": f"fail-all-but-{keep}"}
        self.judge_id = f"fail-all-but-{keep}"
        self.ok: set[str] = set()

    def judge(self, item: JudgeItem) -> Judgment:
        if len(self.ok) < self.keep or item.item_id in self.ok:
            self.ok.add(item.item_id)
            scores = {
                "level_emotional_reactions": 1.0,
                "level_interpretations": 1.0,
                "level_explorations": 0.0,
            }
            return Judgment(
                item_id=item.item_id,
                judge_id=self.judge_id,
                conversation_id=item.conversation_id,
                scores=scores,
                overall=2 / 3,
            )
        return Judgment(
            item_id=item.item_id,
            judge_id=self.judge_id,
            conversation_id=item.conversation_id,
            status="parse_error",
            error="level_explorations: no probability on the scale's tokens",
            details={"reason": "out_of_scale"},
        )


def _garbage_engine() -> ScriptedEngine:
    """Part d's judge model: never a valid answer (every judgment a parse error)."""
    return ScriptedEngine(lambda messages: "I would rather not say.")


@pytest.mark.parametrize("keep", [0, 1])
def test_demo_completes_when_the_local_judge_fails(tmp_path: Path, keep: int) -> None:
    engine = _garbage_engine()
    run = run_demo(
        tmp_path / "demo",
        B=50,
        parts=("c", "d"),
        local_items=4,
        local_lm="failing",
        local_judge=_FailingJudge(keep),
        sensitivity_lm_factory=lambda lm: engine.lm(),
    )
    printed = "\n".join(run.summary)
    # part c: how many were judged, why the rest failed, and that no comparison was made
    assert f"{keep} of 4 items have a usable judgment" in printed
    assert f"{4 - keep} parse_error (out_of_scale)" in printed
    report = Path(run.report_md).read_text()
    assert f"{keep} of 4 items have a usable judgment; agreement needs at least two" in report
    assert f"parse_error (out_of_scale): {4 - keep}" in report
    local = json.loads((tmp_path / "demo" / "c-local-judge" / "summary.json").read_text())
    assert local["validation"]["not_compared"].startswith(f"{keep} of 4 items")
    assert local["validation"]["failure_reasons"] == {"parse_error (out_of_scale)": 4 - keep}
    # part d: every judgment failed; the part says so instead of stopping the demo
    assert any(line.startswith("d. rubric sensitivity") for line in run.summary)
    assert "## d. Rubric sensitivity" in report
    d_lines = [line for line in run.summary if "Judged ok: 0 of 12 judgments; failed: 12" in line]
    assert d_lines, run.summary
    assert "Judged ok: 0 of 12 judgments; failed: 12 parse_error" in report


def test_demo_cli_exits_0_with_a_judge_that_fails_everything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = _garbage_engine()
    monkeypatch.setattr(
        attune_judge.demo,
        "run_demo",
        functools.partial(
            run_demo,
            local_lm="failing",
            local_judge=_FailingJudge(0),
            sensitivity_lm_factory=lambda lm: engine.lm(),
        ),
    )
    out = tmp_path / "demo"
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--parts", "c,d", "--local-items", "3", "--B", "50", "-o", str(out)])
    assert exc.value.code == 0
    printed = capsys.readouterr().out
    assert "not compared: 0 of 3 items have a usable judgment" in printed
    assert (out / "report.md").is_file() and (out / "report.html").is_file()
