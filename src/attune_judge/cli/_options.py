"""Options, parsing and printing shared by the run commands (score, sensitivity, bench).

Each ``Annotated`` alias is one typer option with its help text, so a command declares
``quiet: QuietOption = False`` instead of repeating the block. Nothing heavy is imported here.

The execution options (``--executor``, ``--workers``, ``--ray-address``, ``--max-concurrency``)
and the model options (``--api-base``, ``--response-format``, ``--temperature``,
``--max-tokens``, ``--timeout``, each with its ``ATTUNE_*`` environment variable) are grouped
once in :mod:`._shared`, which adds them to every command that runs work or calls a model.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol

import typer

from attune_judge._secrets import redact, register_url

if TYPE_CHECKING:
    from attune_judge.runs import JudgeBlock

__all__ = [
    "ApiBaseOption",
    "CandidatesOption",
    "ExecutorKind",
    "ExecutorOption",
    "JuryChoice",
    "JuryOption",
    "LmOption",
    "LmsOption",
    "MaxConcurrencyOption",
    "MaxCostOption",
    "MaxFailureRateOption",
    "MaxRetriesOption",
    "MaxTokensOption",
    "ModelsOption",
    "NoReferenceOption",
    "ParseRetriesOption",
    "PerCriterionOption",
    "PriceInOption",
    "PriceOutOption",
    "QuietOption",
    "RayAddressOption",
    "ResponseFormatChoice",
    "ResponseFormatOption",
    "RunDirOption",
    "ScoreModeChoice",
    "ScoreModeOption",
    "SeedOption",
    "TemperatureOption",
    "TimeoutOption",
    "WorkersOption",
    "exit_if_stopped",
    "setup_logging",
    "split_csv",
    "write_run_report",
]

RunDirOption = Annotated[
    Path, typer.Option("-o", "--out", help="Run directory (resumed if it exists).")
]
CandidatesOption = Annotated[
    Path | None,
    typer.Option(
        help="Candidates JSONL (conversation_id, turn, model, response), or an Inspect AI log "
        "or folder of logs (its samples' outputs; needs the inspect extra)."
    ),
]
ModelsOption = Annotated[
    str | None,
    typer.Option(help="Comma-separated models (default: all / the pseudo-models)."),
]
MaxFailureRateOption = Annotated[
    float, typer.Option(min=0.0, max=1.0, help="Stop (exit 3) above this share of failures.")
]
MaxRetriesOption = Annotated[
    int,
    typer.Option(
        min=0, help="Retries of rate limits, server errors and timeouts (the only retry layer)."
    ),
]
ParseRetriesOption = Annotated[
    int,
    typer.Option(
        "--parse-retries",
        min=0,
        help="Times an unparseable answer is asked again, bypassing the request cache.",
        envvar="ATTUNE_PARSE_RETRIES",
    ),
]


ApiBaseOption = Annotated[
    str | None,
    typer.Option(
        "--api-base",
        help="OpenAI-compatible server URL (http://host:port/v1); use with --lm openai/<name>.",
        envvar="ATTUNE_API_BASE",
        callback=register_url,  # credentials in the URL become secrets
    ),
]
LmOption = Annotated[
    str,
    typer.Option(
        "--lm",
        help="Model string: local (embedded), local:<file.gguf>, provider/model "
        "(openai/gpt-4.1-mini, anthropic/..., ollama_chat/...), or openai/<served-name> "
        "with --api-base.",
        envvar="ATTUNE_LM",
    ),
]


LmsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--lm",
        help="Judge model string (repeat for a jury: --lm A --lm B): local (embedded), "
        "local:<file.gguf>, provider/model (openai/gpt-4.1-mini, anthropic/..., "
        "ollama_chat/...), or openai/<served-name> with --api-base. Default: local.",
        envvar="ATTUNE_LM",
    ),
]


class JuryChoice(StrEnum):
    """How several judge models combine."""

    mean = "mean"
    median = "median"
    majority = "majority"
    none = "none"


JuryOption = Annotated[
    JuryChoice,
    typer.Option(
        "--jury",
        help="Several --lm: combine per item by mean, median or majority (every member's "
        "judgment kept), or none (each model its own judge).",
    ),
]


PriceInOption = Annotated[
    float | None,
    typer.Option(
        "--price-in",
        min=0.0,
        help="USD per million prompt tokens, for models LiteLLM's price table does not know "
        "(or a server of your own); overrides the table. With --price-out.",
    ),
]
PriceOutOption = Annotated[
    float | None,
    typer.Option("--price-out", min=0.0, help="USD per million completion tokens."),
]
MaxCostOption = Annotated[
    float | None,
    typer.Option(
        "--max-cost",
        min=0.0,
        help="Stop (exit 3) once the run's judgments cost this many USD; no request starts "
        "after that. Needs a price for every judge model.",
    ),
]


class ResponseFormatChoice(StrEnum):
    """How the judge asks the model for JSON."""

    auto = "auto"
    json_schema = "json_schema"
    json_object = "json_object"
    none = "none"


ResponseFormatOption = Annotated[
    ResponseFormatChoice | None,
    typer.Option(
        "--response-format",
        help="How to request JSON: json_schema (OpenAI, vLLM), json_object (llama.cpp server), "
        "none, auto (default: by model).",
        envvar="ATTUNE_RESPONSE_FORMAT",
    ),
]
TemperatureOption = Annotated[
    float | None,
    typer.Option(
        "--temperature",
        min=0.0,
        help="Sampling temperature (default 0).",
        envvar="ATTUNE_TEMPERATURE",
    ),
]
MaxTokensOption = Annotated[
    int | None,
    typer.Option(
        "--max-tokens",
        min=1,
        help="Maximum tokens per answer (default 1024).",
        envvar="ATTUNE_MAX_TOKENS",
    ),
]
TimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=0.001,
        help="Seconds one request may take (default 120).",
        envvar="ATTUNE_TIMEOUT",
    ),
]
SeedOption = Annotated[
    int,
    typer.Option(
        "--seed",
        help="Seed (bootstrap, retry jitter, and the model where supported).",
        envvar="ATTUNE_SEED",
    ),
]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]
RetryFailedOption = Annotated[
    bool,
    typer.Option(
        "--retry-failed",
        help="Judge again only the failed judgments (lm_error, parse_error) of the existing "
        "run directory; new records are appended and the last one counts. A plain rerun "
        "asks only lm_error and what was never judged.",
    ),
]


class ScoreModeChoice(StrEnum):
    """How a judge's score is read from the model."""

    sampled = "sampled"
    expected = "expected"


ScoreModeOption = Annotated[
    ScoreModeChoice | None,
    typer.Option(
        "--score-mode",
        help="sampled: the score the model writes; expected: the probability-weighted score "
        "from its token logprobs, one criterion per call (default: expected for the embedded "
        "model, sampled otherwise; servers must return logprobs).",
        envvar="ATTUNE_SCORE_MODE",
    ),
]
PerCriterionOption = Annotated[
    bool,
    typer.Option(
        "--per-criterion",
        help="One short call per criterion instead of one call for all (implied by "
        "--score-mode expected and by checklist rubrics).",
    ),
]

NoReferenceOption = Annotated[
    bool,
    typer.Option(
        "--no-reference",
        help="Withhold the reference reply from the judge (reference rubrics), so items "
        "without one (every shipped set in data/) are judged instead of refused.",
    ),
]


class ExecutorKind(StrEnum):
    """Where judgments run: threads of this process, worker processes, or Ray actors."""

    thread = "thread"
    process = "process"
    ray = "ray"


ExecutorOption = Annotated[
    ExecutorKind,
    typer.Option(
        help="thread: one process; process: --workers processes share --max-concurrency "
        "(CPU-bound runs on fast models); ray: --workers Ray actors on a local or multi-node "
        "cluster (pip install 'attune-judge[ray]'). Each worker loads its own judge/model."
    ),
]
WorkersOption = Annotated[
    int, typer.Option(min=1, help="Worker processes / Ray actors of --executor process|ray.")
]
MaxConcurrencyOption = Annotated[
    int,
    typer.Option(min=1, help="Work in flight at once (judgments; bench: units), over all workers."),
]
AdaptiveOption = Annotated[
    bool,
    typer.Option(
        "--adaptive/--no-adaptive",
        help="Lower the judgments in flight when the provider rate-limits (HTTP 429, "
        "Retry-After) and raise them again as answers succeed, up to --max-concurrency "
        "(--no-adaptive: fixed at --max-concurrency; generate always drafts at it).",
    ),
]
DEFAULT_MAX_CONCURRENCY = 8
"""``--max-concurrency`` default (= :data:`attune_judge.runner.DEFAULT_MAX_CONCURRENCY`)."""
DEFAULT_WORKERS = 2
"""``--workers`` default (= :data:`attune_judge.runner.DEFAULT_WORKERS`)."""
RayAddressOption = Annotated[
    str | None,
    typer.Option(
        help="Ray cluster to join (host:6379 or ray://host:10001); default: RAY_ADDRESS, "
        "else a cluster started here by `ray start`, else a new local one.",
        envvar="RAY_ADDRESS",
    ),
]


class _Stoppable(Protocol):
    @property
    def stopped(self) -> Any: ...

    @property
    def exit_code(self) -> int: ...


def write_run_report(run_dir: Path) -> tuple[Path, Path] | None:
    """``report.md`` / ``report.html`` of a finished run: the run commands' one report call
    (:func:`attune_judge.report.write_report`), logging instead of raising on any failure.

    A report problem never fails a finished (possibly paid) run: the run directory keeps its
    records and ``attune-judge report RUN`` can draw the report later. Returns the two paths,
    ``None`` on failure.
    """
    from attune_judge.report import write_report

    try:
        return write_report(run_dir)
    except Exception as exc:  # a report bug must not lose a run; the data are on disk
        logging.getLogger(__name__).warning("report not written: %s", exc)
        return None


def setup_logging(quiet: bool) -> None:
    """Warnings (errors only with ``--quiet``) to stderr as ``LEVEL: message``.

    ``--quiet`` holds back warnings of every logger, also DSPy's (its own handler, which
    ignores the root logger's level: "LM response was truncated", say); ``main`` lifts that
    when the command ends.
    """
    logging.disable(logging.WARNING if quiet else logging.NOTSET)
    logging.basicConfig(
        level=logging.ERROR if quiet else logging.WARNING,
        format="%(levelname)s: %(message)s",
        stream=sys.stderr,
    )
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, _RedactSecrets) for f in handler.filters):
            handler.addFilter(_RedactSecrets())


class _RedactSecrets(logging.Filter):
    """Log lines never carry a credential (an SDK quoting a key or a URL with a password)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        return True


def split_csv(value: str | None) -> list[str] | None:
    """``"a, b,,c"`` → ``["a", "b", "c"]``; ``None`` for no value or only commas."""
    if value is None:
        return None
    parts = [v.strip() for v in value.split(",") if v.strip()]
    return parts or None


def warn_degenerate(judges: Mapping[str, JudgeBlock] | None) -> None:
    """Print a warning for every degenerate judge of summary judge blocks (stderr)."""
    from attune_judge.runner import degenerate_warnings

    for line in degenerate_warnings(judges or {}):
        print(line, file=sys.stderr)


def exit_if_stopped(result: _Stoppable) -> None:
    """A run that stopped early (failure budget, ...) prints why and exits with its code."""
    if result.stopped:
        print(f"error: run stopped: {redact(str(result.stopped))}", file=sys.stderr)
        raise typer.Exit(result.exit_code)
