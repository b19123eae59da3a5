"""Open HTML reports in a real headless Chromium: headings, figures, console, network.

Needs Debian's chromium at /usr/bin/chromium (``.ci/run`` installs it) and the Python
``playwright`` package (no downloaded browser). Skipped with a reason when chromium is absent
outside CI; in CI (``CI=true``) a missing browser is a failure.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from attune_judge.report import write_report
from tests.report._rundir import make_run_dir

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# (summary kinds, expected H1, expected H2 headings, number of figures)
CASES = {
    "score": (
        ("judges",),
        "attune-judge score report",
        ["Overview", "Scores", "What ran"],
        # forest, statuses (no rank sets: 4 conversations)
        2,
    ),
    "sensitivity": (
        ("judges", "sensitivity"),
        "attune-judge score report",
        ["Overview", "Rubric sensitivity", "Judgments: failures, tokens and cost", "What ran"],
        # τ heatmap, scores by variant, judge statuses
        3,
    ),
    "bench": (
        ("bench",),
        "attune-judge score report",
        # the bench sections come from the report's registry: `report RUN` draws what
        # `bench` drew (all metrics, discriminability) after the per-task leaderboards
        [
            "Overview",
            "Leaderboards per task",
            "Do the tasks rank models alike?",
            "All task metrics",
            "Discriminability per task",
            "What ran",
        ],
        # forest + rank sets for each of two tasks; τ heatmap; scores across tasks
        6,
    ),
}


def _require_browser() -> None:
    in_ci = os.environ.get("CI", "").lower() == "true"
    if not CHROMIUM.exists():
        if in_ci:
            pytest.fail(f"{CHROMIUM} is missing in CI (.ci/run installs Debian's chromium)")
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium); not in CI")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        if in_ci:
            pytest.fail("the playwright package is missing in CI (pip install -e '.[dev]')")
        pytest.skip("the playwright Python package is not installed")


def _open(browser: Any, html_path: Path, shot: Path) -> dict[str, Any]:
    """Load a report; collect headings, image sizes, console errors and network requests."""
    errors: list[str] = []
    requests: list[str] = []
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on(
        "request",
        lambda r: None if r.url.startswith(("file:", "data:")) else requests.append(r.url),
    )
    page.goto(html_path.as_uri(), wait_until="load")
    out = {
        "h1": page.inner_text("h1"),
        "h2": [t.strip() for t in page.locator("h2").all_inner_texts()],
        "images": page.evaluate(
            "Array.from(document.images).map(i => "
            "({ok: i.complete, w: i.naturalWidth, h: i.naturalHeight, alt: i.alt}))"
        ),
        "hostile_cells": page.locator("td", has_text="<b>beta|</b>").count(),
        "injected_bold": page.locator("td b").count(),
    }
    page.screenshot(path=str(shot), full_page=True)
    page.close()
    out["errors"], out["requests"] = errors, requests
    return out


@pytest.mark.browser
def test_reports_render_in_headless_chromium(tmp_path: Path) -> None:
    _require_browser()
    from playwright.sync_api import sync_playwright

    keep = os.environ.get("ATTUNE_REPORT_SCREENSHOTS")  # a folder to keep screenshots in
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            for name, (kinds, h1, h2, n_figures) in CASES.items():
                run = make_run_dir(tmp_path / name, kinds=kinds)
                _, html_path = write_report(run)
                shot = tmp_path / f"{name}.png"
                seen = _open(browser, html_path, shot)
                assert seen["h1"] == h1, name
                assert seen["h2"] == h2, name
                assert len(seen["images"]) == n_figures, name
                for img in seen["images"]:
                    assert img["ok"] and img["w"] > 0 and img["h"] > 0, (name, img)
                    assert img["alt"], name
                # the hostile model name shows as text, never as markup
                assert seen["hostile_cells"] > 0 and seen["injected_bold"] == 0, name
                assert seen["errors"] == [], name
                assert seen["requests"] == [], name
                assert shot.stat().st_size > 10_000
                if keep:
                    Path(keep, f"{name}.png").write_bytes(shot.read_bytes())
        finally:
            browser.close()


MODELS4 = ["gpt-4.1-mini-2025-04-14", "claude-sonnet-4-5-20250929", "gemini-2.5-flash", "local"]


def _bench_with_four_models(path: Path) -> Path:
    """The bench run of :func:`make_run_dir` with four long-named models on both tasks."""
    import json

    from tests.report._rundir import _row

    run = make_run_dir(path, kinds=("bench",))
    summary = json.loads((run / "summary.json").read_text("utf-8"))
    bench = summary["bench"]
    bench["models"] = MODELS4
    for n, task in enumerate(bench["tasks"].values()):
        order = MODELS4 if n == 0 else MODELS4[::-1]
        task["leaderboard"]["rows"] = [
            _row(m, 0.8 - 0.1 * i, i + 1, [i + 1, min(i + 2, 4)]) for i, m in enumerate(order)
        ]
    (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return run


@pytest.mark.browser
def test_reports_fit_a_1280_px_window(tmp_path: Path) -> None:
    """At 1280 px no element is wider than the page and no table scrolls sideways: every
    column of a four-model bench table is visible (issue 29)."""
    _require_browser()
    from playwright.sync_api import sync_playwright

    runs = {name: make_run_dir(tmp_path / name, kinds=c[0]) for name, c in CASES.items()}
    runs["bench-4-models"] = _bench_with_four_models(tmp_path / "bench4")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            for name, run in runs.items():
                _, html_path = write_report(run)
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.goto(html_path.as_uri(), wait_until="load")
                page.screenshot(path=str(tmp_path / f"{name}-1280.png"), full_page=True)
                found = page.evaluate(
                    """() => {
                      const w = document.documentElement.clientWidth;
                      const wide = [];
                      for (const el of document.querySelectorAll('body *')) {
                        const r = el.getBoundingClientRect();
                        if (r.width > 0 && r.right > w + 1) wide.push(el.tagName + ' ' + r.right);
                      }
                      const scrolls = Array.from(document.querySelectorAll('.table-wrap'))
                        .filter(d => d.scrollWidth > d.clientWidth + 1)
                        .map(d => d.innerText.slice(0, 60));
                      return {page: document.documentElement.scrollWidth - w, wide, scrolls};
                    }"""
                )
                page.close()
                assert found["page"] <= 0, (name, found)
                assert found["wide"] == [], (name, found["wide"][:5])
                assert found["scrolls"] == [], (name, found["scrolls"])
        finally:
            browser.close()
