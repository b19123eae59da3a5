"""Plan → execute (concurrency, cache, retries, failure budget, resume) → store.

``run_score`` is ``attune-judge score``; ``generate_candidates`` is ``attune-judge generate``.
``run_tasks`` runs any list of (item, judge) :class:`Task` s into a run directory, so other
commands reuse the same execution, resume and summary machinery with their own judges.
"""

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
    RetryPolicy,
    ThreadExecutor,
    judge_with_retries,
)
from attune_judge.runner._export import export_run, load_run
from attune_judge.runner._generate import (
    generate_candidates,
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
from attune_judge.runner._process import JudgeFactory, ProcessExecutor
from attune_judge.runner._ray import RayExecutor
from attune_judge.runner._result import EXIT_FAILURE_BUDGET, FailureBudget, RunResult
from attune_judge.runner._run import run_tasks
from attune_judge.runner._scale import config_executor, run_arguments, scaled_executor
from attune_judge.runner._score import (
    ScoreConfig,
    execution_options,
    judge_mode_options,
)
from attune_judge.runner._score_run import run_score
from attune_judge.runner._store import (
    RunDir,
    effective_judgments,
    failure_reasons,
)

__all__ = [
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_WORKERS",
    "EXIT_FAILURE_BUDGET",
    "ExecutionOptions",
    "FailureBudget",
    "JudgeFactory",
    "PairwiseRanking",
    "ProcessExecutor",
    "RayExecutor",
    "RetryPolicy",
    "RunDir",
    "RunResult",
    "ScoreConfig",
    "Task",
    "ThreadExecutor",
    "config_executor",
    "degenerate_findings",
    "degenerate_judgments",
    "degenerate_warnings",
    "effective_judgments",
    "execution_options",
    "export_run",
    "failure_reasons",
    "fingerprint_inputs",
    "generate_candidates",
    "judge_mode_options",
    "judge_with_retries",
    "load_judge_items",
    "load_run",
    "make_responder",
    "pairwise_ranking",
    "plan_tasks",
    "run_arguments",
    "run_generate",
    "run_leaderboard",
    "run_pairwise_ranking",
    "run_score",
    "run_tasks",
    "scaled_executor",
]
