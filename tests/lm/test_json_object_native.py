"""``json_object`` (llama.cpp's format with a schema) goes through DSPy's own HTTP engine with
the request body LiteLLM sent: same format and schema, same ``max_tokens``, same messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from attune_judge.cli import main
from attune_judge.lm import LMSettings
from tests._openai_stub import openai_stub
from tests.judges.sample_items import sample_items


def _cli(argv: list[str]) -> int:
    try:
        main(argv)
    except SystemExit as exc:  # typer exits with the code
        return int(exc.code or 0)
    return 0


def _answer(body: dict[str, Any]) -> str:
    from tests.judging._stub_judges import requested_fields

    return json.dumps({n: "fine" if n == "rationale" else 3 for n in requested_fields(body)})


def test_json_object_body_is_litellms_without_litellm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import dspy.clients.engines.litellm_engine as engines

    (item,), _, _ = sample_items(1)
    path = tmp_path / "item.json"
    path.write_text(item.model_dump_json(), "utf-8")
    through_litellm: list[object] = []
    real = engines.LiteLLMEngine.complete_legacy

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        through_litellm.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(engines.LiteLLMEngine, "complete_legacy", spy)
    with openai_stub(_answer) as server:
        argv = ["judge", str(path), "--lm", "openai/stub", "--api-base", server.url, "--no-cache"]
        argv += ["--response-format", "json_object", "--max-tokens", "77", "--seed", "5"]
        assert _cli(argv) == 0, capsys.readouterr().err
        native = server.requests[-1]
        assert through_litellm == []
        # the former route, in the same process: LiteLLM and the OpenAI SDK, which a hosted
        # provider still takes (no --api-base); LiteLLM's own variable points it at the stub
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_API_BASE", server.url)
        hosted = [a for a in argv if a not in ("--api-base", server.url)]
        assert _cli(hosted) == 0, capsys.readouterr().err
        former = server.requests[-1]
        assert through_litellm == [1]
    fmt = native["response_format"]
    assert fmt["type"] == "json_object" and fmt["schema"]["properties"]
    assert native["max_tokens"] == 77 and "max_completion_tokens" not in native
    assert native == former


@pytest.mark.parametrize(
    ("model", "api_base", "litellm"),
    [
        ("openai/served", "http://127.0.0.1:9/v1", False),  # a server: DSPy's engine
        # credentials in the URL: DSPy's engine too, credentials sent by its transport
        ("openai/served", "http://user:pw@127.0.0.1:9/v1", False),  # a user in the URL
        ("openai/served", "http://127.0.0.1:9/v1?key=k", False),  # a query in the URL
        ("openai/served", "http://tok3n@127.0.0.1:9/p/v1", False),  # a lone token
        ("openai/gpt-4o-mini", None, True),  # hosted: LiteLLM knows its token-limit field
    ],
)
def test_which_route_json_object_takes(
    model: str, api_base: str | None, litellm: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from attune_judge.lm import resolve_lm

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    lm = resolve_lm(
        LMSettings(lm=model, api_base=api_base, response_format="json_object"),
        check_connection=False,
    )
    assert (lm._engine_spec == "litellm") is litellm  # DSPy keeps engine= here
    if api_base is not None:  # a server: DSPy's lm15 engine, given explicitly
        from attune_judge.lm import EngineBase

        # every server URL, credentials or not, gets attune-judge's engine on lm15 (issue 47:
        # no engine selection per call); with credentials its transport sends them
        assert isinstance(lm._engine_spec, EngineBase)
