"""Every command that runs work concurrently has the same execution options and defaults."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import typer.main

from attune_judge.cli import app
from attune_judge.runner import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_WORKERS,
    ExecutionOptions,
    ScoreConfig,
)
from attune_judge.sensitivity import SensitivityConfig
from attune_judge.tasks import BenchConfig
from attune_judge.validate import validate_judge

COMMANDS = ["score", "generate", "sensitivity", "bench", "validate"]
OPTIONS = ("executor", "workers", "max_concurrency", "ray_address")


def _options(command: str) -> dict[str, Any]:
    """The command's execution options as the command line parses them (click's view)."""
    params = {p.name: p for p in typer.main.get_command(app).commands[command].params}  # type: ignore[attr-defined]
    return {name: params[name] for name in OPTIONS}


@pytest.mark.parametrize("command", COMMANDS)
def test_same_execution_options_with_the_same_defaults(command: str) -> None:
    options = _options(command)
    defaults = {name: options[name].default for name in OPTIONS}
    assert {**defaults, "executor": getattr(defaults["executor"], "value", None)} == {
        "executor": "thread",
        "workers": 2,
        "max_concurrency": 8,
        "ray_address": None,
    }
    assert [options[name].opts for name in OPTIONS] == [
        ["--executor"],
        ["--workers"],
        ["--max-concurrency"],
        ["--ray-address"],
    ]
    # one help text per option: every command says the same (declared once)
    first = _options(COMMANDS[0])
    assert all(options[n].help and options[n].help == first[n].help for n in OPTIONS)


def test_the_library_has_the_same_defaults() -> None:
    assert (DEFAULT_MAX_CONCURRENCY, DEFAULT_WORKERS) == (8, 2)
    for config in (ScoreConfig, SensitivityConfig, BenchConfig):
        fields = config.model_fields
        assert fields["max_concurrency"].default == 8, config
        assert fields["workers"].default == 2, config
        assert fields["executor"].default == "thread", config
    assert inspect.signature(validate_judge).parameters["execution"].default is None
    assert (ExecutionOptions().max_concurrency, ExecutionOptions().workers) == (8, 2)


def test_execution_options_spread_into_a_config(tmp_path) -> None:
    options = ExecutionOptions(executor="process", workers=3, max_concurrency=5)
    config = ScoreConfig(data=tmp_path, out=tmp_path / "run", **options.as_kwargs())
    assert (config.executor, config.workers, config.max_concurrency) == ("process", 3, 5)
    assert config.ray_address is None
    with pytest.raises(ValueError, match="workers"):
        ExecutionOptions(workers=0)
