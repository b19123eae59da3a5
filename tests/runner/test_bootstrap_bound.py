"""One bound for the bootstrap replicate count: every configuration and the command line
refuse fewer than 50 and accept it; the default is 2,000."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from attune_judge import shipped_dir
from attune_judge.cli import main
from attune_judge.errors import UserError
from attune_judge.runner import ScoreConfig
from attune_judge.sensitivity import SensitivityConfig, load_variants
from attune_judge.tasks import BenchConfig

CONFIGS = [
    lambda b: ScoreConfig(data=Path("d"), out=Path("o"), B=b),
    lambda b: BenchConfig(data=Path("d"), models=["m"], out=Path("o"), B=b),
    lambda b: SensitivityConfig(data=Path("d"), variants=Path("v"), out=Path("o"), B=b),
]


def test_the_default_is_two_thousand() -> None:
    assert ScoreConfig(data=Path("d"), out=Path("o")).B == 2_000
    assert BenchConfig(data=Path("d"), models=["m"], out=Path("o")).B == 2_000
    # sensitivity takes the variants file's count unless -B is given (below: its default)


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


def test_a_variants_file_may_still_name_the_count_bootstrap_replicates(tmp_path: Path) -> None:
    shipped = shipped_dir("rubrics") / "variants" / "attunebench-reference-variants.yaml"
    text = shipped.read_text("utf-8")
    assert "\n  B: 2000\n" in text

    def analysis_b(line: str) -> int:
        path = tmp_path / "variants.yaml"
        path.write_text(text.replace("\n  B: 2000\n", f"\n  {line}\n"), "utf-8")
        return load_variants(path).analysis.B

    assert analysis_b("bootstrap_replicates: 300") == 300
    assert analysis_b("B: 300") == 300
    assert analysis_b("B: 50") == 50
    assert analysis_b("") == 2_000  # not given: the default
    with pytest.raises(UserError, match="greater than or equal to 50"):
        analysis_b("bootstrap_replicates: 49")
