"""Juries from the command line: ``score --lm A --lm B --jury mean``, every member's judgment
kept, agreement among the members and self-preference, with numbers known by construction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attune_judge.cli import main
from tests._openai_stub import openai_stub
from tests.conftest import SAMPLES
from tests.judging._stub_judges import family_judge, read_jsonl_rows


@pytest.fixture(autouse=True)
def _no_request_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTUNE_CACHE", "0")


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


def _data(tmp_path: Path) -> Path:
    """Three of the sample conversations (enough clusters, few calls)."""
    import shutil

    folder = tmp_path / "data"
    folder.mkdir()
    for name in ("conversation_5.json", "conversation_12.json", "conversation_17.json"):
        shutil.copy(SAMPLES / name, folder / name)
    return folder


def _candidates(tmp_path: Path) -> tuple[Path, int]:
    from attune_judge.data import attunebench_to_judge_items, load_attunebench

    turns = list(attunebench_to_judge_items(load_attunebench(_data(tmp_path))))
    path = tmp_path / "candidates.jsonl"
    with path.open("w") as fh:
        for item in turns:
            for model, mark in (("gpt-4o", "(g)"), ("claude-3-haiku", "(c)")):
                row = {"conversation_id": item.conversation_id, "turn": item.turn}
                fh.write(
                    json.dumps({**row, "model": model, "response": f"{item.candidate} {mark}"})
                )
                fh.write("\n")
    return path, len(turns)


def test_jury_keeps_members_and_measures_self_preference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cands, n_turns = _candidates(tmp_path)
    run = tmp_path / "run"
    with openai_stub(family_judge) as server:
        argv = ["score", str(tmp_path / "data"), "--candidates", str(cands), "-o", str(run), "-q"]
        argv += ["--lm", "openai/gpt-stub", "--lm", "openai/claude-stub", "--jury", "mean"]
        assert _cli([*argv, "--api-base", server.url]) == 0
        assert len(server.requests) == 2 * 2 * n_turns  # two members x two candidates per turn
    out = capsys.readouterr().out
    judgments = read_jsonl_rows(run / "judgments.jsonl")
    assert len(judgments) == 2 * n_turns
    for j in judgments:
        members = j["details"]["members"]
        assert len(members) == 2 and all(m["status"] == "ok" for m in members)
        own = j["candidate_model"] == "gpt-4o"
        values = sorted(m["normalized"] for m in members)
        # (score - 1) / 6: the gpt judge gives its own family 6, everything else gets 4
        assert values == pytest.approx(sorted([5 / 6 if own else 0.5, 0.5]))
        assert j["normalized"] == pytest.approx(sum(values) / 2)  # the jury's mean

    (panel,) = json.loads((run / "summary.json").read_text())["panels"]
    assert panel["kind"] == "scores" and panel["n_items"] == 2 * n_turns
    assert panel["alpha"]["estimate"] is not None
    gpt = next(s for s in panel["self_preference"] if s["family"] == "gpt")
    # own family: 5/6 - 1/2 on every gpt-written reply; other families: 1/2 - 1/2
    assert gpt["own_family"]["estimate"] == pytest.approx(1 / 3)
    assert gpt["other_families"]["estimate"] == pytest.approx(0.0)
    assert gpt["bias"]["estimate"] == pytest.approx(1 / 3)
    assert gpt["n_own"] == gpt["n_other"] == n_turns
    assert gpt["own_family"]["lower"] == pytest.approx(1 / 3)  # no variation: a point
    claude = next(s for s in panel["self_preference"] if s["family"] == "claude")
    assert claude["own_family"]["estimate"] == pytest.approx(0.0)
    by_member = {m["model"]: m for m in panel["members"]}
    # the gpt member is 1/6 from the mean on half the items, 0 on the rest
    mae = by_member["openai/gpt-stub"]["vs_consensus"]["metrics"]["mae"]["estimate"]
    assert mae == pytest.approx(1 / 12)
    assert "self-preference openai/gpt-stub (gpt): own family 0.333" in out
    # α by hand (interval metric, 2 coders x 16 items): 8 items rated (1/2, 5/6), 8 rated
    # (1/2, 1/2); D_o = 8 * 2 * (1/3)^2 / 32 = 1/18, D_e = 2 * 24 * 8 * (1/3)^2 / (32 * 31)
    # = 4/93, so alpha = 1 - 93/72 = -21/72
    assert panel["alpha"]["estimate"] == pytest.approx(-21 / 72)
    report = (run / "report.md").read_text("utf-8")
    section = report.split("## Agreement among judges", 1)[1]
    assert "Krippendorff's α among them (interval): -0.292" in section
    # each member against the jury, and the self-preference table
    assert (
        "| openai/gpt-stub | 16 "
        "| 1.000 [1.000, 1.000] (degenerate) | 1.000 [1.000, 1.000] | 0.083" in section
    )
    assert (
        "| openai/gpt-stub | gpt | 8 | 0.333 [0.333, 0.333] "
        "| 8 | 0.000 [0.000, 0.000] (degenerate) |" in section
    )
    assert "Agreement among judges" in (run / "report.html").read_text("utf-8")

    table = tmp_path / "t.csv"
    assert _cli(["export", str(run), "-o", str(table)]) == 0
    import csv

    with table.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    member_rows = [r for r in rows if r["jury_id"]]
    assert {r["judge_model"] for r in member_rows} == {"openai/gpt-stub", "openai/claude-stub"}


def test_jury_none_gives_one_judge_per_model(tmp_path: Path) -> None:
    cands, _ = _candidates(tmp_path)
    run = tmp_path / "run"
    with openai_stub(family_judge) as server:
        argv = ["score", str(tmp_path / "data"), "--candidates", str(cands), "-o", str(run), "-q"]
        argv += ["--lm", "openai/gpt-stub", "--lm", "openai/claude-stub", "--jury", "none"]
        assert _cli([*argv, "--api-base", server.url]) == 0
    summary = json.loads((run / "summary.json").read_text())
    assert len(summary["judges"]) == 2
    (panel,) = summary["panels"]
    assert panel["jury_id"] is None
    gpt = next(s for s in panel["self_preference"] if s["family"] == "gpt")
    assert gpt["own_family"]["estimate"] == pytest.approx(1 / 3)
    report = (run / "report.md").read_text("utf-8")
    assert "### Independent judges on the same items" in report
    assert "| openai/gpt-stub | gpt | 8 | 0.333 [0.333, 0.333] |" in report
