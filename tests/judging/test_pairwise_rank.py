"""A pairwise run has no per-model leaderboard; ``rank RUN`` ranks the compared replies by
Bradley–Terry on the reconciled verdicts, one group of options compared with each other at a
time. Expected strengths: closed form for two options, an independent MM fit for three.

The judge is a loopback OpenAI-compatible stub reading markers in the two replies: ``[win]``
in one reply only → that reply; in both or neither → tie; ``[pos]`` anywhere → always ``A``
(so the two orders disagree: ``inconsistent``, counted as a tie).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attune_judge.cli import main
from attune_judge.data import ChatMessage
from attune_judge.judges import pairwise_item
from tests._openai_stub import openai_stub
from tests.judging._stub_judges import replies

# (option_a, option_b, outcome): "a" = A's text wins, "b" = B's, "tie", "pos" = inconsistent
GROUP_XY = [("x", "y", "a"), ("x", "y", "a"), ("x", "y", "b"), ("x", "y", "tie")]
GROUP_XY += [("x", "y", "pos")]
GROUP_PQR = [("p", "q", "a")] * 3 + [("p", "q", "b")] + [("q", "r", "a")] * 2
GROUP_PQR += [("q", "r", "b"), ("r", "p", "a"), ("r", "p", "a"), ("r", "p", "b")]
GROUP_PQR = GROUP_PQR * 2 + [("r", "p", "tie")]
GROUP_ST = [("s", "t", "a"), ("s", "t", "a")]  # s never loses: no Bradley–Terry estimate


@pytest.fixture(autouse=True)
def _no_request_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTUNE_CACHE", "0")


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


def _marker_judge(body: dict[str, Any]) -> str:
    a, b = replies(body)
    if "[pos]" in a or "[pos]" in b:
        verdict = "A"
    else:
        wa, wb = "[win]" in a, "[win]" in b
        verdict = "A" if wa and not wb else "B" if wb and not wa else "tie"
    return json.dumps({"verdict": verdict, "rationale": "markers"})


def _items(path: Path) -> None:
    texts = {"a": ("[win] one", "two"), "b": ("one", "[win] two"), "tie": ("one", "two")}
    texts["pos"] = ("[pos] one", "two")
    lines = []
    for k, (oa, ob, outcome) in enumerate(GROUP_XY + GROUP_PQR + GROUP_ST):
        ta, tb = texts[outcome]
        item = pairwise_item(
            f"pair{k}",
            f"conv{k}",
            [ChatMessage(role="user", content="I feel low today.")],
            ta,
            tb,
            option_a=oa,
            option_b=ob,
            turn=1,
        )
        lines.append(item.model_dump_json())
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _mm_bradley_terry(rows: list[tuple[str, str, str]]) -> dict[str, float]:
    """Independent Bradley–Terry MLE by Hunter's (2004) MM iteration, ties half a win each;
    returns log-strengths centred to mean 0."""
    names = sorted({r[0] for r in rows} | {r[1] for r in rows})
    idx = {n: i for i, n in enumerate(names)}
    wins = np.zeros((len(names), len(names)))
    for a, b, out in rows:
        i, j = idx[a], idx[b]
        share = {"a": 1.0, "b": 0.0, "tie": 0.5, "pos": 0.5}[out]
        wins[i, j] += share
        wins[j, i] += 1 - share
    n = wins + wins.T
    gamma = np.ones(len(names))
    for _ in range(5000):
        denom = (n / (gamma[:, None] + gamma[None, :])).sum(axis=1)
        gamma = wins.sum(axis=1) / denom
        gamma /= math.exp(np.log(gamma).mean())
    beta = np.log(gamma)
    return {nm: float(beta[i] - beta.mean()) for nm, i in idx.items()}


def test_pairwise_run_ranks_replies_by_bradley_terry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items, run = tmp_path / "pairs.jsonl", tmp_path / "run"
    _items(items)
    with openai_stub(_marker_judge) as server:
        argv = ["score", str(items), "--rubric", "attunebench-pairwise", "-o", str(run), "-q"]
        assert _cli([*argv, "--lm", "openai/stub", "--api-base", server.url, "--B", "200"]) == 0
    summary = json.loads((run / "summary.json").read_text("utf-8"))
    (block,) = summary["judges"].values()
    # no per-model means or leaderboard from "did the first-listed reply win"
    assert "leaderboard" not in block
    assert all(m["score"] is None for m in block["models"].values())
    pairwise = block["pairwise"]
    assert pairwise["verdicts"]["inconsistent"] == 1
    assert [r["options"] for r in pairwise["rankings"]] == [["p", "q", "r"], ["s", "t"], ["x", "y"]]
    capsys.readouterr()

    assert _cli(["rank", str(run), "--json", "--B", "200"]) == 0
    out = json.loads(capsys.readouterr().out)
    by_group = {tuple(r["options"]): r for r in out["rankings"]}
    # x vs y: x has 2 wins + ½ (tie) + ½ (inconsistent) = 3, y has 1 + ½ + ½ = 2;
    # for two options the MLE is β_x − β_y = ln(3/2), centred: β_x = ½ ln(3/2) = −β_y
    fit = by_group[("x", "y")]["bradley_terry"]
    beta = {lab: s["estimate"] for lab, s in zip(fit["labels"], fit["strengths"], strict=True)}
    assert beta["x"] == pytest.approx(0.5 * math.log(3 / 2), abs=1e-6)
    assert beta["y"] == pytest.approx(-0.5 * math.log(3 / 2), abs=1e-6)
    assert fit["n_comparisons"] == 5
    # p, q, r: the same MLE as an independent MM fit of the same outcomes
    fit = by_group[("p", "q", "r")]["bradley_terry"]
    expected = _mm_bradley_terry(GROUP_PQR)
    for lab, s in zip(fit["labels"], fit["strengths"], strict=True):
        assert s["estimate"] == pytest.approx(expected[lab], abs=1e-5)
        assert s["lower"] <= s["estimate"] <= s["upper"]
    # s never lost: no estimate, and the reason names it
    st = by_group[("s", "t")]
    assert st["bradley_terry"] is None and "s" in st["note"]

    # Markdown: the groups, best first; a different B refits and gives the same point estimates
    assert _cli(["rank", str(run), "--B", "300"]) == 0
    text = capsys.readouterr().out
    assert "Ranking of the compared replies (Bradley–Terry)" in text
    # best first; a handful of conversations: no option makes a rank claim, none gets a rank
    assert text.index("| — | x |") < text.index("| — | y |")
    assert f"{0.5 * math.log(3 / 2):.3f}" in text

    # rank --human corrects score means: a pairwise run has none, one clear line, exit 2
    human = tmp_path / "h.jsonl"
    human.write_text(
        json.dumps({"item_id": "pair0", "rater": "h", "value": 3, "dimension": "overall"}) + "\n"
    )
    assert _cli(["rank", str(run), "--human", str(human)]) == 2
    err = capsys.readouterr().err.strip()
    assert "calibrate --human" in err and len(err.splitlines()) == 1
