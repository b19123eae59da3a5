"""Every shipped set (``data/*/items.jsonl``) is scorable from the CLI with its shipped rubric.

No shipped item has a reference reply and the sets' rubrics are ``kind: reference``: ``score``
refuses up front (exit 2, one line naming ``--no-reference``) and judges every item with
``--no-reference`` against a loopback server. The first items of each set (of each source, for
empathic-communication) keep the test fast; every shipped rubric of a set is run.
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

DATA = REPO_ROOT / "data"
N = 3
"""Items per set (per source)."""

# set folder → (rubric, which items: metadata source or all)
SETS: list[tuple[str, str, str | None]] = [
    ("duo", "duo-dialogue", None),
    ("esconv", "esconv-survey", None),
    ("ieval", "attune-empathy-anchored", None),  # no rubric of its own: attune-judge's
    ("empathic-communication", "empathic-communication-empatheticdialogues", "empatheticdialogues"),
    (
        "empathic-communication",
        "empathic-communication-empatheticdialogues-checklist",
        "empatheticdialogues",
    ),
    ("empathic-communication", "empathic-communication-epitome", "epitome"),
    ("empathic-communication", "empathic-communication-lend_an_ear", "lend_an_ear"),
    ("empathic-communication", "empathic-communication-perceived_empathy", "lend_an_ear"),
]


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


def _answer(body: dict[str, Any]) -> str:
    """Level 1 (on every shipped scale) for each requested field; ``yes`` to a question."""
    text = body["messages"][-1]["content"]
    if "Answer with one word: yes or no" in text:
        return "yes"
    return json.dumps({n: "fine" if n == "rationale" else 1 for n in requested_fields(body)})


def test_every_shipped_set_has_a_test_row() -> None:
    assert {folder for folder, _, _ in SETS} == {p.parent.name for p in DATA.glob("*/items.jsonl")}


@pytest.mark.parametrize(("folder", "rubric", "source"), SETS, ids=[s[1] for s in SETS])
def test_shipped_set_is_scored_with_its_rubric(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    folder: str,
    rubric: str,
    source: str | None,
) -> None:
    rows = [
        json.loads(line)
        for line in (DATA / folder / "items.jsonl").read_text("utf-8").split("\n")
        if line
    ]
    chosen = [r for r in rows if source is None or r["metadata"].get("source") == source][:N]
    assert len(chosen) == N and not any(r.get("reference") for r in chosen)
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in chosen), "utf-8")
    with openai_stub(_answer) as server:
        argv = ["score", str(items), "--rubric", rubric, "--lm", "openai/stub"]
        argv += ["--api-base", server.url, "-q"]
        kind = "checklist" if rubric.endswith("-checklist") else "reference"
        if kind == "reference":  # the judge would be shown a reference no item has
            assert _cli([*argv, "-o", str(tmp_path / "refused")]) == 2
            err = capsys.readouterr().err
            assert "no item has a reference reply" in err and "--no-reference" in err
            assert "Traceback" not in err and not server.requests
        out = tmp_path / "run"
        assert _cli([*argv, "--no-reference", "-o", str(out)]) == 0, capsys.readouterr().err
        assert server.requests
    judgments = read_jsonl_rows(out / "judgments.jsonl")
    assert [j["status"] for j in judgments] == ["ok"] * N
    assert all(j["scores"] for j in judgments)
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["run"]["complete"] is True
