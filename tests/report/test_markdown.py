"""The Markdown report: headings, tables, formatted numbers, escaped untrusted text."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from attune_judge.report import (
    Figure,
    Paragraph,
    Report,
    Section,
    Table,
    render_markdown,
    write_report,
)
from tests.report._rundir import JUDGE_ID, make_run_dir


def _table_rows(md: str, first_cell: str) -> list[list[str]]:
    """Cells of the Markdown table rows whose first cell is ``first_cell``."""
    out = []
    for line in md.splitlines():
        if line.startswith("| "):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            if cells and cells[0] == first_cell:
                out.append(cells)
    return out


def test_score_report_has_headings_tables_and_hand_computed_numbers(tmp_path: Path) -> None:
    run = make_run_dir(tmp_path / "run")
    md_path, _ = write_report(run)
    md = md_path.read_text("utf-8")
    for heading in (
        "# attune-judge score report",
        "## Overview",
        "## Scores",
        "### Leaderboard",
        "### Criterion scores",
        "### Failures, tokens and cost",
        "## What ran",
    ):
        assert f"\n{heading}\n" in f"\n{md}"
    # leaderboard: rank, model, mean (alpha 6.4/8 = 0.800, beta 1.8/7 = 0.257), n, conversations
    header = next(line for line in md.splitlines() if line.startswith("| rank | model"))
    # 4 conversations: below MIN_CLUSTERS (10) no rank sets are claimed, a warning says so
    assert "rank set (simultaneous)" not in header
    assert "only 4 conversations (clusters)" in md
    assert "No confidence sets for ranks: too few conversations" in md
    # and no model has a rank of its own (the one rule for claims): the mean orders the table
    alpha, beta = _table_rows(md, "—")[:2]
    assert alpha[1:3] == ["alpha", "0.800"]
    assert alpha[4:6] == ["8", "4"]
    assert beta[2] == "0.257" and beta[4] == "7"
    assert "the data pin that down" not in md
    # failures of beta: 8 planned, 7 ok, 1 parse_error → 1/8 = 12.5% not ok
    status_rows = [
        r for r in _table_rows(md, r"&lt;b>beta\|&lt;/b>") if len(r) == 8 and r[-1].endswith("%")
    ]
    assert status_rows == [[r"&lt;b>beta\|&lt;/b>", "8", "7", "1", "0", "0", "0", "12.5%"]]
    # usage totals: 2 × 800 prompt tokens, 2 × $0.008
    (total_usage,) = [r for r in _table_rows(md, "all") if len(r) == 8 and r[4].startswith("$")]
    assert total_usage[1:5] == ["16", "1,600", "320", "$0.0160"]
    # manifest: rubric hash and model of the judge
    (judge_row,) = _table_rows(md, JUDGE_ID)
    assert judge_row[3] == "sha256:abc123"
    assert judge_row[4].startswith("local")


def test_figures_are_linked_and_written(tmp_path: Path) -> None:
    run = make_run_dir(tmp_path / "run", kinds=("calibration",))
    md_path, _ = write_report(run)
    md = md_path.read_text("utf-8")
    links = re.findall(r"!\[[^\]]*\]\((figures/[^)]+\.png)\)", md)
    # heatmap + confusion + calibration
    assert len(links) == 3
    for link in links:
        assert (run / link).read_bytes()[:4] == b"\x89PNG"
    assert "## Agreement with people" in md
    # undefined statistics say so (with the reason), never print NaN
    assert "undefined" in md and "all values identical" in md
    assert re.search(r"\bnan\b", md, re.IGNORECASE) is None


def test_untrusted_text_cannot_break_tables_or_become_markup() -> None:
    report = Report(
        "T <script>",
        [
            Section(
                "S",
                [
                    Paragraph("a <img src=x onerror=alert(1)> b"),
                    Paragraph("# not a heading\n# nor this\n> nor a quote"),
                    Table(["model", "x"], [["evil|name\nnext", "1"]], "lr"),
                ],
            )
        ],
    )
    md = render_markdown(report)
    assert "<script>" not in md and "<img" not in md
    assert "&lt;img src=x onerror=alert(1)>" in md
    # the pipe is escaped and the newline folded: still one row of two cells
    assert "| evil\\|name next | 1 |" in md
    assert "\\# not a heading # nor this > nor a quote" in md.splitlines()
    assert "|---|---:|" in md


def test_figure_markdown_links_the_png_with_alt_text() -> None:
    fig = Figure("f1", b"\x89PNG", alt="A [plot]", caption="How to read it.")
    md = render_markdown(Report("T", [Section("S", [fig])]))
    assert "![A (plot)](figures/f1.png)" in md
    assert "*How to read it.*" in md


def _section_titles(run: Path) -> list[str]:
    md = write_report(run)[0].read_text("utf-8")
    return [line[3:] for line in md.splitlines() if line.startswith("## ")]


def test_build_report_orders_sections(tmp_path: Path) -> None:
    run = make_run_dir(tmp_path / "run")
    assert _section_titles(run) == ["Overview", "Scores", "What ran"]
    run = make_run_dir(tmp_path / "cal", kinds=("calibration",))
    assert _section_titles(run) == ["Overview", "Agreement with people", "What ran"]


def test_a_sensitivity_study_shows_variants_not_one_leaderboard_per_judge(
    tmp_path: Path,
) -> None:
    run = make_run_dir(tmp_path / "run", kinds=("judges", "sensitivity"))
    md = write_report(run)[0].read_text("utf-8")
    titles = [line for line in md.splitlines() if line.startswith("## ")]
    assert titles == [
        "## Overview",
        "## Rubric sensitivity",
        "## Judgments: failures, tokens and cost",
        "## What ran",
    ]
    assert "### Leaderboard" not in md
    # τ against the base, with the verdicts of the fixture
    assert "| shuffled | 1.000 | [1.000, 1.000] (degenerate) | stable |" in md
    assert "| scale 1-7 | -1.000 | [-1.000, 0.200] | UNSTABLE |" in md
    # the flip, with the hostile name escaped
    assert r"| scale 1-7 | alpha > &lt;b>beta\|&lt;/b> | &lt;b>beta\|&lt;/b> > alpha |" in md
    # scores by variant, long format: variant, rank, model, score, interval, rank set; alpha,
    # judged in one conversation under scale 1-7, has no rank there (the one rule for claims)
    assert r"| scale 1-7 | 1 | &lt;b>beta\|&lt;/b> | 0.600 | [0.500, 0.700] | 1–2 |" in md
    assert "| scale 1-7 | — | alpha | 0.500 | [0.400, 0.600] | — |" in md
    assert "| base | 1 | alpha | 0.800 | [0.700, 0.900] | 1 |" in md
    assert "No rank claim (no rank or rank set): scale 1-7: alpha (only 1 conversation (" in md
    # the judge of base and shuffled is named by its variants
    assert f"| base, shuffled ({JUDGE_ID}) | 16 | 15 | 1 |" in md


def test_a_bench_run_shows_a_leaderboard_per_task_and_their_agreement(tmp_path: Path) -> None:
    run = make_run_dir(tmp_path / "run", kinds=("bench",))
    md = write_report(run)[0].read_text("utf-8")
    titles = [line for line in md.splitlines() if line.startswith("#")]
    assert titles == [
        "# attune-judge score report",
        "## Overview",
        "## Leaderboards per task",
        "### Task: drafting",
        "### Task: emotion",
        "## Do the tasks rank models alike?",
        "### Scores across tasks",
        # the bench-only sections, from the report's registry (`report RUN` = what `bench` wrote)
        "## All task metrics",
        "### drafting",
        "### emotion",
        "## Discriminability per task",
        "## What ran",
    ]
    assert "Kendall's W across tasks: 0.000 (χ² df = 1, p = 1.000)" in md
    # no verdicts in a bench run: the τ table has no verdict column
    assert "| emotion | -1.000 | [-1.000, 1.000] |\n" in md
    # per-task leaderboards keep their own score label and rank sets
    assert "| rank | model | f1 (0–1) |" in md
    assert (
        r"| 1 | &lt;b>beta\|&lt;/b> | 0.600 | [0.500, 0.700] | 16 | 4 | 1–2 | 1–2 | 90.0% |" in md
    )


@settings(max_examples=80, deadline=None)
@given(text=st.text(max_size=30))
def test_any_cell_text_keeps_the_table_shape(text: str) -> None:
    md = render_markdown(Report("T", [Section("S", [Table(["a", "b"], [[text, "x"]])])]))
    lines = md.splitlines()
    row = lines[lines.index("|---|---|") + 1]
    # one line per row, and exactly three unescaped pipes: | cell | x |
    assert len(re.findall(r"(?<!\\)\|", row)) == 3
    assert row.endswith("| x |")
    assert "<" not in row
