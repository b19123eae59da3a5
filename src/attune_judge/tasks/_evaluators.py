"""One evaluated model on one task, as a :class:`~attune_judge.judges.Judge` the runner can run.

Each :class:`TaskEvaluator` turns a unit (a ``JudgeItem`` from :mod:`._items`) into a
``Judgment`` whose ``details`` hold the task, the model's prediction, the participant's answer
and every metric; ``normalized`` (and ``overall``) is the task's primary metric (0..1, higher
is better) and ``scores`` the defined metrics. Reusing the Judge contract means the runner's
executor, retries, failure budget, append-only log and resume apply to bench runs unchanged.

Model-side failures never raise: an unparseable answer is ``parse_error`` (raw text kept), an
LM failure ``lm_error`` (``retryable`` when transient, so the runner retries it).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from attune_judge.data import JudgeItem, JudgeSpec, Judgment, TokenUsage
from attune_judge.data.instrument import BEHAVIOUR_ITEMS_BY_ID, FOUR_BRANCHES, PANAS_ITEMS
from attune_judge.judges import (
    Judge,
    call_program,
    failure_judgment,
    format_conversation,
    item_judgment,
)
from attune_judge.judges._base import add_usage
from attune_judge.lm import lm_response_format, lm_spec, make_adapter, untrusted
from attune_judge.runner import make_responder
from attune_judge.tasks._behaviour import score_behaviour
from attune_judge.tasks._conversation import score_conversation
from attune_judge.tasks._drafting import score_draft
from attune_judge.tasks._emotion import EmotionTag, score_emotion
from attune_judge.tasks._items import TaskName
from attune_judge.tasks._preference import present_comparison
from attune_judge.tasks._programs import (
    PROGRAMS_VERSION,
    behaviour_field,
    behaviour_program,
    branch_field,
    conversation_program,
    emotion_program,
    panas_field,
    preference_program,
)

if TYPE_CHECKING:
    import dspy

__all__ = ["PRIMARY_METRIC", "TaskEvaluator"]

PRIMARY_METRIC: dict[str, str] = {
    "drafting": "judge_score",
    "emotion": "f1",
    "behaviour": "accuracy",
    "preference": "accuracy",
    "conversation": "composite",
}
"""The metric each task ranks models by (0..1, higher is better)."""

_START = "(start of the conversation)"


def _jury_answers(verdict: Judgment) -> dict[str, str]:
    """A behaviour jury's answers from its majority scores (``B1:observed`` 1 = yes, 0 = no;
    a tied vote, 0.5, is no answer)."""
    out = {}
    for name, value in verdict.scores.items():
        if value != 0.5:
            out[name.split(":", 1)[0]] = "yes" if value > 0.5 else "no"
    return out


class TaskEvaluator:
    """Runs one evaluated model (``lm``) on one task and scores each unit.

    Parameters
    ----------
    task
        ``drafting``, ``emotion``, ``behaviour``, ``preference`` or ``conversation``.
    model
        The evaluated model's label (``candidate_model`` of its units).
    lm
        The evaluated model's ``dspy.LM``.
    seed
        Seed of the A/B presentation order (preference task).
    draft_judge, behaviour_judge
        Drafting only: the reference judge scoring the draft against the participant-edited
        reply, and the behaviour judge answering the behaviour items for the draft.
    """

    def __init__(
        self,
        task: TaskName,
        model: str,
        lm: dspy.BaseLM,
        *,
        seed: int = 0,
        draft_judge: Judge | None = None,
        behaviour_judge: Judge | None = None,
    ) -> None:
        if task == "drafting" and (draft_judge is None or behaviour_judge is None):
            raise ValueError("the drafting task needs a draft judge and a behaviour judge")
        self.task = task
        self.model = model
        self.lm = lm
        self.seed = seed
        self.draft_judge = draft_judge
        self.behaviour_judge = behaviour_judge
        self.adapter = make_adapter(lm_response_format(lm))
        spec: dict[str, Any] = {
            "program": f"bench-{task}",
            "program_version": PROGRAMS_VERSION,
            "task": task,
            "model": model,
            "lm": lm_spec(lm),
        }
        if task == "preference":
            spec["presentation_seed"] = seed
        if draft_judge is not None and behaviour_judge is not None:
            spec["draft_judge"] = draft_judge.spec
            spec["behaviour_judge"] = behaviour_judge.spec
        self.spec = JudgeSpec.model_validate(spec)
        self.judge_id = self.spec.judge_id()

    # -- one call -------------------------------------------------------------------------

    def _call(self, program: Any, **inputs: Any) -> Any:
        return call_program(program, self.lm, self.adapter, **inputs)

    def _judgment(
        self,
        item: JudgeItem,
        started: float,
        *,
        prediction: Any,
        metrics: dict[str, float | None],
        usage: TokenUsage,
        requests: int = 1,
        raw: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> Judgment:
        primary = metrics.get(PRIMARY_METRIC[self.task])
        return item_judgment(
            item,
            self.judge_id,
            started,
            usage=usage,
            scores={k: float(v) for k, v in metrics.items() if v is not None},
            overall=primary,
            normalized=primary,
            raw_output=raw,
            details={
                "task": self.task,
                "requests": requests,
                "turn": item.turn,
                "prediction": prediction,
                "truth": item.metadata.get("truth"),
                "metrics": metrics,
                **(extra or {}),
            },
        )

    def _scored(
        self,
        item: JudgeItem,
        started: float,
        outcome: Any,
        prediction: Any,
        metrics: dict[str, float | None],
        extra: dict[str, Any] | None = None,
    ) -> Judgment:
        """The judgment of one model call's scored answer."""
        return self._judgment(
            item,
            started,
            prediction=prediction,
            metrics=metrics,
            usage=outcome.usage,
            requests=outcome.requests,
            raw=outcome.raw,
            extra=extra,
        )

    def _failure(self, item: JudgeItem, started: float, outcome: Any, **extra: Any) -> Judgment:
        return failure_judgment(
            item, self.judge_id, outcome, started, details={"task": self.task, **extra}
        )

    # -- the tasks ------------------------------------------------------------------------

    def _emotion(self, item: JudgeItem, started: float) -> Judgment:
        before = format_conversation(item.context[:-1]) or _START
        outcome = self._call(
            emotion_program(),
            conversation=before,
            latest_message=untrusted(item.context[-1].content),
        )
        if outcome.status != "ok":
            return self._failure(item, started, outcome)
        names, levels = outcome.prediction.emotions.root, outcome.prediction.intensities.root
        tags = [
            EmotionTag(str(name), float(levels[i]) if i < len(levels) else None)
            for i, name in enumerate(names)
        ]
        pred = [{"emotion": t.emotion, "intensity": t.intensity} for t in tags]
        truth = item.metadata["truth"]["tags"]
        metrics = score_emotion(
            tags,
            [EmotionTag(t["emotion"], t["intensity"]) for t in truth],
        )
        return self._scored(item, started, outcome, pred, metrics)

    def _behaviour(self, item: JudgeItem, started: float) -> Judgment:
        truth: dict[str, list[str | None]] = item.metadata["truth"]["items"]
        ids = tuple(truth)
        program = behaviour_program(tuple((i, BEHAVIOUR_ITEMS_BY_ID[i].observer_text) for i in ids))
        outcome = self._call(
            program, conversation=format_conversation(item.context), reply=untrusted(item.candidate)
        )
        if outcome.status != "ok":
            return self._failure(item, started, outcome)
        p = outcome.prediction
        pred = {
            i: {
                "observed": str(getattr(p, behaviour_field(i, "did"))),
                "preferred": str(getattr(p, behaviour_field(i, "wanted"))),
            }
            for i in ids
        }
        metrics = score_behaviour({i: (v[0], v[1]) for i, v in truth.items()}, pred)
        return self._scored(item, started, outcome, pred, metrics)

    def _preference(self, item: JudgeItem, started: float) -> Judgment:
        inputs = item.metadata["inputs"]
        shown = present_comparison(self.seed, item.item_id)
        first, second = ("text_b", "text_a") if shown.swapped else ("text_a", "text_b")
        outcome = self._call(
            preference_program(),
            conversation=format_conversation(item.context),
            question=untrusted(inputs["question"]),
            response_1=untrusted(inputs[first]),
            response_2=untrusted(inputs[second]),
        )
        extra = {
            "swapped": shown.swapped,
            "label_a": inputs["label_a"],
            "label_b": inputs["label_b"],
        }
        if outcome.status != "ok":
            return self._failure(item, started, outcome, **extra)
        choice = str(outcome.prediction.choice)
        winner = shown.to_data(choice)  # type: ignore[arg-type]
        truth = item.metadata["truth"]["winner"]
        metrics: dict[str, float | None] = {"accuracy": float(winner == truth)}
        pred = {"shown_choice": choice, "winner": winner}
        return self._scored(item, started, outcome, pred, metrics, extra)

    def _conversation(self, item: JudgeItem, started: float) -> Judgment:
        outcome = self._call(
            conversation_program(),
            conversation=format_conversation(item.context),
            pre_panas=item.metadata["inputs"]["pre_panas"],
        )
        if outcome.status != "ok":
            return self._failure(item, started, outcome)
        p = outcome.prediction
        pred = {
            "post_panas": {i: int(getattr(p, panas_field(i))) for i in PANAS_ITEMS},
            "q1": [str(x) for x in p.looking_for.root],
            "q2": str(p.emotion_clarity),
            "q3": str(p.model_fit),
            "four_branch": {b: int(getattr(p, branch_field(b))) for b in FOUR_BRANCHES},
        }
        metrics = score_conversation(pred, item.metadata["truth"])
        return self._scored(item, started, outcome, pred, metrics)

    def _failed_stage(
        self, failed: Judgment, stage: str, usage: TokenUsage, **details: Any
    ) -> Judgment:
        """A draft or behaviour judge's failed judgment as this task's, at ``stage``."""
        out = failed.model_copy(update={"judge_id": self.judge_id, "usage": usage}, deep=True)
        out.details.update(task=self.task, stage=stage, **details)
        return out

    def _drafting(self, item: JudgeItem, started: float) -> Judgment:
        assert self.draft_judge is not None and self.behaviour_judge is not None
        outcome = self._call(make_responder(), conversation=[m.model_dump() for m in item.context])
        if outcome.status != "ok":
            return self._failure(item, started, outcome, stage="draft")
        draft = str(outcome.prediction.reply)
        drafted = item.model_copy(update={"candidate": draft})
        quality = self.draft_judge.judge(drafted)
        usage = add_usage(outcome.usage, quality.usage)
        requests = outcome.requests + int(quality.details.get("requests", 1))
        if quality.status != "ok":
            return self._failed_stage(quality, "draft_judge", usage, draft=draft, requests=requests)
        answers: dict[str, str | None] = {}
        behaviour_status = "no_items"
        if item.metadata.get("behaviour_items"):
            verdict = self.behaviour_judge.judge(drafted)
            usage = add_usage(usage, verdict.usage)
            requests += int(verdict.details.get("requests", 1))
            behaviour_status = verdict.status
            if verdict.status == "lm_error":
                return self._failed_stage(
                    verdict, "behaviour_judge", usage, draft=draft, requests=requests
                )
            answers = dict(verdict.details.get("answers") or _jury_answers(verdict))
        metrics = score_draft(quality.normalized, item.metadata["truth"]["preferred"], answers)
        if behaviour_status not in ("ok", "no_items"):
            metrics["alignment"] = None  # the judge gave no usable answers: not a mismatch
        pred = {"draft": draft, "judge_scores": quality.scores, "behaviour_answers": answers}
        extra: dict[str, Any] = {"behaviour_judge_status": behaviour_status}
        if quality.details.get("members"):  # a jury of draft judges: every member kept
            extra["draft_judge_members"] = quality.details["members"]
        return self._judgment(
            item,
            started,
            prediction=pred,
            metrics=metrics,
            usage=usage,
            extra=extra,
            requests=requests,
            raw=outcome.raw,
        )

    def judge(self, item: JudgeItem) -> Judgment:
        """Evaluate and score one unit (never raises for model-side failures)."""
        started = time.perf_counter()
        method = getattr(self, f"_{self.task}")
        result: Judgment = method(item, started)
        return result
