"""No claim without the data behind it (issue 42): one rule for every ranking.

A statistic without a valid interval (too few conversations, none, zero width) makes no
ordering claim: rank set ``[1, p]``, no tier, no P(rank 1), nothing "distinguishable" — and it
is listed with the reason. The case of the issue: a model seen in one conversation next to two
models seen in twelve.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from attune_judge import calibration as cal
from attune_judge.calibration import fmt_estimate, fmt_metric, interval_endpoints
from attune_judge.cli import main
from attune_judge.data import ChatMessage, JudgeItem, Judgment, Rating, write_jsonl
from attune_judge.report import Note, Table, leaderboard_section
from attune_judge.runner import PairwiseRanking
from attune_judge.validate import pairwise_ranking_markdown


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(argv)
        code = 0
    except SystemExit as ex:
        code = int(ex.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def _scores() -> tuple[list[str], list[str], list[float]]:
    """m1 and m2 in 12 conversations (3 turns each), m3 in one conversation with a high score."""
    rng = np.random.default_rng(7)
    models, clusters, scores = [], [], []
    for c in range(12):
        for m, mu in (("m1", 0.55), ("m2", 0.5)):
            for _ in range(3):
                models.append(m)
                clusters.append(f"c{c}")
                scores.append(float(np.clip(mu + rng.normal(0, 0.15), 0.01, 0.99)))
    for s in (0.8, 0.82, 0.79):
        models.append("m3")
        clusters.append("c0")
        scores.append(s)
    return models, clusters, scores


def test_a_one_conversation_model_gets_no_rank_claim_in_the_leaderboard() -> None:
    lb = cal.leaderboard(*_scores(), B=400, seed=1)
    row = {r.model: r for r in lb.rows}
    m3 = row["m3"]
    # before: rank set [1, 1], its own tier and P(rank 1) ≈ 1
    assert m3.no_rank_claim is not None and "only 1 conversation " in m3.no_rank_claim
    assert m3.rank_set_simultaneous == (1, 3) and m3.rank_set_marginal == (1, 3)
    assert m3.p_rank_1 is None
    assert all("m3" not in t for t in lb.tiers)
    # the two others may be ranked, with room for m3 anywhere: their sets end at 3
    for m in ("m1", "m2"):
        assert row[m].no_rank_claim is None
        assert row[m].rank_set_simultaneous[1] == 3
        assert row[m].p_rank_1 is not None
    assert row["m1"].p_rank_1 + row["m2"].p_rank_1 == pytest.approx(1.0)  # type: ignore[operator]
    assert lb.rows[-1].model == "m3"  # listed last, with the reason
    assert any(w.startswith("m3: no rank claim") for w in lb.warnings)
    md = cal.leaderboard_markdown(lb)
    line = next(x for x in md.splitlines() if x.startswith("| — | m3 |"))
    assert "| — | — |" in line  # no rank sets, no P(rank 1)
    assert "No rank claim" in md and "m3 (only 1 conversation " in md
    lb2 = cal.Leaderboard.model_validate(json.loads(lb.model_dump_json()))
    assert lb2.rows[-1].no_rank_claim == m3.no_rank_claim


def test_the_report_shows_no_rank_set_for_a_model_without_a_claim() -> None:
    lb = cal.leaderboard(*_scores(), B=400, seed=1)
    section = leaderboard_section(lb)
    table = next(b for b in section.blocks if isinstance(b, Table))
    m3 = next(r for r in table.rows if r[1] == "m3")
    assert m3[0] == "—"  # no rank
    i = table.columns.index("rank set (simultaneous)")
    assert m3[i] == "—" and m3[table.columns.index("P(rank 1)")] == "—"
    notes = [b.text for b in section.blocks if isinstance(b, Note)]
    assert any("No rank claim" in n and "m3" in n for n in notes)


def test_rank_cli_on_a_scores_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "scores.jsonl"
    f.write_text(
        "".join(
            json.dumps({"model": m, "cluster": c, "score": s}) + "\n"
            for m, c, s in zip(*_scores(), strict=True)
        )
    )
    code, out, _ = _run(["rank", str(f), "-B", "400", "--json"], capsys)
    assert code == 0
    rows = {r["model"]: r for r in json.loads(out)["rows"]}
    assert rows["m3"]["no_rank_claim"] and rows["m3"]["p_rank_1"] is None
    assert rows["m3"]["rank_set_simultaneous"] == [1, 3]


def _pairs() -> tuple[list[str], list[str], list[str], list[str]]:
    """m1 vs m2 in 12 conversations; m3 compared (won 3, lost 1) in conversation c0 only."""
    rng = np.random.default_rng(3)
    a, b, w, c = [], [], [], []
    for conv in range(12):
        for _ in range(6):
            a.append("m1")
            b.append("m2")
            w.append("A" if rng.random() < 0.6 else "B")
            c.append(f"c{conv}")
    for win in ("A", "A", "A", "B"):
        a.append("m3")
        b.append("m1" if win == "A" else "m2")
        w.append(win)
        c.append("c0")
    return a, b, w, c


@pytest.mark.parametrize("method", ["studentized", "percentile"])
def test_bradley_terry_makes_no_claim_for_a_model_compared_in_one_conversation(
    method: cal.IntervalMethod,
) -> None:
    res = cal.bradley_terry(*_pairs(), B=300, seed=2, method=method)
    j = res.labels.index("m3")
    assert "m3" in res.no_rank_claim
    assert res.strengths[j].n_clusters == 1
    assert res.rank_sets_simultaneous.lower[j] == 1 and res.rank_sets_simultaneous.upper[j] == 3
    assert res.rank_probabilities.p_rank_1[j] is None
    table = pairwise_ranking_markdown([PairwiseRanking(res.labels, res)])
    line = next(x for x in table.splitlines() if "| m3 |" in x)
    assert line.startswith("| — | m3 |") and "| — | — |" in line
    assert "No rank claim" in table
    # the two models compared in 12 conversations keep their intervals and their claims
    # (before: m3, absent from a third of the resamples, took every interval with it)
    assert set(res.no_rank_claim) == {"m3"}
    p1 = res.rank_probabilities.p_rank_1
    for m in ("m1", "m2"):
        i = res.labels.index(m)
        st = res.strengths[i]
        assert st.lower is not None and st.upper is not None and st.lower < st.upper
        assert st.n_undefined_replicates == 0
        assert p1[i] is not None and res.rank_sets_simultaneous.upper[i] == 3
    assert p1[res.labels.index("m1")] + p1[res.labels.index("m2")] == pytest.approx(1.0)  # type: ignore[operator]
    assert res.n_used == 300
    # every replicate: m1 and m2 centred on each other; where c0 is not drawn, m3 is
    # undefined and m1's strength is half the log-odds of the m1-m2 wins drawn (the
    # two-model Bradley-Terry MLE written out)
    i1, i2 = res.labels.index("m1"), res.labels.index("m2")
    reps = res.replicates
    assert np.allclose(reps[:, i1] + reps[:, i2], 0, atol=1e-9)
    a, b, w, c = _pairs()
    clusters = sorted(set(c))
    weights = cal.bootstrap_weights(len(clusters), 300, 2, "multinomial")
    won = np.zeros(len(clusters))
    lost = np.zeros(len(clusters))
    for x, y, v, k in zip(a, b, w, c, strict=True):
        if {x, y} == {"m1", "m2"}:
            m1_won = (v == "A") == (x == "m1")
            (won if m1_won else lost)[clusters.index(k)] += 1
    without_c0 = weights[:, clusters.index("c0")] == 0
    assert 50 < without_c0.sum() < 250
    assert np.isnan(reps[without_c0, j]).all() and np.isfinite(reps[~without_c0, j]).all()
    expected = 0.5 * np.log((weights @ won) / (weights @ lost))
    assert np.allclose(reps[without_c0, i1], expected[without_c0], atol=1e-7)


def test_a_thin_model_that_never_lost_in_a_resample_leaves_the_others_alone() -> None:
    # m3 compared in 3 conversations (c0: won 3, lost 1; c1: won 2; c2: lost 1): a resample
    # without c0 and c2 has no MLE (m3 unbeaten); m3's strength there is +inf and the
    # others' is the fit without m3's comparisons. Before, such resamples (with those where
    # m3 is absent or never won, about half) were dropped for every model.
    a, b, w, c = _pairs()
    a += ["m3", "m3", "m3"]
    b += ["m1", "m2", "m1"]
    w += ["A", "A", "B"]
    c += ["c1", "c1", "c2"]
    res = cal.bradley_terry(a, b, w, c, B=300, seed=4)
    assert set(res.no_rank_claim) == {"m3"} and res.n_separated == 0 and res.n_used == 300
    assert res.note is not None and "never lost or never won there" in res.note
    j = res.labels.index("m3")
    i1 = res.labels.index("m1")
    clusters = sorted(set(c))
    weights = cal.bootstrap_weights(len(clusters), 300, 4, "multinomial")
    won = np.zeros(len(clusters))
    lost = np.zeros(len(clusters))
    for x, y, v, k in zip(a, b, w, c, strict=True):
        if {x, y} == {"m1", "m2"}:
            m1_won = (v == "A") == (x == "m1")
            (won if m1_won else lost)[clusters.index(k)] += 1
    unbeaten = (weights[:, clusters.index("c2")] == 0) & (weights[:, clusters.index("c0")] == 0)
    assert unbeaten.sum() > 20
    assert np.isnan(res.replicates[unbeaten, j]).all()
    expected = 0.5 * np.log((weights @ won) / (weights @ lost))
    assert np.allclose(res.replicates[unbeaten, i1], expected[unbeaten], atol=1e-7)
    for m in ("m1", "m2"):
        st = res.strengths[res.labels.index(m)]
        assert st.lower is not None and st.upper is not None


def test_bradley_terry_table_gives_no_rank_to_a_model_without_a_rank_claim() -> None:
    # six conversations: no model makes a rank claim, so none is given a rank 1, 2, 3
    a = ["x", "y", "z"] * 6
    b = ["y", "z", "x"] * 6
    w = ["A", "A", "A", "B", "B", "B"] * 3
    c = [i % 6 for i in range(18)]
    res = cal.bradley_terry(a, b, w, c, B=200)
    assert set(res.no_rank_claim) == {"x", "y", "z"}
    table = pairwise_ranking_markdown([PairwiseRanking(res.labels, res)])
    rows = [x for x in table.splitlines() if x.startswith("| ") and "| n |" not in x]
    assert len(rows) == 3 and all(x.startswith("| — |") for x in rows), rows


def _ppi_run(tmp_path: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(5)
    judgments, ratings = [], []
    for c in range(12):
        u = rng.normal(0, 0.4)
        for m, mu in (("m1", 3.0), ("m2", 3.4)):
            for t in range(2):
                y = float(np.clip(np.round(mu + u + rng.normal(0, 0.6)), 1, 7))
                f = float(np.clip(y + rng.normal(0, 0.4), 1, 7))
                item = f"c{c}:{m}:{t}"
                judgments.append(
                    Judgment(
                        item_id=item,
                        judge_id="J",
                        conversation_id=f"c{c}",
                        candidate_model=m,
                        overall=f,
                        normalized=(f - 1) / 6,
                    )
                )
                ratings.append(Rating(item_id=item, rater="p", value=y, cluster=f"c{c}"))
    for t, y in enumerate((6.0, 6.0, 5.0)):  # m3: one conversation, two of its items labelled
        item = f"c0:m3:{t}"
        judgments.append(
            Judgment(
                item_id=item,
                judge_id="J",
                conversation_id="c0",
                candidate_model="m3",
                overall=y,
                normalized=(y - 1) / 6,
            )
        )
        if t < 2:
            ratings.append(Rating(item_id=item, rater="p", value=y, cluster="c0"))
    run = tmp_path / "run"
    run.mkdir()
    write_jsonl(run / "judgments.jsonl", judgments)
    write_jsonl(tmp_path / "human.jsonl", ratings)
    return run, tmp_path / "human.jsonl"


def test_rank_human_makes_no_claim_for_a_model_labelled_in_one_conversation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, human = _ppi_run(tmp_path)
    code, out, err = _run(
        ["rank", str(run), "--human", str(human), "--human-scale", "1,7", "--json"], capsys
    )
    assert code == 0, err
    data = json.loads(out)
    row = {r["model"]: r for r in data["rows"]}
    assert row["m3"]["no_rank_claim"] and row["m1"]["no_rank_claim"] is None
    for d in data["differences"]:
        if "m3" in (d["model_a"], d["model_b"]):
            assert d["distinguishable"] is False  # before: m3 − m1 "distinguishable: yes"
    assert "m3: no rank claim" in err
    code, md, _ = _run(["rank", str(run), "--human", str(human), "--human-scale", "1,7"], capsys)
    assert "| — | m3 |" in md
    assert "no claim (m3: no rank claim)" in md


def test_no_interval_reason_is_the_real_one() -> None:
    # 3% of the replicates undefined withholds nothing: an interval missing for another
    # reason (degenerate replicates) must say that, not "3% of replicates undefined"
    m = cal.Metric(
        name="x",
        estimate=0.2,
        B=1000,
        n_undefined_replicates=30,
        note="no interval: degenerate replicates",
    )
    assert "3%" not in fmt_metric(m)
    assert "degenerate" in fmt_metric(m)
    many = cal.Metric(name="x", estimate=0.2, B=1000, n_undefined_replicates=360)
    assert "36% of replicates undefined" in fmt_metric(many)


def test_zero_width_is_detected_up_to_rounding() -> None:
    # replicates of identical values that differ by rounding only: [0.0, 5.6e-17]
    reps = np.array([0.0, 5.551115123125783e-17] * 50)
    e = interval_endpoints(0.0, reps, method="percentile")
    assert e.note is not None and "zero-width" in e.note
    assert fmt_estimate(0.0, 0.0, 5.551115123125783e-17).endswith("(degenerate)")


def _alpha_table(judge_only: int) -> cal.RatingTable:
    """Two people and a judge on 12 conversations (3 items each), plus ``judge_only``
    conversations that only the judge rated."""
    rng = np.random.default_rng(11)
    items, values, clusters = [], [], []
    for c in range(12):
        for t in range(3):
            truth = rng.integers(1, 6)
            row = [float(np.clip(truth + rng.integers(-1, 2), 1, 5)) for _ in range(3)]
            items.append(f"c{c:02d}-{t}")
            values.append(row)
            clusters.append(f"c{c:02d}")
    for c in range(12, 12 + judge_only):
        for t in range(3):
            items.append(f"c{c:02d}-{t}")
            values.append([None, None, float(rng.integers(1, 6))])
            clusters.append(f"c{c:02d}")
    return cal.RatingTable(items, ["h1", "h2", "judge"], values, clusters)  # type: ignore[arg-type]


def test_alpha_with_judge_difference_ignores_judge_only_conversations() -> None:
    # conversations only the judge rated change neither α: the paired difference's interval
    # must not change either (before: they were resampled, and the interval moved)
    kw = {"B": 300, "seed": 4, "method": "percentile"}
    plain = cal.alpha_with_judge(_alpha_table(0), ["h1", "h2"], "judge", **kw)  # type: ignore[arg-type]
    extra = cal.alpha_with_judge(_alpha_table(12), ["h1", "h2"], "judge", **kw)  # type: ignore[arg-type]
    assert extra.difference.estimate == pytest.approx(plain.difference.estimate)
    assert extra.difference.n_clusters == plain.difference.n_clusters == 12
    assert (extra.difference.lower, extra.difference.upper) == pytest.approx(
        (plain.difference.lower, plain.difference.upper)
    )


def test_bootstrap_count_has_an_upper_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "scores.jsonl"
    f.write_text(
        "".join(
            json.dumps({"model": m, "cluster": c, "score": s}) + "\n"
            for m, c, s in zip(*_scores(), strict=True)
        )
    )
    for argv in (["rank", str(f)], ["calibrate", "--human", str(f), "--judge", str(f)]):
        code, out, err = _run([*argv, "-B", "1000000000"], capsys)
        assert code == 2
        assert "-B" in err and "less than or equal to 100000" in err
        assert "Traceback" not in out + err


def _ceiling_file(tmp_path: Path) -> Path:
    """Two models on a 1–5 scale, one piled at the top: 12 conversations of 3 turns."""
    rows = []
    for c in range(12):
        for t in range(3):
            rows.append({"model": "top", "cluster": f"c{c}", "score": 5 if (c + t) % 7 else 3})
            rows.append({"model": "mid", "cluster": f"c{c}", "score": 2 + (c + t) % 3})
    f = tmp_path / "ratings.csv"
    f.write_text(
        "model,cluster,score\n"
        + "".join(f"{r['model']},{r['cluster']},{r['score']}\n" for r in rows)
    )
    return f


def test_rank_scale_keeps_intervals_on_the_scale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = _ceiling_file(tmp_path)
    code, out, _ = _run(["rank", str(f), "-B", "400", "--json"], capsys)
    assert code == 0
    top = next(r for r in json.loads(out)["rows"] if r["model"] == "top")
    assert top["score"]["upper"] > 5  # without the scale the interval leaves it (as before)
    code, out, err = _run(["rank", str(f), "-B", "400", "--scale", "1,5", "--json"], capsys)
    assert code == 0, err
    for r in json.loads(out)["rows"]:
        assert 1 <= r["score"]["lower"] <= r["score"]["estimate"] <= r["score"]["upper"] <= 5
    code, _, err = _run(["rank", str(f), "--scale", "1,4"], capsys)
    assert code == 2 and "outside --scale 1,4" in err and "Traceback" not in err


def test_a_scores_file_without_clusters_warns_and_names_the_consequence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "scores.csv"
    f.write_text("model,score\n" + "".join(f"m{i % 2},{(i % 5) / 4}\n" for i in range(40)))
    code, out, _ = _run(["rank", str(f), "-B", "200", "--json"], capsys)
    assert code == 0
    warnings = json.loads(out)["warnings"]
    assert any("no cluster" in w and "its own conversation" in w for w in warnings)
    code, md, _ = _run(["rank", str(f), "-B", "200"], capsys)
    assert "no cluster (or conversation_id) column" in md
    # a file that names its conversations gets no such warning
    g = _ceiling_file(tmp_path)
    code, out, _ = _run(["rank", str(g), "-B", "200", "--json"], capsys)
    assert not any("no cluster" in w for w in json.loads(out)["warnings"])


def test_rank_human_lists_a_model_without_human_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, human = _ppi_run(tmp_path)
    extra = [
        Judgment(
            item_id=f"c{c}:m4",
            judge_id="J",
            conversation_id=f"c{c}",
            candidate_model="m4",
            overall=4.0,
            normalized=0.5,
        )
        for c in range(12)
    ]
    with (run / "judgments.jsonl").open("a", encoding="utf-8") as fh:
        fh.writelines(j.model_dump_json() + "\n" for j in extra)
    code, out, err = _run(
        ["rank", str(run), "--human", str(human), "--human-scale", "1,7", "--json"], capsys
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["models_without_labels"] == ["m4"]
    assert "m4" not in {r["model"] for r in data["rows"]}
    assert "m4: no human label" in err  # before: silently dropped
    _, md, _ = _run(["rank", str(run), "--human", str(human), "--human-scale", "1,7"], capsys)
    assert "m4: no human label" in md


def test_a_calibrated_judges_brier_and_ece_score_its_calibrated_distributions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # raw distributions sure of a wrong level, the calibrated head sure of the people's level
    levels = [1, 2, 3, 1, 2, 3]
    items, judgments, ratings = [], [], []
    for k, level in enumerate(levels):
        item_id, wrong = f"c{k}:1:m", 1 + level % 3
        items.append(
            JudgeItem(
                item_id=item_id,
                conversation_id=f"c{k}",
                context=[ChatMessage(role="user", content="I lost my job today.")],
                candidate="That sounds hard. " * (k + 1),
                candidate_model="m",
            )
        )
        sure = {str(v): float(v == wrong) for v in (1, 2, 3)}
        judgments.append(
            Judgment(
                item_id=item_id,
                judge_id="J",
                conversation_id=f"c{k}",
                candidate_model="m",
                scores={"empathy": float(level)},
                overall=float(level),
                details={
                    "distributions": {"empathy": {"probabilities": sure}},
                    "calibrated": {"empathy": {str(v): float(v == level) for v in (1, 2, 3)}},
                },
            )
        )
        ratings.append(Rating(item_id=item_id, rater="p1", dimension="empathy", value=level))
    write_jsonl(tmp_path / "items.jsonl", items)
    write_jsonl(tmp_path / "judgments.jsonl", judgments)
    write_jsonl(tmp_path / "human.jsonl", ratings)
    argv = ["calibrate", "--human", str(tmp_path / "human.jsonl")]
    argv += ["--judge", str(tmp_path / "judgments.jsonl"), "--items", str(tmp_path / "items.jsonl")]
    code, out, err = _run([*argv, "--json", "-B", "100"], capsys)
    assert code == 0, err
    scores = json.loads(out)["baselines"]["dimensions"]["empathy"]["probability_scores"]
    # Brier of a sure, right forecast is 0 (a sure, wrong one over three levels is 2)
    assert scores["n"] == 6
    assert scores["brier"] == pytest.approx(0.0, abs=1e-12)


def test_rank_human_says_when_the_training_overlap_check_was_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # judgments without their run directory's manifest: the check that an aligned judge was
    # not fitted on these labels cannot be made; before, nothing said so
    run, human = _ppi_run(tmp_path)
    code, out, err = _run(
        ["rank", str(run), "--human", str(human), "--human-scale", "1,7", "--json"], capsys
    )
    assert code == 0, err
    assert any("was skipped" in w for w in json.loads(out)["warnings"])
    assert "no manifest.json beside judgments.jsonl" in err


def test_ppi_table_prints_a_rounded_zero_lambda_without_a_sign() -> None:
    rng = np.random.default_rng(2)
    n = 60
    models = ["a", "b"] * (n // 2)
    clusters = [f"c{i // 4}" for i in range(n)]
    judge = rng.normal(0.5, 0.1, n)
    human = [float(j + rng.normal(0, 0.1)) if i % 3 else None for i, j in enumerate(judge)]
    board = cal.ppi_leaderboard(models, clusters, judge, human, lam=-0.001)
    md = cal.ppi_leaderboard_markdown(board)
    rows = [x for x in md.splitlines() if x.startswith("| 1 |") or x.startswith("| 2 |")]
    assert rows and all("| 0.00 |" in x and "-0.00" not in x for x in rows)
