"""No credential is ever written to disk, the request cache included (issue 30, point 1).

``score`` runs with the request cache on, against a loopback server whose address carries a
user:password, a lone token and credential query parameters, with provider and service keys
in the environment, and a model that echoes all of them. Then every file under the run
directories and the cache directory (``ATTUNE_CACHE_DIR``, every shard of ``cache.db``) is
searched byte by byte for each canary, and for the HTTP Basic tokens a client derives from
the URL's userinfo. The cached answers stay usable: a new run on the same cache sends nothing.
"""

from __future__ import annotations

import base64
import random
from pathlib import Path
from typing import Any

import pytest

from attune_judge.cli import main
from attune_judge.testing import FaultServer, answer_for_schema
from tests._http_clients import _closed_http_clients
from tests.conftest import SAMPLES

pytestmark = pytest.mark.timeout(180)
_closed = _closed_http_clients  # autouse fixture: sockets closed after every test

PASSWORD = "pw-CANARY-7f3a91"
QUERY_KEY = "qk-CANARY-0b5e22"
ACCESS_TOKEN = "at-CANARY-51aa07"
LONE_TOKEN = "tk-CANARY-c4d8e6"
PROVIDER_KEY = "sk-CANARY-e9d2b7c4a1"
SERVICE_KEY = "svc-CANARY-88f0d3e2"
CANARIES = (
    PASSWORD,
    QUERY_KEY,
    ACCESS_TOKEN,
    LONE_TOKEN,
    PROVIDER_KEY,
    SERVICE_KEY,
    base64.b64encode(f"attune:{PASSWORD}".encode()).decode(),
    base64.b64encode(f"{LONE_TOKEN}:".encode()).decode(),
)


def _echo(*secrets: str) -> Any:
    """Valid answers whose every text field echoes the provider and service keys and
    ``secrets`` (a one-criterion question: a bare digit)."""
    said = f"key {PROVIDER_KEY}, service {SERVICE_KEY}, " + ", ".join(secrets)

    def answer(schema: dict[str, Any], text: str, rng: random.Random) -> Any:
        if not schema.get("properties"):
            return 4
        good = answer_for_schema(schema, rng)
        return {k: said if isinstance(v, str) else v for k, v in good.items()}

    return answer


def _leaks(root: Path) -> list[str]:
    out = []
    for path in sorted(root.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            out += [f"{path.relative_to(root)}: {c}" for c in CANARIES if c.encode() in data]
    return out


def _score(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(["score", str(SAMPLES / "conversation_5.json"), "--models", "original", *argv])
    return int(stop.value.code or 0)


def test_no_credential_reaches_any_file_the_cache_included(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("ATTUNE_CACHE_DIR", str(cache))
    monkeypatch.setenv("ATTUNE_CACHE", "1")
    monkeypatch.setenv("OPENAI_API_KEY", PROVIDER_KEY)
    monkeypatch.setenv("MY_SERVICE_KEY", SERVICE_KEY)
    # (DSPy's native client, behind --response-format json_schema, cannot send a URL with
    # userinfo at all: it fails to connect, so it stores nothing)
    runs = [
        (["--response-format", "json_object"], "userinfo"),
        (["--per-criterion"], "userinfo"),
        (["--score-mode", "expected"], "userinfo"),
        (["--response-format", "json_object"], "token"),
    ]
    # each server's model echoes the credentials of the address it was reached by
    userinfo_echo = _echo(PASSWORD, QUERY_KEY, ACCESS_TOKEN, f"http://u:{PASSWORD}@h/v1")
    with (
        FaultServer(answer=userinfo_echo) as server,
        FaultServer(answer=_echo(f"token {LONE_TOKEN}", f"http://{LONE_TOKEN}@h")) as other,
    ):
        head, rest = server.url.split("://", 1)
        urls = {
            "userinfo": f"{head}://attune:{PASSWORD}@{rest}?api_key={QUERY_KEY}"
            f"&access_token={ACCESS_TOKEN}",
            "token": other.url.replace("://", f"://{LONE_TOKEN}@"),
        }
        for k, (options, url) in enumerate(runs):
            argv = ["--lm", f"openai/fake-{url}", "--api-base", urls[url], *options]
            assert _score([*argv, "-o", str(tmp_path / f"run{k}"), "-q", "-B", "50"]) == 0
        sent = server.requests
        assert sent > 0 and other.requests > 0
        # the cached answers are still answers: the same judgments again cost nothing
        argv = ["--lm", "openai/fake-userinfo", "--api-base", urls["userinfo"], *runs[0][0]]
        assert _score([*argv, "-o", str(tmp_path / "again"), "-q", "-B", "50"]) == 0
        assert server.requests == sent
    printed = capsys.readouterr()
    assert list(cache.rglob("cache.db")), "the request cache wrote nothing"
    assert _leaks(tmp_path) == []
    assert not any(c in printed.out + printed.err for c in CANARIES)
    said = (tmp_path / "run0" / "judgments.jsonl").read_text("utf-8")
    assert "key ***, service ***" in said  # the answers are kept, only the secrets replaced
