"""``score --batch`` against the loopback fake of the files and batches endpoints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from attune_judge.data import Judgment, read_jsonl
from attune_judge.errors import UserError
from attune_judge.lm import LMSettings
from attune_judge.runner import ScoreConfig, run_score

# private unit: the OpenAI batch client against the fake batch server
from attune_judge.runner._batch_api import OpenAIBatchClient
from attune_judge.testing import FakeBatchServer, close_http_clients
from tests.runner.test_ray_executor import answer, judge_items

pytestmark = pytest.mark.timeout(120)

N = 10


def _config(data: Path, out: Path, server: FakeBatchServer, **kw: Any) -> ScoreConfig:
    return ScoreConfig(
        data=data,
        out=out,
        lm="openai/fake-judge",
        batch=True,
        batch_poll_s=0.01,
        quiet=True,
        B=200,
        max_failure_rate=1.0,
        **kw,
        lm_settings=LMSettings(api_base=server.base_url),
    )


def _lines(run: Path) -> list[Judgment]:
    return read_jsonl(run / "judgments.jsonl", Judgment)


def _scores(run: Path) -> dict[str, str]:
    ok = [j for j in _lines(run) if j.status == "ok"]
    return {j.item_id: json.dumps(j.scores, sort_keys=True) for j in ok}


def test_batch_equals_direct_calls_and_a_failed_line_is_that_items_lm_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = judge_items(tmp_path / "items.jsonl", N)
    failed: list[str] = []

    def line_error(custom_id: str, body: dict[str, Any]) -> tuple[int, str] | None:
        if "(3)" in json.dumps(body) and not failed:  # item i3, the first time only
            failed.append(custom_id)
            return 500, "the server fell over"
        return None

    with FakeBatchServer(answer, line_error=line_error) as server:
        first = run_score(_config(data, tmp_path / "b", server))
        assert server.chat_calls == 0 and len(server.uploads) == 1
        assert first.n_by_status == {"ok": N - 1, "lm_error": 1}
        (bad,) = [j for j in _lines(tmp_path / "b") if j.status != "ok"]
        assert bad.item_id == "i3" and "the server fell over" in (bad.error or "")
        assert "batch-" in (bad.error or "")  # names the batch
        # resume: only the failed item goes into a new batch
        again = run_score(_config(data, tmp_path / "b", server))
        assert again.n_skipped == N - 1 and again.n_by_status == {"ok": 1}
        assert len(server.uploads) == 2
        # the same judgments by direct calls (another DSPy cache: the server answers them)
        monkeypatch.setenv("ATTUNE_CACHE_DIR", str(tmp_path / "cache2"))
        direct = run_score(
            _config(data, tmp_path / "d", server).model_copy(update={"batch": False})
        )
        assert direct.n_by_status == {"ok": N} and server.chat_calls == N
        close_http_clients()
    assert _scores(tmp_path / "b") == _scores(tmp_path / "d")
    text = (tmp_path / "b" / "batch" / "batches.jsonl").read_text()
    events = [json.loads(x) for x in text.splitlines()]
    assert [e["event"] for e in events] == ["intent", "uploaded", "submitted", "finished"] * 2
    assert len(events[0]["keys"]) == N and len(events[4]["keys"]) == 1


def test_a_killed_run_resumes_polling_instead_of_resubmitting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = judge_items(tmp_path / "items.jsonl", N)
    real_status = OpenAIBatchClient.status
    with FakeBatchServer(answer, polls_to_complete=3) as server:

        def killed(self: OpenAIBatchClient, batch_id: str) -> dict[str, Any]:
            raise KeyboardInterrupt  # the run dies while it waits for the batch

        monkeypatch.setattr(OpenAIBatchClient, "status", killed)
        with pytest.raises(KeyboardInterrupt):
            run_score(_config(data, tmp_path / "r", server))
        assert len(server.uploads) == 1 and not (tmp_path / "r" / "judgments.jsonl").stat().st_size
        monkeypatch.setattr(OpenAIBatchClient, "status", real_status)
        result = run_score(_config(data, tmp_path / "r", server))
        close_http_clients()
    assert result.n_by_status == {"ok": N}
    assert len(server.uploads) == 1 and len(server.batches) == 1  # polled, not paid twice
    assert server.chat_calls == 0


def test_an_expired_batch_is_submitted_again_for_what_it_did_not_answer(tmp_path: Path) -> None:
    data = judge_items(tmp_path / "items.jsonl", N)
    with FakeBatchServer(answer, expire_batches=1, expire_answers=4) as server:
        result = run_score(_config(data, tmp_path / "e", server))
        close_http_clients()
    assert result.n_by_status == {"ok": N}
    sizes = [len(b["_lines"]) for b in server.batches.values()]
    statuses = [b["status"] for b in server.batches.values()]
    assert sizes == [N, N - 4] and statuses == ["expired", "completed"]


def test_batch_needs_an_openai_compatible_model(tmp_path: Path) -> None:
    data = judge_items(tmp_path / "items.jsonl", 2)
    config = ScoreConfig(data=data, out=tmp_path / "x", rubric="lexical", batch=True)
    with pytest.raises(UserError, match="OpenAI-compatible"):
        run_score(config)


def test_a_cancelled_batch_fails_its_items_and_the_next_run_submits_them_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = judge_items(tmp_path / "items.jsonl", N)
    real_status = OpenAIBatchClient.status
    with FakeBatchServer(answer, polls_to_complete=5) as server:

        def cancelled(self: OpenAIBatchClient, batch_id: str) -> dict[str, Any]:
            self.cancel(batch_id)  # someone cancels the batch in the provider's console
            return real_status(self, batch_id)

        monkeypatch.setattr(OpenAIBatchClient, "status", cancelled)
        first = run_score(_config(data, tmp_path / "c", server))
        assert first.n_by_status == {"lm_error": N}  # a failure per item, never a score
        (batch_id,) = server.batches
        errors = {j.error or "" for j in _lines(tmp_path / "c")}
        assert len(errors) == 1  # the provider's message, wrapped in the model error's name
        # the provider's message (DSPy's own HTTP engine adds the error code after it)
        assert f"batch {batch_id} cancelled: the batch was cancelled" in errors.pop()
        monkeypatch.setattr(OpenAIBatchClient, "status", real_status)
        again = run_score(_config(data, tmp_path / "c", server))
        close_http_clients()
    assert again.n_by_status == {"ok": N}
    assert [b["status"] for b in server.batches.values()] == ["cancelled", "completed"]
    assert server.chat_calls == 0


@pytest.mark.parametrize(
    ("credentials", "query", "auth"),
    [
        ("u:p%40ss@", "?key=K1", "Basic dTpwQHNz"),  # user:password (p@ss) and a query key
        ("", "?key=K1", "Bearer sk-x"),  # a query key only: the api key as the bearer
        ("tok@", "", "Basic dG9rOg=="),  # a lone token
    ],
)
def test_batch_endpoints_join_the_path_before_the_query_and_send_credentials_as_headers(
    credentials: str, query: str, auth: str
) -> None:
    """Issue 44 point 3: every endpoint appended after ``?key=`` (exit 2), and a user:password
    in the URL must travel as HTTP Basic, the path prefix kept."""
    with FakeBatchServer(answer) as server:
        host = server.base_url.split("://", 1)[1].split("/", 1)[0]
        url = f"http://{credentials}{host}/prefix/v1{query}"
        with OpenAIBatchClient(url, "sk-x", retries=0) as client:
            file_id = client.upload(b'{"custom_id": "a", "body": {}}\n')
            batch = client.create(file_id, "/v1/chat/completions")
            client.status(batch["id"])
            client.find_batch(file_id, "nothing", since=0.0)
            client.cancel(batch["id"])
            assert "p@ss" not in client.base_url and "K1" not in client.base_url
    paths = [t.split("?")[0] for t in server.targets]
    assert paths[:2] == ["/prefix/v1/files", "/prefix/v1/batches"]
    assert paths[-1] == f"/prefix/v1/batches/{batch['id']}/cancel"
    assert all(t.partition("?")[2].startswith("key=K1") for t in server.targets) is bool(query)
    assert any("limit=100" in t for t in server.targets)  # find_batch's own parameters kept
    assert set(server.authorizations) == {auth}
