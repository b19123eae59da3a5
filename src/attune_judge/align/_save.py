"""Writing the aligned-judge directory: program, rubric, split, test judgments, manifest,
summary and report (the read side is :mod:`attune_judge.judges._aligned`)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from attune_judge._secrets import redact
from attune_judge._version import __version__
from attune_judge.align._artifact import ARTIFACT_FILE, AlignedJudgeManifest, artifact_hash
from attune_judge.align._data import AlignData
from attune_judge.align._isotonic import ScoreMap
from attune_judge.align._optimize import OptimizerSettings
from attune_judge.align._proof import HeldOutProof
from attune_judge.align._split import Split
from attune_judge.data import Judgment
from attune_judge.data._aligned import HeldOutSummary
from attune_judge.lm import lm_spec
from attune_judge.report import write_report
from attune_judge.runs import AlignSummary, CommandManifest, write_manifest, write_summary
from attune_judge.runs._align import AlignBlock

__all__ = ["save_artifact"]


def _demo_ids(program: Any) -> list[str]:
    ids = []
    for _, pred in program.named_predictors():
        for d in pred.demos:
            get = d.get if hasattr(d, "get") else (lambda k, _d=d: getattr(_d, k, None))
            if get("item_id") is not None:
                ids.append(str(get("item_id")))
    return ids


def save_artifact(
    out: Path,
    config: Any,
    data: AlignData,
    rubric: Any,
    split: Split,
    program: Any,
    opt: OptimizerSettings,
    proof: HeldOutProof,
    smap: ScoreMap | None,
    before: list[Judgment],
    after: list[Judgment],
    base: Any,
    optimizer_calls: int,
    evaluation_calls: int,
    metric: str,
) -> tuple[AlignedJudgeManifest, list[str]]:
    """Write the artifact into ``out``; return its manifest and the demonstrations' item ids."""
    out.mkdir(parents=True, exist_ok=True)
    program_file = out / "program.json"
    program.save(str(program_file))
    digest = hashlib.sha256(program_file.read_bytes()).hexdigest()
    (out / "rubric.json").write_text(rubric.model_dump_json(indent=1), encoding="utf-8")
    (out / "split.json").write_text(split.model_dump_json(indent=1), encoding="utf-8")
    options: dict[str, bool] = {"reasoning": config.reasoning}
    if data.kind == "ratings":
        options["use_reference"] = data.use_reference
    a_hash = artifact_hash(digest, rubric.content_hash, options, smap)
    # the aligned judgments carry the id of the aligned judge's raw scores (no score map)
    raw_id = base.spec.with_keys(aligned={"artifact_hash": a_hash, "score_map": False}).judge_id()
    aligned = [j.model_copy(update={"judge_id": raw_id}) for j in after]
    for name, judged in (("test-before.jsonl", before), ("test-after.jsonl", aligned)):
        lines = "".join(j.model_dump_json() + "\n" for j in judged)
        (out / name).write_text(redact(lines), encoding="utf-8")  # as a run's judgments
    held = HeldOutSummary(
        metric=proof.metric,
        n_items=proof.n_items,
        before=proof.before.estimate,
        after=proof.after.estimate,
        after_mapped=proof.after_mapped.estimate if proof.after_mapped else None,
        length_baseline=proof.length_baseline.estimate,
        position_baseline=proof.position_baseline.estimate if proof.position_baseline else None,
        improvement=proof.improvement.estimate,
        improvement_lower=proof.improvement.lower,
        improvement_upper=proof.improvement.upper,
        distinguishable=proof.distinguishable,
        verdict=proof.verdict,
    )
    manifest = AlignedJudgeManifest(
        rubric=rubric.spec(),
        judge_program=base.program_name,
        judge_options=options,
        lm=config.lm,
        lm_spec=lm_spec(base.lm),
        optimizer=opt,
        metric=metric,
        split=split.summary(),
        source=data.source,
        held_out=held,
        score_map=smap,
        program_sha256=digest,
        artifact_hash=a_hash,
        calls={"optimizer": optimizer_calls, "evaluation": evaluation_calls},
        created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        versions={"attune-judge": __version__},
    )
    write_align_run(out, config, AlignBlock(manifest=manifest, proof=proof))
    try:
        write_report(out)
    except Exception as exc:  # a report bug must not lose a finished (possibly paid) alignment
        print(f"warning: report not written: {exc}", file=sys.stderr, flush=True)
    return manifest, _demo_ids(program)


def write_align_run(out: Path, config: Any, block: AlignBlock) -> None:
    """Write an align run's artifact manifest, ``summary.json`` (the manifest beside its proof)
    and ``manifest.json`` (the command's arguments)."""
    manifest = block.manifest
    (out / ARTIFACT_FILE).write_text(manifest.model_dump_json(indent=1), encoding="utf-8")
    write_summary(out, AlignSummary(align=block))
    write_manifest(
        out,
        CommandManifest(
            command="align",
            created_at=manifest.created_at,
            arguments=json.loads(config.model_dump_json(exclude_none=True)),
            versions=manifest.versions,
        ),
    )
