"""One call per criterion, scored from the sampled answer or from its token probabilities.

:class:`CriterionJudge` asks each criterion of a ``reference`` rubric (or each question of a
``checklist`` rubric) in its own short call (see :mod:`._criterion_prompt`).

- ``score_mode="sampled"``: the answer text must be exactly one of the scale's levels
  (``yes``/``no`` for checklists); anything else is a ``parse_error`` with the text kept.
- ``score_mode="expected"``: the call asks for token log-probabilities; at the score position
  (the first non-blank answer token) the probabilities of the scale's tokens are renormalised
  into a distribution, and the criterion's score is its expected value (checklists:
  P(yes)). The distribution, expected value, mode, entropy and the mass outside the scale's
  tokens are recorded in ``details["distributions"]``: the distribution is that of decoding
  restricted to the scale's tokens, and the outside mass is a diagnostic (the runner warns when
  it is large). No probability on any level is a ``parse_error``; so is more than an explicit
  ``max_out_of_scale`` (default: no limit).

Calls go through ``dspy.LM`` (its cache and retries); a judgment whose calls are all cached
costs nothing, and the runner resumes judgments like any other judge's.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from attune_judge.data import JudgeItem, Judgment, TokenUsage
from attune_judge.judges._base import _usage, aattempt, add_usage, attempt, item_judgment
from attune_judge.judges._criterion_answer import (
    CriterionAnswer,
    ScoreMode,
    failed_answer,
    raw_text,
    read_answer,
)
from attune_judge.judges._criterion_prompt import (
    CriterionDemo,
    criterion_labels,
    criterion_messages,
)
from attune_judge.judges._distribution import DEFAULT_MAX_OUT_OF_SCALE
from attune_judge.judges._judge_base import JudgeBase, Plan
from attune_judge.lm import evict, model_handle, typed_call_kwargs
from attune_judge.lm._timing import add_request
from attune_judge.rubrics import Criterion, Rubric

if TYPE_CHECKING:
    import dspy

__all__ = ["SCORE_MODES", "CriterionJudge", "ScoreMode", "default_score_mode"]

PROGRAM_VERSION = "1"
SCORE_MODES: tuple[ScoreMode, ...] = ("sampled", "expected")
TOP_LOGPROBS = 20
"""Alternatives requested per position (the OpenAI API's maximum)."""
_ANSWER_TOKENS = {"sampled": 8, "expected": 4}


def default_score_mode(lm: dspy.BaseLM) -> ScoreMode:
    """``expected`` for the embedded model (it reports logprobs in-process), else ``sampled``."""
    return "expected" if model_handle(lm).prefill else "sampled"


class CriterionJudge(JudgeBase):
    """Scores a ``reference`` or ``checklist`` rubric with one call per criterion.

    Parameters
    ----------
    rubric
        A rubric of kind ``reference`` or ``checklist`` (levels 0..9: one-token answers).
    lm
        A ``dspy.LM``. ``expected`` needs an engine that reports logprobs (the embedded model,
        or an OpenAI-compatible server that returns ``logprobs``/``top_logprobs``).
    score_mode
        ``sampled`` or ``expected``; ``None``: :func:`default_score_mode`.
    use_reference
        Show the reference reply (``reference`` rubrics; an item without one is refused).
    demos
        Labelled demonstrations, shown before each question of their criterion.
    max_out_of_scale
        Expected mode: above this share of mass outside the scale, a ``parse_error``
        (default 1.0: no limit, the distribution is read as constrained to the scale).
    prefill
        Prefill the answer prefix (``None``: when the LM supports it, as the embedded one).
    """

    program_name = "criterion"
    program_version = PROGRAM_VERSION
    rubric_kinds = ("reference", "checklist")
    stop_after_lm_error = True  # the other criteria would fail alike, and cost requests

    def __init__(
        self,
        rubric: Rubric,
        lm: dspy.BaseLM,
        *,
        score_mode: ScoreMode | None = None,
        use_reference: bool = False,
        demos: Sequence[CriterionDemo] = (),
        max_out_of_scale: float = DEFAULT_MAX_OUT_OF_SCALE,
        prefill: bool | None = None,
    ) -> None:
        self.check_rubric(rubric)
        if rubric.kind == "checklist" and use_reference:
            raise ValueError("checklist rubrics are asked without a reference")
        mode = score_mode or default_score_mode(lm)
        if mode not in SCORE_MODES:
            raise ValueError(f"score_mode must be one of {SCORE_MODES}, not {mode!r}")
        if not 0.0 <= max_out_of_scale <= 1.0:
            raise ValueError("max_out_of_scale must lie in [0, 1]")
        self.score_mode: ScoreMode = mode
        self.use_reference = use_reference
        self.max_out_of_scale = max_out_of_scale
        self.prefill = model_handle(lm).prefill if prefill is None else bool(prefill)
        self.labels = {
            c.id: criterion_labels(rubric, c, one_token=mode == "expected") for c in rubric.criteria
        }
        self.demos = _demos_by_criterion(rubric, demos)
        options: dict[str, Any] = {
            "score_mode": mode,
            "use_reference": use_reference,
            "prefill": self.prefill,
            "max_out_of_scale": max_out_of_scale,
        }
        if demos:
            options["demos"] = [d.model_dump() for d in demos]
        super().__init__(rubric, lm, options)

    # --- one criterion -------------------------------------------------------------------

    def _request(self, criterion: Criterion, item: JudgeItem) -> Any:
        from dspy.lm15 import Config, Message, Request

        messages = criterion_messages(
            self.rubric,
            criterion,
            item,
            use_reference=self.use_reference,
            prefill=self.prefill,
            demos=self.demos[criterion.id],
        )
        turns = tuple(
            Message.user(m["content"]) if m["role"] == "user" else Message.assistant(m["content"])
            for m in messages[1:]
        )
        kwargs = dict(getattr(self.lm, "kwargs", {}) or {})
        limit = _ANSWER_TOKENS[self.score_mode]
        # DSPy names the limit max_completion_tokens (OpenAI's field), which an
        # OpenAI-compatible server such as llama-cpp-python's ignores (it then writes until its
        # context is full): a server gets the max_tokens they all honour, sent as written
        server = model_handle(self.lm).server is not None
        config = Config(
            max_tokens=None if server else limit,
            temperature=0.0 if self.score_mode == "expected" else kwargs.get("temperature"),
            seed=kwargs.get("seed"),
            logprobs=TOP_LOGPROBS if self.score_mode == "expected" else None,
            extensions={"max_tokens": limit} if server else None,
        )
        return Request(
            model=self.lm.model, system=messages[0]["content"], messages=turns, config=config
        )

    def _call(self, item: JudgeItem, call: Criterion) -> CriterionAnswer:
        """Ask one criterion."""
        import dspy
        from dspy.utils.usage_tracker import track_usage

        request = self._request(call, item)
        started = time.perf_counter()
        with dspy.context(lm=self.lm), track_usage() as tracker:
            response, exc = attempt(lambda: self.lm(request, **typed_call_kwargs(self.lm)))
        return self._done(call, request, started, tracker, response, exc, False)

    async def _acall(self, item: JudgeItem, call: Criterion) -> CriterionAnswer:
        """Async :meth:`_call`."""
        import dspy
        from dspy.utils.usage_tracker import track_usage

        request = self._request(call, item)
        started = time.perf_counter()
        with dspy.context(lm=self.lm), track_usage() as tracker:
            response, exc = await aattempt(
                lambda: self.lm.acall(request, **typed_call_kwargs(self.lm))
            )
        return self._done(call, request, started, tracker, response, exc, True)

    def _done(
        self,
        criterion: Criterion,
        request: Any,
        started: float,
        tracker: Any,
        response: Any,
        exc: Exception | None,
        asynchronous: bool,
    ) -> CriterionAnswer:
        add_request(time.perf_counter() - started)
        if exc is not None:
            return failed_answer(exc, tracker)
        answer = CriterionAnswer(usage=_usage(tracker, 1))
        # a cached answer carries no usage (DSPy clears it: nothing was sent)
        answer.requests = 1 if answer.usage.prompt_tokens or answer.usage.completion_tokens else 0
        read_answer(
            answer,
            response,
            criterion_id=criterion.id,
            labels=self.labels[criterion.id],
            score_mode=self.score_mode,
            max_out_of_scale=self.max_out_of_scale,
            model=self.lm.model,
        )
        if answer.status == "parse_error":
            evict(self.lm, request, asynchronous=asynchronous)
        return answer

    # --- one item ------------------------------------------------------------------------

    def _plan(self, item: JudgeItem) -> Plan | Judgment:
        """One call per criterion, in the rubric's order."""
        refused = self._refuse_without_reference(item)
        if refused is not None:
            return refused
        return Plan(list(self.rubric.criteria))

    def _finish(
        self, item: JudgeItem, plan: Plan, outcomes: Sequence[CriterionAnswer], started: float
    ) -> Judgment:
        answers = {c.id: a for c, a in zip(plan.calls, outcomes, strict=False)}
        usage = TokenUsage()
        for a in answers.values():
            usage = add_usage(usage, a.usage)
        details: dict[str, Any] = {
            "score_mode": self.score_mode,
            "per_criterion": True,
            "requests": sum(a.requests for a in answers.values()),
        }
        dists = {k: a.distribution.model_dump() for k, a in answers.items() if a.distribution}
        if dists:
            details["distributions"] = dists
        raw = raw_text({k: a.text for k, a in answers.items()})
        failed = {k: a for k, a in answers.items() if a.status != "ok"}
        if failed:
            return self._failed(item, failed, details, usage, raw, started)
        values = {k: float(a.score) for k, a in answers.items() if a.score is not None}
        if self.rubric.kind == "checklist":
            details["p_yes"] = values
            scores, overall, normalized = self.rubric.checklist_scores(values)
        else:
            scores = values
            overall, normalized = self.rubric.aggregate(scores)
        return item_judgment(
            item,
            self.judge_id,
            started,
            usage=usage,
            scores=scores,
            overall=overall,
            normalized=normalized,
            raw_output=raw,
            details=details,
        )

    def _failed(
        self,
        item: JudgeItem,
        failed: Mapping[str, CriterionAnswer],
        details: dict[str, Any],
        usage: TokenUsage,
        raw: str,
        started: float,
    ) -> Judgment:
        """An LM error if any criterion's call failed so (retryable if all of those are),
        else a parse error naming each criterion's reason."""
        errors = [a for a in failed.values() if a.status == "lm_error"]
        if errors:
            status = "lm_error"
            details["retryable"] = all(a.retryable for a in errors)
            waits = [a.retry_after_s for a in errors if a.retry_after_s is not None]
            if waits:
                details["retry_after_s"] = max(waits)
        else:
            status = "parse_error"
            details["reason"] = next(a.reason for a in failed.values()) or "invalid_value"
            details["reasons"] = {k: a.reason for k, a in failed.items()}
        return item_judgment(
            item,
            self.judge_id,
            started,
            usage=usage,
            status=status,
            error="; ".join(str(a.error) for a in failed.values()),
            raw_output=raw,
            details=details,
        )


def _demos_by_criterion(
    rubric: Rubric, demos: Sequence[CriterionDemo]
) -> dict[str, list[CriterionDemo]]:
    known = {c.id for c in rubric.criteria}
    unknown = sorted({d.criterion for d in demos} - known)
    if unknown:
        raise ValueError(f"demonstrations for unknown criteria: {unknown}")
    by_id: dict[str, list[CriterionDemo]] = {c.id: [] for c in rubric.criteria}
    for demo in demos:
        by_id[demo.criterion].append(demo)
    return by_id
