"""``attune-judge view`` and ``report --items``: the index's filters, sorts and joins against
values worked out from the fixture's own construction, the pages' escaping, the read-only app,
the index's rebuild when the run changes, the static file's links, the command line.

The viewer is the app ``attune_judge.annotate.view`` serves (``uvicorn.run`` is replaced by a
function that keeps the app, driven with Starlette's test client): its filters and sorts are
the query strings of its pages, its results the rows of their tables.
"""

from __future__ import annotations

import json
import re
import socket
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from starlette.testclient import TestClient

from attune_judge.annotate import view
from attune_judge.cli import main
from attune_judge.data import ChatMessage, Judgment, Preference, write_jsonl
from tests.annotate._view_fixtures import HOSTILE, LONG_MODEL, write_view_run

N_CONV = 6
DIFF = "|judge − people|"


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTUNE_VIEW_CACHE", str(tmp_path / "cache"))


def _viewer(monkeypatch: pytest.MonkeyPatch, run: Path, human: Path | None = None) -> TestClient:
    """The app ``view`` serves for ``run`` (indexed now), without a socket."""
    import uvicorn

    served: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.update(app=app))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    view(run, human=human, port=port)
    return TestClient(served["app"], base_url="http://127.0.0.1")


class _Tables(HTMLParser):
    """Every ``<table>`` of a page: its class, header cells and rows of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[str, list[str], list[list[str]]]] = []
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._head = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append((dict(attrs).get("class") or "", [], []))
        elif tag == "thead":
            self._head = True
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "thead":
            self._head = False
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip().rstrip(" ▲▼"))
            self._cell = None
        elif tag == "tr" and self._row is not None and self.tables:
            _, head, rows = self.tables[-1]
            head.extend(self._row) if self._head else rows.append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _tables(html: str, cls: str) -> list[list[dict[str, str]]]:
    """The tables of class ``cls``, each as its rows (header -> cell text)."""
    parser = _Tables()
    parser.feed(html)
    return [
        [dict(zip(head, row, strict=True)) for row in rows]
        for name, head, rows in parser.tables
        if name == cls
    ]


def _rows(client: TestClient, **params: str) -> list[dict[str, str]]:
    """The judgments table of run 0 for a query string (up to 500 rows, one page)."""
    page = client.get(f"/r/0/?{urlencode({'per': '500', **params})}")
    assert page.status_code == 200
    tables = _tables(page.text, "judgments")
    return tables[0] if tables else []


def _people_warmth(c: int) -> float:
    return float(1 + c % 5)


def _expected_rows() -> list[dict[str, object]]:
    """The fixture's current judgments, worked out from its docstring (not from the index)."""
    out = []
    for c in range(N_CONV):
        for k in range(2):
            ok = (c, k) != (1, 1)
            fit = float(1 + (c + k) % 5)
            diffs = {"warmth": abs(5 - _people_warmth(c)), "fit": 0.0} if ok else {}
            out.append({"item": f"c{c}:1:{k}", "k": k, "ok": ok, "fit": fit, "diffs": diffs})
    return out


def test_index_filters_sorts_and_joins_people(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, labels = write_view_run(tmp_path / "run", N_CONV)
    client = _viewer(monkeypatch, run, labels)
    expected = _expected_rows()
    assert len(_rows(client)) == len(expected) == 12  # the re-judged item counts once
    assert len(_rows(client, all="1")) == 13
    assert len(_rows(client, status="__failed__")) == 1
    assert [r["item"] for r in _rows(client, status="parse_error")] == ["c1:1:1"]
    assert len(_rows(client, model=LONG_MODEL)) == N_CONV
    want_fit4 = sorted(str(e["item"]) for e in expected if e["ok"] and e["fit"] >= 4)  # type: ignore[operator]
    got = _rows(client, criterion="fit", lo="4")
    assert sorted(r["item"] for r in got) == want_fit4
    assert [r["item"] for r in _rows(client, q="REASON 3")] == ["c3:1:0", "c3:1:1"]
    # |judge - people's median| on warmth, largest first, ties in the run's order
    (worst,) = _tables(client.get("/").text, "worst")
    order = sorted(
        (e for e in expected if e["ok"] and e["diffs"]["warmth"] > 0),  # type: ignore[index]
        key=lambda e: -e["diffs"]["warmth"],  # type: ignore[index]
    )
    assert [r["item (open)"] for r in worst] == [e["item"] for e in order[:5]]
    assert [float(r[DIFF]) for r in worst] == [4.0, 4.0, 4.0, 4.0, 3.0]
    by_diff = _rows(client, sort="diff", desc="1", per="3")
    assert [float(r[DIFF]) for r in by_diff] == [4.0, 4.0, 4.0]
    # the confusion table: the judge always says 5, the people 1 + c % 5
    page = client.get("/r/0/disagreements").text
    worst_fit, _ = _tables(page, "worst")  # the sections in criterion order: fit, warmth
    _, warmth = _tables(page, "confusion")
    cells = {
        (row["judge ↓ / people →"], people): int(count)
        for row in warmth
        for people, count in row.items()
        if people != "judge ↓ / people →" and count != "·"
    }
    want: dict[tuple[str, str], int] = {}
    for e in expected:
        if e["ok"]:
            c = int(str(e["item"])[1])
            key = ("5", f"{_people_warmth(c):g}")
            want[key] = want.get(key, 0) + 1
    assert cells == want
    cell = _rows(client, criterion="warmth", jv="5", hv="1", joined="1")
    assert sorted(r["item"] for r in cell) == ["c0:1:0", "c0:1:1", "c5:1:0", "c5:1:1"]
    assert worst_fit == []  # the people agree with the judge on fit everywhere


def _text_of(html: str) -> str:
    class Text(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.parts: list[str] = []
            self.tags: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.tags.append(tag)

        def handle_data(self, data: str) -> None:
            self.parts.append(data)

    parser = Text()
    parser.feed(html)
    assert "script" not in parser.tags and "img" not in parser.tags
    return "".join(parser.parts)


def test_pages_escape_every_run_text_and_the_app_is_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, labels = write_view_run(tmp_path / "run", N_CONV)
    client = _viewer(monkeypatch, run, labels)
    (first,) = _rows(client, q="c0:1:1")
    pages = ["/", "/r/0/", "/r/0/disagreements", f"/r/0/j/{first['#']}", "/r/0/j/4"]
    for url in pages:
        got = client.get(url)
        assert got.status_code == 200, url
        assert "script-src" not in got.headers["content-security-policy"]  # no script at all
        text = _text_of(got.text)  # no <script> or <img> element anywhere
        if url.startswith("/r/0/j/") or url == "/":
            assert HOSTILE in text, url  # shown, as text
    page = client.get(f"/r/0/j/{first['#']}").text
    for shown in ("I feel low (c0).", "Reply of model 1 in c0.", "Reference ", "reason 0"):
        assert shown in _text_of(page)
    assert "ann2" in page and "expected 4.80, mode 5" in page
    failed = _text_of(client.get("/r/0/j/4").text)
    assert "Failed: parse_error" in failed and "reason: invalid_value" in failed
    assert "garbled" in failed  # the raw output of a parse failure
    assert client.post("/r/0/").status_code == 405
    assert client.get("/r/0/j/999").status_code == 404
    assert client.get("/r/7/").status_code == 404
    assert client.get("/", headers={"host": "evil.example:80"}).status_code == 421


def test_the_index_follows_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run, labels = write_view_run(tmp_path / "run", N_CONV)
    assert len(_rows(_viewer(monkeypatch, run, labels))) == 12
    extra = Judgment(item_id="c9:1:0", judge_id="judge-x", candidate_model="m9", scores={"fit": 2})
    with (run / "judgments.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(extra.model_dump_json() + "\n")
        fh.write('{"item_id": "c9:1:1", "judge_id": "ju')  # a killed writer's torn line
    client = _viewer(monkeypatch, run, labels)
    assert len(_rows(client)) == 13
    assert len(_rows(client, model="m9")) == 1
    assert "People's labels" in client.get("/").text
    assert "People's labels" not in _viewer(monkeypatch, run).get("/").text


def test_pairs_show_both_orders_and_people_in_the_judgments_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from attune_judge.judges import pairwise_item

    run = tmp_path / "pairs"
    run.mkdir()
    item = pairwise_item(
        "c0:1:pair:m1:m2",
        "c0",
        [ChatMessage(role="user", content="Hello")],
        "A text",
        "B text",
        option_a="m1",
        option_b="m2",
        turn=1,
    )
    write_jsonl(run / "items.jsonl", [item])
    details = {
        "order_ab": "A",
        "order_ba": "A",
        "order_ba_mapped": "B",
        "option_a": "m1",
        "option_b": "m2",
        "rationale_ba": "second order " + HOSTILE,
    }
    judgment = Judgment(
        item_id=item.item_id,
        judge_id="pw",
        candidate_model="m1",
        verdict="inconsistent",
        rationale="first order",
        details=details,
        scores={"a_win": 1.0},
    )
    write_jsonl(run / "judgments.jsonl", [judgment])
    # the person saw the options the other way round and chose m1 (their B)
    human = tmp_path / "prefs.jsonl"
    write_jsonl(
        human,
        [Preference(item_id=item.item_id, option_a="m2", option_b="m1", winner="B", rater="p1")],
    )
    client = _viewer(monkeypatch, run, human)
    (row,) = _rows(client)
    assert float(row[DIFF]) == 0.0  # the person's m1 is the judge's A: a_win 1 on both sides
    text = _text_of(client.get(f"/r/0/j/{row['#']}").text)
    for shown in ("Order A, B", "Order B, A", "first order", "second order", "B (m1)", "B text"):
        assert shown in text


def test_report_items_writes_one_static_file_whose_links_resolve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, labels = write_view_run(tmp_path / "run", N_CONV)
    with pytest.raises(SystemExit) as stop:
        main(["report", str(run), "--items", "--human", str(labels)])
    assert stop.value.code in (0, None)
    html = (run / "items.html").read_text("utf-8")
    assert str(run / "items.html") in capsys.readouterr().out
    ids = set(re.findall(r'id="([^"]+)"', html))
    hrefs = re.findall(r'href="([^"]+)"', html)
    assert hrefs and all(h.startswith("#") for h in hrefs)  # self-contained: anchors only
    assert {h[1:] for h in hrefs} <= ids
    assert "<script" not in html and "&lt;script&gt;" in html
    assert html.count('class="judgment"') == 12


def test_view_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for argv, needle in (
        (["view", str(tmp_path / "nope")], "no such run directory"),
        (["view", str(empty)], "no judgments.jsonl here"),
    ):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        err = capsys.readouterr().err
        assert stop.value.code == 2 and needle in err and "Traceback" not in err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "judgments.jsonl").write_text('{"item_id": "x", "judge_id": "j"}\nnot json\n{}\n')
    with pytest.raises(SystemExit) as stop:
        main(["view", str(bad)])
    assert stop.value.code == 2 and "judgments.jsonl:2: not valid JSON" in capsys.readouterr().err


def _run_names(home: str) -> list[str]:
    return re.findall(r'<h2>(.*?) <span class="kind">', home)


def test_runs_are_found_below_the_folder_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_view_run(tmp_path / "demo" / "a", 2)
    write_view_run(tmp_path / "demo" / "b" / "run", 2)
    assert _run_names(_viewer(monkeypatch, tmp_path / "demo").get("/").text) == ["a", "b/run"]
    # b/run's items are beside the log; a validate folder keeps them one level up
    (tmp_path / "demo" / "b" / "run" / "items.jsonl").rename(
        tmp_path / "demo" / "b" / "items.jsonl"
    )
    client = _viewer(monkeypatch, tmp_path / "demo")
    page = _text_of(client.get("/r/1/j/1").text)
    assert "Reply of model 0 in c0." in page and "I feel low (c0)." in page  # the item found
    assert json.loads((tmp_path / "demo" / "a" / "judgments.jsonl").read_text().splitlines()[0])


def test_a_validate_folder_joins_its_sets_people(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``validate -o DIR``: the judgments in DIR/run, the items in DIR, the people from the
    shipped set DIR/summary.json names; each expert's value shown as the shipped file has it."""
    from attune_judge.data import JudgeItem
    from attune_judge.runs import ValidateSummary, ValidationInfo, write_summary
    from attune_judge.validate import VALIDATION_SETS, load_calibration_set

    spec = VALIDATION_SETS["empathic-communication-epitome"]
    people = [r for r in load_calibration_set(spec.calibration) if spec.humans(r)]
    ids = sorted({r.item_id for r in people})[:3]
    folder = tmp_path / "val"
    (folder / "run").mkdir(parents=True)
    items = [
        JudgeItem(item_id=i, conversation_id=i, context=[], candidate="c", candidate_model="h")
        for i in ids
    ]
    write_jsonl(folder / "items.jsonl", items)
    dims = sorted({r.dimension for r in people if r.item_id == ids[0]})
    judged = [
        Judgment(item_id=i, judge_id="j", candidate_model="h", scores=dict.fromkeys(dims, 2.0))
        for i in ids
    ]
    write_jsonl(folder / "run" / "judgments.jsonl", judged)
    info = ValidationInfo(
        set_name=spec.name,
        lm="x",
        judge_name="x",
        rubric=spec.rubric,
        description="d",
        n_items=3,
        n_ok=3,
        n_failed={},
        failure_reasons={},
        distinct_score_vectors=1,
        B=50,
        seed=0,
    )
    write_summary(folder, ValidateSummary(validation=info))
    client = _viewer(monkeypatch, folder)
    home = client.get("/").text
    assert '<span class="kind">validate</span>' in home
    assert spec.name in _text_of(home).split("People's labels:", 1)[1].split("\n", 1)[0]
    (row,) = _rows(client, q=ids[0])
    mine = [r for r in people if r.item_id == ids[0] and r.dimension == dims[0]]
    values = sorted(float(r.value) for r in mine)  # type: ignore[arg-type]
    half = len(values) // 2
    median = values[half] if len(values) % 2 else (values[half - 1] + values[half]) / 2
    (scores,) = _tables(client.get(f"/r/0/j/{row['#']}").text, "scores")
    (first,) = [r for r in scores if r["criterion"] == dims[0]]
    assert float(first["people (median)"]) == median
    assert float(first[DIFF]) == abs(2.0 - median)
    shown = {(rater, value) for rater, value in first.items() if rater in {r.rater for r in mine}}
    assert shown == {(r.rater, f"{float(r.value):g}") for r in mine}  # type: ignore[arg-type]
