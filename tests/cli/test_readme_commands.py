"""The command lines of the README, executed.

Every ``attune-judge ...`` line of README.md (inline code, fenced blocks, and the ``score``,
``rubric`` forms written without the program name) is collected. Those that run in seconds are
executed here on the sample data, with ``M`` a deterministic model behind a loopback
OpenAI-compatible stub and the other placeholders filled in. The long-running ones are listed
in ``ELSEWHERE`` with the test file that runs them; a README command that is neither executed
here nor listed there fails this test.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from attune_judge.cli import main
from tests._openai_stub import openai_stub
from tests.conftest import REPO_ROOT, SAMPLES
from tests.judging._stub_judges import behaviour_rule, longer_wins, requested_fields

README = REPO_ROOT / "README.md"

ELSEWHERE = {
    "demo": "tests/adapters/test_demo_cli.py",
    "bench": "tests/tasks/test_bench_cli.py",
    "data convert": "tests/adapters/test_convert_cli.py",
    "annotate": "tests/annotate/test_cli.py",
    "view": "tests/annotate/test_view.py",
}
"""Commands run by other (slower or data-specific) tests, by subcommand."""

ELSEWHERE_PREFIXES = {
    "attune-judge align duo ": "tests/align/test_readme_workflow.py",
    "attune-judge align ": "tests/align/test_cli.py",
    "attune-judge validate --set duo --judge ": "tests/align/test_readme_workflow.py",
    "attune-judge score data/duo/items.jsonl --judge ": "tests/align/test_readme_workflow.py",
    "attune-judge rank runs/duo --human ": "tests/align/test_readme_workflow.py",
    "attune-judge rank RUN --human ": "tests/calibration/test_rank_human.py",
    "attune-judge rank --pairs ": "tests/calibration/test_style_control.py",
    "attune-judge rank RUN --control ": "tests/calibration/test_style_control.py",
    "attune-judge report judges/duo": "tests/align/test_readme_workflow.py",
    "attune-judge calibrate --human labels.jsonl --judge runs/score": "tests/annotate/test_cli.py",
    "attune-judge score data/samples/attunebench/conversation_5.json --models original --lm "
    "openai/smollm2 ": "tests/judging/test_llama_recipe.py",
    "attune-judge calibrate --judge logs/ ": "tests/adapters/test_inspect_logs.py",
    "attune-judge rank logs/ ": "tests/adapters/test_inspect_logs.py",
    "attune-judge score --candidates logs/": "tests/adapters/test_inspect_logs.py",
    "attune-judge score DATA --lm openai/gpt-4.1-mini -o RUN --batch": (
        "tests/cli/test_batch_cli.py"
    ),
    "attune-judge score DATA --lm openai/gpt-4.1-mini -o RUN --executor ray": (
        "tests/runner/test_ray_executor.py"
    ),
}
"""The README's align workflow (its five lines run literally, against a loopback stub, by
tests/align/test_readme_workflow.py) and other long runs, by the tests named here."""


def _elsewhere(command: str) -> bool:
    if any(command.startswith(p) for p in ELSEWHERE_PREFIXES):
        return True
    sub = _sub(command)
    return sub in ELSEWHERE or sub.split()[0] in ELSEWHERE


def readme_commands() -> list[str]:
    text = README.read_text("utf-8")
    found = re.findall(r"`(attune-judge [^`]+)`", text)
    found += re.findall(r"^(attune-judge .+)$", text, flags=re.M)
    found += [
        f"attune-judge {c}" for c in re.findall(r"`((?:score|rubric) [A-Z a-z-]+[^`]*)`", text)
    ]
    return sorted({c.strip() for c in found if not c.startswith("attune-judge is ")})


VARIANTS = "attunebench-reference-variants.yaml"


def _two_conversations(tmp_path: Path) -> Path:
    import shutil

    folder = tmp_path / "two"
    if not folder.exists():
        folder.mkdir()
        for name in ("conversation_5.json", "conversation_12.json"):
            shutil.copy(SAMPLES / name, folder / name)
    return folder


def _sub(command: str) -> str:
    words = command.split()[1:]
    return " ".join(words[:2]) if words[0] in ("data", "rubric") else words[0]


def _reply(body: dict[str, Any]) -> str:
    fields = requested_fields(body)
    if "verdict" in fields:
        return longer_wins(body)
    if any(f.startswith("B") and f[1:].isdigit() for f in fields):
        return behaviour_rule(body)
    text = {"rationale": "fine", "reply": "That sounds hard. I'm here with you."}
    return json.dumps({f: text.get(f, 3) for f in fields})


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


def test_every_readme_command_is_run_here_or_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ATTUNE_CACHE", "0")
    monkeypatch.chdir(tmp_path)
    commands = readme_commands()
    assert len(commands) >= 15
    item = tmp_path / "ITEM.json"
    from tests.judges.sample_items import sample_items

    (first,), _, _ = sample_items(1)
    item.write_text(first.model_dump_json(), "utf-8")
    executed: list[str] = []
    runs: dict[str, Path] = {}
    with openai_stub(_reply) as server:
        model = ["--lm", "openai/stub", "--api-base", server.url]

        def run(command: str, **fill: str) -> None:
            words = shlex.split(command)[1:]
            argv: list[str] = []
            for w in words:
                if w == "M":
                    argv[-1:] = model  # "--lm M"
                    continue
                argv.append(fill.get(w, w))
            code = _cli(argv)
            assert code == 0, (command, argv, capsys.readouterr().err)
            executed.append(command)

        for command in commands:
            sub = _sub(command)
            if _elsewhere(command):
                continue
            if sub == "score" and "DATA" not in command:  # an option example in the prose
                out = tmp_path / "run-fragment"
                run(
                    f"{command} DATA --rubric lexical -o RUN -q",
                    DATA=str(SAMPLES),
                    RUN=str(out),
                    USD="1",
                )
                executed[-1] = command
            elif sub == "score":
                rubric = re.search(r"--rubric (\S+)", command)
                kind = rubric.group(1) if rubric else "attunebench-reference"
                out = tmp_path / f"run-{kind}"
                runs[kind] = out
                run(command, DATA=str(SAMPLES), RUN=str(out))
        reference = runs["attunebench-reference"]
        # labels are exported (data ...) before calibrate reads them
        for command in sorted(commands, key=lambda c: not c.startswith("attune-judge data")):
            sub = _sub(command)
            if _elsewhere(command) or sub == "score":
                continue
            fill = {
                "DATA": str(SAMPLES),
                "PATH": str(SAMPLES),
                "RUN": str(reference),
                "ITEM.json": str(item),
                "R": "attunebench-reference",
                "NAME": "attunebench-reference",
                "FILE": str(REPO_ROOT / "rubrics" / "attunebench-pairwise.yaml"),
                "candidates.jsonl": str(tmp_path / "candidates.jsonl"),
                "table.csv": str(tmp_path / "table.csv"),
                "OUT": str(tmp_path / "cal-out"),
                "CAL": str(tmp_path / f"cal-{len(executed)}"),
            }
            if "prefs.jsonl" in command and "calibrate" in command:
                fill["RUN"] = str(runs["attunebench-pairwise"])
            if "ratings.jsonl" in command and "calibrate" in command:
                fill["RUN"] = str(runs["attunebench-behaviours"])
            if "H.jsonl" in command:
                ratings = tmp_path / "H.jsonl"
                _cli(["data", "ratings", str(SAMPLES), "-o", str(ratings)])
                fill["H.jsonl"] = str(ratings)
                fill["RUN_OR_JSONL"] = str(runs["attunebench-behaviours"])
            if "prefs.jsonl" in command and "data preferences" in command:
                fill["prefs.jsonl"] = "prefs.jsonl"
            if sub == "validate":  # a shipped set on a 1-5 scale (the stub answers 3)
                fill["NAME"] = "empathic-communication-empatheticdialogues"
            if sub == "sensitivity":  # the shipped variants file, on two conversations
                fill["V.yaml"] = str(REPO_ROOT / "rubrics" / "variants" / VARIANTS)
                fill["DATA"] = str(_two_conversations(tmp_path))
                fill["RUN"] = str(tmp_path / "sensitivity-run")
            braces = re.search(r"\{([a-z,-]+)\}", command)
            if braces:  # `schema {manifest,score,...}`: every choice
                for choice in braces.group(1).split(","):
                    run(command.replace(braces.group(0), choice), **fill)
                executed.append(command)
                continue
            run(command, **fill)
    missing = [c for c in commands if c not in executed and not _elsewhere(c)]
    assert missing == []
    for sub, where in {**ELSEWHERE, **ELSEWHERE_PREFIXES}.items():
        assert (REPO_ROOT / where).exists(), (sub, where)
    assert {_sub(c) for c in commands} - set(ELSEWHERE) - {"data convert", "align"} <= {
        _sub(c) for c in executed
    }
    # the model-calling commands of the README really ran here (not only their names)
    assert {"validate", "sensitivity", "generate", "judge"} <= {_sub(c) for c in executed}
    assert (tmp_path / "sensitivity-run" / "report.md").exists()
