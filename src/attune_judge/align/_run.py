"""``align_judge``: split, estimate the budget, judge the test split before, optimise, judge it
after, fit the score map, prove on the held-out items, and save the aligned judge."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from attune_judge._bootstrap import DEFAULT_B
from attune_judge.align._artifact import AlignedJudgeManifest
from attune_judge.align._data import AlignData, LabelledItem, load_align_data
from attune_judge.align._isotonic import ScoreMap, crossfit_score_map, fit_score_map
from attune_judge.align._metric import (
    PREFERENCE_METRICS,
    RATING_METRICS,
    MetricKind,
    MetricLog,
    make_dspy_metric,
    make_verdict_metric,
)
from attune_judge.align._optimize import (
    GEPA_ROUND_EXTRA,
    BudgetEstimate,
    CallCounter,
    OptimizerSettings,
    estimate_budget,
    gepa_metric_cap,
    run_optimizer,
    to_examples,
)
from attune_judge.align._preferences import pair_examples, pair_inputs, preference_proof
from attune_judge.align._proof import HeldOutProof, held_out_proof, length_baseline
from attune_judge.align._save import save_artifact
from attune_judge.align._split import Split, cluster_split
from attune_judge.data import JudgeItem, Judgment
from attune_judge.errors import UserError
from attune_judge.judges import JudgeOptions, build_judge
from attune_judge.lm import LMSettings, library_output_to
from attune_judge.runner import RetryPolicy, Task, judge_with_retries

if TYPE_CHECKING:
    import dspy

__all__ = ["AlignConfig", "AlignResult", "align_judge"]


class AlignConfig(BaseModel):
    """The arguments of ``attune-judge align``."""

    model_config = ConfigDict(extra="forbid")

    labels: str
    """A shipped set name, a Rating JSONL or a Preference JSONL."""
    out: Path
    """Artifact directory (must not exist or be empty)."""
    items: Path | None = None
    """JudgeItem JSONL of the rated items (with a label file); for preferences also the pairs
    or the AttuneBench data they came from."""
    rubric: str | None = None
    """Rubric (default: the set's; attunebench-reference for ratings, attunebench-pairwise for
    preferences)."""
    lm: str = "local"
    api_base: str | None = None
    lm_options: dict[str, float | int | str] = Field(default_factory=dict)
    """Decoding settings of the judge model (temperature, max_tokens, response_format, timeout:
    :meth:`LMSettings.decoding_options`)."""
    use_reference: bool | None = None
    reasoning: bool = False
    raters: list[str] | None = None
    optimizer: OptimizerSettings = Field(default_factory=OptimizerSettings)
    metric: MetricKind | None = None
    """Default: ``ordinal`` for ratings, ``exact`` for preferences."""
    split: tuple[float, float, float] = (0.4, 0.2, 0.4)
    seed: int = 0
    limit: int | None = None
    """Use only the first N conversations (by id) — for quick trials."""
    max_calls: int | None = None
    """Refuse to start when the estimate exceeds this many LM calls."""
    max_cost: float | None = None
    """Refuse to start when the estimated cost (USD) exceeds this."""
    max_concurrency: int = 4
    B: int = DEFAULT_B
    score_map: bool = True
    """Fit (and save) the monotone score map."""
    method: Literal["optimize", "calibrate"] = "optimize"
    """``optimize``: a DSPy optimizer on the program; ``calibrate``: an ordinal head on the
    judge's score distributions (:func:`attune_judge.align.calibrate_judge`)."""
    reply_features: bool = False
    """``calibrate``: the reply's length and empathy-word count are features of the head too."""

    def lm_settings(self) -> LMSettings:
        """The judge model's settings: ``lm``, seed, ``lm_options``, API base (over the
        ``ATTUNE_*`` variables; an unknown option is a ``UserError``)."""
        return LMSettings.from_env(
            lm=self.lm, seed=self.seed, api_base=self.api_base, **self.lm_options
        )


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
    policy = RetryPolicy()

    def one(k: int) -> None:
        nonlocal done
        # the one retry layer every command uses: rate limits, server errors and timeouts are
        # tried again, and each judgment counts every request sent for it
        out[k] = judge_with_retries(Task(items[k], judge), policy)
        done += 1
        if done % 10 == 0 or done == len(items):
            echo(f"  {label}: {done}/{len(items)} judged")

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        list(pool.map(one, range(len(items))))
    return [j for j in out if j is not None]


def _scores(j: Judgment) -> dict[str, float] | None:
    return dict(j.scores) if j.status == "ok" and j.scores else None


ALIGN_LOG = "align.log"
"""The optimizer's own output (DSPy's log lines and progress bars), in the output folder."""


def _check_out(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(p.name != ALIGN_LOG for p in out.iterdir())):
        raise UserError(f"{out}: already exists and is not an empty folder; choose a new --out")


def _prompt_tokens(judge: Any, li: LabelledItem, pairs: bool) -> int:
    inputs = pair_inputs(judge, li)[0] if pairs else judge._inputs(li.item)
    text = " ".join(str(v) for v in inputs.values())
    return len(text) // 4 + 250


def _metric_kind(config: AlignConfig, pairs: bool) -> MetricKind:
    allowed = PREFERENCE_METRICS if pairs else RATING_METRICS
    kind = config.metric or ("exact" if pairs else "ordinal")
    if kind not in allowed:
        labels = "preferences" if pairs else "ratings"
        raise UserError(f"--metric {kind} does not apply to {labels}; choose {', '.join(allowed)}")
    return kind


def _load_split(
    config: AlignConfig, check: Callable[[AlignData], object] = lambda data: None
) -> tuple[AlignData, Any, list[LabelledItem], Split]:
    """``config``'s labels (``--out`` checked first; ``check`` sees them), the items of the
    first ``--limit`` conversations, and their split by conversation."""
    _check_out(Path(config.out))
    data, rubric = load_align_data(
        config.labels,
        items=config.items,
        rubric=config.rubric,
        use_reference=config.use_reference,
        raters=config.raters,
    )
    check(data)
    items = data.items
    if config.limit:
        keep = set(sorted({li.cluster for li in data.items})[: config.limit])
        items = [li for li in data.items if li.cluster in keep]
    ids, clusters = [li.item.item_id for li in items], [li.cluster for li in items]
    split = cluster_split(ids, clusters, seed=config.seed, fractions=config.split)
    return data, rubric, items, split


def align_judge(
    config: AlignConfig,
    *,
    lm: dspy.BaseLM | None = None,
    echo: Callable[[str], None] = _echo,
) -> AlignResult:
    """Align a judge to people's ratings (a rubric judge) or their pairwise choices (a pairwise
    judge) and save it as an artifact (see module doc).

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
    if config.method != "optimize":
        raise UserError("align_judge optimises; --method calibrate is calibrate_judge")
    start = time.monotonic()
    out = Path(config.out)
    data, rubric, items, split = _load_split(
        config, lambda data: _metric_kind(config, data.kind == "preferences")
    )
    pairs = data.kind == "preferences"
    kind = _metric_kind(config, pairs)
    part = {iid: name for name, ids in split.items.items() for iid in ids}
    train = [li for li in items if part[li.item.item_id] == "train"]
    dev = [li for li in items if part[li.item.item_id] == "dev"]
    test = [li for li in items if part[li.item.item_id] == "test"]
    what = "pairs" if pairs else "items"
    echo(
        f"labels: {data.source}: {len(items)} {what} in {len({li.cluster for li in items})} "
        f"conversations; split (seed {config.seed}) train {len(train)} / dev {len(dev)} / "
        f"test {len(test)} {what} (test held out from the optimizer)"
    )
    # the one-call program is what DSPy optimises: sampled scores, all criteria in one answer
    options = (
        JudgeOptions(reasoning=config.reasoning)
        if pairs
        else JudgeOptions(
            reasoning=config.reasoning,
            use_reference=data.use_reference,
            score_mode="sampled",
            per_criterion=False,
        )
    )
    model = lm if lm is not None else config.lm_settings()
    base: Any = build_judge(rubric, model, options)
    # a pair gives two examples (both orders) and two calls per judgment
    per = 2 if pairs else 1
    evaluation_estimate = 2 * per * len(test)
    opt = config.optimizer.model_copy()
    if opt.name == "gepa" and not opt.gepa_metric_calls:
        spare = (config.max_calls or 0) - evaluation_estimate
        cap = gepa_metric_cap(spare, n_dev=per * len(dev))
        if cap < 1:
            raise UserError(
                f"--optimizer gepa needs --max-calls above the {evaluation_estimate} calls of "
                f"the held-out evaluation plus GEPA's last round ({per * len(dev)} dev "
                f"examples + {GEPA_ROUND_EXTRA}) and its reflections"
            )
        opt.gepa_metric_calls = cap
    budget = estimate_budget(
        opt,
        n_train=per * len(train),
        n_dev=per * len(dev),
        n_test=per * len(test),
        zero_shot_prompt_tokens=_prompt_tokens(base, items[0], pairs),
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
    if pairs:
        metric = make_verdict_metric(kind, threshold=opt.metric_threshold, log=log)
        trainset, devset = pair_examples(base, train), pair_examples(base, dev)
    else:
        metric = make_dspy_metric(rubric, kind, threshold=opt.metric_threshold, log=log)
        trainset, devset = to_examples(base, train, rubric), to_examples(base, dev, rubric)
    echo(f"optimising with {opt.name} on {len(trainset)} train / {len(devset)} dev examples ...")
    console = sys.stderr  # our lines stay on the console while DSPy's go to the log
    say = echo if echo is not _echo else (lambda text: print(text, file=console, flush=True))
    counter = CallCounter(say)
    say(f"  (DSPy's own log and progress bars: {out / ALIGN_LOG})")
    with (
        dspy.context(callbacks=[counter.callback]),
        library_output_to(out / ALIGN_LOG, bars=True),
    ):
        program = run_optimizer(base, trainset, devset, opt, metric)
    echo(f"optimizer done: {counter.calls} model calls")
    tuned: Any = build_judge(rubric, model, options)
    tuned.program = program
    echo("judging the held-out test items with the aligned judge ...")
    after = _judge_all(tuned, [li.item for li in test], config.max_concurrency, "after", echo)
    evaluation_calls = sum(j.usage.calls for j in [*before, *after])
    smap: ScoreMap | None = None
    if pairs:
        proof = preference_proof(test, before, after, kind=kind, B=config.B, seed=config.seed)
    else:
        proof, smap = _rating_proof(config, data, rubric, train, test, before, after, kind)
    manifest, demo_ids = save_artifact(
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
        kind,
    )
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


def _rating_proof(
    config: AlignConfig,
    data: AlignData,
    rubric: Any,
    train: list[LabelledItem],
    test: list[LabelledItem],
    before: list[Judgment],
    after: list[Judgment],
    kind: MetricKind,
) -> tuple[HeldOutProof, ScoreMap | None]:
    """The held-out proof on scores, with the score map fitted and cross-fitted on the test
    items' aligned scores."""
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
        kind=kind,
        after_mapped=mapped,
        B=config.B,
        seed=config.seed,
    )
    return proof, smap
