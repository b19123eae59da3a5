"""One bound for the bootstrap replicate count: every configuration and the command line
refuse fewer than MIN_B (50) and accept it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from attune_judge._bootstrap import DEFAULT_B, MIN_B
from attune_judge.cli import main
from attune_judge.runner import ScoreConfig
from attune_judge.sensitivity import SensitivityConfig
from attune_judge.sensitivity._variants import AnalysisSettings
from attune_judge.tasks import BenchConfig

CONFIGS = [
    lambda b: ScoreConfig(data=Path("d"), out=Path("o"), B=b),
    lambda b: BenchConfig(data=Path("d"), models=["m"], out=Path("o"), B=b),
    lambda b: SensitivityConfig(data=Path("d"), variants=Path("v"), out=Path("o"), B=b),
    lambda b: AnalysisSettings(B=b),
]


def test_the_bound_is_fifty_and_the_default_two_thousand() -> None:
    assert (MIN_B, DEFAULT_B) == (50, 2_000)


@pytest.mark.parametrize("make", CONFIGS)
def test_every_configuration_refuses_fewer_than_the_bound(make: object) -> None:
    assert make(50).model_dump()  # type: ignore[operator]
    with pytest.raises(ValidationError, match="greater than or equal to 50"):
        make(49)  # type: ignore[operator]


@pytest.mark.parametrize("command", ["score", "sensitivity"])
def test_the_command_line_refuses_fewer_than_the_bound(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = (
        [command, "x.json", "-B", "49"]
        if command == "score"
        else [command, "x", "v.yaml", "-B", "49"]
    )
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Invalid value for '--bootstrap'" in err and "greater than or equal to 50" in err


def test_a_variants_file_may_still_name_the_count_bootstrap_replicates() -> None:
    assert AnalysisSettings.model_validate({"bootstrap_replicates": 300}).B == 300
    assert AnalysisSettings.model_validate({"B": 300}).model_dump()["B"] == 300
    with pytest.raises(ValidationError, match="greater than or equal to 50"):
        AnalysisSettings.model_validate({"bootstrap_replicates": 49})
