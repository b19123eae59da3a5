"""Demo library (attune_judge.demo): recorded judges vs experts, DUO, validate with a fake judge.

Expected values come from hand computation or from the independent κ in
test_expert_agreement, never from the code under test.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any

import pytest
from scipy import stats

from attune_judge import shipped_dir
from attune_judge.data import JudgeItem, Judgment, Rating, read_jsonl, write_jsonl
from attune_judge.demo import run_demo
from attune_judge.errors import UserError
from attune_judge.runs import DemoSummary, DuoResult, read_summary
from attune_judge.validate import load_calibration_set, recorded_judges_vs_experts, validate_judge
from tests.adapters.test_expert_agreement import quadratic_kappa


def _r(item: str, rater: str, group: str, value: float, **meta: Any) -> Rating:
    return Rating(
        item_id=item,
        rater=rater,
        rater_group=group,
        dimension="d",
        value=value,
        cluster=item,
        metadata={"source": "s", **meta},
    )


def test_perfect_judge_reaches_one() -> None:
    # 3 experts agree exactly on 8 items; the judge copies them: κ_qw = ρ = 1 and the
    # leave-one-out ceilings are 1 for both the experts and the judge
    values = [1, 2, 3, 4, 5, 3, 2, 4]
    ratings = [
        _r(f"i{k}", who, "experts" if who != "gpt" else "llm", v)
        for k, v in enumerate(values)
        for who in ("expert1", "expert2", "expert3", "gpt")
    ]
    res = recorded_judges_vs_experts(ratings, judges=("gpt",), B=50)
    (row,) = res.rows
    assert row.kappa_qw is not None and row.kappa_qw.estimate == pytest.approx(1.0)
    assert row.spearman is not None and row.spearman.estimate == pytest.approx(1.0)
    assert row.kappa_ceiling_humans == pytest.approx(1.0)
    assert row.kappa_ceiling_judge == pytest.approx(1.0)


def _duo_of(run_dir: Path) -> DuoResult:
    summary = read_summary(run_dir)
    assert isinstance(summary, DemoSummary) and summary.duo is not None
    return summary.duo


def test_duo_group_means_by_hand(tmp_path: Path) -> None:
    # model A: 1, 2, 3 (mean 2); model B: 3, 4, 5 (mean 4); A - B = -2
    ratings = [
        Rating(
            item_id=f"d{k}",
            rater="participant",
            rater_group="participant",
            dimension="preference",
            value=float(v),
            cluster=f"d{k}",
            metadata={"language": "en", "model": m, "style_prompt": "x", "participant_id": f"p{k}"},
        )
        for k, (m, v) in enumerate([("A", 1), ("A", 2), ("A", 3), ("B", 3), ("B", 4), ("B", 5)])
    ]
    # demo part b on a DUO calibration set of these six ratings (no observers)
    write_jsonl(tmp_path / "sets" / "duo" / "ratings.jsonl", ratings)
    run_demo(tmp_path / "demo", B=200, parts=("b",), calibration_root=tmp_path / "sets")
    res = _duo_of(tmp_path / "demo")
    assert res.observer_agreement is None
    model = next(c for c in res.comparisons if c.factor == "model" and c.cluster_by == "dialogue")
    assert model.means["A"].estimate == pytest.approx(2.0)
    assert model.means["B"].estimate == pytest.approx(4.0)
    diff = model.differences["A − B"]
    assert diff.estimate == pytest.approx(-2.0)
    assert diff.lower is not None and diff.upper is not None and diff.lower <= -2.0 <= diff.upper


def test_demo_part_b_on_shipped_duo(tmp_path: Path) -> None:
    run = run_demo(tmp_path / "demo", B=100, parts=("b",))
    report = (tmp_path / "demo" / "report.md").read_text()
    assert "## b. DUO: observers vs participants; bot models and style prompts" in report
    assert "## a. " not in report and "## c. " not in report  # only the part asked for
    assert "(figures/duo-differences.png)" in report
    assert (tmp_path / "demo" / "figures" / "duo-differences.png").stat().st_size > 0
    assert run.report_html == str(tmp_path / "demo" / "report.html")
    assert (tmp_path / "demo" / "summary.json").exists()
    assert any("Spearman" in line for line in run.summary)
    duo = _duo_of(tmp_path / "demo")
    # 34 English participants (DUO README), 157 English dialogues
    by_part = next(c for c in duo.comparisons if c.cluster_by == "participant")
    by_dial = next(c for c in duo.comparisons if c.cluster_by == "dialogue")
    assert by_part.means[next(iter(by_part.means))].n_clusters <= 34
    assert sum(m.n for m in by_dial.means.values()) == 157
    assert duo.observer_agreement is not None
    join = duo.observer_agreement.dimensions[0].join
    assert (join.matched, join.right_only) == (50, 107)  # participants rated all 157


def test_unknown_demo_part(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="unknown demo part"):
        run_demo(tmp_path, parts=("z",))


class _CopyExpert1:
    """A fake judge that answers with expert1's ratings (no model)."""

    def __init__(self, ratings: list[Rating]) -> None:
        self.values: dict[tuple[str, str], float] = {
            (r.item_id, r.dimension): float(r.value)  # type: ignore[arg-type]
            for r in ratings
            if r.rater == "expert1"
        }
        self.spec = {"program": "copy-expert1"}
        self.judge_id = "copy-expert1"

    def judge(self, item: JudgeItem) -> Judgment:
        scores = {d: v for (i, d), v in self.values.items() if i == item.item_id}
        return Judgment(
            item_id=item.item_id,
            judge_id=self.judge_id,
            conversation_id=item.conversation_id,
            candidate_model=item.candidate_model,
            scores=scores,
            overall=sum(scores.values()) / len(scores),
        )


def test_validate_with_a_fake_judge(tmp_path: Path) -> None:
    ratings = load_calibration_set("empathic-communication")
    judge = _CopyExpert1(ratings)
    res = validate_judge(
        "empathic-communication-epitome", "copy", tmp_path / "v", limit=20, B=50, judge=judge
    )
    assert res.n_items == 20 and res.n_ok == 20
    assert (tmp_path / "v" / "report.md").exists()
    row = next(r for r in res.rows if r.judge == "copy" and r.dimension == "level_explorations")
    # independent: κ_qw of expert1 vs the median of the three experts on the same 20 items
    items = sorted({r.item_id for r in ratings if r.item_id.startswith("epitome:")})[:20]
    v = {(r.item_id, r.rater): r.value for r in ratings if r.dimension == "level_explorations"}
    e1 = [float(v[(i, "expert1")]) for i in items]  # type: ignore[arg-type]
    med = [
        float(statistics.median(float(v[(i, e)]) for e in ("expert1", "expert2", "expert3")))  # type: ignore[arg-type]
        for i in items
    ]
    assert row.kappa_qw is not None
    assert row.kappa_qw.estimate == pytest.approx(quadratic_kappa(e1, med))
    assert {r.judge for r in res.rows} == {"copy", "gpt", "claude", "gemini", "crowd"}
    # the run directory's report: the hand-written summary kept as validation.md, the full
    # report with the recorded judges' heatmap and the new judge's confusion / calibration plots
    v = tmp_path / "v"
    assert (
        "# Validating `copy` on `empathic-communication-epitome`"
        in (v / "validation.md").read_text()
    )
    md = (v / "report.md").read_text()
    assert md.startswith("# attune-judge validate: copy on empathic-communication-epitome")
    for heading in (
        "## Validating copy on empathic-communication-epitome",
        "### The judge beside the recorded judges and people",
        "### All statistics",
        "### Agreement with the people, per dimension",
        "## What ran (the judge run in run/)",
    ):
        assert heading in md, heading
    for fig in ("recorded-judges-kappa", "calibration-level-explorations-confusion"):
        assert (v / "figures" / f"{fig}.png").stat().st_size > 0
    assert "data:image/png;base64," in (v / "report.html").read_text()
    # the baselines beside the judge, on the same 20 items: ρ(length, expert median) by scipy
    summary = json.loads((v / "summary.json").read_text())
    base = summary["baselines"]["dimensions"]["level_explorations"]["agreement"]
    by_id = {i.item_id: i for i in read_jsonl(v / "items.jsonl", JudgeItem)}
    # the length baseline counts lower-cased word tokens (\w+), written out here
    words = [len(re.findall(r"\w+", by_id[i].candidate.lower())) for i in items]
    assert base["spearman"]["length"]["estimate"] == pytest.approx(
        stats.spearmanr(words, med).statistic
    )
    assert base["spearman"]["judge"]["estimate"] == pytest.approx(
        stats.spearmanr(e1, med).statistic
    )
    assert base["difference"]["lexicon"]["lower"] is not None
    assert set(summary["baselines"]["dimensions"]) == {
        "level_emotional_reactions",
        "level_explorations",
        "level_interpretations",
        "total",
    }
    assert "## Beside the no-model baselines" in (v / "validation.md").read_text()
    assert any("judge − length" in line for line in res.summary)


def test_validate_unknown_set(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="unknown set"):
        validate_judge("nope", "local", tmp_path)


def test_demo_part_c_with_an_injected_judge(tmp_path: Path) -> None:
    judge = _CopyExpert1(load_calibration_set("empathic-communication"))
    run = run_demo(
        tmp_path / "d", B=50, parts=("c",), local_items=5, local_lm="copy", local_judge=judge
    )
    report = (tmp_path / "d" / "report.md").read_text()
    assert "## c. The embedded local judge (copy) on 5 EPITOME conversations" in report
    assert (tmp_path / "d" / "c-local-judge" / "run" / "judgments.jsonl").is_file()
    # the part's own validate report, and its figures folded into the demo's report
    assert (tmp_path / "d" / "c-local-judge" / "report.html").is_file()
    for kind in ("heatmap", "confusion", "calibration"):
        assert f"(figures/calibration-level-explorations-{kind}.png)" in report
    assert run.summary[0].startswith("c. empathic-communication-epitome")
    # no shipped calibration head for this model: the set's first five items by id
    items = read_jsonl(tmp_path / "d" / "c-local-judge" / "items.jsonl", JudgeItem)
    every = read_jsonl(shipped_dir("data") / "empathic-communication" / "items.jsonl", JudgeItem)
    first = sorted(i.item_id for i in every if i.metadata.get("source") == "epitome")[:5]
    assert [i.item_id for i in items] == first
    assert "calibrated" not in json.loads(
        (tmp_path / "d" / "c-local-judge" / "summary.json").read_text()
    )


class _ItemHashJudge:
    """A fake judge scoring every criterion 1-5 from a hash of the item id (no model)."""

    def __init__(self, criteria: list[str]) -> None:
        self.criteria = criteria
        self.spec = {"program": "hash"}
        self.judge_id = "hash"

    def judge(self, item: JudgeItem) -> Judgment:
        h = sum(map(ord, item.item_id))
        scores = {c: float(1 + (h + k) % 5) for k, c in enumerate(self.criteria)}
        return Judgment(
            item_id=item.item_id,
            judge_id=self.judge_id,
            conversation_id=item.conversation_id,
            scores=scores,
        )


@pytest.mark.parametrize(
    ("name", "criteria", "judges"),
    [
        (
            "duo",
            ["preference", "empathy", "consistency", "stylistic_similarity"],
            {"fake", "participant"},
        ),
        ("esconv", ["empathy", "relevance"], {"fake"}),
    ],
)
def test_validate_other_sets(tmp_path: Path, name: str, criteria: list[str], judges: set) -> None:
    res = validate_judge(
        name, "fake", tmp_path / name, limit=12, B=50, judge=_ItemHashJudge(criteria)
    )
    assert res.n_items == 12 and res.n_ok == 12
    assert {r.judge for r in res.rows} == judges
    assert {r.dimension for r in res.rows} == set(criteria)
    # DUO has three observers (a ceiling); ESConv one seeker per conversation (none)
    fake = [r for r in res.rows if r.judge == "fake"]
    assert all((r.spearman_ceiling_humans is not None) == (name == "duo") for r in fake)
