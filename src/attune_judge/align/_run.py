"""``align_judge``: split, estimate the budget, judge the test split before, optimise, judge it
after, fit the score map, prove on the held-out items, and save the aligned judge."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from attune_judge._secrets import redact
from attune_judge.align._artifact import (
    ARTIFACT_FILE,
    AlignedJudgeManifest,
    artifact_hash,
)
from attune_judge.align._data import AlignData, LabelledItem, load_align_data
from attune_judge.align._isotonic import ScoreMap, crossfit_score_map, fit_score_map
from attune_judge.align._metric import MetricKind, MetricLog, make_dspy_metric
from attune_judge.align._optimize import (
    BudgetEstimate,
    CallCounter,
    OptimizerSettings,
    estimate_budget,
    run_optimizer,
    to_examples,
)
from attune_judge.align._proof import HeldOutProof, held_out_proof, length_baseline
from attune_judge.align._split import Split, cluster_split
from attune_judge.data import JudgeItem, Judgment, write_jsonl
from attune_judge.errors import UserError

__all__ = ["AlignConfig", "AlignResult", "align_judge"]


class AlignConfig(BaseModel):
    """The arguments of ``attune-judge align``."""

    model_config = ConfigDict(extra="forbid")

    labels: str
    """A shipped set name or a Rating JSONL."""
    out: Path
    """Artifact directory (must not exist or be empty)."""
    items: Path | None = None
    """JudgeItem JSONL of the rated items (with a label file)."""
    rubric: str | None = None
    """Rubric (default: the set's; attunebench-reference for files)."""
    lm: str = "local"
    api_base: str | None = None
    lm_options: dict[str, Any] = Field(default_factory=dict)
    """Decoding settings of the judge model (temperature, max_tokens, response_format, timeout)."""
    use_reference: bool | None = None
    reasoning: bool = False
    raters: list[str] | None = None
    optimizer: OptimizerSettings = Field(default_factory=OptimizerSettings)
    metric: MetricKind = "ordinal"
    split: tuple[float, float, float] = (0.4, 0.2, 0.4)
    seed: int = 0
    limit: int | None = None
    """Use only the first N conversations (by id) — for quick trials."""
    max_calls: int | None = None
    """Refuse to start when the estimate exceeds this many LM calls."""
    max_cost: float | None = None
    """Refuse to start when the estimated cost (USD) exceeds this."""
    max_concurrency: int = 4
    B: int = 2000
    score_map: bool = True
    """Fit (and save) the monotone score map."""


class AlignResult(BaseModel):
    """What ``align_judge`` did."""

    model_config = ConfigDict(extra="forbid")

    out: str
    budget: BudgetEstimate
    split: Split
    proof: HeldOutProof
    manifest: AlignedJudgeManifest
    optimizer_calls: int
    evaluation_calls: int
    metric_item_ids: list[str]
    """Items the optimizer's metric was called on (never a test item)."""
    demo_item_ids: list[str]
    """Items used as demonstrations in the saved program (never a test item)."""
    seconds: float


def _echo(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _judge_all(
    judge: Any,
    items: Sequence[JudgeItem],
    concurrency: int,
    label: str,
    echo: Callable[[str], None],
) -> list[Judgment]:
    done = 0
    out: list[Judgment | None] = [None] * len(items)

    def one(k: int) -> None:
        nonlocal done
        out[k] = judge.judge(items[k])
        done += 1
        if done % 10 == 0 or done == len(items):
            echo(f"  {label}: {done}/{len(items)} judged")

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        list(pool.map(one, range(len(items))))
    return [j for j in out if j is not None]


def _scores(j: Judgment) -> dict[str, float] | None:
    return dict(j.scores) if j.status == "ok" and j.scores else None


def _check_out(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"{out}: already exists and is not an empty folder; choose a new --out")


def _prompt_tokens(judge: Any, item: JudgeItem) -> int:
    text = " ".join(str(v) for v in judge._inputs(item).values())
    return len(text) // 4 + 250


def _demo_ids(program: Any) -> list[str]:
    ids = []
    for _, pred in program.named_predictors():
        for d in pred.demos:
            get = d.get if hasattr(d, "get") else (lambda k, _d=d: getattr(_d, k, None))
            if get("item_id") is not None:
                ids.append(str(get("item_id")))
    return ids


def _limit(data: AlignData, limit: int | None) -> list[LabelledItem]:
    if not limit:
        return data.items
    keep = set(sorted({li.cluster for li in data.items})[:limit])
    return [li for li in data.items if li.cluster in keep]


def align_judge(
    config: AlignConfig,
    *,
    lm: Any = None,
    echo: Callable[[str], None] = _echo,
) -> AlignResult:
    """Align a rubric judge to people's ratings and save it as an artifact (see module doc).

    Parameters
    ----------
    config
        The command's arguments.
    lm
        A ready ``dspy.LM`` to use instead of resolving ``config.lm`` (tests).
    echo
        Where progress lines go (stderr by default).

    Raises
    ------
    UserError
        Bad labels, too few conversations, a budget the estimate exceeds, an unusable
        ``--out``.
    """
    from attune_judge.judges import build_judge
    from attune_judge.lm import configure_cache

    start = time.monotonic()
    out = Path(config.out)
    _check_out(out)
    data, rubric = load_align_data(
        config.labels,
        items=config.items,
        rubric=config.rubric,
        use_reference=config.use_reference,
        raters=config.raters,
    )
    items = _limit(data, config.limit)
    split = cluster_split(
        [li.item.item_id for li in items],
        [li.cluster for li in items],
        seed=config.seed,
        fractions=config.split,
    )
    part = {iid: name for name, ids in split.items.items() for iid in ids}
    train = [li for li in items if part[li.item.item_id] == "train"]
    dev = [li for li in items if part[li.item.item_id] == "dev"]
    test = [li for li in items if part[li.item.item_id] == "test"]
    echo(
        f"labels: {data.source}: {len(items)} items in {len({li.cluster for li in items})} "
        f"conversations; split (seed {config.seed}) train {len(train)} / dev {len(dev)} / "
        f"test {len(test)} items (test held out from the optimizer)"
    )
    configure_cache(None)
    # the one-call program is what DSPy optimises: sampled scores, all criteria in one answer
    options: dict[str, Any] = {
        "use_reference": data.use_reference,
        "reasoning": config.reasoning,
        "score_mode": "sampled",
        "per_criterion": False,
    }
    model = lm if lm is not None else config.lm
    settings: dict[str, Any] = {"seed": config.seed, **config.lm_options}
    if config.api_base:
        settings["api_base"] = config.api_base
    base: Any = build_judge(rubric, model, **options, **settings)
    opt = config.optimizer.model_copy()
    if opt.name == "gepa" and not opt.gepa_metric_calls:
        spare = (config.max_calls or 0) - 2 * len(test)
        if spare <= 0:
            raise UserError("--optimizer gepa needs --max-calls above twice the test items")
        opt.gepa_metric_calls = max(1, (spare * 3) // 4)
    budget = estimate_budget(
        opt,
        n_train=len(train),
        n_dev=len(dev),
        n_test=len(test),
        zero_shot_prompt_tokens=_prompt_tokens(base, items[0].item),
        lm=base.lm,
    )
    cost = "unknown price" if budget.cost_usd is None else f"≈ ${budget.cost_usd:.2f}"
    echo(
        f"budget estimate (upper bound): {budget.total_calls} model calls = optimizer "
        f"{budget.optimizer_calls} ({budget.detail}) + held-out evaluation "
        f"{budget.evaluation_calls}; ~{budget.prompt_tokens_per_call} prompt tokens per call; "
        f"cost {cost}"
    )
    if config.max_calls is not None and budget.total_calls > config.max_calls:
        raise UserError(
            f"the estimate ({budget.total_calls} calls) exceeds --max-calls {config.max_calls}; "
            "lower --num-candidates, use --limit, or choose labeled-fewshot"
        )
    if config.max_cost is not None:
        if budget.cost_usd is None:
            raise UserError(
                f"--max-cost: the price of {config.lm!r} is unknown to litellm; cannot check it"
            )
        if budget.cost_usd > config.max_cost:
            raise UserError(
                f"the estimated cost ${budget.cost_usd:.2f} exceeds --max-cost {config.max_cost}"
            )
    import dspy

    echo("judging the held-out test items with the unaligned judge ...")
    before = _judge_all(base, [li.item for li in test], config.max_concurrency, "before", echo)
    log = MetricLog()
    metric = make_dspy_metric(rubric, config.metric, threshold=opt.metric_threshold, log=log)
    trainset = to_examples(base, train, rubric)
    devset = to_examples(base, dev, rubric)
    echo(f"optimising with {opt.name} on {len(trainset)} train / {len(devset)} dev items ...")
    counter = CallCounter(echo)
    with dspy.context(callbacks=[counter.callback]):
        program = run_optimizer(base, trainset, devset, opt, metric)
    echo(f"optimizer done: {counter.calls} model calls")
    tuned: Any = build_judge(rubric, model, **options, **settings)
    tuned.program = program
    echo("judging the held-out test items with the aligned judge ...")
    after = _judge_all(tuned, [li.item for li in test], config.max_concurrency, "after", echo)
    evaluation_calls = sum(j.usage.calls for j in [*before, *after])
    b_scores = [_scores(j) for j in before]
    a_scores = [_scores(j) for j in after]
    criteria = data.criteria
    ok = [(k, s) for k, s in enumerate(a_scores) if s is not None]
    smap: ScoreMap | None = None
    mapped: list[dict[str, float] | None] | None = None
    if config.score_map and len(ok) >= 4:
        cf = crossfit_score_map(
            [s for _, s in ok],
            [test[k].human for k, _ in ok],
            [test[k].cluster for k, _ in ok],
            criteria,
            seed=config.seed,
        )
        mapped = [None] * len(test)
        for (k, _), m in zip(ok, cf, strict=True):
            mapped[k] = m
        smap = fit_score_map([s for _, s in ok], [test[k].human for k, _ in ok], criteria)
    proof = held_out_proof(
        test,
        b_scores,
        a_scores,
        length_baseline(train, test, rubric, criteria),
        rubric,
        kind=config.metric,
        after_mapped=mapped,
        B=config.B,
        seed=config.seed,
    )
    result = _save(
        out,
        config,
        data,
        rubric,
        split,
        program,
        opt,
        proof,
        smap,
        before,
        after,
        base,
        counter.calls,
        evaluation_calls,
    )
    manifest, demo_ids = result
    echo(proof.verdict)
    return AlignResult(
        out=str(out),
        budget=budget,
        split=split,
        proof=proof,
        manifest=manifest,
        optimizer_calls=counter.calls,
        evaluation_calls=evaluation_calls,
        metric_item_ids=log.item_ids,
        demo_item_ids=demo_ids,
        seconds=time.monotonic() - start,
    )


def _save(
    out: Path,
    config: AlignConfig,
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
) -> tuple[AlignedJudgeManifest, list[str]]:
    from attune_judge._version import __version__
    from attune_judge.judges import hash_spec
    from attune_judge.lm import lm_spec
    from attune_judge.report import write_report

    out.mkdir(parents=True, exist_ok=True)
    program_file = out / "program.json"
    program.save(str(program_file))
    digest = hashlib.sha256(program_file.read_bytes()).hexdigest()
    (out / "rubric.json").write_text(rubric.model_dump_json(indent=1), encoding="utf-8")
    (out / "split.json").write_text(split.model_dump_json(indent=1), encoding="utf-8")
    options = {"use_reference": data.use_reference, "reasoning": config.reasoning}
    a_hash = artifact_hash(digest, rubric.content_hash, options, smap)
    # the aligned judgments carry the id of the aligned judge's raw scores (no score map)
    raw_id = hash_spec({**base.spec, "aligned": {"artifact_hash": a_hash, "score_map": False}})
    write_jsonl(out / "test-before.jsonl", before)
    write_jsonl(
        out / "test-after.jsonl", [j.model_copy(update={"judge_id": raw_id}) for j in after]
    )
    held = {
        "metric": proof.metric,
        "n_items": proof.n_items,
        "before": proof.before.estimate,
        "after": proof.after.estimate,
        "after_mapped": proof.after_mapped.estimate if proof.after_mapped else None,
        "improvement": proof.improvement.estimate,
        "improvement_lower": proof.improvement.lower,
        "improvement_upper": proof.improvement.upper,
        "distinguishable": proof.distinguishable,
        "verdict": proof.verdict,
    }
    manifest = AlignedJudgeManifest(
        rubric=rubric.spec(),
        judge_program=base.program_name,
        judge_options=options,
        lm=config.lm,
        lm_spec=lm_spec(base.lm),
        optimizer=opt.model_dump(mode="json"),
        metric=config.metric,
        split={
            "seed": split.seed,
            "fractions": list(split.fractions),
            "conversations": {k: len(getattr(split, k)) for k in ("train", "dev", "test")},
            "items": {k: len(v) for k, v in split.items.items()},
            "file": "split.json",
        },
        source=data.source,
        held_out=held,
        score_map=smap,
        program_sha256=digest,
        artifact_hash=a_hash,
        calls={"optimizer": optimizer_calls, "evaluation": evaluation_calls},
        created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        versions={"attune-judge": __version__},
    )
    (out / ARTIFACT_FILE).write_text(manifest.model_dump_json(indent=1), encoding="utf-8")
    summary = {
        "kind": "align",
        "align": {
            "manifest": manifest.model_dump(mode="json"),
            "proof": proof.model_dump(mode="json"),
        },
    }
    (out / "summary.json").write_text(
        redact(json.dumps(summary, indent=1, ensure_ascii=False) + "\n"), encoding="utf-8"
    )
    run_manifest = {
        "command": "align",
        "created_at": manifest.created_at,
        "arguments": json.loads(config.model_dump_json(exclude_none=True)),
        "versions": manifest.versions,
    }
    (out / "manifest.json").write_text(
        redact(json.dumps(run_manifest, indent=1) + "\n"), encoding="utf-8"
    )
    try:
        write_report(out)
    except Exception as exc:  # a report bug must not lose a finished (possibly paid) alignment
        _echo(f"warning: report not written: {exc}")
    return manifest, _demo_ids(program)
