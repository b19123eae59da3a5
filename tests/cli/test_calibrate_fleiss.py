"""``calibrate`` prints Fleiss' κ wherever there are three or more raters: checked against the
textbook formula (Fleiss 1971) computed here by hand on the shipped expert ratings."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from attune_judge.cli import main
from tests.conftest import REPO_ROOT

RATINGS = REPO_ROOT / "calibration" / "empathic-communication" / "ratings.jsonl"


def _fleiss(rows: list[list[object]]) -> float:
    """Fleiss' κ of items rated by the same number of raters (values as categories)."""
    n = len(rows[0])
    counts = [Counter(map(str, r)) for r in rows]
    cats = sorted({c for cnt in counts for c in cnt})
    total = len(rows) * n
    p_j = [sum(cnt[c] for cnt in counts) / total for c in cats]
    p_i = [(sum(v * v for v in cnt.values()) - n) / (n * (n - 1)) for cnt in counts]
    p_bar = sum(p_i) / len(p_i)
    p_e = sum(p * p for p in p_j)
    return (p_bar - p_e) / (1 - p_e)


def test_fleiss_kappa_among_three_experts_and_with_the_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [json.loads(x) for x in RATINGS.read_text(encoding="utf-8").splitlines() if x.strip()]
    experts = [r for r in rows if r["rater_group"] == "experts"]
    gpt = [r for r in rows if r["rater"] == "gpt"]
    for name, part in (("experts", experts), ("gpt", gpt)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in part))
    argv = ["calibrate", "--human", str(tmp_path / "experts.jsonl")]
    argv += ["--judge", str(tmp_path / "gpt.jsonl"), "--dimension", "empathy", "--B", "50"]
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--json"])
    assert exc.value.code == 0
    (dim,) = json.loads(capsys.readouterr().out)["dimensions"]

    by_item: dict[str, dict[str, object]] = defaultdict(dict)
    for r in rows:
        if r["dimension"] == "empathy" and r["value"] is not None:
            by_item[r["item_id"]][r["rater"]] = r["value"]
    names = ["expert1", "expert2", "expert3"]
    full = {i: v for i, v in by_item.items() if all(k in v for k in names)}
    three = [[v[k] for k in names] for v in full.values()]
    assert dim["fleiss_humans"]["estimate"] == pytest.approx(_fleiss(three))
    judged = [[v[k] for k in [*names, "gpt"]] for v in full.values() if "gpt" in v]
    assert dim["fleiss_with_judges"]["estimate"] == pytest.approx(_fleiss(judged))
    lo, hi = dim["fleiss_humans"]["lower"], dim["fleiss_humans"]["upper"]
    assert lo <= dim["fleiss_humans"]["estimate"] <= hi

    with pytest.raises(SystemExit):
        main(argv)
    out = capsys.readouterr().out
    assert "Fleiss' κ among humans:" in out and "Fleiss' κ among humans and judge(s):" in out
