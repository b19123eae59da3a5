"""Every command that runs work concurrently has the same execution options and defaults."""

from __future__ import annotations

import inspect

import pytest

from attune_judge.cli import _bench, _demo, _options, _score, _sensitivity, _shared
from attune_judge.runner import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_WORKERS,
    ExecutionOptions,
    ScoreConfig,
)
from attune_judge.sensitivity import SensitivityConfig
from attune_judge.tasks import BenchConfig
from attune_judge.validate import validate_judge

COMMANDS = [_score.score, _score.generate, _sensitivity.sensitivity, _bench.bench, _demo.validate]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.__name__)
def test_same_execution_options_with_the_same_defaults(command) -> None:
    params = inspect.signature(command).parameters
    defaults = {name: params[name].default for name in ("executor", "workers", "max_concurrency")}
    assert defaults == {
        "executor": _options.ExecutorKind.thread,
        "workers": 2,
        "max_concurrency": 8,
    }
    assert params["ray_address"].default is None
    # one help text per option: the same Annotated alias on every command (declared once,
    # in cli._shared's EXECUTION group)
    assert params["max_concurrency"].annotation is _options.MaxConcurrencyOption


def test_the_library_has_the_same_defaults() -> None:
    assert (_options.DEFAULT_MAX_CONCURRENCY, _options.DEFAULT_WORKERS) == (8, 2)
    assert (DEFAULT_MAX_CONCURRENCY, DEFAULT_WORKERS) == (8, 2)
    for config in (ScoreConfig, SensitivityConfig, BenchConfig):
        fields = config.model_fields
        assert fields["max_concurrency"].default == 8, config
        assert fields["workers"].default == 2, config
        assert fields["executor"].default == "thread", config
    assert inspect.signature(validate_judge).parameters["execution"].default is None
    assert (ExecutionOptions().max_concurrency, ExecutionOptions().workers) == (8, 2)


def test_execution_options_spread_into_a_config(tmp_path) -> None:
    options = _shared.execution_options(
        executor=_options.ExecutorKind.process, workers=3, max_concurrency=5
    )
    assert options == ExecutionOptions(executor="process", workers=3, max_concurrency=5)
    config = ScoreConfig(data=tmp_path, out=tmp_path / "run", **options.as_kwargs())
    assert (config.executor, config.workers, config.max_concurrency) == ("process", 3, 5)
    assert config.ray_address is None
    with pytest.raises(ValueError, match="workers"):
        ExecutionOptions(workers=0)
