"""One set of model options on every command that calls a model, and what reaches the wire."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer

from attune_judge.cli import app, main
from attune_judge.errors import UserError
from attune_judge.lm import LMSettings, resolve_lm
from tests._openai_stub import openai_stub
from tests.judges.sample_items import sample_items

MODEL_COMMANDS = ("score", "generate", "judge", "validate", "sensitivity", "bench", "align")
OPTIONS = {
    "--lm": "ATTUNE_LM",
    "--api-base": "ATTUNE_API_BASE",
    "--response-format": "ATTUNE_RESPONSE_FORMAT",
    "--temperature": "ATTUNE_TEMPERATURE",
    "--max-tokens": "ATTUNE_MAX_TOKENS",
    "--timeout": "ATTUNE_TIMEOUT",
    "--seed": "ATTUNE_SEED",
}


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


@pytest.mark.parametrize("command", MODEL_COMMANDS)
def test_every_model_command_has_the_model_options_with_their_variables(command: str) -> None:
    group = typer.main.get_command(app)
    cmd = group.commands[command]  # type: ignore[attr-defined]
    by_flag = {flag: p for p in cmd.params for flag in p.opts}
    for flag, var in OPTIONS.items():
        assert flag in by_flag, f"{command} lacks {flag}"
        if (command, flag) == ("sensitivity", "--lm"):
            # the variants file's base model comes before ATTUNE_LM, so the option does not
            # read the variable itself (run_sensitivity falls back to it)
            assert var in (by_flag[flag].help or "")
            continue
        assert by_flag[flag].envvar == var, f"{command} {flag} reads {by_flag[flag].envvar}"


@pytest.mark.parametrize(
    ("bare", "full"),
    [
        ("gpt4o", "openai/gpt-4o"),
        ("GPT-4o-mini", "openai/gpt-4o-mini"),
        ("gtp-4o", "openai/gpt-4o"),  # a typo, found by spelling
        ("claude-3-5-haiku-latest", "anthropic/claude-3-5-haiku-latest"),
        ("gemini-2.5-flash", "gemini/gemini-2.5-flash"),
        ("llama3.1", "ollama_chat/llama3.1"),
    ],
)
def test_a_bare_model_name_gets_a_provider_suggestion(bare: str, full: str) -> None:
    with pytest.raises(UserError, match=f"no provider prefix; did you mean '{full}'"):
        resolve_lm(LMSettings(lm=bare))


def test_nothing_is_suggested_for_a_name_like_no_model() -> None:
    with pytest.raises(UserError, match="no provider prefix; write provider/model") as err:
        resolve_lm(LMSettings(lm="zzqx-frobnicate"))
    assert "did you mean" not in str(err.value)


def test_cli_bare_model_exits_2_with_the_suggestion_before_any_key_question(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (item,), _, _ = sample_items(1)
    path = tmp_path / "item.json"
    path.write_text(item.model_dump_json(), "utf-8")
    assert _cli(["judge", str(path), "--lm", "gpt4o"]) == 2
    err = capsys.readouterr().err
    assert "'openai/gpt-4o'" in err and "API key" not in err and "Traceback" not in err
    out = tmp_path / "run"
    assert _cli(["score", str(tmp_path), "--lm", "gpt4o", "-o", str(out), "-q"]) == 2


def _reference_answer(body: dict[str, Any]) -> str:
    """A valid answer for any rubric: every output field the request asks for, scored 3."""
    from tests.judging._stub_judges import requested_fields

    return json.dumps({n: "fine" if n == "rationale" else 3 for n in requested_fields(body)})


def test_options_and_variables_reach_the_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (item,), _, _ = sample_items(1)
    path = tmp_path / "item.json"
    path.write_text(item.model_dump_json(), "utf-8")
    with openai_stub(_reference_answer) as server:
        argv = ["judge", str(path), "--lm", "openai/stub", "--api-base", server.url, "--no-cache"]
        options = ["--temperature", "0.3", "--max-tokens", "77", "--seed", "5"]
        code = _cli([*argv, *options, "--response-format", "json_object", "--timeout", "9"])
        assert code == 0, capsys.readouterr().err
        body = server.requests[-1]
        assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.3, 77, 5)
        assert body["response_format"]["type"] == "json_object"
        # the same settings from the ATTUNE_* variables
        monkeypatch.setenv("ATTUNE_TEMPERATURE", "0.6")
        monkeypatch.setenv("ATTUNE_MAX_TOKENS", "55")
        monkeypatch.setenv("ATTUNE_SEED", "8")
        monkeypatch.setenv("ATTUNE_RESPONSE_FORMAT", "none")
        assert _cli(argv) == 0
        body = server.requests[-1]
        # without response_format DSPy's own engine names the limit max_completion_tokens
        limit = body.get("max_tokens", body.get("max_completion_tokens"))
        assert (body["temperature"], limit, body["seed"]) == (0.6, 55, 8)
        assert "response_format" not in body


def test_timeout_cuts_a_hung_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (item,), _, _ = sample_items(1)
    path = tmp_path / "item.json"
    path.write_text(item.model_dump_json(), "utf-8")
    with openai_stub(_reference_answer) as server:
        server.delay_s = 2.0
        argv = ["judge", str(path), "--lm", "openai/stub", "--api-base", server.url]
        assert _cli([*argv, "--no-cache", "--timeout", "0.3"]) == 3  # a failed judgment
    captured = capsys.readouterr()
    judgment = json.loads(captured.out)
    assert judgment["status"] == "lm_error"
    assert "timeout" in judgment["error"].lower()
    assert captured.err.startswith("error: judgment lm_error: ")


def test_score_passes_the_options_to_the_judge(tmp_path: Path) -> None:
    from attune_judge.data import read_judgments, write_jsonl
    from attune_judge.runner import ScoreConfig, run_score
    from attune_judge.runs import read_manifest

    (item,), _, _ = sample_items(1)
    write_jsonl(tmp_path / "items.jsonl", [item])
    with openai_stub(_reference_answer) as server:
        server.delay_s = 2.0  # longer than the timeout: the request is cut off
        settings = LMSettings(
            temperature=0.2,
            max_tokens=99,
            response_format="json_object",
            timeout=0.3,
            api_base=server.url,
        )
        config = ScoreConfig(
            data=tmp_path / "items.jsonl",
            out=tmp_path / "r",
            lm="openai/stub",
            lm_settings=settings,
            max_retries=0,
            max_failure_rate=1.0,
            quiet=True,
            B=50,
        )
        run_score(config)
    (body,) = server.requests
    assert (body["temperature"], body["max_tokens"]) == (0.2, 99)
    assert body["response_format"]["type"] == "json_object"
    (judgment,) = read_judgments(tmp_path / "r" / "judgments.jsonl")
    assert judgment.status == "lm_error" and "timed out" in (judgment.error or "")
    (spec,) = read_manifest(tmp_path / "r").judges.values()
    assert spec.lm.response_format == "json_object"


def test_expected_score_requests_send_the_limit_every_server_honours(tmp_path: Path) -> None:
    """llama-cpp-python's server ignores ``max_completion_tokens`` (DSPy's name for the limit)
    and writes until its context is full: a server is sent ``max_tokens`` (issue 29)."""
    (item,), _, _ = sample_items(1)
    path = tmp_path / "item.json"
    path.write_text(item.model_dump_json(), "utf-8")
    with openai_stub(lambda body: "4") as server:
        argv = ["judge", str(path), "--lm", "openai/stub", "--api-base", server.url, "--no-cache"]
        code = _cli([*argv, "--score-mode", "expected"])
    assert code == 2  # the stub returns no logprobs: refused with one line
    body = server.requests[0]
    assert body["max_tokens"] == 4 and "max_completion_tokens" not in body
    assert body["logprobs"] is True and body["top_logprobs"] == 20
