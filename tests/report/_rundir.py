"""A small run directory written by hand (manifest, judgments, summary) for report tests.

Two models over four conversations, two turns each. Normalised scores (hand-chosen):

    alpha:          c1 0.8 0.9 | c2 0.7 0.8 | c3 0.9 1.0 | c4 0.6 0.7   mean 6.4 / 8 = 0.800
    <b>beta|</b>:   c1 0.2 0.3 | c2 0.4 0.3 | c3 0.1 0.2 | c4 0.3  (parse_error)
                                                                    mean 1.8 / 7 = 0.2571...

The second model's name is hostile on purpose (HTML tags and a Markdown pipe).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from attune_judge.calibration import judgments_to_scores, leaderboard
from attune_judge.data import Judgment, TokenUsage, write_jsonl

HOSTILE = "<b>beta|</b>"
JUDGE_ID = "reference-0123456789abcdef"
SCORES: dict[str, list[list[float | None]]] = {
    "alpha": [[0.8, 0.9], [0.7, 0.8], [0.9, 1.0], [0.6, 0.7]],
    HOSTILE: [[0.2, 0.3], [0.4, 0.3], [0.1, 0.2], [0.3, None]],
}


def _judgments() -> list[Judgment]:
    out = []
    for model, convs in SCORES.items():
        for c, turns in enumerate(convs, start=1):
            for t, v in enumerate(turns, start=1):
                out.append(
                    Judgment(
                        item_id=f"c{c}:{t}:{model}",
                        judge_id=JUDGE_ID,
                        conversation_id=f"c{c}",
                        candidate_model=model,
                        status="ok" if v is not None else "parse_error",
                        scores={"warmth": 1 + 4 * v} if v is not None else {},
                        overall=1 + 4 * v if v is not None else None,
                        normalized=v,
                        usage=TokenUsage(prompt_tokens=100, completion_tokens=20, calls=1),
                        cost=0.001,
                    )
                )
    return out


def _model_block(model: str) -> dict[str, Any]:
    ok = [v for turns in SCORES[model] for v in turns if v is not None]
    failed = 8 - len(ok)
    return {
        "n_planned": 8,
        "n_judged": 8,
        "n_ok": len(ok),
        "n_by_status": {
            "ok": len(ok),
            "parse_error": failed,
            "lm_error": 0,
            "refused": 0,
            "missing": 0,
        },
        "score": {
            "mean": sum(ok) / len(ok),
            "lower": None,
            "upper": None,
            "level": 0.95,
            "method": "paired cluster bootstrap over conversations (bca)",
            "B": 500,
            "seed": 0,
            "n": len(ok),
            "n_conversations": 4,
        },
        "overall_mean": 1 + 4 * sum(ok) / len(ok),
        "criteria_means": {"warmth": 1 + 4 * sum(ok) / len(ok)},
        "tokens": {"prompt": 800, "completion": 160, "calls": 8},
        "cost_usd": 0.008,
        "n_cost_known": 8,
        "latency_s_mean": 0.5,
        "retries": 0,
    }


MANIFEST = {
    "command": "score",
    "arguments": {"data": "data/samples/attunebench", "lm": "openai/<served>"},
    "versions": {"attune_judge": "0.1.0", "python": "3.11"},
    "judges": {
        JUDGE_ID: {
            "program": "reference",
            "rubric": {"id": "attunebench-reference", "version": "1", "hash": "sha256:abc123"},
            "lm": {"lm": "local", "temperature": 0.0, "max_tokens": None},
        }
    },
    "rubric_hashes": {JUDGE_ID: "sha256:abc123"},
    "data_fingerprint": "f00d",
    "inputs": {"data/samples/attunebench": "f00d"},
    "models": ["alpha", HOSTILE],
    "seed": 0,
    "n_tasks": 16,
    "created_at": "2026-11-30T01:00:00+00:00",
    "updated_at": "2026-11-30T01:00:00+00:00",
    "invocations": 1,
}

CALIBRATION = {
    "metrics": {
        "cohen_kappa_quadratic": {
            "name": "cohen_kappa_quadratic",
            "estimate": 0.4567,
            "lower": 0.3,
            "upper": 0.6,
            "n": 40,
            "n_clusters": 8,
            "method": "bca",
        },
        "krippendorff_alpha_ordinal": {
            "name": "krippendorff_alpha_ordinal",
            "estimate": None,
            "undefined_reason": "all values identical",
            "n": 40,
            "n_clusters": 8,
        },
    },
    "agreement_matrix": {
        "raters": ["h1", "h2", "h3", "judge <x>"],
        "matrix": [
            [None, 0.6, 0.5, 0.4],
            [0.6, None, 0.7, 0.3],
            [0.5, 0.7, None, 0.45],
            [0.4, 0.3, 0.45, None],
        ],
        "metric": "Cohen's κ (quadratic)",
        "judges": ["judge <x>"],
        "ceiling": 0.6,
    },
    "confusion": {"categories": ["yes", "no"], "counts": [[30, 10], [5, 55]]},
    "calibration_curve": {
        "judge_scores": [1, 2, 3, 4, 5],
        "human_means": [1.5, 2.1, None, 3.9, 4.2],
        "counts": [3, 10, 0, 20, 5],
        "identity": True,
    },
}


def _variant(name: str, judge_id: str, **results: Any) -> dict[str, Any]:
    """A variant of the sensitivity block: what it changed and its judge, plus ``results``."""
    return {
        "name": name,
        "perturbations": [] if name == "base" else [name],
        "rubric": {"name": "attunebench-reference", "hash": judge_id[-16:]},
        "lm": None,
        "reasoning": True,
        "use_reference": True,
        "factors": {"variant": name, "judge": "default"},
        "judge_id": judge_id,
        "same_judge_as": [],
        **results,
    }


def _ranked(
    model: str, est: float, rank: int, rank_set: list[int], n_clusters: int = 12
) -> dict[str, Any]:
    score = {"name": f"mean[{model}]", "estimate": est, "lower": est - 0.1, "upper": est + 0.1}
    score["n_clusters"] = n_clusters
    return {"model": model, "score": score, "rank": rank, "rank_set": rank_set}


SENSITIVITY = {
    "study": "report fixture",
    "base": "base",
    "settings": {
        "alpha": 0.05,
        "tau_threshold": 0.8,
        "adjust": "bonferroni",
        "B": 500,
        "seed": 0,
        "variance_method": "anova",
    },
    "variants": {
        "base": _variant(
            "base",
            JUDGE_ID,
            leaderboard=[_ranked("alpha", 0.8, 1, [1, 1]), _ranked(HOSTILE, 0.26, 2, [2, 2])],
        ),
        "shuffled": _variant(
            "shuffled",
            JUDGE_ID,
            tau={"name": "tau", "estimate": 1.0, "lower": 1.0, "upper": 1.0},
            stable=True,
        ),
        "scale 1-7": _variant(
            "scale 1-7",
            "reference-fedcba9876543210",
            tau={"name": "tau", "estimate": -1.0, "lower": -1.0, "upper": 0.2},
            stable=False,
            # alpha judged in one conversation only under this variant: no rank claim
            leaderboard=[_ranked(HOSTILE, 0.6, 1, [1, 2]), _ranked("alpha", 0.5, 2, [1, 2], 1)],
        ),
    },
    "tau_matrix": {
        "labels": ["base", "shuffled", "scale 1-7"],
        "matrix": [[1, 1, -1], [1, 1, -1], [-1, -1, 1]],
    },
    "flips": [
        {
            "variant": "scale 1-7",
            "model_a": "alpha",
            "model_b": HOSTILE,
            "delta_base": 0.543,
            "delta_variant": -0.1,
            "within_intervals": False,
            "significant": True,
        },
    ],
    "variance_components": [
        {"component": "model", "variance": 0.05, "share": 0.5},
        {"component": "residual", "variance": 0.05, "share": 0.5},
    ],
}


def _row(model: str, est: float, rank: int, rank_set: list[int]) -> dict[str, Any]:
    return {
        "model": model,
        "score": {
            "name": f"mean[{model}]",
            "estimate": est,
            "lower": est - 0.1,
            "upper": est + 0.1,
            "n": 16,
            "n_clusters": 4,
        },
        "rank": rank,
        "rank_set_simultaneous": rank_set,
        "rank_set_marginal": rank_set,
        "p_rank_1": 0.9 if rank == 1 else 0.1,
    }


# the bench analysis shape (tasks/_analysis.py): two tasks that rank the two models oppositely,
# so Kendall's W over the two tasks is 0 (by hand: rank sums 3 and 3, mean 3, S = 0)
BENCH = {
    "bootstrap": {
        "B": 500,
        "seed": 0,
        "level": 0.95,
        "scheme": "multinomial",
        "n_conversations": 4,
        "note": "one paired cluster draw over conversations shared by every model and task",
    },
    "models": ["alpha", HOSTILE],
    "tasks": {
        "drafting": {
            "primary_metric": "judge_score",
            "units_by_status": {"alpha": {"ok": 4}, HOSTILE: {"ok": 4}},
            "metrics": {},
            "leaderboard": {"rows": [_row("alpha", 0.7, 1, [1, 1]), _row(HOSTILE, 0.4, 2, [2, 2])]},
            "score_label": "judge score (0–1)",
            "xlim": [-0.03, 1.03],
        },
        "emotion": {
            "primary_metric": "f1",
            "units_by_status": {"alpha": {"ok": 4}, HOSTILE: {"ok": 4}},
            "metrics": {},
            "leaderboard": {
                "rows": [_row(HOSTILE, 0.6, 1, [1, 2]), _row("alpha", 0.55, 2, [1, 2])]
            },
            "score_label": "f1 (0–1)",
            "xlim": [-0.03, 1.03],
        },
    },
    "tau_matrix": {"labels": ["drafting", "emotion"], "matrix": [[1.0, -1.0], [-1.0, 1.0]]},
    "against": "drafting",
    "taus": [
        {
            "label": "emotion",
            "tau": {
                "name": "kendall_tau_b_rankings",
                "estimate": -1.0,
                "lower": -1.0,
                "upper": 1.0,
            },
        }
    ],
    "kendall_w": {"w": 0.0, "chi2": 0.0, "df": 1, "p_value": 1.0, "m": 2, "n": 2},
}


def make_run_dir(path: Path, *, kinds: tuple[str, ...] = ("judges",)) -> Path:
    """Write manifest.json, judgments.jsonl and a summary.json holding ``kinds``: ``judges``
    (a scoring run, with the leaderboard the runner stores: the calibration layer's, on the
    judgments, B = 500, seed 0), with ``sensitivity`` (a sensitivity run), ``calibration``
    (a calibration run: that block only) or ``bench``."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "manifest.json").write_text(json.dumps(MANIFEST), encoding="utf-8")
    write_jsonl(path / "judgments.jsonl", _judgments())
    summary: dict[str, Any] = {
        "run": {
            "n_tasks": 16,
            "n_by_status": {"ok": 15, "parse_error": 1},
            "complete": True,
            "wall_time_s": 1.5,
        }
    }
    if "judges" in kinds:
        board = leaderboard(*judgments_to_scores(_judgments()), B=500, seed=0)
        summary["judges"] = {
            JUDGE_ID: {
                "label": "reference · attunebench-reference@1 · local",
                "models": {m: _model_block(m) for m in SCORES},
                "leaderboard": board.model_dump(mode="json"),
            }
        }
    if "calibration" in kinds:
        summary = {"kind": "calibration", "calibration": CALIBRATION}
    if "sensitivity" in kinds:
        summary["kind"] = "sensitivity"
        summary["sensitivity"] = SENSITIVITY
    if "bench" in kinds:
        summary["kind"] = "bench"
        summary["bench"] = BENCH
    (path / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return path
