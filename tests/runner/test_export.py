"""``attune-judge export`` and ``load_run(RUN).to_pandas()``: the long table of a run."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest

import attune_judge
from attune_judge.cli import main
from tests.conftest import SAMPLES

# the long table's columns, in order: what a user's pandas or spreadsheet code relies on
EXPORT_COLUMNS = (
    *("judge_id", "jury_id", "judge_model", "item_id", "conversation_id", "turn"),
    *("candidate_model", "criterion", "value", "overall", "normalized", "verdict"),
    *("status", "error", "prompt_tokens", "completion_tokens", "calls", "cost_usd"),
    *("latency_s", "timestamp"),
)


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "run"
    argv = ["score", str(SAMPLES), "--rubric", "lexical", "-o", str(out), "-q"]
    assert _cli([*argv, "--models", "original,human_edited"]) == 0
    return out


def _judgments(run: Path) -> list[dict[str, object]]:
    with (run / "judgments.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_csv_has_one_row_per_item_criterion_and_judge(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.csv"
    assert _cli(["export", str(run), "-o", str(out)]) == 0
    with out.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    judgments = _judgments(run)
    expected = sum(max(1, len(j["scores"])) for j in judgments)  # type: ignore[arg-type]
    assert len(judgments) == 38  # 19 turns x 2 models
    assert len(rows) == expected > len(judgments)
    assert list(rows[0]) == list(EXPORT_COLUMNS)
    first = judgments[0]
    mine = [r for r in rows if r["item_id"] == first["item_id"]]
    assert {r["criterion"]: float(r["value"]) for r in mine} == pytest.approx(first["scores"])
    for row in mine:
        assert row["conversation_id"] == first["conversation_id"]
        assert row["turn"] == first["item_id"].split(":")[1]  # type: ignore[union-attr]
        assert row["status"] == "ok" and row["candidate_model"] == first["candidate_model"]


def test_parquet_and_jsonl_hold_the_same_table_as_load_run(run: Path, tmp_path: Path) -> None:
    frame = attune_judge.load_run(run).to_pandas()
    assert list(frame.columns) == list(EXPORT_COLUMNS)
    assert len(frame) == sum(len(j["scores"]) for j in _judgments(run))  # type: ignore[arg-type]
    assert set(frame["candidate_model"]) == {"original", "human_edited"}
    # human_edited is the reference itself: ROUGE-L 1 on every item
    ref = frame[(frame["candidate_model"] == "human_edited")]
    assert (ref["normalized"] == 1.0).all()
    pq = tmp_path / "t.parquet"
    assert _cli(["export", str(run), "--format", "parquet", "-o", str(pq)]) == 0
    back = pd.read_parquet(pq)
    pd.testing.assert_frame_equal(back, frame, check_dtype=False)
    jl = tmp_path / "t.jsonl"
    assert _cli(["export", str(run), "--format", "jsonl", "-o", str(jl)]) == 0
    with jl.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    assert [r["item_id"] for r in rows] == list(frame["item_id"])


def test_not_a_run_directory_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(["export", str(tmp_path), "-o", str(tmp_path / "x.csv")]) == 2
    err = capsys.readouterr().err
    assert "no judgments.jsonl" in err and "Traceback" not in err


def test_sums_over_the_export_equal_the_summary(tmp_path: Path) -> None:
    """A judgment's tokens, calls and cost are on its first row only: summing a column of the
    exported table gives the run's totals of summary.json (not once per criterion)."""
    from tests._openai_stub import openai_stub
    from tests.judging._stub_judges import requested_fields

    def reply(body: dict[str, object]) -> str:
        return json.dumps({n: "ok" if n == "rationale" else 4 for n in requested_fields(body)})

    out = tmp_path / "run"
    with openai_stub(reply) as server:
        argv = ["score", str(SAMPLES), "--lm", "openai/stub", "--api-base", server.url, "-q"]
        argv += ["--models", "original", "--price-in", "2.5", "--price-out", "10", "-o", str(out)]
        assert _cli(argv) == 0
    table = tmp_path / "t.csv"
    assert _cli(["export", str(out), "-o", str(table)]) == 0
    frame = pd.read_csv(table)
    judgments = _judgments(out)
    assert len(frame) == 4 * len(judgments)  # four criteria per judgment
    totals = json.loads((out / "summary.json").read_text("utf-8"))["run"]["totals"]
    assert frame["prompt_tokens"].sum() == totals["tokens"]["prompt"] > 0
    assert frame["completion_tokens"].sum() == totals["tokens"]["completion"] > 0
    assert frame["calls"].sum() == totals["tokens"]["calls"] == len(judgments)
    assert frame["cost_usd"].sum() == pytest.approx(totals["cost_usd"])
    # the stub reports 100 prompt and 20 completion tokens per request, priced by hand
    assert totals["cost_usd"] == pytest.approx(len(judgments) * (100 * 2.5 + 20 * 10) / 1e6)
    per_judgment = frame.groupby("item_id")["cost_usd"].count()
    assert (per_judgment == 1).all()  # exactly one row of each judgment carries its cost
