"""Drafting candidates: a DSPy responder writes a reply at each annotated turn.

This is AttuneBench's draft step: the evaluated model sees the conversation up to the
participant's message and writes its own reply, which a judge then scores against the
participant-edited reference. Output is a candidates JSONL (:class:`Candidate`), appended one
reply at a time, so an interrupted ``generate`` resumes where it stopped.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from attune_judge.data import JsonlAppender, JudgeItem, iter_jsonl
from attune_judge.judges import call_program
from attune_judge.lm import LMSettings, lm_response_format, make_adapter, resolve_lm
from attune_judge.runner._candidates import Candidate
from attune_judge.runner._executor import Executor, RetryPolicy, ThreadExecutor, retry_wait
from attune_judge.runner._inputs import attunebench_items
from attune_judge.runner._progress import make_progress
from attune_judge.runner._scale import scaled_executor
from attune_judge.runner._store import cut_torn_tail, lock_path, redact, secret_values

if TYPE_CHECKING:
    import dspy

__all__ = [
    "DraftError",
    "DraftFn",
    "GenerateResult",
    "draft_reply",
    "generate_candidates",
    "make_responder",
    "run_generate",
]

log = logging.getLogger(__name__)

RESPONDER_INSTRUCTIONS = (
    "You are the assistant in a supportive conversation. Read the conversation so far and "
    "write your next reply to the participant's last message. Be attentive to how they feel "
    "and to what they are asking for."
)


def _signature() -> type[dspy.Signature]:
    import dspy

    class DraftReply(dspy.Signature):
        __doc__ = RESPONDER_INSTRUCTIONS

        conversation: list[dict[str, str]] = dspy.InputField(
            desc="chat messages so far, oldest first; the last one is the participant's"
        )
        reply: str = dspy.OutputField(desc="your reply to the participant's last message")

    return DraftReply


def make_responder() -> dspy.Module:
    """A fresh DSPy responder module (``Predict`` over conversation → reply)."""
    import dspy

    return dspy.Predict(_signature())


class DraftError(RuntimeError):
    """A reply that could not be drafted: the model failed or its answer did not parse."""

    def __init__(self, outcome: Any) -> None:
        detail = f" ({outcome.reason})" if outcome.reason else ""
        super().__init__(f"{outcome.status}{detail}: {outcome.error}")
        self.outcome = outcome


def _draft_outcome(item: JudgeItem, *, lm: dspy.LM, module: Any, adapter: Any = None) -> Any:
    """The call outcome of drafting one reply (strict parsing, truncation, cache eviction)."""
    if adapter is None:
        adapter = make_adapter(lm_response_format(lm))
    conversation = [m.model_dump() for m in item.context]
    return call_program(module, lm, adapter, conversation=conversation)


def draft_reply(item: JudgeItem, *, lm: dspy.LM, module: Any, adapter: Any = None) -> str:
    """One reply to ``item``'s context.

    Raises
    ------
    DraftError
        The model failed (``lm_error``) or its answer was not exactly one JSON object with a
        text ``reply`` (``parse_error``; an answer cut off by the token limit included).
    """
    outcome = _draft_outcome(item, lm=lm, module=module, adapter=adapter)
    if outcome.status != "ok":
        raise DraftError(outcome)
    return str(outcome.prediction.reply)


class GenerateResult(BaseModel):
    """What a ``generate`` invocation did."""

    model_config = ConfigDict(extra="forbid")

    out: Path
    """The candidates file."""
    model: str
    """The ``model`` written into each candidate."""
    n_turns: int
    """Annotated turns in the data."""
    n_skipped: int
    """Turns that already had a reply from this model in ``out``."""
    n_written: int
    """Replies written by this invocation."""
    errors: list[str]
    """One line per turn whose reply failed (after retries); run again to retry them."""
    wall_time_s: float
    """Wall time of this invocation."""


def _draft_one(
    item: JudgeItem,
    *,
    lm: dspy.LM,
    module: Any,
    adapter: Any,
    model: str,
    retry: RetryPolicy,
    secrets: list[str],
) -> Candidate | str:
    start = time.perf_counter()
    attempts = requests = transient = parse_failures = 0
    while True:
        attempts += 1
        outcome = _draft_outcome(item, lm=lm, module=module, adapter=adapter)
        requests += outcome.requests
        if outcome.status == "ok":
            break
        if outcome.status == "lm_error" and outcome.retryable and transient < retry.max_retries:
            time.sleep(retry_wait(retry, transient, outcome.retry_after_s))
            transient += 1
            continue
        if outcome.status == "parse_error" and parse_failures < retry.parse_retries:
            parse_failures += 1
            continue
        msg = redact(str(DraftError(outcome)), secrets)
        return (
            f"conversation {item.conversation_id!r} turn {item.turn}: {msg[:300]} "
            f"(after {attempts} attempt(s))"
        )
    return Candidate(
        conversation_id=item.conversation_id,
        turn=item.turn if item.turn is not None else 0,
        model=model,
        response=redact(str(outcome.prediction.reply), secrets),
        metadata={
            "latency_s": round(time.perf_counter() - start, 4),
            "attempts": attempts,
            "requests": requests,
        },
    )


class DraftFn:
    """The drafting task function for worker processes and Ray actors (picklable).

    Only the recipe travels — the model's :class:`~attune_judge.lm.LMSettings`, candidate
    name, retry policy; each worker resolves the model once (its API key from *its*
    environment) and builds the responder, and redacts its own secrets from error messages.
    """

    def __init__(
        self, settings: LMSettings, *, model: str, retry: RetryPolicy | None = None
    ) -> None:
        self.settings = settings
        self.model = model
        self.retry = retry or RetryPolicy()

    def __call__(self, item: JudgeItem) -> Candidate | str:
        """Draft one reply (a :class:`Candidate`, or an error line)."""
        lm, module, adapter, secrets = _worker_state(self.settings)
        return _draft_one(
            item,
            lm=lm,
            module=module,
            adapter=adapter,
            model=self.model,
            retry=self.retry,
            secrets=secrets,
        )


_WORKER_STATE: dict[LMSettings, tuple[Any, Any, Any, list[str]]] = {}
_WORKER_LOCK = threading.Lock()


def _worker_state(settings: LMSettings) -> tuple[Any, Any, Any, list[str]]:
    """This process's model, responder, adapter and secrets for a recipe (built once)."""
    with _WORKER_LOCK:
        if settings not in _WORKER_STATE:
            model_lm = resolve_lm(settings)
            _WORKER_STATE[settings] = (
                model_lm,
                make_responder(),
                make_adapter(lm_response_format(model_lm)),
                secret_values(),
            )
        return _WORKER_STATE[settings]


def generate_candidates(
    items: Sequence[JudgeItem],
    out: Path,
    *,
    lm: dspy.LM,
    model: str,
    adapter: Any = None,
    executor: Executor | None = None,
    max_concurrency: int = 8,
    retry: RetryPolicy | None = None,
    quiet: bool = True,
    draft_fn: Callable[[JudgeItem], Candidate | str] | None = None,
) -> GenerateResult:
    """Draft one reply per item (annotated turn) and append them to ``out``.

    Parameters
    ----------
    items
        One item per annotated turn (the candidate text is ignored; the context is used).
    out
        Candidates JSONL; replies of ``model`` already in it are skipped (resume).
    lm, adapter
        The responder's model and DSPy adapter (default: the project's JSON adapter with the
        model's ``response_format`` policy, as the judges use).
    model
        Name written as each candidate's ``model``.
    executor, max_concurrency, retry, quiet
        As for :func:`run_tasks`.
    draft_fn
        The task function instead of one drafting with ``lm`` here (a :class:`DraftFn` for
        worker processes and Ray actors, which cannot receive ``lm``).
    """
    out = Path(out)
    # one process at a time per candidates file: a second one would pay for every reply twice
    with lock_path(out.with_name(out.name + ".lock"), f"candidates file {out}"):
        start = time.perf_counter()
        if adapter is None:
            adapter = make_adapter(lm_response_format(lm))
        done: set[tuple[str, int]] = set()
        if out.exists():
            cut_torn_tail(out)
            for cand in iter_jsonl(out, Candidate, tolerate_torn_tail=True):
                if cand.model == model:
                    done.add((cand.conversation_id, cand.turn))
        todo = [it for it in items if (it.conversation_id, it.turn) not in done]
        fn = draft_fn or functools.partial(
            _draft_one,
            lm=lm,
            module=make_responder(),
            adapter=adapter,
            model=model,
            retry=retry or RetryPolicy(),
            secrets=secret_values(),
        )
        errors: list[str] = []
        n_written = 0
        runner = executor or ThreadExecutor(max_concurrency)
        with (
            JsonlAppender(out) as writer,
            make_progress(len(todo), quiet=quiet, description="drafting") as bar,
        ):
            for result in runner.map_unordered(fn, todo, stop=threading.Event()):
                if isinstance(result, Candidate):
                    writer.append(result)
                    n_written += 1
                else:
                    errors.append(result)
                    log.warning("reply failed: %s", result)
                bar.advance(failed=not isinstance(result, Candidate))
        return GenerateResult(
            out=out,
            model=model,
            n_turns=len(items),
            n_skipped=len(items) - len(todo),
            n_written=n_written,
            errors=errors,
            wall_time_s=time.perf_counter() - start,
        )


def run_generate(
    data: Path,
    out: Path,
    *,
    lm: LMSettings | None = None,
    name: str | None = None,
    executor: Executor | None = None,
    max_concurrency: int = 8,
    retry: RetryPolicy | None = None,
    quiet: bool = True,
    executor_kind: str = "thread",
    workers: int = 2,
    ray_address: str | None = None,
) -> GenerateResult:
    """The Python equivalent of ``attune-judge generate DATA --lm M -o OUT``.

    Resolves the model (``lm``: its settings), reads the AttuneBench data and drafts a reply
    per annotated turn into ``out``; the candidates' ``model`` is ``name`` (default: the
    model string). ``executor_kind`` ``process`` or ``ray`` drafts in
    ``workers`` processes or Ray actors (each resolving the model itself) unless ``executor``
    is given.
    """
    items = attunebench_items(Path(data), "original")
    lm = lm or LMSettings()
    model_lm = resolve_lm(lm)  # early errors
    kind = executor_kind if executor is None else "thread"
    draft_fn = DraftFn(lm, model=name or lm.lm, retry=retry) if kind != "thread" else None
    with scaled_executor(
        kind, None, workers=workers, max_concurrency=max_concurrency, ray_address=ray_address
    ) as scaled:
        return generate_candidates(
            items,
            out,
            lm=model_lm,
            model=name or lm.lm,
            executor=executor or scaled,
            max_concurrency=max_concurrency,
            retry=retry,
            quiet=quiet,
            draft_fn=draft_fn,
        )
