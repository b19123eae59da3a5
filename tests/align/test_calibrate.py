"""``align --method calibrate`` end to end with a scripted model whose score distributions rank
the replies rightly but squeeze them towards the middle level (a miscalibrated judge): the
head must undo the squeeze on the held-out conversations, the artifact must load as a judge
(``score --judge``), keep the raw distributions, and refuse an edited head."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from attune_judge.align import AlignConfig, calibrate_judge, held_out_items
from attune_judge.cli import main
from attune_judge.data import JudgeItem, Judgment, read_jsonl, write_jsonl
from attune_judge.errors import UserError
from attune_judge.judges import JudgeOptions, build_judge
from attune_judge.runs import SCHEMA_VERSION, AlignSummary, read_summary
from attune_judge.testing import ScriptedEngine, TokenReply
from tests.align._engine import CRITERIA, TRUTH, served, write_labels

NAMES = {"Emotional reactions": 0, "Interpretations": 1, "Explorations": 2}
# the model's distribution over levels 0, 1, 2 given the people's level: right order, squeezed
#   expected values 0.95, 1.05, 1.15 for people's 0, 1, 2
SQUEEZED = {0: (0.30, 0.45, 0.25), 1: (0.25, 0.45, 0.30), 2: (0.20, 0.45, 0.35)}
_KIND = re.compile(r"\b(warm|flat|curious|wise) reply c\d+")


def squeezer(messages: list[dict[str, str]]) -> TokenReply:
    text = "\n".join(m["content"] for m in messages)
    crit = next(k for name, k in NAMES.items() if f"Criterion: {name}" in text)
    match = _KIND.search(text)
    assert match is not None, text
    probs = SQUEEZED[TRUTH[match.group(1)][crit]]
    return TokenReply("1", ({str(lv): math.log(p) for lv, p in enumerate(probs)},))


def _labels(tmp_path: Path) -> tuple[Path, Path]:
    """The learner's labels with replies of 0..3 extra words (lengths unrelated to the
    people's levels)."""
    items, ratings = write_labels(tmp_path, conversations=30)
    rows = read_jsonl(items, JudgeItem)
    longer = [
        i.model_copy(update={"candidate": i.candidate + " so" * (k % 4)})
        for k, i in enumerate(rows)
    ]
    write_jsonl(items, longer)
    return items, ratings


def _config(tmp_path: Path, out: str = "cal", **kw: Any) -> AlignConfig:
    items, ratings = _labels(tmp_path)
    return AlignConfig(
        labels=str(ratings),
        items=items,
        rubric="empathic-communication-epitome",
        out=tmp_path / out,
        lm="scripted/judge",
        method="calibrate",
        B=300,
        **kw,
    )


def test_the_head_undoes_a_squeezed_judge_on_held_out_conversations(tmp_path: Path) -> None:
    engine = ScriptedEngine(squeezer)
    config = _config(tmp_path, reply_features=True)
    res = calibrate_judge(config, lm=engine.lm(), echo=lambda s: None)
    assert engine.calls == 60 * 3  # every item once, one call per criterion
    proof = res.proof
    assert proof.headline == "calibrated+reply" and proof.n_failed == 0
    overall = proof.criteria["overall"]
    assert set(overall.systems) == {
        "uncalibrated",
        "calibrated",
        "calibrated+reply",
        "length",
        "lexicon",
    }
    # the squeeze: RMSE of the raw expected score is large; the head's is far smaller
    raw = overall.systems["uncalibrated"]["rmse"].estimate
    cal = overall.systems["calibrated"]["rmse"].estimate
    assert raw is not None and cal is not None and cal < raw / 2
    d = overall.differences["calibrated+reply − uncalibrated"]["rmse"]
    assert d.upper is not None and d.upper < 0
    # per criterion: the head ranks like the people; length does not
    for c in CRITERIA:
        cp = proof.criteria[c]
        assert cp.systems["calibrated"]["spearman"].estimate > 0.6
        assert cp.human_ceiling["spearman"].estimate is not None
        brier = cp.probability
        cal, raw = brier["calibrated"].brier, brier["uncalibrated"].brier
        assert cal is not None and raw is not None and cal < raw
    length = overall.differences["calibrated+reply − length"]["spearman"]
    assert length.lower is not None and length.lower > 0
    assert "better than the length judge" in proof.verdict
    # the artifact: head, split, rubric, the distributions it was fitted on; test items held out
    out = Path(res.out)
    manifest = json.loads((out / "aligned-judge.json").read_text())
    assert manifest["format"] == "attune-calibrated-judge/1"
    assert manifest["optimizer"]["reply_features"] is True
    assert manifest["split"]["seed"] == 0 and manifest["rubric"]["hash"]
    head = json.loads((out / "head.json").read_text())
    assert set(head["heads"]) == set(CRITERIA)
    assert set(head["heads"][CRITERIA[0]]["rater_offsets"]) == {"p1", "p2"}
    test_ids = held_out_items(out, config.labels)
    assert test_ids == set(res.split.items["test"])
    assert len(read_jsonl(out / "judgments.jsonl", Judgment)) == 60


def test_the_artifact_judges_with_calibrated_scores_and_keeps_the_raw_ones(
    tmp_path: Path,
) -> None:
    engine = ScriptedEngine(squeezer)
    config = _config(tmp_path)
    res = calibrate_judge(config, lm=engine.lm(), echo=lambda s: None)
    judge: Any = build_judge(res.out, engine.lm())
    plain: Any = build_judge(
        "empathic-communication-epitome",
        engine.lm(),
        JudgeOptions(score_mode="expected", use_reference=False),
    )
    items = {i.item_id: i for i in read_jsonl(Path(config.items or ""), JudgeItem)}
    flat = next(i for i in items.values() if i.candidate.startswith("flat"))
    warm = next(i for i in items.values() if i.candidate.startswith("warm"))
    jf, jw = judge.judge(flat), judge.judge(warm)
    assert jf.status == "ok" and judge.judge_id != plain.judge_id
    assert manifest_hash(res.out) in judge.spec.model_dump_json()
    # raw expected score of a flat reply: 0.95 on every criterion; calibrated: near 0
    assert jf.details["raw_scores"] == pytest.approx(dict.fromkeys(CRITERIA, 0.95))
    assert jf.details["distributions"][CRITERIA[0]]["probabilities"]["0"] == pytest.approx(0.3)
    assert jf.scores[CRITERIA[0]] < 0.5 < 1.5 < jw.scores[CRITERIA[0]]
    probs = jf.details["calibrated"][CRITERIA[0]]
    assert sum(probs.values()) == pytest.approx(1.0)
    assert jf.scores[CRITERIA[0]] == pytest.approx(sum(int(k) * p for k, p in probs.items()))
    # an edited head is refused, naming the file
    head = Path(res.out) / "head.json"
    head.write_text(head.read_text().replace('"weights"', '"weights" ', 1))
    with pytest.raises(UserError, match=r"head\.json: sha256 differs"):
        build_judge(res.out, engine.lm())


def _main(argv: list[str]) -> int:
    try:
        main(argv)
    except SystemExit as ex:
        return int(ex.code or 0)
    return 0


def manifest_hash(out: str) -> str:
    return json.loads((Path(out) / "aligned-judge.json").read_text())["artifact_hash"]


def test_cli_align_calibrate_then_score_with_the_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with served(squeezer, monkeypatch) as (_, model):
        _cli_align_calibrate_then_score(tmp_path, model, capsys)
    # preferences and reasoning are refused with one line
    with pytest.raises(UserError, match="drop --reasoning"):
        (tmp_path / "x").mkdir()
        lm = ScriptedEngine(squeezer).lm()
        calibrate_judge(_config(tmp_path / "x", reasoning=True), lm=lm, echo=lambda s: None)


def _cli_align_calibrate_then_score(
    tmp_path: Path, model: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    items, ratings = _labels(tmp_path)
    art = tmp_path / "cal"
    argv = ["align", str(ratings), "--items", str(items), "--rubric"]
    argv += ["empathic-communication-epitome", "--method", "calibrate", *model]
    argv += ["--B", "200", "-o", str(art)]
    assert _main(argv) == 0
    out = capsys.readouterr().out
    assert "held-out test split" in out and "calibrated" in out and f"--judge {art}" in out
    # its summary goes through the one writer: versioned, and read back as an align summary
    assert json.loads((art / "summary.json").read_text())["schema_version"] == SCHEMA_VERSION
    summary = read_summary(art)
    assert isinstance(summary, AlignSummary)
    assert summary.align.calibration_proof.headline.startswith("calibrated")
    assert json.loads((art / "manifest.json").read_text())["command"] == "align"
    argv = ["score", str(items), "--judge", str(art), *model, "-o"]
    assert _main([*argv, str(tmp_path / "run"), "--B", "100"]) == 0
    judgments = read_jsonl(tmp_path / "run" / "judgments.jsonl", Judgment)
    assert len(judgments) == 60 and all(j.status == "ok" for j in judgments)
    assert all("calibrated" in j.details and "distributions" in j.details for j in judgments)
