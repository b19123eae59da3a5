"""End to end: variants → real reference judges on a scripted engine → run dir → analysis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

import attune_judge.sensitivity
from attune_judge.report import write_report
from attune_judge.runs import SensitivitySummary, read_summary
from attune_judge.sensitivity import (
    SensitivityConfig,
    SensitivityResult,
    run_sensitivity,
)
from attune_judge.testing import ScriptedEngine
from tests._cli import run_cli
from tests.sensitivity._scripted import answer, write_items

N_ITEMS = 36  # 6 conversations x 2 turns x 3 models

PERTURBATIONS: list[dict[str, Any]] = [
    {
        "name": "swapper",
        "kind": "paraphrase",
        "criteria": {"helpfulness": "SWAPMARK How much the reply helps the person."},
    },
    {"name": "shuffled", "kind": "shuffle_criteria", "seed": 3},
    {"name": "scale-1-5", "kind": "change_scale", "min": 1, "max": 5},
    {"name": "reasoning-off", "kind": "reasoning", "enabled": False},
]


def _setup(tmp: Path, perturbations: list[dict[str, Any]] = PERTURBATIONS) -> tuple[Path, Path]:
    data = tmp / "items.jsonl"
    write_items(data, n_conv=6, n_turns=2)
    variants = tmp / "variants.yaml"
    spec = {
        "name": "scripted-study",
        "base": {"rubric": "attunebench-reference", "judge": {"reasoning": False}},
        "perturbations": perturbations,
        "analysis": {"B": 500, "seed": 1},
    }
    variants.write_text(yaml.safe_dump(spec), "utf-8")
    return data, variants


def _cli(
    argv: list[str],
    engine: ScriptedEngine,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, str, str, list[SensitivityResult]]:
    """``attune-judge sensitivity ARGV`` with its library call's judges on ``engine``: (exit
    code, stdout, stderr, the results run_sensitivity returned)."""
    results: list[SensitivityResult] = []

    def scripted(config: SensitivityConfig) -> SensitivityResult:
        results.append(run_sensitivity(config, lm_factory=lambda lm: engine.lm()))
        return results[-1]

    monkeypatch.setattr(attune_judge.sensitivity, "run_sensitivity", scripted)
    return (*run_cli(["sensitivity", *argv], capsys), results)


def _config(data: Path, variants: Path, out: Path) -> SensitivityConfig:
    return SensitivityConfig(
        data=data,
        variants=variants,
        out=out,
        quiet=True,
        fsync=False,
        max_concurrency=4,
    )


@pytest.fixture(scope="module")
def study(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[SensitivityResult, ScriptedEngine, SensitivityConfig]:
    tmp = tmp_path_factory.mktemp("study")
    data, variants = _setup(tmp)
    engine = ScriptedEngine(answer)
    config = _config(data, variants, tmp / "run")
    return run_sensitivity(config, lm_factory=lambda lm: engine.lm()), engine, config


def test_the_variant_built_to_swap_two_models_is_the_only_one_flagged(
    study: tuple[SensitivityResult, ScriptedEngine, SensitivityConfig],
) -> None:
    res, _, _ = study
    assert res.analysis is not None
    assert [v.variant for v in res.analysis.verdicts if v.verdict == "unstable"] == ["swapper"]
    swap = res.analysis.verdict("swapper")
    # the script exchanges a and b (base levels 6 and 4): exactly that pair flips
    assert [(p.model_a, p.model_b) for p in res.analysis.flips] == [("a", "b")]
    assert swap.n_significant_flips == 1
    # base order a > b > c, swapped b > a > c: 2 concordant, 1 discordant of 3 -> tau 1/3
    assert swap.tau == pytest.approx(1 / 3)
    for name in ("shuffled", "scale-1-5", "reasoning-off"):
        v = res.analysis.verdict(name)
        assert v.verdict != "unstable" and v.n_flips == 0 and v.tau == pytest.approx(1.0)


def test_scale_change_scores_are_compared_on_the_normalised_scale(
    study: tuple[SensitivityResult, ScriptedEngine, SensitivityConfig],
) -> None:
    res, _, _ = study
    assert res.analysis is not None
    # model c: base level 2 with noise -1/0/+1 -> raw 1, 2, 3; on 1..5 these become
    # floor(1 + (s-1)*4/6 + 0.5) = 1, 2, 2. Normalised: base (s-1)/6, variant (s5-1)/4.
    # noise(c, conv k, turn t) = (k + 2t + 2) % 3 - 1 over k = 0..5, t = 1, 2: each of -1, 0, +1
    # appears 4 times -> base mean (0 + 1/6 + 2/6)/3 = 1/6, variant (0 + 1/4 + 1/4)/3 = 1/6.
    ranking = {m.model: m for m in res.analysis.ranking("scale-1-5").models}
    base = {m.model: m for m in res.analysis.ranking("base").models}
    assert base["c"].score.estimate == pytest.approx(1 / 6)
    assert ranking["c"].score.estimate == pytest.approx(1 / 6)


def test_base_is_judged_once_and_a_resume_makes_no_call(
    study: tuple[SensitivityResult, ScriptedEngine, SensitivityConfig],
) -> None:
    res, engine, config = study
    # 5 variants, but reasoning-off is the base judge (same rubric, model and options):
    # 4 distinct judges x 36 items = 144 engine calls, one per (item, judge)
    assert res.judge_ids["reasoning-off"] == res.judge_ids["base"]
    assert len(set(res.judge_ids.values())) == 4
    assert res.n_tasks == 4 * N_ITEMS
    assert engine.calls == 4 * N_ITEMS
    again = run_sensitivity(config, lm_factory=lambda lm: engine.lm())
    assert engine.calls == 4 * N_ITEMS
    assert again.n_run == 0 and again.n_skipped == 4 * N_ITEMS
    assert again.analysis is not None
    assert [v.variant for v in again.analysis.verdicts if v.verdict == "unstable"] == ["swapper"]


def test_summary_records_variants_judges_and_flips(
    study: tuple[SensitivityResult, ScriptedEngine, SensitivityConfig],
) -> None:
    _, _, config = study
    summary = json.loads((config.out / "summary.json").read_text("utf-8"))
    assert summary["kind"] == "sensitivity"
    sens = summary["sensitivity"]
    assert list(sens["variants"]) == ["base", "swapper", "shuffled", "scale-1-5", "reasoning-off"]
    assert sens["variants"]["swapper"]["verdict"] == "UNSTABLE"
    # few conversations in this study: not unstable, but stability is not claimed either
    assert sens["variants"]["shuffled"]["verdict"] == "inconclusive"
    assert sens["variants"]["reasoning-off"]["same_judge_as"] == ["base"]
    hashes = {v["rubric"]["hash"] for v in sens["variants"].values()}
    assert len(hashes) == 4  # base (= reasoning-off), swapper, shuffled, scale-1-5
    [flip] = sens["flips"]
    assert (flip["variant"], flip["model_a"], flip["model_b"]) == ("swapper", "a", "b")
    assert flip["within_intervals"] is False and flip["significant"] is True
    assert flip["delta_base"] > 0 > flip["delta_variant"]
    assert len(summary["judges"]) == 4
    record = read_summary(config.out)
    assert isinstance(record, SensitivitySummary) and record.sensitivity.analysis is not None
    lines = (config.out / "judgments.jsonl").read_text("utf-8").splitlines()
    assert len(lines) == 4 * N_ITEMS


def test_a_new_run_directory_is_answered_from_the_shared_cache(tmp_path: Path) -> None:
    data, variants = _setup(tmp_path, PERTURBATIONS[:1])
    first = ScriptedEngine(answer)
    run_sensitivity(
        _config(data, variants, tmp_path / "one"), lm_factory=lambda lm: first.lm(cache=True)
    )
    assert first.calls == 2 * N_ITEMS
    second = ScriptedEngine(answer)
    run_sensitivity(
        _config(data, variants, tmp_path / "two"), lm_factory=lambda lm: second.lm(cache=True)
    )
    assert second.calls == 0


def test_report_has_the_sensitivity_section(tmp_path: Path) -> None:
    data, variants = _setup(tmp_path, PERTURBATIONS[:1])
    engine = ScriptedEngine(answer)
    out = tmp_path / "run"
    res = run_sensitivity(_config(data, variants, out), lm_factory=lambda lm: engine.lm())
    # the library writes only the records; the report is the report package's one renderer,
    # drawn from summary.json (the CLI calls it once)
    assert not (out / "report.md").exists() and not (out / "report.html").exists()
    write_report(res.run_dir)
    report = (out / "report.md").read_text("utf-8")
    assert "UNSTABLE" in report
    assert "Score shifts per criterion" in report
    assert (out / "report.html").exists()
    # the analysis round-trips through summary.json (its typed block) into the report
    study = report.split("\n## Rubric sensitivity\n", 1)[1].split("\n## ", 1)[0]
    titles = [line[4:] for line in study.splitlines() if line.startswith("### ")]
    assert titles[0] == "Ranking stability across variants"
    at = titles.index("Verdicts at α = 0.05")  # the analysis's details after the generic ones
    assert titles[at + 1] == "Score shifts per model" and at >= 2


def test_other_judge_model_is_a_judge_factor_in_the_variance_decomposition(
    tmp_path: Path,
) -> None:
    data, variants = _setup(
        tmp_path,
        [
            PERTURBATIONS[1],  # shuffled
            {"name": "judge-b", "kind": "judge_model", "lm": "scripted/b"},
        ],
    )

    def lenient(messages: list[dict[str, str]]) -> str:
        # judge b scores every criterion one point higher (capped at 7): same ranking
        out = json.loads(answer(messages))
        return json.dumps({k: min(7, v + 1) if k != "rationale" else v for k, v in out.items()})

    engines = {"scripted/a": ScriptedEngine(answer), "scripted/b": ScriptedEngine(lenient)}
    config = SensitivityConfig(
        data=data,
        variants=variants,
        out=tmp_path / "run",
        lm="scripted/a",
        quiet=True,
        fsync=False,
    )
    res = run_sensitivity(config, lm_factory=lambda lm: engines[str(lm)].lm(model=str(lm)))
    assert engines["scripted/a"].calls == 2 * N_ITEMS  # base and shuffled
    assert engines["scripted/b"].calls == N_ITEMS
    assert res.analysis is not None and res.analysis.variance is not None
    assert res.analysis.verdict("judge-b").verdict != "unstable"
    judge_b = {m.model: m for m in res.analysis.ranking("judge-b").models}
    assert all(m.shift is not None and m.shift.estimate > 0 for m in judge_b.values())
    vd = res.analysis.variance
    # variant levels {base, shuffled} x judge {a, b}: (shuffled, b) is empty -> unbalanced
    assert vd.method == "mixedlm"
    shares = {c.source: c.share for c in vd.components}
    assert set(shares) == {"model", "conversation", "variant", "judge", "residual"}
    assert shares["model"] > shares["judge"] > 0


def test_full_factorial_decomposes_variance_by_declared_factor(tmp_path: Path) -> None:
    data, variants = _setup(tmp_path)
    spec = yaml.safe_load(variants.read_text("utf-8"))
    spec["full_factorial"] = True
    spec["factors"] = [
        {"name": "Order", "levels": ["shuffled"]},
        {"name": "scale-type", "levels": ["scale-1-5"]},
    ]
    variants.write_text(yaml.safe_dump(spec), "utf-8")
    engine = ScriptedEngine(answer)
    res = run_sensitivity(
        _config(data, variants, tmp_path / "run"), lm_factory=lambda lm: engine.lm()
    )
    # 2 x 2 cells: base, shuffled, scale-1-5, shuffled+scale-1-5 -> 4 judges x 36 items
    assert sorted(res.judge_ids) == ["base", "scale-1-5", "shuffled", "shuffled+scale-1-5"]
    assert engine.calls == 4 * N_ITEMS
    assert res.analysis is not None and res.analysis.variance is not None
    vd = res.analysis.variance
    assert vd.method == "anova"  # complete crossed design: proportional frequencies
    assert [c.source for c in vd.components] == [
        "model",
        "conversation",
        "order",
        "scale_type",
        "residual",
    ]
    assert vd.dropped_factors == ["judge"]
    # the scripted judge ignores criterion order: the order factor explains nothing
    # (its mean square is below the residual's, so the estimate is truncated at 0)
    order = next(c for c in vd.components if c.source == "order")
    assert order.variance == 0.0 and order.truncated
    summary = json.loads((tmp_path / "run" / "summary.json").read_text("utf-8"))
    assert summary["sensitivity"]["variants"]["shuffled+scale-1-5"]["factors"] == {
        "judge": "local",  # no --lm, no base.judge.lm, no ATTUNE_LM: the default model
        "order": "shuffled",
        "scale_type": "scale-1-5",
    }


def test_failed_judgments_are_missing_scores_not_zeros(tmp_path: Path) -> None:
    data, variants = _setup(tmp_path, [PERTURBATIONS[2]])  # scale-1-5

    def flaky(messages: list[dict[str, str]]) -> str:
        # the 1..5 judge answers nonsense for conversation c0 (2 turns x 3 models = 6 items)
        if "integer 1-5" in messages[-1]["content"] and "conv=c0 " in messages[-1]["content"]:
            return "I would rather not say."
        return answer(messages)

    engine = ScriptedEngine(flaky)
    res = run_sensitivity(
        _config(data, variants, tmp_path / "run"), lm_factory=lambda lm: engine.lm()
    )
    assert res.analysis is not None
    ranking = res.analysis.ranking("scale-1-5")
    assert ranking.n_missing == 6 and ranking.n_scores == N_ITEMS - 6
    assert res.analysis.ranking("base").n_missing == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text("utf-8"))
    assert summary["run"]["n_by_status"]["parse_error"] == 6


def test_a_variant_whose_every_judgment_failed_has_no_scores_and_the_others_are_analysed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the 1..5 judge answers nonsense for every item; before: "cannot reshape array of size
    # 0" from the ranks of a variant without a single score, and no analysis at all
    data, variants = _setup(tmp_path, [PERTURBATIONS[2], PERTURBATIONS[0]])

    def dead(messages: list[dict[str, str]]) -> str:
        if "integer 1-5" in messages[-1]["content"]:
            return "I would rather not say."
        return answer(messages)

    out = tmp_path / "run"
    argv = [str(data), "--variants", str(variants), "-o", str(out), "--quiet"]
    code, printed, err, [res] = _cli(
        [*argv, "--max-failure-rate", "1.0"], ScriptedEngine(dead), monkeypatch, capsys
    )
    assert code == 0, err
    assert res.analysis is not None, res.analysis_error
    ranking = res.analysis.ranking("scale-1-5")
    assert ranking.n_scores == 0 and ranking.n_missing == N_ITEMS
    assert all(m.score.estimate is None and m.rank is None for m in ranking.models)
    verdict = {v.variant: v for v in res.analysis.verdicts}
    assert verdict["scale-1-5"].verdict == "inconclusive"
    assert verdict["scale-1-5"].reasons[0].startswith(f"no scores (all {N_ITEMS} judgments")
    assert any("'scale-1-5': no scores" in w for w in res.analysis.warnings)
    # the other variant is analysed as ever: the swap is flagged
    assert verdict["swapper"].verdict == "unstable" and verdict["swapper"].n_flips == 1
    summary = read_summary(out / "summary.json")
    assert isinstance(summary, SensitivitySummary)
    report = (out / "report.md").read_text("utf-8")  # the command's one report call
    assert "'scale-1-5': no scores" in report and "UNSTABLE" in report
    assert "scale-1-5" in printed and f"no scores (all {N_ITEMS}" in printed
    reasons = [line.strip() for line in printed.splitlines() if line.startswith("      ")]
    assert any(r.startswith(f"no scores (all {N_ITEMS} judgments") for r in reasons), printed
    assert f"report: {out / 'report.md'}" in printed


def test_replayed_recordings_reproduce_the_verdicts(tmp_path: Path) -> None:
    from attune_judge.testing import ReplayEngine

    data, variants = _setup(tmp_path, PERTURBATIONS[:2])  # swapper, shuffled
    recording = tmp_path / "recording.json"
    recorder = ReplayEngine(recording, mode="record", source=ScriptedEngine(answer))
    first = run_sensitivity(
        _config(data, variants, tmp_path / "one"), lm_factory=lambda lm: recorder.lm()
    )
    recorder.save()
    replay = ReplayEngine(recording)  # replay mode: an unrecorded prompt would fail
    second = run_sensitivity(
        _config(data, variants, tmp_path / "two"), lm_factory=lambda lm: replay.lm()
    )
    assert replay.calls == replay.hits == 3 * N_ITEMS
    assert first.analysis is not None and second.analysis is not None
    for analysis in (first.analysis, second.analysis):
        assert [v.variant for v in analysis.verdicts if v.verdict == "unstable"] == ["swapper"]
    assert second.analysis.model_dump() == first.analysis.model_dump()


def test_cli_writes_the_report_and_a_report_error_does_not_fail_the_run(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    import attune_judge.report

    data, variants = _setup(tmp_path, PERTURBATIONS[:1])
    engine = ScriptedEngine(answer)
    out = tmp_path / "run"
    argv = [str(data), "--variants", str(variants), "-o", str(out), "--quiet"]
    code, printed, err, _ = _cli(argv, engine, monkeypatch, capsys)
    assert code == 0, err
    assert "Score shifts per criterion" in (out / "report.md").read_text("utf-8")
    assert (out / "report.html").exists()

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("figure backend exploded")

    monkeypatch.setattr(attune_judge.report, "write_report", broken)
    (out / "report.html").unlink()
    with caplog.at_level("WARNING"):
        code, printed, err, [again] = _cli(argv[:-1], engine, monkeypatch, capsys)  # a resume
    assert code == 0, err  # a report error does not fail the finished run (not --quiet: warned)
    assert again.n_run == 0 and again.analysis is not None
    assert "report not written: figure backend exploded" in caplog.text + err
    assert "base ranking:" in printed and "report: " not in printed  # no report to name
