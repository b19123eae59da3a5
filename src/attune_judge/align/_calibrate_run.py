"""``calibrate_judge``: judge every item in expected mode (or take given judgments), fit the head
on train + dev, prove it on the test conversations, write the calibrated-judge directory."""

from __future__ import annotations

import datetime as dt
import hashlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from attune_judge._version import __version__
from attune_judge.align._artifact import AlignedJudgeManifest, artifact_hash
from attune_judge.align._calibrate import LAMBDAS, fit_heads, head_systems
from attune_judge.align._calibrate_proof import CalibrationProof, calibration_proof
from attune_judge.align._run import AlignConfig, _echo, _judge_all, _load_split
from attune_judge.align._save import write_align_run
from attune_judge.align._split import Split
from attune_judge.calibration import fmt_estimate
from attune_judge.data import Judgment, write_jsonl
from attune_judge.data._aligned import CalibratedHeldOut, CalibrateSettings
from attune_judge.errors import UserError
from attune_judge.judges import JudgeOptions, build_judge
from attune_judge.judges._aligned import CALIBRATED_FORMAT
from attune_judge.judges._calibrated import HEAD_FILE
from attune_judge.lm import lm_spec
from attune_judge.runs._align import AlignBlock

if TYPE_CHECKING:
    import dspy

__all__ = ["CalibrateResult", "calibrate_judge", "proof_markdown"]


class CalibrateResult(BaseModel):
    """What ``calibrate_judge`` did."""

    model_config = ConfigDict(extra="forbid")

    out: str
    split: Split
    proof: CalibrationProof
    manifest: AlignedJudgeManifest
    calls: int
    """Model requests sent (cached answers cost none)."""
    seconds: float


def calibrate_judge(
    config: Any,
    *,
    lm: dspy.BaseLM | None = None,
    judgments: Sequence[Judgment] | None = None,
    echo: Callable[[str], None] | None = None,
) -> CalibrateResult:
    """``align --method calibrate`` (see :mod:`attune_judge.align._calibrate`).

    Parameters
    ----------
    config
        An :class:`~attune_judge.align.AlignConfig` (``method="calibrate"``).
    lm
        A ready ``dspy.LM`` instead of ``config.lm`` (tests).
    judgments
        Expected-mode judgments of this model already made (by item id; e.g. a ``validate``
        run's); the items without one are judged.
    """
    say = echo or _echo
    start = time.monotonic()
    out = Path(config.out)

    def check(data: Any) -> None:
        if data.kind != "ratings":
            raise UserError("--method calibrate takes ratings (a Rating JSONL or a shipped set)")
        if config.reasoning:
            raise UserError("--method calibrate reads score distributions: drop --reasoning")

    data, rubric, items, split = _load_split(config, check)
    base: Any = build_judge(
        rubric,
        lm if lm is not None else config.lm_settings(),
        JudgeOptions(score_mode="expected", use_reference=data.use_reference),
    )
    given = {j.item_id: j for j in judgments or ()}
    todo = [li.item for li in items if li.item.item_id not in given]
    say(
        f"labels: {data.source}: {len(items)} items in {len({li.cluster for li in items})} "
        f"conversations; split (seed {config.seed}) train {len(split.items['train'])} / dev "
        f"{len(split.items['dev'])} / test {len(split.items['test'])} items; judging "
        f"{len(todo)} items in expected-score mode ({len(given)} given)"
    )
    for j in _judge_all(base, todo, config.max_concurrency, "judged", say):
        given[j.item_id] = j
    judged = [given.get(li.item.item_id) for li in items]
    calls = sum(j.details.get("requests", 0) for j in judged if j is not None)
    heads = fit_heads(data, rubric, items, judged, split, reply=config.reply_features)
    part = {iid: name for name, ids in split.items.items() for iid in ids}
    test = [k for k, li in enumerate(items) if part[li.item.item_id] == "test"]
    fit = [items[k] for k, li in enumerate(items) if part[li.item.item_id] != "test"]
    test_items = [items[k] for k in test]
    test_j = [judged[k] for k in test]
    systems, dists = head_systems(heads, fit, test_items, test_j, data.criteria)
    headline = "calibrated+reply" if config.reply_features else "calibrated"
    proof = calibration_proof(
        clusters=[li.cluster for li in test_items],
        human={c: [li.human.get(c) for li in test_items] for c in data.criteria},
        raters=[li.raters for li in test_items],
        systems=systems,
        distributions=dists,
        levels={c: list(rubric.scale_of(c).levels) for c in data.criteria},
        headline=headline,
        n_failed=sum(j is None or j.status != "ok" for j in test_j),
        B=config.B,
        seed=config.seed,
    )
    manifest = _save(out, config, data, rubric, split, heads.saved, proof, base, judged, calls)
    say(proof.verdict)
    return CalibrateResult(
        out=str(out),
        split=split,
        proof=proof,
        manifest=manifest,
        calls=calls,
        seconds=time.monotonic() - start,
    )


def _save(
    out: Path,
    config: AlignConfig,
    data: Any,
    rubric: Any,
    split: Split,
    head: Any,
    proof: CalibrationProof,
    base: Any,
    judged: Sequence[Judgment | None],
    calls: int,
) -> AlignedJudgeManifest:
    out.mkdir(parents=True, exist_ok=True)
    head_file = out / HEAD_FILE
    head_file.write_text(head.model_dump_json(indent=1), encoding="utf-8")
    digest = hashlib.sha256(head_file.read_bytes()).hexdigest()
    (out / "rubric.json").write_text(rubric.model_dump_json(indent=1), encoding="utf-8")
    (out / "split.json").write_text(split.model_dump_json(indent=1), encoding="utf-8")
    # the raw expected-mode judgments of every item: the distributions the head was fitted on
    write_jsonl(out / "judgments.jsonl", [j for j in judged if j is not None])
    options = {"use_reference": data.use_reference}
    spec = lm_spec(base.lm)
    a_hash = artifact_hash(
        digest, rubric.content_hash, {**options, "method": "calibrate", "lm": spec}, None
    )
    overall = proof.criteria.get("overall")
    systems = overall.systems.items() if overall is not None else ()
    held = CalibratedHeldOut(
        verdict=proof.verdict,
        n_items=proof.n_items,
        **{system: {m: v.estimate for m, v in metrics.items()} for system, metrics in systems},
    )
    manifest = AlignedJudgeManifest(
        format=CALIBRATED_FORMAT,
        rubric=rubric.spec(),
        judge_program=base.program_name,
        judge_options=options,
        lm=config.lm,
        lm_spec=spec,
        optimizer=CalibrateSettings(
            head="proportional-odds with rater offsets",
            reply_features=config.reply_features,
            penalty=head.penalty,
            penalty_grid=list(LAMBDAS),
        ),
        metric="ordinal likelihood",
        split=split.summary(),
        source=data.source,
        held_out=held,
        program_sha256=digest,
        artifact_hash=a_hash,
        calls={"evaluation": calls},
        created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        versions={"attune-judge": __version__},
    )
    write_align_run(out, config, AlignBlock(manifest=manifest, calibration_proof=proof))
    title = f"Calibrated judge: {config.lm} on {data.source}"
    (out / "report.md").write_text(proof_markdown(proof, title), encoding="utf-8")
    return manifest


def _cell(m: Any) -> str:
    return "—" if m is None else fmt_estimate(m.estimate, m.lower, m.upper, 2, degenerate="")


def proof_markdown(proof: CalibrationProof, title: str) -> str:
    """The proof as Markdown: per criterion each system's RMSE, ρ and κ_qw, the paired
    differences, Brier and ECE, and the verdict."""
    md = [f"# {title}", "", proof.verdict, ""]
    md.append(
        f"Held-out test split: {proof.n_items} items ({proof.n_clusters} conversations; "
        f"{proof.n_failed} failed judgments left out). Intervals: 95% cluster bootstrap over "
        "conversations; differences are paired (same draws)."
    )
    for c, cp in proof.criteria.items():
        md += ["", f"## {c} ({cp.n_items} items)", "", "| system | RMSE | ρ | κ_qw |"]
        md.append("|---|---|---|---|")
        rows = list(cp.systems.items())
        if cp.human_ceiling:
            rows.append(("human ceiling (one vs the others)", cp.human_ceiling))
        for name, m in rows:
            cells = [_cell(m.get(k)) for k in ("rmse", "spearman", "kappa_qw")]
            md.append(f"| {name} | " + " | ".join(cells) + " |")
        for name, m in cp.differences.items():
            cells = [_cell(m.get(k)) for k in ("rmse", "spearman", "kappa_qw")]
            md.append(f"| Δ {name} | " + " | ".join(cells) + " |")
        if cp.probability:
            md += ["", "| distributions | n ratings | Brier | ECE |", "|---|---|---|---|"]
            for name, p in cp.probability.items():
                if p.brier is not None and p.ece is not None:
                    md.append(f"| {name} | {p.n} | {p.brier:.3f} | {p.ece:.3f} |")
    return "\n".join(md) + "\n"
