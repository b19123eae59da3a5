"""``attune-judge calibrate -o RUN`` end to end on shipped real data: the three experts of the
empathic-communication set (Kumar et al. 2025) against GPT-4o's recorded ratings."""

from __future__ import annotations

import base64
import json
import re
import struct
from typing import Any

import pytest

from attune_judge.cli import main
from tests.conftest import REPO_ROOT

RATINGS = REPO_ROOT / "calibration" / "empathic-communication" / "ratings.jsonl"


def _png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (PNG spec: bytes 16-24)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def split(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("ec")
    rows = [json.loads(x) for x in RATINGS.read_text(encoding="utf-8").splitlines() if x.strip()]
    experts = [r for r in rows if r["rater_group"] == "experts"]
    gpt = [r for r in rows if r["rater"] == "gpt"]
    for name, part in (("experts", experts), ("gpt", gpt)):
        (tmp / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in part))
    # items rated on `empathy` by every expert and by gpt: an independent count of the join
    by: dict[str, set[str]] = {}
    for r in rows:
        if r["dimension"] == "empathy" and r["value"] is not None:
            by.setdefault(r["rater"], set()).add(r["item_id"])
    matched = by["expert1"] & by["expert2"] & by["expert3"] & by["gpt"]
    return {
        "experts": tmp / "experts.jsonl",
        "gpt": tmp / "gpt.jsonl",
        "tmp": tmp,
        "matched": len(matched),
    }


def test_calibrate_run_dir_on_real_data(
    split: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    out = split["tmp"] / "run"
    argv = ["calibrate", "--human", str(split["experts"]), "--judge", str(split["gpt"])]
    argv += ["--dimension", "empathy", "--B", "50", "-o", str(out)]
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0
    captured = capsys.readouterr()
    assert "Dimension `empathy`" in captured.out  # the Markdown still goes to stdout
    assert f"report: {out / 'report.md'}" in captured.err

    summary = json.loads((out / "summary.json").read_text())
    assert summary["kind"] == "calibration"
    (dim,) = summary["calibration"]["report"]["dimensions"]
    assert dim["dimension"] == "empathy"
    assert dim["join"]["matched"] == split["matched"] > 0
    assert json.loads((out / "manifest.json").read_text())["command"] == "calibrate"

    md = (out / "report.md").read_text()
    headings = re.findall(r"^#+ (.+)$", md, flags=re.M)
    for expected in (
        "attune-judge calibrate report",
        "Agreement with people",
        "Dimension: empathy",
        "gpt vs humans",
        "Human ceiling: gpt",
        "Agreement between raters",
        "Judge vs human labels",
        "Calibration",
        "What ran",
    ):
        assert expected in headings, expected
    figures = sorted(p.name for p in (out / "figures").iterdir())
    for kind in ("heatmap", "confusion", "calibration"):
        assert f"calibration-empathy-{kind}.png" in figures
    for name in figures:
        w, h = _png_size((out / "figures" / name).read_bytes())
        assert w > 100 and h > 100
        assert f"](figures/{name})" in md
    html = (out / "report.html").read_text()
    embedded = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert len(embedded) == len(figures)
    assert all(_png_size(base64.b64decode(b))[0] > 100 for b in embedded)


@pytest.mark.browser
def test_calibrate_report_renders_in_headless_chromium(
    split: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.report.test_browser import ARGS, CHROMIUM, _require_browser

    _require_browser()
    from playwright.sync_api import sync_playwright

    out = split["tmp"] / "browser-run"
    argv = ["calibrate", "--human", str(split["experts"]), "--judge", str(split["gpt"])]
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--dimension", "empathy", "--B", "50", "-o", str(out)])
    assert exc.value.code == 0
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto((out / "report.html").as_uri(), wait_until="load")
            h2 = [t.strip() for t in page.locator("h2").all_inner_texts()]
            images = page.evaluate(
                "Array.from(document.images).map(i => "
                "({ok: i.complete, w: i.naturalWidth, h: i.naturalHeight}))"
            )
        finally:
            browser.close()
    assert h2 == ["Overview", "Agreement with people", "What ran"]
    # one dimension, one judge: ceiling forest plot, rater heatmap, confusion matrix,
    # calibration plot
    assert len(images) == 4
    assert all(i["ok"] and i["w"] > 0 and i["h"] > 0 for i in images)
    assert errors == []
