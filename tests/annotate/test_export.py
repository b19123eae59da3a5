"""``annotate export``: records that calibrate, rank --human and align read unchanged;
Label Studio export and import round trip; α among annotators against the reference package."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from attune_judge.annotate import LabelStore, export_labels, import_labelstudio, prepare

# private unit: the annotators' agreement, answer checks and exported rubric
from attune_judge.annotate._agreement import annotator_alpha
from attune_judge.annotate._items import swapped
from attune_judge.data import Preference, Rating, read_jsonl
from attune_judge.errors import UserError
from attune_judge.runs import CommandManifest, write_manifest
from tests.annotate._fixtures import make_items, make_judgments, make_pairs, make_rubric

# (alice, bob) ratings (warmth, fit) per item; chosen by hand, not by the code
LABELS = {
    "c0:1:m1": ((2, 3), (1, 3)),
    "c0:1:m2": ((4, 4), (5, 4)),
    "c1:1:m1": ((3, 2), (3, 1)),
    "c1:1:m2": ((5, 5), (4, 5)),
    "c2:1:m1": ((1, 2), (2, 2)),
    "c2:1:m2": ((4, 3), (4, 4)),
}
JUDGE = {
    "c0:1:m1": (2, 2),
    "c0:1:m2": (5, 4),
    "c1:1:m1": (3, 2),
    "c1:1:m2": (5, 4),
    "c2:1:m1": (1, 1),
    "c2:1:m2": (3, 4),
}


def _labelled(tmp_path: Path) -> tuple[LabelStore, Path]:
    store, _ = prepare(
        tmp_path / "l.sqlite",
        make_items(tmp_path),
        task="ratings",
        rubric=str(make_rubric(tmp_path)),
        k=2,
        annotators=["alice", "bob"],
    )
    for n, who in enumerate(("alice", "bob")):
        for item, pair in LABELS.items():
            w, f = pair[n]
            assert store.record(who, item, "label", {"warmth": w, "fit": f})
    return store, tmp_path / "l.sqlite"


def test_rating_export_is_read_by_calibrate_rank_and_align(tmp_path: Path) -> None:
    store, db = _labelled(tmp_path)
    store.close()
    out = tmp_path / "labels.jsonl"
    counts = export_labels(db, out)
    assert counts == {"records": 36, "labels": 12, "flags": 0}  # 6 items x 2 people x 3 dims
    ratings = read_jsonl(out, Rating)
    got = {(r.item_id, r.rater, r.dimension): r.value for r in ratings}
    assert got[("c0:1:m2", "bob", "warmth")] == 5.0
    assert got[("c0:1:m1", "alice", "overall")] == 2.5  # the rubric's mean of 2 and 3
    assert {r.cluster for r in ratings} == {"c0", "c1", "c2"}
    assert {r.rater_group for r in ratings} == {"annotators"}
    warmth = [r for r in ratings if r.dimension == "warmth"]
    assert {(r.metadata["scale_min"], r.metadata["scale_max"]) for r in warmth} == {(1, 5)}

    from attune_judge.validate import calibrate_files, ppi_rank

    judge = make_judgments(tmp_path, JUDGE)
    res = calibrate_files(out, judge, B=200)
    dims = {d["dimension"]: d for d in res.data["dimensions"]}
    assert set(dims) == {"warmth", "fit", "overall"}
    assert dims["warmth"]["humans"] == ["alice", "bob"]
    assert dims["warmth"]["join"]["matched"] == 6
    assert dims["warmth"]["judges"][0]["ceiling"] is not None
    # α among the two annotators, against the reference implementation (krippendorff package)
    import krippendorff

    matrix = np.array([[LABELS[i][n][0] for i in sorted(LABELS)] for n in (0, 1)], float)
    ref = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
    assert dims["warmth"]["human_alpha"]["estimate"] == pytest.approx(ref)
    mine = {d["dimension"]: d for d in annotator_alpha(ratings, B=200)}
    assert mine["warmth"]["alpha"] == pytest.approx(ref) and mine["warmth"]["items"] == 6

    ranked = ppi_rank(judge, out, human_scale=(1.0, 5.0))
    assert {row["model"] for row in ranked.data["rows"]} == {"m1", "m2"}

    from attune_judge.align import load_align_data

    data, _ = load_align_data(
        out, items=tmp_path / "items.jsonl", rubric=str(tmp_path / "rubric.yaml")
    )
    assert data.n_ratings == 24 and set(data.criteria) == {"warmth", "fit"}


def test_label_studio_export_imports_back_to_the_same_records(tmp_path: Path) -> None:
    store, db = _labelled(tmp_path)
    store.close()
    ls = tmp_path / "ls.json"
    export_labels(db, ls, "labelstudio")
    tasks = json.loads(ls.read_text())
    assert len(tasks) == 6 and all(len(t["annotations"]) == 2 for t in tasks)
    assert tasks[0]["data"]["reply"].startswith("<script>")  # kept as text
    config = ls.with_suffix(".xml").read_text()
    assert '<Choices name="warmth" toName="reply"' in config
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    store2, _ = prepare(
        fresh / "l.sqlite",
        make_items(fresh),
        task="ratings",
        rubric=str(make_rubric(fresh)),
        k=2,
        annotators=["someone"],
    )
    store2.close()
    assert import_labelstudio(ls, fresh / "l.sqlite") == {"stored": 12, "present": 0}
    assert import_labelstudio(ls, fresh / "l.sqlite") == {"stored": 0, "present": 12}
    export_labels(db, tmp_path / "a.jsonl")
    export_labels(fresh / "l.sqlite", tmp_path / "b.jsonl")

    def key(path: Path) -> set[tuple[str, str, str, object]]:
        return {(r.item_id, r.rater, r.dimension, r.value) for r in read_jsonl(path, Rating)}

    assert key(tmp_path / "a.jsonl") == key(tmp_path / "b.jsonl")
    bad = tmp_path / "bad.json"
    tasks[1]["annotations"][0]["result"][0]["value"]["choices"] = ["9"]
    bad.write_text(json.dumps(tasks))
    with pytest.raises(UserError, match=r"bad.json: task 1 annotation 0: field answers.fit"):
        import_labelstudio(bad, fresh / "l.sqlite")


def test_pair_export_is_preferences_in_the_items_own_order(tmp_path: Path) -> None:
    store, _ = prepare(
        tmp_path / "p.sqlite",
        make_pairs(tmp_path),
        task="pairwise",
        rubric="attunebench-pairwise",
        k=1,
        annotators=["alice"],
    )
    seed = store.meta()["seed"]
    from attune_judge.annotate._answers import check_answers
    from attune_judge.rubrics import load_rubric

    rubric = load_rubric("attunebench-pairwise")
    for item in store.items():
        flip = swapped(seed, "alice", item.item_id)
        answers = check_answers("pairwise", rubric, item, {"choice": "second"}, flip)
        store.record("alice", item.item_id, "label", answers, swapped=flip)
    store.close()
    out = tmp_path / "prefs.jsonl"
    export_labels(tmp_path / "p.sqlite", out)
    prefs = read_jsonl(out, Preference)
    assert len(prefs) == 4 and {(p.option_a, p.option_b) for p in prefs} == {("m1", "m2")}
    for p in prefs:  # "second" shown = A when swapped
        assert p.winner == ("A" if p.metadata["shown_first"] == "B" else "B")
    assert prefs[0].text_a == "A text 0" and prefs[0].cluster == "c0"


def test_the_agreement_page_data_comes_from_calibrate(tmp_path: Path) -> None:
    from attune_judge.annotate._agreement import agreement
    from attune_judge.annotate._export import store_rubric

    store, _ = _labelled(tmp_path)
    task, rubric = store_rubric(store)
    judge = make_judgments(tmp_path, JUDGE)
    data = agreement(store, task, rubric, judge, B=200)
    assert [d["dimension"] for d in data["dimensions"]] == ["fit", "overall", "warmth"]
    assert all(d["items"] == 6 and d["annotators"] == 2 for d in data["dimensions"])
    text = json.dumps(data["judge"])  # sections of tables from the typed report
    assert "judge-x" in text and "ceiling" in text.lower()
    tables = [b for sec in data["judge"] for sub in sec["sections"] for b in sub["blocks"]]
    assert any(b["kind"] == "table" and b["rows"] for b in tables)
    assert "|---|" not in text  # not Markdown
    assert any("intervals are unreliable below" in n for n in data["notes"])  # 3 conversations
    none = agreement(store, task, rubric, tmp_path / "missing.jsonl", B=200)
    assert none["judge"] is None and none["judge_error"].startswith("Not computable yet:")


def test_pair_labels_round_trip_through_label_studio(tmp_path: Path) -> None:
    from attune_judge.annotate._answers import check_answers
    from attune_judge.rubrics import load_rubric

    store, _ = prepare(
        tmp_path / "p.sqlite",
        make_pairs(tmp_path),
        task="pairwise",
        rubric="attunebench-pairwise",
        k=1,
        annotators=["alice"],
    )
    rubric = load_rubric("attunebench-pairwise")
    seed = store.meta()["seed"]
    for item, choice in zip(store.items(), ("first", "second", "tie", "first"), strict=True):
        flip = swapped(seed, "alice", item.item_id)
        store.record(
            "alice",
            item.item_id,
            "label",
            check_answers("pairwise", rubric, item, {"choice": choice}, flip),
            flip,
        )
    store.close()
    export_labels(tmp_path / "p.sqlite", tmp_path / "ls.json", "labelstudio")
    other = tmp_path / "other"
    other.mkdir()
    prepare(
        other / "p.sqlite",
        make_pairs(other),
        task="pairwise",
        rubric="attunebench-pairwise",
        k=1,
        annotators=["x"],
    )[0].close()
    assert import_labelstudio(tmp_path / "ls.json", other / "p.sqlite")["stored"] == 4
    export_labels(tmp_path / "p.sqlite", tmp_path / "a.jsonl")
    export_labels(other / "p.sqlite", tmp_path / "b.jsonl")

    def key(path: Path) -> list[tuple[str, str | None]]:
        return sorted((p.item_id, p.winner) for p in read_jsonl(path, Preference))

    assert key(tmp_path / "a.jsonl") == key(tmp_path / "b.jsonl")
    assert sorted(w for _, w in key(tmp_path / "a.jsonl")).count("tie") == 1


def test_a_run_directory_gives_its_items_and_rubric(tmp_path: Path) -> None:
    from attune_judge.annotate import load_items
    from attune_judge.annotate._serve import is_loopback

    items, rubric = make_items(tmp_path), make_rubric(tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    arguments = {"data": str(items), "rubric": str(rubric), "candidates": None, "models": ["m2"]}
    write_manifest(run, CommandManifest(command="score", arguments=arguments, versions={}))
    found, name = load_items(run, None)
    assert name == str(rubric) and [i.item_id for i in found] == ["c0:1:m2", "c1:1:m2", "c2:1:m2"]
    (run / "manifest.json").write_text("{}")
    with pytest.raises(UserError, match=r"manifest\.json: not a run manifest"):
        load_items(run, None)
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")
