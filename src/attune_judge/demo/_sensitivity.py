"""Demo part d: a short rubric-sensitivity run.

The shipped AttuneBench reference-rubric study (``rubrics/variants/``) restricted to the base
and one or two cheap variants (by default the shuffled criterion order), judged by a model
(by default the embedded local one) on the first annotated turn of a few of the *synthetic*
sample conversations (``data/samples/attunebench``), each turn with its three pseudo-model
replies (original, llm_improved, human_edited). It shows the machinery — τ to the base, rank
flips, variance shares — not a finding: a handful of turns cannot support one.

With the embedded 135M model the default slice (2 turns × 3 replies × 2 variants = 12
judgments) took about 1.5 minutes on a busy shared 2-core machine, answers capped at
:data:`MAX_TOKENS` tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from attune_judge._bootstrap import DEFAULT_B
from attune_judge._resources import shipped_dir
from attune_judge.data import JudgeItem, read_judgments, write_jsonl
from attune_judge.errors import UserError
from attune_judge.lm import LMSettings, resolve_lm
from attune_judge.runner import failure_reasons, load_judge_items
from attune_judge.runs import read_summary, summary_json

if TYPE_CHECKING:
    import dspy

__all__ = ["SENSITIVITY_VARIANTS_FILE", "SensitivityPart", "demo_sensitivity"]

SENSITIVITY_VARIANTS_FILE = "variants/attunebench-reference-variants.yaml"
"""The study the demo runs a slice of (under the shipped ``rubrics/``)."""

MAX_TOKENS = 256
"""Answer length cap of the demo's judge model: a small model under a JSON grammar can write
until the cap, and at the library default (1024) one such judgment takes minutes on 2 cores."""


def _capped_lm_factory(seed: int) -> Callable[[str | None], dspy.BaseLM]:
    def make(lm: str | None) -> dspy.BaseLM:
        return resolve_lm(LMSettings(lm=lm or "local", seed=seed, max_tokens=MAX_TOKENS))

    return make


class SensitivityPart(BaseModel):
    """What demo part d ran and found."""

    run_dir: str
    """The sensitivity run directory (its own manifest, judgments, summary)."""
    lm: str
    """Judge model."""
    variants: list[str] = Field(default_factory=list)
    """Variants run besides the base."""
    n_conversations: int = 0
    """Sample conversations used (one turn each)."""
    n_items: int = 0
    """Items (turn × pseudo-model) judged per variant."""
    n_run: int = 0
    """Judgments made by this invocation (0 when everything was already done)."""
    stopped: str | None = None
    """Why the run stopped early, if it did."""
    n_ok: int = 0
    """Judgments with status ok (all variants)."""
    failure_reasons: dict[str, int] = Field(default_factory=dict)
    """Failed judgments by ``status (reason)``."""
    block: dict[str, Any] = Field(default_factory=dict)
    """The ``sensitivity`` block of the run's ``summary.json``."""
    summary: list[str] = Field(default_factory=list)
    """Short lines for the terminal."""

    def note(self) -> str:
        """The honest label of the part, for the report."""
        return (
            f"A slice of the shipped study {SENSITIVITY_VARIANTS_FILE}: the base rubric "
            f"attunebench-reference and the variant(s) {', '.join(self.variants)}, judged by "
            f"{self.lm} on the first annotated turn of {self.n_conversations} synthetic sample "
            "conversations (data/samples/attunebench), each turn with the replies of the three "
            f"pseudo-models ({self.n_items} items per variant). With so few turns every "
            "interval is wide and "
            "a verdict says little: this part shows what the report of "
            "'attune-judge sensitivity' contains; run it on your own data for a finding. Run "
            "directory: d-sensitivity/."
        ) + self._failures()

    def _failures(self) -> str:
        if not self.failure_reasons:
            return ""
        failed = ", ".join(f"{n} {why}" for why, n in self.failure_reasons.items())
        total = self.n_ok + sum(self.failure_reasons.values())
        return (
            f" Judged ok: {self.n_ok} of {total} judgments; failed: {failed} (their errors and "
            "raw answers are in d-sensitivity/judgments.jsonl); statistics that need more "
            "judgments are stated as not computed."
        )


def _first_turns(n_conversations: int) -> list[JudgeItem]:
    items = load_judge_items(shipped_dir("data") / "samples" / "attunebench")
    first: dict[str, int] = {}
    for it in items:
        if it.turn is not None:
            first[it.conversation_id] = min(first.get(it.conversation_id, it.turn), it.turn)
    convs = sorted(first)[:n_conversations]
    return [
        it for it in items if it.conversation_id in convs and it.turn == first[it.conversation_id]
    ]


def _summary_lines(part: SensitivityPart) -> list[str]:
    block = part.block
    head = (
        f"d. rubric sensitivity ({part.lm}, {part.n_conversations} synthetic sample turns × 3 "
        f"pseudo-models; illustration only):"
    )
    lines = [head]
    if part.failure_reasons:
        lines.append("   " + part._failures().strip())
    base = str(block.get("base") or "base")
    for name, v in (block.get("variants") or {}).items():
        if name == base:
            continue
        tau = v.get("tau") if isinstance(v.get("tau"), dict) else {"estimate": v.get("tau")}
        tau_text = "undefined"
        if tau.get("estimate") is not None:
            tau_text = f"{float(tau['estimate']):+.2f}"
            if tau.get("lower") is not None and tau.get("upper") is not None:
                tau_text += f" [{float(tau['lower']):+.2f}, {float(tau['upper']):+.2f}]"
        stable = str(v.get("verdict") or "no verdict")
        lines.append(f"   {name:12s} Kendall τ to the base {tau_text}; {stable}")
    if len(lines) == 1:
        lines.append("   no analysis (see the report)")
    for note in block.get("notes") or []:
        lines.append(f"   note: {note}")
    return lines


def demo_sensitivity(
    out_dir: Path,
    *,
    lm: str = "local",
    variants: Sequence[str] = ("shuffled",),
    n_conversations: int = 2,
    B: int = DEFAULT_B,
    seed: int = 0,
    lm_factory: Callable[[str | None], Any] | None = None,
) -> SensitivityPart:
    """Run demo part d into ``out_dir`` (``d-items.jsonl`` and the run in ``d-sensitivity/``).

    Parameters
    ----------
    out_dir
        The demo's run directory.
    lm
        Judge model of the base (and of every variant that does not name another).
    variants
        Variants of the shipped study to run besides the base.
    n_conversations
        Sample conversations (first annotated turn of each, three pseudo-models per turn).
    B, seed
        Bootstrap replicates (at least ``MIN_B`` = 50) and seed.
    lm_factory
        Model string → ``dspy.LM`` (tests pass a scripted engine); default: the model with
        answers capped at :data:`MAX_TOKENS` tokens.
    """
    from attune_judge.sensitivity import SensitivityConfig, run_sensitivity

    if n_conversations < 2:
        raise UserError(
            "demo part d needs at least two conversations (--sensitivity-conversations)"
        )
    out = Path(out_dir)
    items = _first_turns(n_conversations)
    data = out / "d-items.jsonl"
    write_jsonl(data, items)
    config = SensitivityConfig(
        data=data,
        variants=shipped_dir("rubrics") / SENSITIVITY_VARIANTS_FILE,
        out=out / "d-sensitivity",
        lm=lm,
        only=list(variants),
        max_concurrency=2,
        max_failure_rate=1.0,
        seed=seed,
        B=B,
        quiet=False,
    )
    try:
        res = run_sensitivity(config, lm_factory=lm_factory or _capped_lm_factory(seed))
    except UserError as exc:
        if "different run" not in str(exc):
            raise
        raise UserError(
            f"demo part d: {config.out} holds a run with other settings (conversations, model "
            "or seed); give the demo a new -o directory or delete that folder",
            [str(exc), *exc.problems],
        ) from None
    record = read_summary(out / "d-sensitivity")
    judgments = read_judgments(out / "d-sensitivity" / "judgments.jsonl")
    part = SensitivityPart(
        run_dir=str(out / "d-sensitivity"),
        lm=lm,
        variants=list(variants),
        n_conversations=len({it.conversation_id for it in items}),
        n_items=len(items),
        n_run=res.n_run,
        stopped=res.stopped,
        n_ok=sum(j.status == "ok" for j in judgments),
        failure_reasons=failure_reasons(judgments),
        block=(summary_json(record).get("sensitivity") or {}) if record else {},
    )
    part.summary = _summary_lines(part)
    return part
