"""The HTML report: one self-contained file, every untrusted string escaped."""

from __future__ import annotations

import base64
import re
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from attune_judge.report import (
    Figure,
    KeyValues,
    Note,
    Paragraph,
    Report,
    Section,
    Table,
    render_html,
    write_report,
)
from tests.report._rundir import make_run_dir

HOSTILE = '<img src=x onerror="alert(1)">'


def _attributes(html: str, name: str) -> list[str]:
    return re.findall(rf'\b{name}\s*=\s*"([^"]*)"', html)


def test_every_kind_of_block_escapes_untrusted_text() -> None:
    report = Report(
        f"title {HOSTILE}",
        [
            Section(
                f"section {HOSTILE}",
                [
                    Paragraph(f"para {HOSTILE}"),
                    Note(f"note {HOSTILE}", "warning"),
                    Table([f"col {HOSTILE}"], [[f"cell {HOSTILE}"]], caption=f"cap {HOSTILE}"),
                    KeyValues([(f"key {HOSTILE}", f"value {HOSTILE}")]),
                    Figure("f", b"\x89PNG", alt=f"alt {HOSTILE}", caption=f"fig {HOSTILE}"),
                ],
            )
        ],
        subtitle=f"sub {HOSTILE}",
    )
    html = render_html(report, footer=f"foot {HOSTILE}")
    assert "<img src=x" not in html
    assert 'onerror="alert(1)"' not in html
    escaped = "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"
    # title (twice: <title> and <h1>), subtitle, toc + heading, paragraph, note, column,
    # cell, caption, key, value, alt, figure caption, footer
    assert html.count(escaped) == 15


def test_report_html_needs_no_network(tmp_path: Path) -> None:
    cal = write_report(make_run_dir(tmp_path / "cal", kinds=("calibration",)))[1]
    run = make_run_dir(tmp_path / "run", kinds=("judges", "sensitivity"))
    _, html_path = write_report(run)
    html = html_path.read_text("utf-8") + cal.read_text("utf-8")
    srcs = _attributes(html, "src")
    # heatmap, confusion, calibration; τ heatmap, scores by variant; judge statuses
    assert len(srcs) == 6
    for src in srcs:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    assert all(href.startswith("#") for href in _attributes(html, "href"))
    for banned in ("<script", "<link", "@import", "url(", "http://", "https://"):
        assert banned not in html
    assert "default-src 'none'" in html


def test_hostile_model_name_is_escaped_in_the_report(tmp_path: Path) -> None:
    run = make_run_dir(tmp_path / "run")
    _, html_path = write_report(run)
    html = html_path.read_text("utf-8")
    assert "<b>beta" not in html
    assert "&lt;b&gt;beta|&lt;/b&gt;" in html


def test_heading_anchors_are_unique_and_the_toc_links_them() -> None:
    report = Report("T", [Section("Scores"), Section("Scores"), Section("Ünïcode & more")])
    html = render_html(report)
    ids = re.findall(r'<h2 id="([^"]+)"', html)
    assert ids == ["scores", "scores-2", "unicode-more"]
    assert [h[1:] for h in _attributes(html, "href")] == ids


OUR_TAGS = {
    "!DOCTYPE",
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "main",
    "h1",
    "h2",
    "p",
    "nav",
    "strong",
    "ol",
    "li",
    "a",
    "section",
    "div",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "footer",
    "dl",
    "dt",
    "dd",
}


@settings(max_examples=60, deadline=None)
@given(text=st.text(min_size=1, max_size=40))
# random text seldom spells a tag: pin real injection attempts
@example(text="<script>alert(1)</script>")
@example(text='"><img src=x onerror=alert(1)>')
@example(text="&lt;b&gt; & <!-- c --> <a href='javascript:x'>")
def test_no_text_can_add_a_tag_or_attribute(text: str) -> None:
    report = Report(
        text,
        [Section(text, [Paragraph(text), Table([text], [[text]]), KeyValues([(text, text)])])],
        subtitle=text,
    )
    html = render_html(report, footer=text)
    tags = {t.lstrip("/") for t in re.findall(r"<\s*(/?[A-Za-z!][^\s>/]*)", html)}
    assert tags <= OUR_TAGS
    # every text survives escaping exactly (html.unescape inverts html.escape)
    import html as html_mod

    assert html_mod.unescape(re.search(r"<p>(.*?)</p>", html, re.S).group(1)) == text  # type: ignore[union-attr]
