"""``sensitivity --lm A --lm B --jury mean``: every variant on the base model is a jury of the
same rubric variant on both models, each member's judgment kept (numbers known by
construction: the stub's ``gpt-stub`` gives 6 to replies marked ``(g)``, every other answer
is 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from attune_judge.cli import main
from tests._openai_stub import openai_stub
from tests.judging._stub_judges import family_judge, read_jsonl_rows
from tests.judging.test_jury import _candidates


@pytest.fixture(autouse=True)
def _no_request_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTUNE_CACHE", "0")


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


def _variants(tmp_path: Path) -> Path:
    path = tmp_path / "v.yaml"
    spec = {
        "name": "jury-study",
        "base": {"rubric": "attunebench-reference", "judge": {"reasoning": False}},
        "perturbations": [
            {"name": "shuffled", "kind": "shuffle_criteria", "seed": 1},
            {"name": "claude-alone", "kind": "judge_model", "lm": "openai/claude-stub"},
        ],
    }
    path.write_text(yaml.safe_dump(spec), "utf-8")
    return path


def test_sensitivity_variants_on_the_base_model_are_juries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cands, n_turns = _candidates(tmp_path)
    run = tmp_path / "run"
    argv = ["sensitivity", str(tmp_path / "data"), "--variants", str(_variants(tmp_path))]
    argv += ["--candidates", str(cands), "-o", str(run), "-q", "--bootstrap", "200"]
    argv += ["--lm", "openai/gpt-stub", "--lm", "openai/claude-stub", "--jury", "mean"]
    with openai_stub(family_judge) as server:
        assert _cli([*argv, "--api-base", server.url]) == 0, capsys.readouterr().err
        # base and shuffled: two members each; claude-alone: one model (ATTUNE_CACHE=0: the
        # claude member's identical requests are sent again, not answered from DSPy's cache)
        assert len(server.requests) == (2 + 2 + 1) * 2 * n_turns
    manifest = json.loads((run / "manifest.json").read_text())
    programs = sorted(spec.get("program", "") for spec in manifest["judges"].values())
    assert programs == ["jury", "jury", "reference"]
    juries = {jid for jid, spec in manifest["judges"].items() if spec.get("program") == "jury"}
    judgments = [j for j in read_jsonl_rows(run / "judgments.jsonl") if j["judge_id"] in juries]
    assert len(judgments) == 2 * 2 * n_turns
    for j in judgments:
        members = j["details"]["members"]
        assert len(members) == 2 and all(m["status"] == "ok" for m in members)
        own = j["candidate_model"] == "gpt-4o"
        # (6 - 1) / 6 from gpt-stub on its own family, (4 - 1) / 6 otherwise; the mean of both
        expected = (5 / 6 + 1 / 2) / 2 if own else 1 / 2
        assert j["normalized"] == pytest.approx(expected)


def test_sensitivity_jury_none_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cands, _ = _candidates(tmp_path)
    argv = ["sensitivity", str(tmp_path / "data"), "--variants", str(_variants(tmp_path))]
    argv += ["--candidates", str(cands), "-o", str(tmp_path / "run")]
    argv += ["--lm", "openai/a", "--lm", "openai/b", "--jury", "none"]
    assert _cli(argv) == 2
    err = capsys.readouterr().err
    assert "--jury none" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()
