"""The README's annotate lines, run: sample → annotate (the server's JSON API driven by a
script, as two annotators) → export → calibrate; and the commands' bad-input messages."""

from __future__ import annotations

import json
import re
import socket
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from attune_judge.cli import main
from attune_judge.data import JudgeItem, Judgment, Rating, read_jsonl, write_jsonl
from tests.annotate._fixtures import make_items, make_rubric, write_judge_run
from tests.conftest import REPO_ROOT


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    out = capsys.readouterr()
    return int(stop.value.code or 0), out.out, out.err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _readme_lines() -> list[str]:
    text = (REPO_ROOT / "README.md").read_text("utf-8")
    lines = re.findall(
        r"^(attune-judge (?:annotate .+|calibrate --human labels\.jsonl .+))$", text, flags=re.M
    )
    assert len(lines) == 4, lines
    return lines


def _score(item_id: str, who: str) -> int:
    """A fixed, annotator-dependent rating in 1..7 (not from the code under test)."""
    return 1 + (sum(map(ord, item_id)) + (who == "ben")) % 7


def _drive(app: Any, db: Path, port: int) -> dict[str, Any]:
    """Label every item through the JSON API as each annotator (what a script would do)."""
    from starlette.testclient import TestClient

    with sqlite3.connect(db) as con:
        tokens = dict(con.execute("SELECT name, token FROM annotators"))
        keys = dict(con.execute("SELECT key, item_id FROM items"))
    client = TestClient(app, base_url=f"http://127.0.0.1:{port}")  # the Host it answers
    for who, token in tokens.items():
        head = {"X-Annotate-Token": token}
        while (view := client.get("/api/next", headers=head).json()["item"]) is not None:
            value = _score(keys[view["key"]], who)
            answers = {c["id"]: value for c in view["criteria"]}
            got = client.post(
                "/api/label", headers=head, json={"key": view["key"], "answers": answers}
            )
            assert got.status_code == 200, got.text
    return client.get("/api/agreement", headers={"X-Annotate-Token": tokens["ana"]}).json()


def test_the_readme_annotate_lines_run_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import uvicorn

    monkeypatch.chdir(tmp_path)
    (tmp_path / "data" / "samples").mkdir(parents=True)
    (tmp_path / "data" / "samples" / "attunebench").symlink_to(
        REPO_ROOT / "data" / "samples" / "attunebench"
    )
    sample, serve, export, calibrate = _readme_lines()
    code, out, err = _cli(sample.split()[1:], capsys)
    assert code == 0, err
    drawn = read_jsonl(tmp_path / "to-label.jsonl", JudgeItem)
    assert "items" in out and drawn
    assert all(i.metadata["inclusion_probability"] == 1.0 for i in drawn)  # n >= conversations
    # the judge run the README points at: judgments of the drawn items
    run = tmp_path / "runs" / "score"
    write_judge_run(run, drawn, lambda iid: _score(iid, "ana") % 5 + 1)
    served: dict[str, Any] = {}

    def fake_run(app: Any, **kw: Any) -> None:
        served.update(kw, agreement=_drive(app, tmp_path / "labels.sqlite", kw["port"]))

    monkeypatch.setattr(uvicorn, "run", fake_run)  # the app driven in-process, no server
    # the README's line on a free port (the default 8765 may be taken on this machine: the
    # command checks that it can listen there before serving)
    port = _free_port()
    code, out, err = _cli([*serve.split()[1:], "--port", str(port)], capsys)
    assert code == 0, err
    assert served["host"] == "127.0.0.1" and served["port"] == port
    assert re.search(rf"ana: http://127\.0\.0\.1:{port}/\?token=\S{{20,}}", out)
    judge_text = json.dumps(served["agreement"]["judge"])  # the report's tables, as JSON
    assert "judge-x" in judge_text and "overall_score" in judge_text
    code, out, err = _cli(export.split()[1:], capsys)
    assert code == 0, err
    ratings = read_jsonl(tmp_path / "labels.jsonl", Rating)
    assert len(ratings) == len(drawn) * 2 * 5  # two people, four criteria and overall
    code, out, err = _cli([*calibrate.split()[1:], "--json", "--B", "200"], capsys)
    assert code == 0, err
    assert '"humans": [\n' in out and '"ana"' in out and '"ben"' in out


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["annotate", "--db", "{tmp}/none.sqlite"], "none.sqlite: no such labels database"),
        (
            ["annotate", "{items}", "--db", "{tmp}/l.sqlite", "--task", "ratings"],
            "--rubric is required unless ITEMS is a run directory",
        ),
        (
            [
                "annotate",
                "{items}",
                "--db",
                "{tmp}/l.sqlite",
                "--task",
                "pairwise",
                "--rubric",
                "{rubric}",
            ],
            "--task pairwise needs a pairwise rubric",
        ),
        (
            [
                "annotate",
                "{items}",
                "--db",
                "{tmp}/l.sqlite",
                "--task",
                "ratings",
                "--rubric",
                "{rubric}",
            ],
            "name at least one annotator",
        ),
        (
            ["annotate", "export", "--db", "{tmp}/none.sqlite", "-o", "{tmp}/x.jsonl"],
            "no such labels database",
        ),
        (["annotate", "import", "{items}", "--db", "{tmp}/l.sqlite"], "not valid JSON"),
        (
            [
                "annotate",
                "sample",
                "{items}",
                "--rubric",
                "{rubric}",
                "--by",
                "score",
                "-o",
                "{tmp}/s.jsonl",
            ],
            "--by score needs --judge RUN",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    fill = {
        "{tmp}": str(tmp_path),
        "{items}": str(make_items(tmp_path)),
        "{rubric}": str(make_rubric(tmp_path)),
    }
    argv = [a for a in args]
    for k, v in fill.items():
        argv = [a.replace(k, v) for a in argv]
    code, _, err = _cli(argv, capsys)
    assert code == 2 and said in err and "Traceback" not in err, err


def test_a_port_in_use_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        argv = [
            "annotate",
            str(make_items(tmp_path)),
            "--db",
            str(tmp_path / "l.sqlite"),
            "--task",
            "ratings",
            "--rubric",
            str(make_rubric(tmp_path)),
            "--annotator",
            "ana",
            "--port",
            str(port),
        ]
        code, _, err = _cli(argv, capsys)
    assert code == 2 and f"127.0.0.1:{port}: cannot listen there" in err, err
    assert "Traceback" not in err


def test_pilot_prints_the_conversations_needed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels = [
        Rating(
            item_id=f"c{c}:{i}",
            rater=r,
            dimension="warmth",
            cluster=f"c{c}",
            value=float((c + i + (r == "b") * (c % 2)) % 5 + 1),
        )
        for c in range(10)
        for i in range(2)
        for r in ("a", "b")
    ]
    write_jsonl(tmp_path / "pilot.jsonl", labels)
    judge = tmp_path / "judgments.jsonl"
    write_jsonl(
        judge,
        [
            Judgment(
                item_id=f"c{c}:{i}",
                judge_id="j",
                conversation_id=f"c{c}",
                scores={"warmth": float((c + 2 * i) % 5 + 1)},
            )
            for c in range(10)
            for i in range(2)
        ],
    )
    code, out, err = _cli(
        [
            "annotate",
            "sample",
            "--pilot",
            str(tmp_path / "pilot.jsonl"),
            "--width",
            "0.1",
            "--judge",
            str(judge),
        ],
        capsys,
    )
    assert code == 0, err
    rows = [
        [c.strip() for c in line.strip("|").split("|")]
        for line in out.splitlines()
        if line.startswith("| warmth")
    ]
    assert [r[1] for r in rows] == ["α among annotators", "judge spearman"]
    for cells in rows:
        assert cells[2] == "10"
        want = 10 * (float(cells[4]) / 0.1) ** 2  # widths shrink with √conversations
        assert int(cells[5]) == pytest.approx(want, rel=0.01, abs=1)
