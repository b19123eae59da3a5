"""Below MIN_CLUSTERS (10) conversations every surface that prints an interval says so, in the
words of one function (issue 17; issue 42 point 7).

Two conversations of the shipped AttuneBench samples (``conversation_5`` and
``conversation_12``) go through every command that prints an interval, with a deterministic
model behind the loopback OpenAI stub where one is needed: ``score`` (lexical, behaviour and
pairwise rubrics), ``rank`` (a run, a pairwise run's Bradley–Terry ranking, ``--human``),
``report``, ``calibrate`` (ratings, behaviours, preferences), ``validate --limit 2``, ``bench``,
``sensitivity``, ``annotate sample --pilot`` and the annotate server's agreement data. The
console output and every file written (``summary.json``, ``report.md``, ``report.html``) must
carry the warning, with the number of conversations (2).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from attune_judge.cli import main
from tests._openai_stub import openai_stub
from tests.conftest import SAMPLES
from tests.judging._stub_judges import behaviour_rule, longer_wins, requested_fields

# the warning's words, written out here (not read from the code): "only 2 conversations" (or
# "2 human-labelled conversations", ...), the limit, and why
WARNING = re.compile(
    r"[Oo]nly (?P<n>\d+) (?:[\w-]+ )?conversations \(clusters\): intervals are unreliable below "
    r"10 \(their coverage was validated from 10 up\) and no rank claims are made"
)
TWO = ("conversation_5.json", "conversation_12.json")
VARIANTS = """\
name: two-variants
base:
  rubric: attunebench-reference
  judge: {reasoning: false, use_reference: true}
perturbations:
  - name: no-helpfulness
    kind: remove_criterion
    criterion: helpfulness
"""


def _hash(body: dict[str, Any]) -> int:
    return int(
        hashlib.sha256(json.dumps(body["messages"], sort_keys=True).encode()).hexdigest(), 16
    )


def _reply(body: dict[str, Any]) -> str:
    """Pairwise: the longer reply wins; behaviours: a fixed rule; bench's preference task: 1 or
    2, and ratings 1-5, from a hash of the request (so the judge is not constant)."""
    fields = requested_fields(body)
    if "verdict" in fields:
        return longer_wins(body)
    if any(f.startswith("B") and f[1:].isdigit() for f in fields):
        return behaviour_rule(body)
    score = 1 + _hash(body) % 5
    if fields == ["choice"]:
        return json.dumps({"choice": str(1 + score % 2)})
    words = {"rationale": "fine", "reasoning": "fine", "reply": "That sounds hard."}
    return json.dumps({f: words.get(f, score) for f in fields})


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    got = capsys.readouterr()
    assert (stop.value.code or 0) == 0, (argv, got.err)
    return got.out + got.err


def _labels(path: Path, raters: dict[str, list[int]], items: list[str] | None = None) -> Path:
    """1-5 ratings by hand of six items, three in each of two conversations."""
    from attune_judge.data import Rating, write_jsonl

    ids = items or [f"c{k // 3}:i{k}" for k in range(6)]
    write_jsonl(
        path,
        [
            Rating(item_id=ids[k], rater=r, dimension="d", value=v[k], cluster=ids[k].split(":")[0])
            for r, v in raters.items()
            for k in range(len(ids))
        ],
    )
    return path


def _agreement_page(
    data: Path, judge: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> str:
    """``annotate`` with a judge run, two annotators labelling every item through the server's
    JSON API; the agreement page's data as the page receives it."""
    import socket

    import uvicorn
    from starlette.testclient import TestClient

    with socket.socket() as probe:  # a free port: the command checks it can listen there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    items, db = tmp / "to-label.jsonl", tmp / "labels.sqlite"
    _cli(
        ["annotate", "sample", str(data), "--rubric", "attunebench-reference", "-o", str(items)],
        capsys,
    )
    served: dict[str, Any] = {}

    def fake_run(app: Any, **kw: Any) -> None:  # no socket: drive the app in-process
        with sqlite3.connect(db) as con:
            tokens = dict(con.execute("SELECT name, token FROM annotators"))
        client = TestClient(app, base_url=f"http://127.0.0.1:{port}")
        for who, token in tokens.items():
            head = {"X-Annotate-Token": token}
            while (view := client.get("/api/next", headers=head).json()["item"]) is not None:
                value = 1 + (len(view["key"]) + len(who)) % 7
                answers = {c["id"]: value for c in view["criteria"]}
                client.post(
                    "/api/label", headers=head, json={"key": view["key"], "answers": answers}
                )
        served["page"] = client.get(
            "/api/agreement", headers={"X-Annotate-Token": tokens["ana"]}
        ).text

    monkeypatch.setattr(uvicorn, "run", fake_run)
    argv = ["annotate", str(items), "--task", "ratings", "--rubric", "attunebench-reference"]
    argv += ["--db", str(db), "--annotator", "ana", "--annotator", "ben", "--port", str(port)]
    _cli([*argv, "--judge", str(judge)], capsys)
    return str(served["page"])


def test_every_command_warns_below_ten_conversations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ATTUNE_CACHE", "0")
    data = tmp_path / "two"
    data.mkdir()
    for name in TWO:
        shutil.copy(SAMPLES / name, data / name)
    B = ["-B", "200"]
    seen: dict[str, str] = {}  # surface -> its text

    def files(run: Path, tag: str) -> None:
        for name in ("summary.json", "report.md", "report.html"):
            seen[f"{tag} {name}"] = (run / name).read_text("utf-8")

    with openai_stub(_reply) as server:
        lm = ["--lm", "openai/stub", "--api-base", server.url]
        runs = {k: tmp_path / f"run-{k}" for k in ("lexical", "behaviours", "pairwise", "ref")}
        seen["score"] = _cli(
            ["score", str(data), "--rubric", "lexical", "-o", str(runs["lexical"]), *B], capsys
        )
        files(runs["lexical"], "score")
        for kind, rubric in (
            ("behaviours", "attunebench-behaviours"),
            ("pairwise", "attunebench-pairwise"),
        ):
            argv = ["score", str(data), "--rubric", rubric, *lm, "-o", str(runs[kind]), "-q", *B]
            seen[f"score {kind}"] = _cli(argv, capsys)
            files(runs[kind], f"score {kind}")
        seen["rank"] = _cli(["rank", str(runs["lexical"]), *B], capsys)
        seen["rank (Bradley–Terry)"] = _cli(["rank", str(runs["pairwise"]), *B], capsys)
        _cli(["report", str(runs["lexical"])], capsys)
        files(runs["lexical"], "report")
        # rank --human: a person's ratings of the lexical run's items (two conversations)
        judged = sorted(
            json.loads(x)["item_id"]
            for x in (runs["lexical"] / "judgments.jsonl").read_text().splitlines()
        )
        picked = [i for c in ("synthetic-5:", "synthetic-12:") for i in judged if i.startswith(c)]
        picked = picked[:3] + picked[-3:]  # three items of each conversation
        human = _labels(tmp_path / "human.jsonl", {"p": [5, 1, 4, 2, 3, 5]}, picked)
        out = tmp_path / "ppi"
        seen["rank --human"] = _cli(
            [
                "rank",
                str(runs["lexical"]),
                "--human",
                str(human),
                "--human-scale",
                "1,5",
                "--report",
                str(out),
                *B,
            ],
            capsys,
        )
        seen["rank --human report.md"] = (out / "report.md").read_text("utf-8")
        # calibrate: ratings, behaviours (participants' answers), preferences
        ratings = _labels(
            tmp_path / "labels.jsonl", {"A": [1, 2, 3, 4, 5, 3], "B": [1, 2, 4, 5, 5, 2]}
        )
        judge = _labels(tmp_path / "judge.jsonl", {"J": [2, 2, 3, 4, 4, 3]})
        behaviours, prefs = tmp_path / "behaviours.jsonl", tmp_path / "prefs.jsonl"
        _cli(["data", "ratings", str(data), "-o", str(behaviours)], capsys)
        _cli(["data", "preferences", str(data), "-o", str(prefs)], capsys)
        for kind, labels, against in (
            ("ratings", ratings, judge),
            ("behaviours", behaviours, runs["behaviours"]),
            ("preferences", prefs, runs["pairwise"]),
        ):
            out = tmp_path / f"cal-{kind}"
            argv = ["calibrate", "--human", str(labels), "--judge", str(against), "-o", str(out)]
            seen[f"calibrate {kind}"] = _cli([*argv, *B], capsys)
            files(out, f"calibrate {kind}")
        # validate on the first two items of a shipped set: two conversations
        out = tmp_path / "validate"
        argv = ["validate", *lm, "--set", "esconv", "--limit", "2", "-o", str(out), *B]
        seen["validate"] = _cli(argv, capsys)
        files(out, "validate")
        # bench, sensitivity (a base and one variant)
        out = tmp_path / "bench"
        argv = ["bench", str(data), "-m", "openai/a", "-m", "openai/b", *lm, "-o", str(out)]
        seen["bench"] = _cli(
            [*argv, "--tasks", "preference", "--max-failure-rate", "1", "-q", *B], capsys
        )
        files(out, "bench")
        out, variants = tmp_path / "sensitivity", tmp_path / "variants.yaml"
        variants.write_text(VARIANTS, "utf-8")
        argv = ["sensitivity", str(data), "--variants", str(variants), *lm, "-o", str(out)]
        seen["sensitivity"] = _cli([*argv, "-q", *B], capsys)
        files(out, "sensitivity")
        # score with the reference rubric: the judge the annotators are compared with
        argv = [
            "score",
            str(data),
            "--rubric",
            "attunebench-reference",
            *lm,
            "-o",
            str(runs["ref"]),
            "-q",
            *B,
        ]
        _cli(argv, capsys)
    # annotate: a pilot of two conversations, and the agreement page with a judge
    argv = ["annotate", "sample", "--pilot", str(ratings), "--width", "0.1"]
    seen["annotate sample --pilot"] = _cli(argv, capsys)
    seen["annotate agreement page"] = _agreement_page(
        data, runs["ref"], tmp_path, monkeypatch, capsys
    )
    missing = [
        tag for tag, text in seen.items() if 2 not in {int(m["n"]) for m in WARNING.finditer(text)}
    ]
    assert missing == [], f"no few-conversation warning on: {missing}"
    # and no ranking gives a model a rank of its own (the one rule for claims): no leaderboard
    # row starts with a point rank, in the console (bench's "1. model") or a report
    models = "human_edited|llm_improved|original|openai/a|openai/b"
    ranked = re.compile(rf"^(?:\| *\d+ *\| *|\s*\d+\. +)(?:{models})\b", re.M)
    claimed = [tag for tag, text in seen.items() if ranked.search(text)]
    assert claimed == [], f"a point rank below 10 conversations on: {claimed}"
    # the pilot sizes no study below 10 conversations
    rows = [r for r in seen["annotate sample --pilot"].splitlines() if r.startswith("| d |")]
    assert rows and all(int(r.split("|")[-2]) >= 10 for r in rows)
