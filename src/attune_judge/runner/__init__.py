"""Plan → execute (concurrency, cache, retries, failure budget, resume) → store.

``run_score`` is ``attune-judge score``; ``generate_candidates`` is ``attune-judge generate``.
``run_tasks`` runs any list of (item, judge) :class:`Task` s into a run directory, so other
commands reuse the same execution, resume and summary machinery with their own judges.
"""

from attune_judge.runner._candidates import Candidate, read_candidates
from attune_judge.runner._degenerate import (
    degenerate_findings,
    degenerate_judgments,
    degenerate_warnings,
)
from attune_judge.runner._execution import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_WORKERS,
    ExecutionOptions,
)
from attune_judge.runner._executor import (
    JudgeTaskFn,
    RetryPolicy,
    ThreadExecutor,
    judge_with_retries,
)
from attune_judge.runner._export import EXPORT_COLUMNS, export_run, load_run
from attune_judge.runner._generate import (
    draft_reply,
    generate_candidates,
    is_transient,
    make_responder,
    run_generate,
)
from attune_judge.runner._inputs import fingerprint_inputs, load_judge_items
from attune_judge.runner._leaderboard import run_leaderboard
from attune_judge.runner._pairwise_rank import (
    PairwiseRanking,
    pairwise_ranking,
    run_pairwise_ranking,
)
from attune_judge.runner._plan import Task, plan_tasks
from attune_judge.runner._process import JudgeFactory, ProcessExecutor, WorkerError
from attune_judge.runner._progress import make_progress
from attune_judge.runner._ray import RayExecutor
from attune_judge.runner._result import EXIT_FAILURE_BUDGET, FailureBudget, RunResult
from attune_judge.runner._run import run_tasks
from attune_judge.runner._scale import config_executor, run_arguments, scaled_executor
from attune_judge.runner._score import (
    ScoreConfig,
    build_score_judge,
    execution_options,
    judge_mode_options,
)
from attune_judge.runner._score_run import run_score
from attune_judge.runner._store import (
    RunDir,
    RunManifest,
    cut_torn_tail,
    effective_judgments,
    failure_reasons,
    redact,
    secret_values,
)

__all__ = [
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_WORKERS",
    "EXIT_FAILURE_BUDGET",
    "EXPORT_COLUMNS",
    "Candidate",
    "ExecutionOptions",
    "FailureBudget",
    "JudgeFactory",
    "JudgeTaskFn",
    "PairwiseRanking",
    "ProcessExecutor",
    "RayExecutor",
    "RetryPolicy",
    "RunDir",
    "RunManifest",
    "RunResult",
    "ScoreConfig",
    "Task",
    "ThreadExecutor",
    "WorkerError",
    "build_score_judge",
    "config_executor",
    "cut_torn_tail",
    "degenerate_findings",
    "degenerate_judgments",
    "degenerate_warnings",
    "draft_reply",
    "effective_judgments",
    "execution_options",
    "export_run",
    "failure_reasons",
    "fingerprint_inputs",
    "generate_candidates",
    "is_transient",
    "judge_mode_options",
    "judge_with_retries",
    "load_judge_items",
    "load_run",
    "make_progress",
    "make_responder",
    "pairwise_ranking",
    "plan_tasks",
    "read_candidates",
    "redact",
    "run_arguments",
    "run_generate",
    "run_leaderboard",
    "run_pairwise_ranking",
    "run_score",
    "run_tasks",
    "scaled_executor",
    "secret_values",
]
