"""The README's five-command align → validate → score → rank --human → report recipe, run
literally.

The five lines are read from README.md's fenced block under "Aligning a judge to people" (so
this test breaks when the README changes) and executed as written, from a working directory
where ``data/`` and ``calibration/`` are the repository's own. The model they name
(``openai/gpt-4.1-mini``) is served by a deterministic OpenAI-compatible stub on 127.0.0.1,
reached through ``ATTUNE_API_BASE`` with a fake ``OPENAI_API_KEY``: nothing leaves loopback.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from attune_judge.cli import main
from tests._openai_stub import openai_stub
from tests.cli.test_readme_commands import _reply
from tests.conftest import REPO_ROOT

HEADING = "### Aligning a judge to people: align → validate → score → rank --human"


def workflow_lines() -> list[str]:
    """The command lines of the README's align workflow block."""
    text = (REPO_ROOT / "README.md").read_text("utf-8")
    assert HEADING in text, "the README's align workflow heading moved"
    block = text.split(HEADING, 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    return [line.strip() for line in block.splitlines() if line.strip()]


def test_the_readme_lists_the_five_commands() -> None:
    lines = workflow_lines()
    assert [shlex.split(line)[:2] for line in lines] == [
        ["attune-judge", "align"],
        ["attune-judge", "validate"],
        ["attune-judge", "score"],
        ["attune-judge", "rank"],
        ["attune-judge", "report"],
    ]


@pytest.mark.slow
def test_the_readme_align_workflow_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("data", "calibration"):
        (tmp_path / name).symlink_to(REPO_ROOT / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    monkeypatch.setenv("ATTUNE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ATTUNE_LM", raising=False)
    outputs: list[str] = []
    with openai_stub(_reply) as server:
        monkeypatch.setenv("ATTUNE_API_BASE", server.url)
        for line in workflow_lines():
            argv = shlex.split(line)
            assert argv[0] == "attune-judge"
            with pytest.raises(SystemExit) as stop:
                main(argv[1:])
            captured = capsys.readouterr()
            assert stop.value.code in (0, None), f"{line}\n{captured.err[-2000:]}"
            outputs.append(captured.out)
        bodies = list(server.requests)
    # every model call went to the stub under the model the README names
    assert bodies and {b["model"] for b in bodies} == {"gpt-4.1-mini"}
    align_out, validate_out, score_out, rank_out, _ = outputs
    artifact = json.loads((tmp_path / "judges/duo/aligned-judge.json").read_text("utf-8"))
    assert artifact["optimizer"]["name"] == "bootstrap-fewshot"
    assert (tmp_path / "judges/duo/program.json").is_file()
    assert len(bodies) <= 600 + 2 * 225  # align within --max-calls; score at most 225 items
    score = json.loads((tmp_path / "runs/duo/summary.json").read_text("utf-8"))
    assert score["run"]["complete"] is True
    assert score["run"]["n_by_status"]["ok"] == 225  # every item of data/duo/items.jsonl
    ppi = json.loads((tmp_path / "runs/duo-ppi/summary.json").read_text("utf-8"))
    assert ppi["kind"] == "ppi" and ppi["ppi"]["n_matched"] == 95  # the duo test-split items
    assert ppi["ppi"]["dimension"] == "empathy" and ppi["ppi"]["rows"]
    assert "Human dimension `empathy`" in rank_out
    report = (tmp_path / "judges/duo/report.md").read_text("utf-8")
    assert "held-out" in report.lower()
    assert validate_out.strip() and score_out.strip() and align_out.strip()
