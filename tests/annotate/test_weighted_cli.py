"""End to end on the CLI: `annotate sample --by score` draws with unequal probabilities, people
label, `annotate export`, then `calibrate` and `rank --human` weight the labels by
1 / inclusion probability — their figures equal Hajek means computed here from the exported
file — and say so in the console, the summary and the report. A file where some labels lack
the probability is one line naming file, line and field, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from attune_judge.annotate import load_items, prepare
from attune_judge.cli import main
from attune_judge.data import Rating, read_jsonl, write_jsonl
from tests.annotate._fixtures import ATTUNEBENCH_CRITERIA as CRITERIA
from tests.annotate._fixtures import write_judge_run
from tests.conftest import REPO_ROOT

SAID = "weighted by 1/inclusion probability"


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    out = capsys.readouterr()
    return int(stop.value.code or 0), out.out, out.err


def _level(item: str) -> int:
    """The judge's level 1..7: a 7 on about two items in three (ties make unequal score bins)."""
    h = sum(map(ord, item))
    return 7 if h % 3 else 1 + h % 6


def _label(item: str, who: str) -> int:
    """A person's rating 1..7, fixed by item and person (not from the code under test)."""
    return 1 + (3 * sum(map(ord, item)) + 2 * (who == "ben")) % 7


@pytest.fixture
def exported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    data = REPO_ROOT / "data" / "samples" / "attunebench"
    items, _ = load_items(data, "attunebench-reference")
    run = tmp_path / "score"
    write_judge_run(run, items, _level, overall=True)
    drawn = tmp_path / "to-label.jsonl"
    argv = ["annotate", "sample", str(data), "--rubric", "attunebench-reference", "--n", "16"]
    argv += ["--by", "score", "--judge", str(run), "--strata", "2", "-o", str(drawn)]
    code, _, err = _cli(argv, capsys)
    assert code == 0, err
    store, _ = prepare(
        tmp_path / "labels.sqlite",
        drawn,
        task="ratings",
        rubric="attunebench-reference",
        k=2,
        annotators=["ana", "ben"],
    )
    for item in store.items():
        for who in ("ana", "ben"):
            answers = {c: _label(item.item_id, who) for c in CRITERIA}
            store.record(who, item.item_id, "label", answers)
    store.close()
    labels = tmp_path / "labels.jsonl"
    argv = ["annotate", "export", "--db", str(tmp_path / "labels.sqlite"), "-o", str(labels)]
    code, _, err = _cli(argv, capsys)
    assert code == 0, err
    return run, labels


def _hajek(labels: Path, dim: str) -> dict[str, tuple[float, float]]:
    """Item → (weight 1/π, mean of the people's values) on ``dim``, from the exported file."""
    values: dict[str, list[float]] = {}
    weight: dict[str, float] = {}
    for r in read_jsonl(labels, Rating):
        if r.dimension == dim:
            values.setdefault(r.item_id, []).append(float(r.value))  # type: ignore[arg-type]
            weight[r.item_id] = 1 / r.metadata["inclusion_probability"]
    return {i: (weight[i], float(np.mean(v))) for i, v in values.items()}


def test_calibrate_and_rank_human_weight_the_exported_labels(
    exported: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, labels = exported
    per_item = _hajek(labels, "overall_score")
    probs = sorted({round(1 / w, 6) for w, _ in per_item.values()})
    assert len(probs) == 2, probs  # two score bins of different sizes, 8 items drawn from each
    w = np.array([per_item[i][0] for i in sorted(per_item)])
    # calibrate: the judge vs the humans' median (two people: their mean), weighted MAE
    cal = tmp_path / "cal"
    argv = ["calibrate", "--human", str(labels), "--judge", str(run), "--B", "200"]
    argv += ["--dimension", "overall_score"]
    code, out, err = _cli([*argv, "-o", str(cal)], capsys)
    assert code == 0, err
    assert SAID in out
    summary = json.loads((cal / "summary.json").read_text("utf-8"))
    assert SAID in summary["label_weighting"]
    assert SAID in (cal / "report.md").read_text("utf-8")
    (dim,) = summary["calibration"]["report"]["dimensions"]
    assert dim["dimension"] == "overall_score"
    gap = np.array([abs(_level(i) - per_item[i][1]) for i in sorted(per_item)])
    mae = dim["judges"][0]["vs_humans"]["metrics"]["mae"]["estimate"]
    assert mae == pytest.approx(float(np.sum(w * gap) / np.sum(w)))
    assert mae != pytest.approx(float(gap.mean()), abs=1e-3)  # unweighted differs
    # rank --human: the human-only mean per model is the Hajek mean of the 0-1 mapped labels
    ppi = tmp_path / "ppi"
    argv = ["rank", str(run), "--human", str(labels), "--dimension", "overall_score"]
    code, out, err = _cli([*argv, "--human-scale", "1,7", "--report", str(ppi)], capsys)
    assert code == 0, err
    assert SAID in out
    summary = json.loads((ppi / "summary.json").read_text("utf-8"))
    assert SAID in summary["label_weighting"] and SAID in (ppi / "report.md").read_text("utf-8")
    models = {i.split(":")[-1] for i in per_item}
    rows = {r["model"]: r for r in summary["ppi"]["rows"]}
    assert set(rows) == models
    for m in models:
        mine = [per_item[i] for i in per_item if i.split(":")[-1] == m]
        ww = np.array([x for x, _ in mine])
        yy = (np.array([v for _, v in mine]) - 1) / 6
        assert rows[m]["human_only"]["estimate"] == pytest.approx(float(ww @ yy / ww.sum()))


def test_labels_missing_the_probability_on_some_lines_are_refused(
    exported: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, labels = exported
    lines = labels.read_text("utf-8").splitlines()
    third = json.loads(lines[2])
    del third["metadata"]["inclusion_probability"]
    lines[2] = json.dumps(third)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", "utf-8")
    for argv in (
        ["calibrate", "--human", str(bad), "--judge", str(run)],
        ["rank", str(run), "--human", str(bad), "--dimension", "overall_score"],
    ):
        code, _, err = _cli(argv, capsys)
        assert code == 2 and "Traceback" not in err, err
        assert "bad.jsonl:3: field metadata.inclusion_probability is missing" in err, err


def test_equal_probabilities_give_the_unweighted_figures_exactly(
    exported: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, labels = exported
    records = [json.loads(x) for x in labels.read_text("utf-8").splitlines()]
    files = {}
    for name, p in (("equal", 0.25), ("none", None)):
        for r in records:
            r["metadata"].pop("inclusion_probability")
            if p is not None:
                r["metadata"]["inclusion_probability"] = p
        files[name] = tmp_path / f"{name}.jsonl"
        files[name].write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    outs = {}
    for name, path in files.items():
        argv = ["calibrate", "--human", str(path), "--judge", str(run), "--B", "200", "--json"]
        code, cal_out, err = _cli([*argv, "--dimension", "overall_score"], capsys)
        assert code == 0, err
        argv = ["rank", str(run), "--human", str(path), "--dimension", "overall_score"]
        code, rank_out, err = _cli([*argv, "--human-scale", "1,7"], capsys)
        assert code == 0, err
        outs[name] = (cal_out.replace(path.name, "X"), rank_out.replace(path.name, "X"))
    assert outs["equal"] == outs["none"]
    assert SAID not in outs["none"][0] + outs["none"][1]
    assert '"mae"' in outs["none"][0] and "PPI++" in outs["none"][1]


def test_preference_agreement_says_it_is_not_weighted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from attune_judge.data import Preference

    def prefs(who: str, p: float | None) -> list[Preference]:
        return [
            Preference(
                item_id=f"c{n}:1:pairwise",
                option_a="m1",
                option_b="m2",
                winner="AB"[(n + (who == "judge") * (n % 3 == 0)) % 2],  # type: ignore[arg-type]
                rater=who,
                cluster=f"c{n}",
                metadata={} if p is None else {"inclusion_probability": p if n % 2 else 2 * p},
            )
            for n in range(24)
        ]

    human, judge = tmp_path / "human.jsonl", tmp_path / "judge.jsonl"
    write_jsonl(judge, prefs("judge", None))
    for p, said in ((0.2, True), (None, False)):
        write_jsonl(human, prefs("ana", p))
        argv = ["calibrate", "--human", str(human), "--judge", str(judge), "--B", "100"]
        code, out, err = _cli(argv, capsys)
        assert code == 0, err
        assert ("preference agreement is NOT weighted" in out) is said, out
        assert "agreement" in out
