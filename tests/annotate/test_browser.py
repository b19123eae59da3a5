"""The labelling page in a real headless Chromium, against the real server (a subprocess).

Two annotators label at once with the keyboard (undo, skip, flag included); the server is
killed with SIGKILL mid-way and restarted; both continue where they stopped; then the labels
are exported and ``calibrate`` reads the export. Screenshots are kept in the test's temporary
folder (and copied to ``$ATTUNE_ANNOTATE_SCREENSHOTS`` when set).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from attune_judge.data import Rating, read_jsonl
from tests.annotate._fixtures import make_items, make_judgments, make_rubric
from tests.report.test_browser import ARGS, CHROMIUM, _require_browser

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(cmd: list[str], port: int, log: Path) -> tuple[subprocess.Popen[bytes], dict[str, str]]:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    with log.open("ab") as out:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/assets/annotate.css", timeout=1):
                break
        except OSError:
            if proc.poll() is not None:
                raise AssertionError(f"server exited: {log.read_text()}") from None
            time.sleep(0.2)
    else:
        proc.kill()
        raise AssertionError(f"server did not start: {log.read_text()}")
    links = {}
    for line in log.read_text().splitlines():
        if "/?token=" in line:
            name, _, url = line.strip().partition(": ")
            links[name] = url
    return proc, links


def _rate(page: Any, keys: str, done: int) -> None:
    for key in keys:
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#progress:has-text('{done} labelled')", timeout=10_000)


@pytest.mark.browser
def test_two_annotators_label_by_keyboard_through_a_server_kill(tmp_path: Path) -> None:
    _require_browser()
    from playwright.sync_api import sync_playwright

    items, rubric = make_items(tmp_path), make_rubric(tmp_path)
    db, log, port = tmp_path / "labels.sqlite", tmp_path / "server.log", _free_port()
    cmd = [
        sys.executable,
        "-m",
        "attune_judge",
        "annotate",
        str(items),
        "--task",
        "ratings",
        "--rubric",
        str(rubric),
        "--db",
        str(db),
        "--annotator",
        "alice",
        "--annotator",
        "bob",
        "--k",
        "2",
        "--port",
        str(port),
    ]
    server, links = _start(cmd, port, log)
    shots: list[Path] = []
    errors: list[str] = []
    page_errors: list[str] = []

    def shot(page: Any, name: str) -> None:
        path = tmp_path / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        shots.append(path)

    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            pages = {}
            for who in ("alice", "bob"):
                page = browser.new_context(viewport={"width": 1000, "height": 900}).new_page()
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda e: page_errors.append(str(e)))
                page.on("dialog", lambda d: page_errors.append(f"dialog {d.message}"))
                page.goto(links[who])
                page.wait_for_selector("#progress:has-text('0 labelled')")
                pages[who] = page
            a, b = pages["alice"], pages["bob"]
            # the hostile reply is shown as characters, never run or parsed as markup
            reply = a.locator(".reply").inner_text()
            assert "<script>window.__pwned = 1</script><img src=x" in reply
            assert a.locator(".reply img, .reply script").count() == 0
            assert a.evaluate("window.__pwned") is None
            assert a.locator(".anchors li", has_text="Very warm <b>anchor</b>").count() == 1
            shot(a, "01-alice-hostile-item")
            _rate(a, "42", 1)
            _rate(b, "55", 1)
            _rate(a, "33", 2)
            a.keyboard.press("u")  # undo alice's second label, then label it again
            a.wait_for_selector("#progress:has-text('1 labelled')")
            _rate(a, "22", 2)
            a.keyboard.press("s")
            a.wait_for_selector("#progress:has-text('1 skipped')")
            a.keyboard.press("f")
            a.keyboard.type("the reply is cut off")
            a.keyboard.press("Enter")
            a.wait_for_selector("#progress:has-text('1 flagged')")
            shot(a, "02-alice-after-undo-skip-flag")

            server.send_signal(signal.SIGKILL)
            server.wait(timeout=10)
            with sqlite3.connect(db) as con:
                stored = con.execute(
                    "SELECT annotator, item_id, action, answers FROM labels ORDER BY seq"
                ).fetchall()
            assert stored == [
                ("alice", "c0:1:m1", "label", '{"fit": 2, "warmth": 4}'),
                ("bob", "c0:1:m1", "label", '{"fit": 5, "warmth": 5}'),
                ("alice", "c0:1:m2", "label", '{"fit": 2, "warmth": 2}'),
                ("alice", "c1:1:m1", "skip", None),
                ("alice", "c1:1:m2", "flag", None),
            ]
            # bob answers while the server is down: an error is shown, nothing is stored
            for key in ("1", "1", "Enter"):
                b.keyboard.press(key)
            b.wait_for_selector("#status.error")
            shot(b, "03-bob-server-down")

            server, links2 = _start(cmd, port, log)
            assert links2 == links  # same annotators, same links after the restart
            b.keyboard.press("Enter")  # his answers are still on screen: submit again
            b.wait_for_selector("#progress:has-text('2 labelled')")
            a.goto(links["alice"])  # alice reloads and continues after her last answer
            a.wait_for_selector("#progress:has-text('2 labelled, 1 skipped, 1 flagged')")
            for page, start in ((a, 2), (b, 2)):
                n = start
                while page.locator("#task").is_visible():
                    n += 1
                    _rate(page, "34", n)
                assert "Nothing left" in page.locator("#status").inner_text()
            shot(b, "04-bob-done")
            a.goto(links["alice"].replace("/?", "/agreement?"))
            a.wait_for_selector("#humans tbody tr >> nth=2")
            rows = a.locator("#humans tbody tr").all_inner_texts()
            assert [r.split("\t")[0] for r in rows] == ["fit", "overall", "warmth"]
            shot(a, "05-agreement")
            browser.close()
    finally:
        server.kill()
        server.wait(timeout=10)
        keep = os.environ.get("ATTUNE_ANNOTATE_SCREENSHOTS")
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            for path in shots:
                shutil.copy(path, keep)
    assert page_errors == []
    assert all("ERR_CONNECTION_REFUSED" in e for e in errors), errors
    assert all(p.stat().st_size > 10_000 for p in shots) and len(shots) == 5

    with sqlite3.connect(db) as con:
        per_item = dict(
            con.execute(
                "SELECT item_id, COUNT(*) FROM labels WHERE action='label' GROUP BY item_id"
            ).fetchall()
        )
        by_who = dict(
            con.execute(
                "SELECT annotator, COUNT(*) FROM labels WHERE action='label' GROUP BY annotator"
            ).fetchall()
        )
    assert by_who == {"alice": 4, "bob": 6}  # alice skipped one item and flagged one
    assert per_item == {
        "c0:1:m1": 2,
        "c0:1:m2": 2,
        "c1:1:m1": 1,
        "c1:1:m2": 1,
        "c2:1:m1": 2,
        "c2:1:m2": 2,
    }

    from typer.testing import CliRunner

    from attune_judge.cli import app
    from attune_judge.validate import calibrate_files

    out = tmp_path / "labels.jsonl"
    res = CliRunner().invoke(app, ["annotate", "export", "--db", str(db), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "30 records from 10 labels (1 flagged items not exported)" in res.output
    ratings = read_jsonl(out, Rating)
    got = {(r.item_id, r.rater, r.dimension): r.value for r in ratings}
    assert got[("c0:1:m2", "bob", "warmth")] == 1.0  # typed while the server was down
    assert got[("c0:1:m2", "alice", "fit")] == 2.0  # after the undo
    judge = make_judgments(
        tmp_path,
        {f"c{c}:1:{m}": (3, 3 + (c + (m == "m2")) % 3) for c in range(3) for m in ("m1", "m2")},
    )
    report = calibrate_files(out, judge, B=200)
    dims = {d["dimension"]: d for d in report.data["dimensions"]}
    assert dims["warmth"]["humans"] == ["alice", "bob"]
    assert dims["warmth"]["join"]["matched"] == 6


@pytest.mark.browser
def test_pairs_and_behaviours_are_answered_by_keyboard(tmp_path: Path) -> None:
    _require_browser()
    from playwright.sync_api import sync_playwright

    from attune_judge.annotate import LabelStore
    from attune_judge.data import ChatMessage, JudgeItem, write_jsonl
    from tests.annotate._fixtures import make_pairs

    behaviour_items = tmp_path / "b.jsonl"
    write_jsonl(
        behaviour_items,
        [
            JudgeItem(
                item_id=f"c{c}:1:original",
                conversation_id=f"c{c}",
                turn=1,
                context=[ChatMessage(role="user", content="My dog died.")],
                candidate=f"I am so sorry ({c}).",
                candidate_model="original",
                metadata={"behaviour_items": ["B1", "B2"]},
            )
            for c in range(2)
        ],
    )
    setups = {
        "pairwise": (make_pairs(tmp_path, 2), "attunebench-pairwise", ["2", "t"]),
        "behaviours": (behaviour_items, "attunebench-behaviours", ["y", "n"]),
    }
    seen: dict[str, list[tuple[str, str, Any, bool]]] = {}
    flip = None
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        for task, (items, rubric, keys) in setups.items():
            db, port = tmp_path / f"{task}.sqlite", _free_port()
            cmd = [sys.executable, "-m", "attune_judge", "annotate", str(items), "--task", task]
            cmd += ["--rubric", rubric, "--db", str(db), "--annotator", "alice", "--k", "1"]
            server, links = _start([*cmd, "--port", str(port)], port, tmp_path / f"{task}.log")
            try:
                page = browser.new_page(viewport={"width": 1000, "height": 800})
                page.goto(links["alice"])
                page.wait_for_selector("#progress:has-text('0 labelled')")
                if task == "pairwise":
                    # the pair is shown in a per-annotator random order: which one came first
                    # is read off the page, and the stored winner must follow it
                    first = page.locator(".reply").first.inner_text()
                    assert ("A text 0" in first) != ("B text 0" in first), first
                    flip = "B text 0" in first
                    shown = page.locator("#task").inner_html()  # (the link holds a token)
                    assert "m1" not in shown and "m2" not in shown
                    for n, key in enumerate(keys, 1):
                        page.keyboard.press(key)
                        page.keyboard.press("Enter")
                        page.wait_for_selector(f"#progress:has-text('{n} labelled')")
                        if n == 1:
                            page.screenshot(path=str(tmp_path / "pairwise.png"), full_page=True)
                else:
                    assert page.locator("#answers fieldset").count() == 2  # the items asked
                    page.screenshot(path=str(tmp_path / "behaviours.png"), full_page=True)
                    for n in (1, 2):
                        for key in keys:
                            page.keyboard.press(key)
                        page.keyboard.press("Enter")
                        page.wait_for_selector(f"#progress:has-text('{n} labelled')")
                page.wait_for_selector("#status:has-text('Nothing left')")
            finally:
                server.kill()
                server.wait(timeout=10)
            store = LabelStore(db)
            try:
                seen[task] = [
                    (r["annotator"], r["item_id"], r["answers"], r["swapped"])
                    for r in store.labels()
                ]
            finally:
                store.close()
        browser.close()
    pairs = {item: (answers, swapped) for _, item, answers, swapped in seen["pairwise"]}
    second, flip0 = pairs["c0:1:pair:m1:m2"]
    assert flip0 is flip  # the store records the order the page showed
    # "2": the reply shown second, which is A when the pair was shown swapped
    assert second == {"choice": "second", "winner": "A" if flip else "B"}
    assert pairs["c1:1:pair:m1:m2"][0] == {"choice": "tie", "winner": "tie"}
    assert [a for _, _, a, _ in seen["behaviours"]] == [{"B1": "yes", "B2": "no"}] * 2
    keep = os.environ.get("ATTUNE_ANNOTATE_SCREENSHOTS")
    if keep:
        for name in ("pairwise.png", "behaviours.png"):
            shutil.copy(tmp_path / name, keep)
