"""End to end: ``run_bench`` with scripted models whose every metric is computed by hand.

The data and the scripted answers are described in ``_fixtures.py``.
"""

from __future__ import annotations

import json

import pytest

import attune_judge.tasks
from attune_judge.runs import summary_json
from attune_judge.tasks import BenchConfig, run_bench
from tests._cli import run_cli
from tests.tasks._fixtures import judge_engine, model_engine, write_data


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench")
    data = write_data(root / "data")
    engines = {"alpha": model_engine(True), "beta": model_engine(False)}
    judge = judge_engine()
    config = BenchConfig(
        data=data,
        models=["alpha", "beta"],
        out=root / "run",
        seed=3,
        B=500,
        max_concurrency=2,
    )
    lms = {name: e.lm() for name, e in engines.items()}
    result = run_bench(config, lms=lms, judge_lm=judge.lm())
    assert not (config.out / "report.md").exists()  # run_bench itself writes no report
    return config, result, engines, judge, lms


def _records(config):
    """The bench's unit records (records.jsonl), one JSON object a line."""
    return [json.loads(line) for line in (config.out / "records.jsonl").read_text().splitlines()]


def _bench_cli(bench, monkeypatch, capsys, *extra):
    """``attune-judge bench`` on the fixture's data and run directory (a resume: nothing is
    judged again), its library call given the fixture's scripted models."""
    config, _, _, judge, lms = bench

    def scripted(cli_config):
        return run_bench(cli_config, lms=lms, judge_lm=judge.lm())

    monkeypatch.setattr(attune_judge.tasks, "run_bench", scripted)
    argv = ["bench", str(config.data), "-m", "alpha", "-m", "beta", "-o", str(config.out)]
    return run_cli([*argv, "--seed", "3", "--B", "500", "--max-concurrency", "2", *extra], capsys)


def _score(summary, task, metric, model):
    return summary["bench"]["tasks"][task]["metrics"][metric]["models"][model]["estimate"]


def test_every_unit_is_recorded_once(bench):
    config, result, *_ = bench
    records = _records(config)
    # per model: drafting 2 turns, emotion 2, behaviour 2, preference 3 comparisons,
    # conversation 2 -> 11 units; two models -> 22
    assert result.n_units == len(records) == 22
    assert {r["status"] for r in records} == {"ok"}
    keys = {(r["model"], r["unit_id"]) for r in records}
    assert len(keys) == 22


def test_emotion_scores_by_hand(bench):
    _, result, *_ = bench
    s = summary_json(result.summary)
    # alpha says "sad" (outside the vocabulary): c1 {?sad} vs {Afraid} F1 0; c2 {?sad} vs
    # neutral F1 0 -> mean 0. beta says Afraid 4: c1 F1 1, c2 (neutral) 0 -> mean 0.5.
    assert _score(s, "emotion", "f1", "alpha") == 0
    assert _score(s, "emotion", "f1", "beta") == pytest.approx(0.5)
    # beta's intensity error: only c1 has a matched pair, |4 - 6| = 2
    assert _score(s, "emotion", "intensity_mae", "beta") == pytest.approx(2.0)
    # alpha has no in-vocabulary tag, hence no matched pair: undefined, not zero
    assert _score(s, "emotion", "intensity_mae", "alpha") is None


def test_behaviour_scores_by_hand(bench):
    _, result, *_ = bench
    s = summary_json(result.summary)
    # alpha all yes: c1 observed B1 tp, B13 fp; preferred B1 tp, B13 tp; c2 observed B1 tp,
    # preferred B1 (truth no) fp -> 4 correct of 6 pooled
    assert _score(s, "behaviour", "accuracy", "alpha") == pytest.approx(4 / 6)
    # beta all no: c1 observed fn, tn; preferred fn, fn; c2 observed fn, preferred tn -> 2/6
    assert _score(s, "behaviour", "accuracy", "beta") == pytest.approx(2 / 6)
    # observed target: alpha tp 2, fp 1, fn 0, tn 0 -> F1 = 4/5; MCC undefined (no negatives
    # predicted) ; beta tp 0 -> F1 0 (fn 2 > 0)
    pooled = s["bench"]["tasks"]["behaviour"]["pooled_binary"]["observed"]
    assert pooled["alpha"]["f1"]["estimate"] == pytest.approx(0.8)
    assert pooled["alpha"]["mcc"]["estimate"] is None
    assert pooled["beta"]["f1"]["estimate"] == 0


def test_preference_is_unswapped_and_scored_by_hand(bench):
    config, result, *_ = bench
    s = summary_json(result.summary)
    # alpha picks the HUMAN reply: c1 general (human won) right, c1 PW4 (alternate won) wrong,
    # c2 general (human won) right -> 2/3; beta the other reply -> 1/3. This holds whatever the
    # presentation order, so it checks the un-swapping.
    assert _score(s, "preference", "accuracy", "alpha") == pytest.approx(2 / 3)
    assert _score(s, "preference", "accuracy", "beta") == pytest.approx(1 / 3)
    # win counts (original, alternate, human): c1 truth [0,1,1]; alpha [0,0,2] -> τ-b 1/2;
    # c2 truth [0,0,1], alpha [0,0,1] -> 1: mean 0.75. beta c1 [1,1,0] -> -1/2, c2 [1,0,0]
    # -> -1/2: mean -0.5.
    tau = s["bench"]["tasks"]["preference"]["win_count_tau"]
    assert tau["alpha"]["estimate"] == pytest.approx(0.75)
    assert tau["beta"]["estimate"] == pytest.approx(-0.5)
    swaps = {r["details"]["swapped"] for r in _records(config) if r["task"] == "preference"}
    assert swaps == {True, False}  # with seed 3 both orders occur among the 3 comparisons


def test_conversation_and_drafting_by_hand(bench):
    _, result, *_ = bench
    s = summary_json(result.summary)
    assert _score(s, "conversation", "composite", "alpha") == pytest.approx(1.0)
    # beta: PANAS MAE 2 -> 1 - 2/6; q1 F1 0; q2 0; q3 distance |3 - 1| = 2 -> 1 - 2/3;
    # branches MAE 3 -> 1 - 3/6: (2/3 + 0 + 0 + 1/3 + 1/2) / 5 = 0.3
    assert _score(s, "conversation", "composite", "beta") == pytest.approx(0.3)
    # judge: DRAFT-GOOD 7 everywhere -> (7 - 1)/6 = 1; DRAFT-BAD 4 -> 0.5
    assert _score(s, "drafting", "judge_score", "alpha") == pytest.approx(1.0)
    assert _score(s, "drafting", "judge_score", "beta") == pytest.approx(0.5)
    # behaviour judge says yes to all: preferred c1 B1 yes, B13 yes (match, match), c2 B1 no
    # (mismatch) -> pooled 2/3 for both models
    assert _score(s, "drafting", "alignment", "alpha") == pytest.approx(2 / 3)


def test_rankings_across_tasks(bench):
    _, result, *_ = bench
    b = summary_json(result.summary)["bench"]
    # alpha is ahead on drafting, behaviour, preference, conversation, behind on emotion:
    # τ = +1 between the four, -1 against emotion
    tau = b["tau_intervals"]
    assert tau["drafting"]["behaviour"]["estimate"] == pytest.approx(1.0)
    assert tau["drafting"]["emotion"]["estimate"] == pytest.approx(-1.0)
    # Kendall's W, 5 rankings of 2 models: rank sums alpha 2*4 + 1 = 9, beta 6; mean 7.5;
    # S = 2 * 1.5² = 4.5; W = 12 S / (m² (n³ - n)) = 54 / (25 * 6) = 0.36
    assert b["kendall_w"]["w"] == pytest.approx(0.36)
    board = b["tasks"]["drafting"]["leaderboard"]["rows"]
    assert [r["model"] for r in board] == ["alpha", "beta"]
    n_intervals = 0
    for task in b["tasks"].values():
        for row in task["leaderboard"]["rows"]:
            sc = row["score"]
            if sc["lower"] is not None:
                n_intervals += 1
                assert sc["lower"] - 1e-12 <= sc["estimate"] <= sc["upper"] + 1e-12
    assert n_intervals > 0  # the interval check above must not be skipped for every row
    assert "discriminability" in b["tasks"]["emotion"]


def test_run_directory_contents(bench):
    config, *_ = bench
    summary = json.loads((config.out / "summary.json").read_text())
    assert summary["kind"] == "bench"
    manifest = json.loads((config.out / "manifest.json").read_text())
    assert manifest["command"] == "bench" and manifest["seed"] == 3
    assert (config.out / "judgments.jsonl").exists()


def test_resume_makes_no_new_calls(bench):
    config, _, engines, judge, lms = bench
    before = {n: e.calls for n, e in engines.items()}, judge.calls
    again = run_bench(config, lms=lms, judge_lm=judge.lm())
    assert again.n_run == 0 and again.n_skipped == 22
    assert ({n: e.calls for n, e in engines.items()}, judge.calls) == before


def test_secondary_metrics_by_hand(bench):
    _, result, *_ = bench
    s = summary_json(result.summary)
    # beta's emotion: c1 {Afraid} = {Afraid}: VA 1, exact 1; c2 neutral vs {Afraid}: 0, 0
    assert _score(s, "emotion", "va_similarity", "beta") == pytest.approx(0.5)
    assert _score(s, "emotion", "exact_match", "beta") == pytest.approx(0.5)
    # per target (pooled): alpha observed c1 tp, fp; c2 tp -> 2/3; preferred c1 tp, tp; c2 fp
    # -> 2/3; beta observed c1 fn, tn; c2 fn -> 1/3; preferred c1 fn, fn; c2 tn -> 1/3
    assert _score(s, "behaviour", "observed_accuracy", "alpha") == pytest.approx(2 / 3)
    assert _score(s, "behaviour", "preferred_accuracy", "alpha") == pytest.approx(2 / 3)
    assert _score(s, "behaviour", "observed_accuracy", "beta") == pytest.approx(1 / 3)
    assert _score(s, "behaviour", "preferred_accuracy", "beta") == pytest.approx(1 / 3)
    # beta preferred: tp 0, fp 0, fn 2, tn 1 -> F1 0, MCC undefined (no predicted yes)
    pref = s["bench"]["tasks"]["behaviour"]["pooled_binary"]["preferred"]["beta"]
    assert pref["f1"]["estimate"] == 0 and pref["mcc"]["estimate"] is None
    # beta's conversation answers: PA total 10 * 5 = 50 vs 30; q1 {Other} vs {vent}: F1 0;
    # q3 index 3 vs 1; branches |1 - 4| = 3
    assert _score(s, "conversation", "panas_pa_abs_error", "beta") == 20
    assert _score(s, "conversation", "q1_f1", "beta") == 0
    assert _score(s, "conversation", "q3_distance", "beta") == 2
    assert _score(s, "conversation", "four_branch_mae", "beta") == 3
    # composite spread 1.0 - 0.3; both conversations give the same composite, so the
    # intervals have zero width and the one pair is separated
    d = s["bench"]["tasks"]["conversation"]["discriminability"]
    assert d["spread"] == pytest.approx(0.7)
    assert (d["n_pairs_separated"], d["n_model_pairs"]) == (1, 1)


def test_cli_prints_the_summary_and_writes_the_report_with_every_task(bench, monkeypatch, capsys):
    _, result, engines, judge, _ = bench
    run_dir = result.run_dir
    (run_dir / "report.md").unlink(missing_ok=True)  # another test may have drawn one
    calls = [e.calls for e in engines.values()], judge.calls
    code, out, err = _bench_cli(bench, monkeypatch, capsys, "--quiet")
    assert code == 0, err
    assert ([e.calls for e in engines.values()], judge.calls) == calls  # a resume: no call
    assert "drafting (judge_score):" in out
    # alpha 1.0, beta 0.5, in that order; from 2 conversations no rank or rank set is claimed
    # (the one rule for claims), a warning says why
    assert "  — alpha" in out and "1. alpha" not in out and "rank set" not in out
    assert out.index("  — alpha") < out.index("  — beta")
    assert "warning: only 2 conversations (clusters)" in out
    assert "tau(drafting, emotion) = -1.000" in out
    md = (run_dir / "report.md").read_text("utf-8")
    assert (run_dir / "report.html").exists()
    titles = [line for line in md.splitlines() if line.startswith(("## ", "### "))]
    at = titles.index("## All task metrics")
    assert titles[at : at + 6] == [
        "## All task metrics",
        "### drafting",
        "### emotion",
        "### behaviour",
        "### preference",
        "### conversation",
    ]
    assert titles.index("## Discriminability per task") == at + 6
    assert titles.index("## Concordance of the task rankings") > at + 6
    discriminability = md.split("## Discriminability per task", 1)[1].split("\n## ", 1)[0]
    # two models, one pair per task; emotion: alpha 0 vs beta 0.5 -> spread 0.5
    emotion = next(x for x in discriminability.splitlines() if x.startswith("| emotion |"))
    cells = [c.strip() for c in emotion.strip("|").split("|")]
    assert cells[1] == "0.500" and cells[4].endswith("/1")


def test_a_report_error_does_not_fail_the_bench_command(bench, monkeypatch, capsys, caplog):
    import attune_judge.report

    def broken(*args, **kwargs):
        raise RuntimeError("figure backend exploded")

    monkeypatch.setattr(attune_judge.report, "write_report", broken)
    with caplog.at_level("WARNING"):
        code, out, err = _bench_cli(bench, monkeypatch, capsys)
    assert code == 0, err
    assert "report not written: figure backend exploded" in caplog.text + err
    assert "drafting (judge_score):" in out  # the run's summary is printed all the same


def test_report_command_rerenders_the_bench_only_sections(bench, capsys):
    _, result, *_ = bench
    run_dir = result.run_dir
    (run_dir / "report.md").unlink(missing_ok=True)
    code, out, err = run_cli(["report", str(run_dir)], capsys)
    assert code == 0, err
    assert out.splitlines() == [str(run_dir / "report.md"), str(run_dir / "report.html")]
    md = (run_dir / "report.md").read_text("utf-8")
    # the sections only `attune-judge bench` adds are there again when re-rendered
    assert "Discriminability per task" in md and "All task metrics" in md
    assert "Concordance of the task rankings" in md


def test_every_interval_stays_in_its_metric_range(tmp_path):
    """Issue 42 item 3 in bench: proportions, F1 and the 0..1 composite keep their intervals on
    0..1, the ordinal distance on 0..3, the 1-7 errors on 0..6 (ranges by the metrics'
    definitions, written out here). Near the ceiling: alpha picks the participant's reply in 3
    of 3 comparisons in 9 conversations and in 2 of 3 in 3, so its preference accuracy is
    33/36 = 0.917 from 12 conversations; the unbounded studentized interval was [0.830, 1.004]."""
    from tests.tasks._fixtures import _bj, _conversation, _pw

    data = tmp_path / "data"
    data.mkdir()
    right = [_pw(q, "human", "original", "A") for q in ("general", "PW1", "PW2")]
    wrong = _pw("PW2", "alternate", "human", "A")  # alpha picks the human reply: wrong here
    for k in range(12):
        comparisons = right if k < 9 else [*right[:2], wrong]
        conv = _conversation(f"d{k}", [], [_bj("B1", "yes", "no")], comparisons)
        (data / f"conversation_d{k}.json").write_text(json.dumps(conv))
    config = BenchConfig(data=data, models=["alpha", "beta"], out=tmp_path / "run", seed=3, B=500)
    lms = {"alpha": model_engine(True).lm(), "beta": model_engine(False).lm()}
    s = summary_json(run_bench(config, lms=lms, judge_lm=judge_engine().lm()).summary)
    alpha = s["bench"]["tasks"]["preference"]["metrics"]["accuracy"]["models"]["alpha"]
    assert alpha["estimate"] == pytest.approx(33 / 36)
    unit = {"judge_score", "alignment", "f1", "precision", "recall", "exact_match"}
    unit |= {"accuracy", "composite", "q1_f1", "q2_exact", "q3_exact"}
    ranges = dict.fromkeys(unit, (0.0, 1.0))
    ranges |= {"q3_distance": (0.0, 3.0), "panas_item_mae": (0.0, 6.0)}
    ranges["four_branch_mae"] = (0.0, 6.0)
    checked = 0
    for task in s["bench"]["tasks"].values():
        for name, metric in task["metrics"].items():
            key = "accuracy" if name.endswith("_accuracy") else name
            if key not in ranges:
                continue
            lo, hi = ranges[key]
            for m in metric["models"].values():
                if m.get("lower") is not None:
                    assert lo <= m["lower"] <= m["upper"] <= hi, (name, m)
                    checked += 1
    assert checked >= 10
