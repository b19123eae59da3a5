"""``rank RUN --human LABELS`` warns when the labels overlap the aligned judge's train/dev split
(issue 29): PPI's correction assumes the judge was not fitted on the labelled items.

An aligned judge is made (labelled demonstrations, scripted model), its items are scored into
a run directory, and ``rank --human`` is run with all the labels (train/dev included: warning
on stderr, in the JSON and in the report) and with the test split's labels only (no warning).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attune_judge.align import AlignConfig, OptimizerSettings, align_judge, load_aligned_judge
from attune_judge.cli import main
from attune_judge.data import Rating, read_jsonl, write_jsonl
from attune_judge.runner import ScoreConfig, run_score
from attune_judge.testing import ScriptedEngine
from tests.align._engine import CRITERIA, learner, write_labels


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


def test_rank_human_warns_when_labels_overlap_the_train_dev_split(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items, ratings = write_labels(tmp_path)
    engine = ScriptedEngine(learner)
    artifact = tmp_path / "aligned"
    config = AlignConfig(
        labels=str(ratings),
        items=items,
        rubric="empathic-communication-epitome",
        out=artifact,
        optimizer=OptimizerSettings(name="labeled-fewshot", max_labeled_demos=8),
        B=200,
        lm="scripted/judge",
    )
    res = align_judge(config, lm=engine.lm(), echo=lambda s: None)
    run = tmp_path / "run"
    judge = load_aligned_judge(artifact, engine.lm())
    score = ScoreConfig(data=items, out=run, rubric=str(artifact), lm="scripted/judge", quiet=True)
    run_score(score, judges=[judge])
    argv = ["rank", str(run), "--dimension", CRITERIA[0], "--field", "overall", "--json"]

    code = _cli([*argv, "--human", str(ratings), "--report", str(tmp_path / "rep")])
    out, err = capsys.readouterr()
    assert code == 0, err
    fitted = set(res.split.items["train"]) | set(res.split.items["dev"])
    assert "train/dev split of the aligned judge" in err
    (warning,) = [w for w in json.loads(out)["warnings"] if "train/dev" in w]
    labelled = {r.item_id for r in read_jsonl(ratings, Rating)}
    assert warning.startswith(f"{len(fitted)} of the {len(labelled)} human-labelled items scored")
    assert "the PPI correction is not valid" in warning
    assert "train/dev split" in (tmp_path / "rep" / "report.md").read_text("utf-8")

    test_only = tmp_path / "test-labels.jsonl"
    held_out = set(res.split.items["test"])
    write_jsonl(test_only, [r for r in read_jsonl(ratings, Rating) if r.item_id in held_out])
    code = _cli([*argv, "--human", str(test_only)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "train/dev" not in err
    assert not [w for w in json.loads(out).get("warnings") or [] if "train/dev" in w]

    # calibrate on the same labels: the judge was fitted on the train/dev ones (issue 42)
    code = _cli(["calibrate", "--human", str(ratings), "--judge", str(run), "-B", "100", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    (leak,) = [w for w in json.loads(out)["warnings"] if "train/dev" in w]
    assert leak.startswith(f"{len(fitted)} of the {len(labelled)} human-labelled items scored")
    assert "not held out" in leak
    code = _cli(["calibrate", "--human", str(test_only), "--judge", str(run), "-B", "100"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "train/dev" not in out + err
