"""The server a judge asks is part of its identity and of the request cache (issue 29).

Two loopback servers answer the same requests differently: a run against the second after a
run against the first must ask the second (nothing replayed from the first's cached answers),
record the second's answers under another judge id, and a repeat against the first must still
be answered from the cache. Also: jury members with their own server (``MODEL@URL``), the
embedded model beside ``--api-base`` in a jury, a jury's known cost and its request times.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from attune_judge.cli import main
from tests._openai_stub import openai_stub
from tests.conftest import REPO_ROOT
from tests.judging._stub_judges import read_jsonl_rows, requested_fields

ITEMS = REPO_ROOT / "data" / "duo" / "items.jsonl"
JUDGE = ["--rubric", "duo-dialogue", "--no-reference", "-q"]


@pytest.fixture
def items(tmp_path: Path) -> Path:
    """Three shipped DUO items (no reference reply: judged with --no-reference)."""
    path = tmp_path / "items.jsonl"
    lines = ITEMS.read_text("utf-8").splitlines(keepends=True)[:3]
    path.write_text("".join(lines), "utf-8")
    return path


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


def _scorer(value: int) -> Any:
    """A judge that gives ``value`` everywhere: a bare digit to a one-criterion question,
    else every requested JSON field."""

    def reply(body: dict[str, Any]) -> str:
        if "Answer with a single digit" in body["messages"][-1]["content"]:
            return str(value)
        fields = requested_fields(body)
        return json.dumps({n: "fine" if n == "rationale" else value for n in fields})

    return reply


@pytest.mark.parametrize("per_criterion", [False, True], ids=["one-call", "per-criterion"])
def test_a_second_server_is_asked_and_nothing_is_replayed(
    tmp_path: Path, items: Path, per_criterion: bool
) -> None:
    extra = ["--per-criterion"] if per_criterion else []
    with openai_stub(_scorer(3)) as first, openai_stub(_scorer(5)) as second:

        def score(server: Any, out: Path) -> list[dict[str, Any]]:
            argv = ["score", str(items), "--lm", "openai/stub", "--api-base", server.url]
            argv += [*JUDGE, "-o", str(out), *extra]
            assert _cli(argv) == 0
            return read_jsonl_rows(out / "judgments.jsonl")

        one = score(first, tmp_path / "one")
        asked_first = len(first.requests)
        assert asked_first >= len(one) > 0
        two = score(second, tmp_path / "two")
        # every request went to the second server: none answered from the first's cache
        assert len(second.requests) == asked_first
        assert {v for j in one for v in j["scores"].values()} == {3.0}
        assert {v for j in two for v in j["scores"].values()} == {5.0}
        assert {j["judge_id"] for j in one}.isdisjoint({j["judge_id"] for j in two})
        manifest = json.loads((tmp_path / "two" / "manifest.json").read_text("utf-8"))
        (spec,) = manifest["judges"].values()
        assert spec["lm"]["api_base"] == second.url
        # the second run's directory is another judge's: not resumed with the first server
        argv = ["score", str(items), "--lm", "openai/stub", "--api-base", first.url]
        assert _cli([*argv, *JUDGE, "-o", str(tmp_path / "two")]) == 2
        # the first server's own cache still answers a repeat: no new request
        three = score(first, tmp_path / "three")
        assert len(first.requests) == asked_first
        assert [j["scores"] for j in three] == [j["scores"] for j in one]


def test_jury_members_with_their_own_servers(tmp_path: Path, items: Path) -> None:
    """``--lm openai/a@URL1 --lm openai/b@URL2``: each member asks its own server; the jury's
    cost is the priced part plus a count of unpriced judgments; request times are measured."""
    with openai_stub(_scorer(2)) as first, openai_stub(_scorer(4)) as second:
        out = tmp_path / "jury"
        argv = ["score", str(items), *JUDGE, "-o", str(out)]
        argv += ["--lm", f"openai/a@{first.url}", "--lm", f"openai/a@{second.url}"]
        assert _cli(argv) == 0
        rows = read_jsonl_rows(out / "judgments.jsonl")
        assert len(first.requests) == len(second.requests) >= len(rows) > 0
        assert {v for j in rows for v in j["scores"].values()} == {3.0}  # mean of 2 and 4
        summary = json.loads((out / "summary.json").read_text("utf-8"))
        (block,) = summary["judges"].values()
        assert set(block["members"]) == {f"openai/a@{first.url}", f"openai/a@{second.url}"}
        (model_block,) = block["models"].values()
        assert model_block["request_s_mean"] > 0  # the members' request time, not 0.00
        # a server of your own has no table price: unknown, none of it known
        assert summary["run"]["totals"]["cost_usd"] is None


@pytest.mark.slow  # the embedded model judges one item
def test_embedded_member_beside_api_base_and_a_partly_priced_jury(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--lm local --lm openai/x --api-base URL``: the embedded member ignores the server;
    the embedded model costs 0, the server's model has no price: the jury's known cost is
    that 0 part, and the printed line says how many judgments lack a price."""
    items = tmp_path / "one.jsonl"
    items.write_text(ITEMS.read_text("utf-8").splitlines(keepends=True)[0], "utf-8")
    with openai_stub(_scorer(3)) as server:
        out = tmp_path / "mixed"
        argv = ["score", str(items), *JUDGE, "-o", str(out)]
        argv += ["--lm", "local", "--lm", "openai/x", "--api-base", server.url]
        assert _cli(argv) == 0
        assert len(server.requests) > 0
    printed = capsys.readouterr().out
    assert "$0.0000 known + 1 judgment(s) with an unknown price" in printed
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    totals = summary["run"]["totals"]
    assert totals["cost_usd"] is None and totals["cost_usd_known"] == 0.0
    (block,) = summary["judges"].values()
    assert block["members"]["local"]["cost_usd"] == 0.0
    assert block["members"][f"openai/x@{server.url}"]["cost_usd"] is None
