"""Real components: llama-cpp-python's OpenAI-compatible server, and the in-process model.

Slow (seconds to a few minutes on two cores); part of the CI run with the ``local`` extra.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from attune_judge.data import JudgeItem
from attune_judge.judges import JudgeOptions
from attune_judge.lm import LMSettings
from attune_judge.testing import close_http_clients

pytestmark = [
    pytest.mark.slow,
    # find_spec, not import: importing llama_cpp opens files that are only closed at exit
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None and os.environ.get("CI") != "true",
        reason="the local extra (llama-cpp-python) is not installed",
    ),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def llama_server(model_alias: str, log_dir: Path) -> Iterator[str]:
    """Run ``python -m llama_cpp.server`` on a free port; yield its /v1 URL; always stop it."""
    from attune_judge.lm import default_gguf_path

    port = _free_port()
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(default_gguf_path()),
        "--model_alias",
        model_alias,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "4096",
    ]
    log = (log_dir / "llama-server.log").open("w")  # a pipe could fill up and block the server
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                text = (log_dir / "llama-server.log").read_text()[-2000:]
                raise RuntimeError(f"llama_cpp.server exited: {text}")
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("llama_cpp.server did not become ready within 120 s")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _check_valid(result: object, item: JudgeItem, *, integers: bool = True) -> None:
    from attune_judge.data import Judgment

    assert isinstance(result, Judgment)
    assert result.status == "ok", (result.error, result.raw_output)
    assert set(result.scores) == {
        "overall_score",
        "emotional_appropriateness",
        "helpfulness",
        "tone_match",
    }
    assert all(1 <= v <= 7 and (v == int(v) or not integers) for v in result.scores.values())
    assert result.normalized is not None and 0.0 <= result.normalized <= 1.0
    assert result.usage.prompt_tokens > 0 and result.usage.completion_tokens > 0
    assert result.item_id == item.item_id


def test_reference_judge_through_an_openai_compatible_server(
    item: JudgeItem, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from attune_judge.judges import build_judge

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with llama_server("smollm2", tmp_path) as base:
        judge = build_judge(
            "attunebench-reference",
            LMSettings(lm="openai/smollm2", api_base=base, max_tokens=300, cache=False),
        )
        assert judge.spec.lm.response_format == "json_object"
        result = judge.judge(item)
    close_http_clients()
    _check_valid(result, item)


def test_embedded_local_model_end_to_end(item: JudgeItem) -> None:
    from attune_judge.judges import build_judge

    sampled = build_judge(
        "attunebench-reference",
        LMSettings(max_tokens=300, cache=False),
        JudgeOptions(score_mode="sampled"),
    )
    _check_valid(sampled.judge(item), item)
    assert sampled.spec.model_name() == "local"
    # the embedded model's default: expected scores read from its token probabilities
    expected = build_judge("attunebench-reference", LMSettings(cache=False))
    result = expected.judge(item)
    _check_valid(result, item, integers=False)
    dists = result.details["distributions"]
    assert set(dists) == set(result.scores)
    for name, dist in dists.items():
        assert 0.0 <= dist["out_of_scale"] < 1.0  # recorded; a diagnostic, not a limit
        assert sum(dist["probabilities"].values()) == pytest.approx(1.0)
        assert result.scores[name] == pytest.approx(
            sum(int(k) * p for k, p in dist["probabilities"].items())
        )


def test_embedded_model_is_loaded_once_and_safe_under_threads(
    item: JudgeItem, monkeypatch: pytest.MonkeyPatch
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    import llama_cpp

    from attune_judge.judges import build_judge

    judge = build_judge("length")  # warm imports only
    assert judge.judge(item).status == "ok"
    # a context size no other test uses: the model is not loaded yet in this process
    monkeypatch.setenv("ATTUNE_LOCAL_N_CTX", "4096")
    loads: list[int] = []

    class Counted(llama_cpp.Llama):  # type: ignore[misc]
        def __init__(self, *args: object, **kwargs: object) -> None:
            loads.append(int(kwargs["n_ctx"]))  # type: ignore[call-overload]
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(llama_cpp, "Llama", Counted)
    behaviour = build_judge("attunebench-behaviours", LMSettings(max_tokens=120, cache=False))
    asked = item.model_copy(update={"metadata": {"behaviour_items": ["B1", "B13"]}})
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(behaviour.judge, [asked, asked]))
    assert [r.status for r in results] == ["ok", "ok"]
    assert all(set(r.scores) == {"B1:observed", "B13:observed"} for r in results)
    assert loads == [4096]  # two threads at once, one model loaded


def test_embedded_default_gives_non_constant_scores_on_a_shipped_set() -> None:
    """The embedded model's default judge (expected scores) on six EmpatheticDialogues items
    of the shipped empathic-communication set: every judgment ok, and not one score for all."""
    from attune_judge import shipped_dir
    from attune_judge.data import read_jsonl
    from attune_judge.judges import CriterionJudge, build_judge

    items = sorted(
        (
            i
            for i in read_jsonl(
                shipped_dir("data") / "empathic-communication" / "items.jsonl", JudgeItem
            )
            if i.metadata.get("source") == "empatheticdialogues"
        ),
        key=lambda i: i.item_id,
    )[:6]
    judge = build_judge(
        "empathic-communication-empatheticdialogues",
        LMSettings(cache=False),
        JudgeOptions(use_reference=False),
    )
    assert isinstance(judge, CriterionJudge) and judge.score_mode == "expected"
    results = [judge.judge(i) for i in items]
    assert all(r.status == "ok" for r in results), [r.error for r in results]
    totals = {round(r.overall or 0.0, 6) for r in results}
    assert len(totals) == len(items)  # a constant judge would give one value
    for name in ("empathy", "relevance", "fluency"):
        assert len({round(r.scores[name], 6) for r in results}) > 1, name
