"""One call per criterion, scored from the sampled answer or from its token probabilities.

:class:`CriterionJudge` asks each criterion of a ``reference`` rubric (or each question of a
``checklist`` rubric) in its own short call (see :mod:`._criterion_prompt`).

- ``score_mode="sampled"``: the answer text must be exactly one of the scale's levels
  (``yes``/``no`` for checklists); anything else is a ``parse_error`` with the text kept.
- ``score_mode="expected"``: the call asks for token log-probabilities; at the score position
  (the first non-blank answer token) the probabilities of the scale's tokens are renormalised
  into a distribution, and the criterion's score is its expected value (checklists:
  P(yes)). The distribution, expected value, mode, entropy and the mass outside the scale's
  tokens are recorded in ``details["distributions"]``. More than ``max_out_of_scale`` of the
  mass outside the scale is a ``parse_error`` (the model did not answer with a level).

Calls go through ``dspy.LM`` (its cache and retries); a judgment whose calls are all cached
costs nothing, and the runner resumes judgments like any other judge's.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from attune_judge.data import JudgeItem, Judgment, TokenUsage
from attune_judge.errors import UserError
from attune_judge.judges._base import (
    _failure,
    _usage,
    add_usage,
    hash_spec,
    item_judgment,
    judge_spec,
    refusal_judgment,
)
from attune_judge.judges._criterion_prompt import (
    CriterionDemo,
    criterion_labels,
    criterion_messages,
)
from attune_judge.judges._distribution import (
    DEFAULT_MAX_OUT_OF_SCALE,
    ScoreDistribution,
    position_logprobs,
    read_distribution,
)
from attune_judge.lm import model_handle
from attune_judge.rubrics import Criterion, Rubric

__all__ = ["SCORE_MODES", "CriterionJudge", "ScoreMode", "default_score_mode"]

log = logging.getLogger(__name__)

PROGRAM_VERSION = "1"
ScoreMode = Literal["sampled", "expected"]
SCORE_MODES: tuple[ScoreMode, ...] = ("sampled", "expected")
TOP_LOGPROBS = 20
"""Alternatives requested per position (the OpenAI API's maximum)."""
_ANSWER_TOKENS = {"sampled": 8, "expected": 4}


def default_score_mode(lm: Any) -> ScoreMode:
    """``expected`` for the embedded model (it reports logprobs in-process), else ``sampled``."""
    return "expected" if model_handle(lm).prefill else "sampled"


class _Answer:
    """One criterion's outcome: a score (and distribution), or a failure."""

    def __init__(self) -> None:
        self.score: float | None = None
        self.distribution: ScoreDistribution | None = None
        self.text: str = ""
        self.status = "ok"
        self.error: str | None = None
        self.reason: str | None = None
        self.retryable = False
        self.retry_after_s: float | None = None
        self.usage = TokenUsage()
        self.requests = 1


class CriterionJudge:
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
        Expected mode: above this share of mass outside the scale, a ``parse_error``.
    prefill
        Prefill the answer prefix (``None``: when the LM supports it, as the embedded one).
    """

    program_name = "criterion"

    def __init__(
        self,
        rubric: Rubric,
        lm: Any,
        *,
        score_mode: ScoreMode | None = None,
        use_reference: bool = False,
        demos: Sequence[CriterionDemo] = (),
        max_out_of_scale: float = DEFAULT_MAX_OUT_OF_SCALE,
        prefill: bool | None = None,
    ) -> None:
        if rubric.kind not in ("reference", "checklist"):
            raise ValueError(
                f"CriterionJudge needs a reference or checklist rubric, got {rubric.kind!r}"
            )
        if rubric.kind == "checklist" and use_reference:
            raise ValueError("checklist rubrics are asked without a reference")
        mode = score_mode or default_score_mode(lm)
        if mode not in SCORE_MODES:
            raise ValueError(f"score_mode must be one of {SCORE_MODES}, not {mode!r}")
        if not 0.0 <= max_out_of_scale <= 1.0:
            raise ValueError("max_out_of_scale must lie in [0, 1]")
        self.rubric = rubric
        self.lm = lm
        self.score_mode: ScoreMode = mode
        self.use_reference = use_reference
        self.max_out_of_scale = max_out_of_scale
        self.prefill = model_handle(lm).prefill if prefill is None else bool(prefill)
        self.labels = {c.id: criterion_labels(rubric, c) for c in rubric.criteria}
        known = {c.id for c in rubric.criteria}
        unknown = sorted({d.criterion for d in demos} - known)
        if unknown:
            raise ValueError(f"demonstrations for unknown criteria: {unknown}")
        self.demos: dict[str, list[CriterionDemo]] = {c.id: [] for c in rubric.criteria}
        for demo in demos:
            self.demos[demo.criterion].append(demo)
        options: dict[str, Any] = {
            "score_mode": mode,
            "use_reference": use_reference,
            "prefill": self.prefill,
            "max_out_of_scale": max_out_of_scale,
        }
        if demos:
            options["demos"] = [d.model_dump() for d in demos]
        self.spec = judge_spec(self.program_name, PROGRAM_VERSION, rubric, lm, options)
        self.judge_id = hash_spec(self.spec)

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
        config = Config(
            max_tokens=_ANSWER_TOKENS[self.score_mode],
            temperature=0.0 if self.score_mode == "expected" else kwargs.get("temperature"),
            seed=kwargs.get("seed"),
            logprobs=TOP_LOGPROBS if self.score_mode == "expected" else None,
        )
        return Request(
            model=self.lm.model, system=messages[0]["content"], messages=turns, config=config
        )

    def _read(self, criterion: Criterion, response: Any, answer: _Answer) -> None:
        answer.text = str(response.text or "")
        labels = self.labels[criterion.id]
        if self.score_mode == "sampled":
            level = _parse_level(answer.text, labels)
            if level is None:
                answer.status = "parse_error"
                answer.reason = "invalid_value" if answer.text.strip() else "empty"
                answer.error = f"{criterion.id}: answer {answer.text!r} is not one of the levels"
            else:
                answer.score = float(level)
            return
        if not response.logprobs:
            raise UserError(
                f"model {self.lm.model!r} returned no token logprobs; the server does not "
                "support them: use --score-mode sampled"
            )
        position = position_logprobs(response.logprobs)
        if position is None:
            answer.status = "parse_error"
            answer.reason = "empty"
            answer.error = f"{criterion.id}: empty answer (no score token)"
            return
        token, top = position
        try:
            dist = read_distribution(top, labels, answer_token=token)
        except ValueError:
            answer.status = "parse_error"
            answer.reason = "out_of_scale"
            answer.error = f"{criterion.id}: no probability on the scale's tokens"
            return
        answer.distribution = dist
        if dist.out_of_scale > self.max_out_of_scale:
            answer.status = "parse_error"
            answer.reason = "out_of_scale"
            answer.error = (
                f"{criterion.id}: {dist.out_of_scale:.2f} of the probability lies outside the "
                f"scale's tokens (limit {self.max_out_of_scale:.2f})"
            )
            return
        answer.score = dist.expected

    def _ask(self, criterion: Criterion, item: JudgeItem) -> _Answer:
        import dspy
        from dspy.utils.usage_tracker import track_usage

        answer = _Answer()
        request = self._request(criterion, item)
        with dspy.context(lm=self.lm), track_usage() as tracker:
            try:
                response = self.lm(request)
            except UserError:
                raise
            except Exception as exc:
                return _failed(answer, exc, tracker)
        return self._done(criterion, request, response, answer, tracker, False)

    async def _aask(self, criterion: Criterion, item: JudgeItem) -> _Answer:
        import dspy
        from dspy.utils.usage_tracker import track_usage

        answer = _Answer()
        request = self._request(criterion, item)
        with dspy.context(lm=self.lm), track_usage() as tracker:
            try:
                response = await self.lm.acall(request)
            except UserError:
                raise
            except Exception as exc:
                return _failed(answer, exc, tracker)
        return self._done(criterion, request, response, answer, tracker, True)

    def _done(
        self,
        criterion: Criterion,
        request: Any,
        response: Any,
        answer: _Answer,
        tracker: Any,
        asynchronous: bool,
    ) -> _Answer:
        answer.usage = _usage(tracker, 1)
        # a cached answer carries no usage (DSPy clears it: nothing was sent)
        answer.requests = 1 if answer.usage.prompt_tokens or answer.usage.completion_tokens else 0
        self._read(criterion, response, answer)
        if answer.status == "parse_error":
            _evict(self.lm, request, asynchronous)
        return answer

    # --- one item ------------------------------------------------------------------------

    def _refusal(self, item: JudgeItem) -> Judgment | None:
        if self.use_reference and not item.reference:
            return refusal_judgment(
                item,
                self.judge_id,
                "no_reference",
                f"item {item.item_id} has no reference; use use_reference=False to judge it",
            )
        return None

    def _finish(self, item: JudgeItem, answers: Mapping[str, _Answer], started: float) -> Judgment:
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
        raw = {k: a.text for k, a in answers.items()}
        failed = {k: a for k, a in answers.items() if a.status != "ok"}
        if failed:
            status = (
                "lm_error"
                if any(a.status == "lm_error" for a in failed.values())
                else ("parse_error")
            )
            if status == "lm_error":
                errors = [a for a in failed.values() if a.status == "lm_error"]
                details["retryable"] = all(a.retryable for a in errors)
                waits = [a.retry_after_s for a in errors if a.retry_after_s is not None]
                if waits:
                    details["retry_after_s"] = max(waits)
            else:
                details["reason"] = next(a.reason for a in failed.values()) or "invalid_value"
                details["reasons"] = {k: a.reason for k, a in failed.items()}
            return item_judgment(
                item,
                self.judge_id,
                started,
                usage=usage,
                status=status,
                error="; ".join(str(a.error) for a in failed.values()),
                raw_output=_raw_text(raw),
                details=details,
            )
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
            raw_output=_raw_text(raw),
            details=details,
        )

    def judge(self, item: JudgeItem) -> Judgment:
        """Judge one item: one call per criterion (never raises for model-side failures)."""
        started = time.perf_counter()
        refused = self._refusal(item)
        if refused is not None:
            return refused
        answers: dict[str, _Answer] = {}
        for c in self.rubric.criteria:
            answers[c.id] = self._ask(c, item)
            if answers[c.id].status == "lm_error":
                break
        return self._finish(item, answers, started)

    async def ajudge(self, item: JudgeItem) -> Judgment:
        """Async :meth:`judge` (the criteria are asked one after another)."""
        started = time.perf_counter()
        refused = self._refusal(item)
        if refused is not None:
            return refused
        answers: dict[str, _Answer] = {}
        for c in self.rubric.criteria:
            answers[c.id] = await self._aask(c, item)
            if answers[c.id].status == "lm_error":
                break
        return self._finish(item, answers, started)


def _failed(answer: _Answer, exc: Exception, tracker: Any) -> _Answer:
    outcome = _failure(exc, None)
    answer.status = outcome.status
    answer.error = outcome.error
    answer.reason = outcome.reason
    answer.retryable = outcome.retryable
    answer.retry_after_s = outcome.retry_after_s
    answer.text = outcome.raw or ""
    answer.usage = _usage(tracker, 1)
    return answer


def _evict(lm: Any, request: Any, asynchronous: bool) -> None:
    """Remove a failed answer from DSPy's request cache (never replayed into a later run)."""
    try:
        import dspy
        from dspy.clients.execution import IGNORED_CACHE_KEYS, prepare

        prepared = prepare(lm, request, None, {}, asynchronous=asynchronous)
        if not prepared.cache:
            return
        cache = dspy.cache
        key = cache.cache_key(prepared.key(lm, asynchronous), IGNORED_CACHE_KEYS)
        with cache._lock:
            cache.memory_cache.pop(key, None)
        disk = cache.disk_cache
        if isinstance(disk, dict):
            disk.pop(key, None)
        else:
            disk.delete(key)
    except Exception as exc:  # pragma: no cover - depends on DSPy internals
        log.warning("could not evict a failed answer from the request cache: %s", exc)


_LEVEL = re.compile(r"^\s*([A-Za-z]+|\d+)\s*\.?\s*$")


def _parse_level(text: str, labels: Mapping[int, Sequence[str]]) -> int | None:
    """The level a sampled answer names: exactly one level's spelling (a final period
    allowed), else ``None``. ``"4"``, ``" 4."``, ``"Yes"`` parse; ``"4/5"``, ``"4 because"``
    do not."""
    match = _LEVEL.match(text)
    if match is None:
        return None
    word = match.group(1).lower()
    for level, names in labels.items():
        if word in (n.lower() for n in names):
            return level
    return None


def _raw_text(raw: Mapping[str, str]) -> str:
    import json

    return json.dumps(raw, ensure_ascii=False)
