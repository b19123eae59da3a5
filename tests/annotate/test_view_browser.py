"""``attune-judge view`` in a real headless Chromium at 1280 px, against the real server (a
subprocess): the landing page's worst disagreement opens its judgment; the table filters by
model, sorts by |judge − people|; a confusion cell opens its items. On every page the injected
markup stays text (nothing sets ``window.__pwned``) and nothing scrolls sideways. Screenshots
are kept in the test's temporary folder (and copied to ``$ATTUNE_VIEW_SCREENSHOTS`` when set).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.annotate._view_fixtures import HOSTILE, LONG_MODEL, write_view_run
from tests.annotate.test_browser import REPO, _free_port
from tests.report.test_browser import ARGS, CHROMIUM, _require_browser


def _serve(run: Path, labels: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
        "ATTUNE_VIEW_CACHE": str(log.parent / "cache"),
    }
    cmd = [sys.executable, "-m", "attune_judge", "view", str(run), "--human", str(labels)]
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [*cmd, "--port", str(port)], stdout=out, stderr=subprocess.STDOUT, env=env
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/assets/view.css", timeout=1):
                return proc
        except OSError:
            if proc.poll() is not None:
                raise AssertionError(f"server exited: {log.read_text()}") from None
            time.sleep(0.2)
    proc.kill()
    raise AssertionError(f"server did not start: {log.read_text()}")


@pytest.mark.browser
def test_find_the_worst_disagreement_filter_sort_and_follow_a_confusion_cell(
    tmp_path: Path,
) -> None:
    _require_browser()
    from playwright.sync_api import sync_playwright

    run, labels = write_view_run(tmp_path / "run")
    port = _free_port()
    server = _serve(run, labels, port, tmp_path / "server.log")
    shots: list[Path] = []
    errors: list[str] = []

    def check(page: Any, name: str) -> None:
        assert page.evaluate("window.__pwned") is None, name
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= 1280, f"{name}: scrolls sideways ({wide} px)"
        path = tmp_path / f"view-{name}.png"
        page.screenshot(path=str(path), full_page=True)
        shots.append(path)

    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("dialog", lambda d: errors.append(f"dialog {d.message}"))
            page.goto(f"http://127.0.0.1:{port}/")
            check(page, "landing")
            worst = page.locator("table.worst tbody tr")
            assert worst.count() == 5
            assert worst.nth(0).locator("td").nth(6).inner_text() == "4"
            worst.nth(0).locator("a").click()
            page.wait_for_selector("h2:has-text('Conversation')")
            body = page.inner_text("main")
            assert "I feel low (c0)." in body and HOSTILE in body  # markup shown as text
            assert "Reference" in body and "ann2" in body
            check(page, "judgment")
            page.click("text=all judgments")
            page.select_option("select[name=model]", LONG_MODEL)
            page.click("button:has-text('Filter')")
            page.wait_for_selector("p.pager")
            assert page.inner_text("p.pager").startswith("1–6 of 6")
            models = page.locator("table.judgments tbody tr td:nth-child(2)").all_inner_texts()
            assert set(models) == {LONG_MODEL}
            check(page, "table-filtered")
            page.click("a.sort:has-text('|judge − people|')")  # largest first
            page.wait_for_selector("a.sort:has-text('▼')")
            diffs = page.locator("table.judgments tbody tr td:last-child").all_inner_texts()
            assert diffs[:2] == ["4", "4"] and diffs == sorted(diffs, key=float, reverse=True)
            check(page, "table-sorted")
            page.click("text=disagreements")
            page.wait_for_selector("table.confusion")
            check(page, "disagreements")
            # warmth: the judge said 5, the people 1 on conversations 0 and 5
            section = page.locator("section#c-warmth")
            cells = section.locator("table.confusion tbody tr").last.locator("td")
            cells.nth(1).locator("a").click()
            page.wait_for_selector("p.pager")
            items = page.locator("table.judgments tbody tr td:nth-child(3)").all_inner_texts()
            assert sorted(items) == ["c0:1:0", "c0:1:1", "c5:1:0", "c5:1:1"]
            check(page, "confusion-cell")
            browser.close()
        assert not errors, errors
    finally:
        server.terminate()
        server.wait(timeout=10)
        target = os.environ.get("ATTUNE_VIEW_SCREENSHOTS")
        if target:
            Path(target).mkdir(parents=True, exist_ok=True)
            for shot in shots:
                shutil.copy(shot, Path(target) / shot.name)


@pytest.mark.browser
def test_the_agreement_page_shows_calibrates_tables_not_markdown(tmp_path: Path) -> None:
    """annotate's /agreement with a judge run: the report as HTML tables, the few-conversation
    warning, nothing wider than 1280 px."""
    _require_browser()
    from playwright.sync_api import sync_playwright

    from tests.annotate._fixtures import make_judgments
    from tests.annotate.test_browser import _start
    from tests.annotate.test_export import JUDGE, _labelled

    store, db = _labelled(tmp_path)
    store.close()
    judge = make_judgments(tmp_path, JUDGE)
    port = _free_port()
    cmd = [sys.executable, "-m", "attune_judge", "annotate", "--db", str(db), "--judge"]
    cmd += [str(judge), "-B", "200", "--port", str(port)]
    server, links = _start(cmd, port, tmp_path / "server.log")
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(links["alice"].replace("/?", "/agreement?"))
            page.wait_for_selector("#judge table")
            text = page.inner_text("main")
            assert "|---|" not in text and "| " not in text  # no Markdown table left
            assert page.locator("#judge table").count() >= 3
            assert "intervals are unreliable below" in page.inner_text("#notes")
            assert page.evaluate("document.documentElement.scrollWidth") <= 1280
            page.screenshot(path=str(tmp_path / "agreement.png"), full_page=True)
            browser.close()
        target = os.environ.get("ATTUNE_VIEW_SCREENSHOTS")
        if target:
            Path(target).mkdir(parents=True, exist_ok=True)
            shutil.copy(tmp_path / "agreement.png", Path(target) / "annotate-agreement.png")
    finally:
        server.terminate()
        server.wait(timeout=10)
