"""Secrets: credentials inside ``--api-base`` and provider keys echoed by a model never reach
a file, a report, printed output or an error message (issue 12, point 6).

Every check uses canary values that cannot occur by chance, and looks for them byte by byte
in everything a command wrote or printed.
"""

from __future__ import annotations

import json
import logging
import random
import socket
from pathlib import Path
from typing import Any

import pytest

# private unit: the secret redaction of URLs and messages (and of the request cache's copies)
from attune_judge._secrets import redact, redact_url, register_url, secret_values, url_secrets
from attune_judge.cli import main
from attune_judge.lm._cache import redacted_copy
from attune_judge.testing import FaultServer, answer_for_schema
from tests._http_clients import _closed_http_clients
from tests.conftest import SAMPLES
from tests.judges.sample_items import sample_items

pytestmark = pytest.mark.timeout(120)
_closed = _closed_http_clients  # autouse fixture: sockets closed after every test

PASSWORD = "pw-CANARY-5d1e8a"
QUERY_KEY = "qk-CANARY-93b7f0"
PROVIDER_KEY = "sk-CANARY-2c6f4a9e1b"
CANARIES = (PASSWORD, QUERY_KEY, PROVIDER_KEY)


@pytest.fixture(autouse=True)
def _no_request_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command really asks this test's server (no answer cached by another test)."""
    monkeypatch.setenv("ATTUNE_CACHE", "0")


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


def _leaks(root: Path) -> list[str]:
    """Files under ``root`` holding a canary (as bytes: JSON, Markdown, HTML, anything)."""
    out = []
    for path in sorted(root.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            out += [f"{path}: {c}" for c in CANARIES if c.encode() in data]
    return out


def _with_credentials(url: str) -> str:
    """``http://127.0.0.1:P/v1`` with a user:password and an ``api_key`` query parameter."""
    head, rest = url.split("://", 1)
    return f"{head}://attune:{PASSWORD}@{rest}?api_key={QUERY_KEY}"


# -- the rules, on examples worked by hand ----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cannot reach http://u:pw@127.0.0.1:9/v1", "cannot reach http://u:***@127.0.0.1:9/v1"),
        ("https://ghp_abc@host/v1", "https://***@host/v1"),
        ("http://h/v1?key=abc&x=1", "http://h/v1?key=***&x=1"),
        ("http://h/v1?x=1&access_token=t0k#frag", "http://h/v1?x=1&access_token=***#frag"),
        ("http://h/?X-Api-Key=zz;token=yy", "http://h/?X-Api-Key=***;token=***"),
        # not credentials: a plain URL, ordinary parameters that only contain the letters
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("http://h/?author=me&monkey=3", "http://h/?author=me&monkey=3"),
        ("write to me@example.org", "write to me@example.org"),
    ],
)
def test_redact_url_hides_userinfo_passwords_and_credential_parameters(
    text: str, expected: str
) -> None:
    assert redact_url(text) == expected


def test_url_secrets_are_found_decoded_and_as_the_basic_auth_token() -> None:
    # base64("u:p@ss word!") = dTpwQHNzIHdvcmQh (worked with `printf 'u:p@ss word!' | base64`)
    found = url_secrets("http://u:p%40ss%20word%21@h/v1?token=abc")
    assert {"p%40ss%20word%21", "p@ss word!", "abc", "dTpwQHNzIHdvcmQh"} <= set(found)
    assert "u" not in found  # the user name beside a password is not a secret


def test_secret_values_include_the_credentials_of_attune_api_base() -> None:
    env = {"ATTUNE_API_BASE": f"http://u:{PASSWORD}@h/v1?key={QUERY_KEY}", "HOME": "/root"}
    assert {PASSWORD, QUERY_KEY} <= set(secret_values(env))
    # echoed outside any URL (a model repeating it), a registered value is still replaced
    register_url(f"http://u:{PASSWORD}@h/v1")
    assert redact(f"the key is {PASSWORD}.") == "the key is ***."


def test_log_lines_are_redacted() -> None:
    from attune_judge.cli._options import _RedactSecrets

    record = logging.LogRecord(
        "x", logging.WARNING, __file__, 1, "lm_error at %s", (f"http://u:{PASSWORD}@h",), None
    )
    assert _RedactSecrets().filter(record)
    assert record.getMessage() == "lm_error at http://u:***@h"


# -- the commands ---------------------------------------------------------------------------


def test_score_never_writes_the_credentials_of_api_base(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    with FaultServer() as server:
        api_base = _with_credentials(server.url)
        argv = ["score", str(SAMPLES / "conversation_5.json"), "--lm", "openai/fake"]
        argv += ["--api-base", api_base, "--response-format", "json_object", "-o", str(out)]
        assert _cli([*argv, "-q"]) == 0
        assert server.requests > 0
        port = server.url.split(":")[2].split("/")[0]
    assert _cli(["report", str(out)]) == 0  # a report rebuilt from the run directory
    printed = capsys.readouterr()
    assert _leaks(out) == []
    assert not any(c in printed.out + printed.err for c in CANARIES)
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    # the run still says which server it used, without the credentials
    shown = f"http://attune:***@127.0.0.1:{port}/v1?api_key=***"
    assert manifest["arguments"]["api_base"] == shown
    assert {"report.md", "report.html", "summary.json", "judgments.jsonl"} <= {
        p.name for p in out.iterdir()
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("command", ["judge", "score"])
def test_an_unreachable_server_is_named_without_its_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    (item,), _, _ = sample_items(1)
    path = tmp_path / "item.json"
    path.write_text(item.model_dump_json(), "utf-8")
    port = _free_port()
    data = str(path) if command == "judge" else str(SAMPLES / "conversation_5.json")
    argv = [command, data, "--lm", "openai/fake"]
    argv += ["--api-base", f"http://u:{PASSWORD}@127.0.0.1:{port}/v1?key={QUERY_KEY}"]
    if command == "score":
        argv += ["-o", str(tmp_path / "run")]
    assert _cli(argv) == 2
    err = capsys.readouterr().err
    assert f"http://u:***@127.0.0.1:{port}/v1?key=***" in err
    assert not any(c in err for c in CANARIES)
    assert "Traceback" not in err
    assert _leaks(tmp_path) == []


def _echoing(schema: dict[str, Any], text: str, rng: random.Random) -> dict[str, Any]:
    """A valid answer whose every string field echoes the provider key and the password."""
    good = answer_for_schema(schema, rng)
    echo = f"my instructions say the key is {PROVIDER_KEY} (and {PASSWORD})"
    return {k: echo if isinstance(v, str) else v for k, v in good.items()}


def test_a_key_echoed_by_the_model_is_not_printed_by_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", PROVIDER_KEY)
    (item,), _, _ = sample_items(1)
    path = tmp_path / "item.json"
    path.write_text(item.model_dump_json(), "utf-8")
    with FaultServer(answer=_echoing) as server:
        argv = [
            "judge",
            str(path),
            "--lm",
            "openai/fake",
            "--api-base",
            _with_credentials(server.url),
        ]
        assert _cli([*argv, "--response-format", "json_object", "--no-cache"]) == 0
        assert server.requests == 1
    printed = capsys.readouterr().out
    judgment = json.loads(printed)
    assert judgment["status"] == "ok"
    assert "the key is ***" in printed  # the answer is kept, only the key is replaced
    assert not any(c in printed for c in CANARIES)


def test_a_key_echoed_by_the_model_is_not_written_by_generate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", PROVIDER_KEY)
    out = tmp_path / "cands.jsonl"
    with FaultServer(answer=_echoing) as server:
        argv = ["generate", str(SAMPLES / "conversation_5.json"), "--lm", "openai/fake"]
        argv += ["--api-base", _with_credentials(server.url), "--response-format", "json_object"]
        assert _cli([*argv, "-o", str(out), "-q"]) == 0
        assert server.requests > 0
    printed = capsys.readouterr()
    rows = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert rows and all("the key is ***" in r["response"] for r in rows)
    assert _leaks(tmp_path) == []
    assert not any(c in printed.out + printed.err for c in CANARIES)


def test_the_process_secrets_follow_every_change_of_the_environment_and_registry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # secret_values() remembers what it found for an unchanged environment (it runs per request)
    before = secret_values()
    assert "sk-set-after-the-first-call" not in before
    monkeypatch.setenv("LATE_API_KEY", "sk-set-after-the-first-call")
    assert "sk-set-after-the-first-call" in secret_values()
    monkeypatch.setenv("LATE_API_KEY", "sk-changed-in-place-0001")
    found = secret_values()
    assert "sk-changed-in-place-0001" in found and "sk-set-after-the-first-call" not in found
    monkeypatch.delenv("LATE_API_KEY")
    assert "sk-changed-in-place-0001" not in secret_values()
    register_url("http://u:registered-later-0001@h/v1")
    assert "registered-later-0001" in secret_values()
    found = secret_values()
    found.clear()  # the caller's list is its own
    assert "registered-later-0001" in secret_values()


def test_redacted_copy_walks_objects_and_leaves_the_original_alone() -> None:
    from pydantic import BaseModel, PrivateAttr

    class Response(BaseModel):
        text: str
        _hidden: dict[str, Any] = PrivateAttr(default_factory=dict)

    original = Response(text=f"echo {PASSWORD}")
    original._hidden["api_base"] = f"http://u:{PASSWORD}@h/v1?key={QUERY_KEY}"
    copy = redacted_copy({"r": original, "t": (f"tok {PASSWORD}",)}, [PASSWORD])
    assert copy["r"].text == "echo ***" and copy["t"] == ("tok ***",)
    assert copy["r"]._hidden["api_base"] == "http://u:***@h/v1?key=***"
    assert original.text == f"echo {PASSWORD}"  # the caller's answer is unchanged
    assert PASSWORD in original._hidden["api_base"]


def test_secret_values_are_credential_like_variables_of_eight_or_more_characters() -> None:
    env = {
        "OPENAI_API_KEY": "sk-abcdefgh",
        "HF_TOKEN": "hf_12345678",
        "MY_KEY": "1",  # too short to redact safely
        "HOME": "/root/somewhere",  # not a credential name
    }
    assert sorted(secret_values(env)) == ["hf_12345678", "sk-abcdefgh"]
    assert redact("key=sk-abcdefgh; tok=hf_12345678", secret_values(env)) == "key=***; tok=***"
