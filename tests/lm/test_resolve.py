"""Model strings, settings, keys, server addresses and the request cache."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any, Literal

import dspy
import pytest

from attune_judge.errors import UserError
from attune_judge.lm import (
    LMSettings,
    ModelHandle,
    configure_cache,
    lm_spec,
    make_adapter,
    model_handle,
    register_model,
    resolve_lm,
)

# private unit: the response-format and adapter choice per model
from attune_judge.lm._adapter import output_schema, response_format_for
from attune_judge.lm._local import llama_response_format
from attune_judge.lm._settings import env_int
from attune_judge.testing import ScriptedEngine


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(UserError, match="OPENAI_API_KEY"):
        resolve_lm(LMSettings(lm="openai/gpt-4.1-mini"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(UserError, match="ANTHROPIC_API_KEY"):
        resolve_lm(LMSettings(lm="anthropic/claude-sonnet-4-5"))


def test_key_present_gives_a_configured_lm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    lm = resolve_lm(LMSettings(lm="openai/gpt-4.1-mini", temperature=0.0, max_tokens=123, seed=7))
    assert lm.model == "openai/gpt-4.1-mini"
    assert lm.kwargs["max_tokens"] == 123 and lm.kwargs["seed"] == 7
    assert lm_spec(lm) == {
        "lm": "openai/gpt-4.1-mini",
        "temperature": 0.0,
        "max_tokens": 123,
        "seed": 7,
        "response_format": "auto",
    }


def test_resolved_lm_has_a_typed_handle_not_extra_attributes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    lm = resolve_lm(
        LMSettings(lm="openai/gpt-4.1-mini ", timeout=7.5, response_format="json_schema")
    )
    assert model_handle(lm) == ModelHandle(
        model="openai/gpt-4.1-mini", response_format="json_schema", timeout_s=7.5, prefill=False
    )
    assert not [name for name in vars(lm) if name.startswith("attune")]
    # an LM attune-judge did not build: the defaults, from its own model string
    other = dspy.LM("openai/other", api_key="sk-test")
    assert model_handle(other) == ModelHandle(model="openai/other")
    assert model_handle(object()).model == "unknown"
    # a change keeps the other fields; handles are per LM object
    register_model(other, prefill=True)
    assert model_handle(other) == ModelHandle(model="openai/other", prefill=True)
    assert model_handle(lm).prefill is False
    with pytest.raises(AttributeError):
        model_handle(lm).prefill = True  # type: ignore[misc]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_api_base_names_the_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    url = f"http://127.0.0.1:{_free_port()}/v1"
    with pytest.raises(UserError) as err:
        resolve_lm(LMSettings(lm="openai/served", api_base=url))
    assert url in str(err.value)
    with pytest.raises(UserError, match="not an http"):
        resolve_lm(LMSettings(lm="openai/served", api_base="127.0.0.1:8000"))


def test_local_server_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        url = f"http://127.0.0.1:{server.getsockname()[1]}/v1"
        lm = resolve_lm(LMSettings(lm="openai/smollm2", api_base=url))
    assert lm_spec(lm)["api_base"] == url
    assert lm_spec(lm)["response_format"] == "json_object"


def test_settings_from_environment_then_flags() -> None:
    env = {
        "ATTUNE_LM": "openai/x",
        "ATTUNE_TEMPERATURE": "0.5",
        "ATTUNE_MAX_TOKENS": "99",
        "ATTUNE_SEED": "3",
        "ATTUNE_CACHE_DIR": "/tmp/c",
        "ATTUNE_NUM_RETRIES": "1",
    }
    settings = LMSettings.from_env(env, max_tokens=10, api_base=None)
    assert (settings.lm, settings.temperature, settings.max_tokens, settings.seed) == (
        "openai/x",
        0.5,
        10,
        3,
    )
    assert (settings.cache_dir, settings.num_retries) == ("/tmp/c", 1)
    assert LMSettings.from_env({}).lm == "local"


def test_bad_setting_names_the_variable() -> None:
    with pytest.raises(UserError) as err:
        LMSettings.from_env({"ATTUNE_MAX_TOKENS": "many"})
    assert "ATTUNE_MAX_TOKENS" in str(err.value)
    with pytest.raises(UserError, match="response-format"):
        LMSettings.from_env({}, response_format="xml")
    with pytest.raises(UserError, match="unknown model setting 'top_k'; the settings are lm, "):
        LMSettings.from_env({}, top_k=3)  # a typed error at the edge, not a TypeError


def test_configure_cache_makes_a_repeat_call_free(tmp_path: Path) -> None:
    configure_cache(tmp_path / "cache")
    try:
        engine = ScriptedEngine(lambda m: '{"answer": "cached"}')
        lm = engine.lm(cache=True)
        program = dspy.Predict("question -> answer")
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            first = program(question="same").answer
            second = program(question="same").answer
        assert first == second == "cached"
        assert engine.calls == 1
        assert any((tmp_path / "cache").iterdir())
    finally:
        configure_cache(None, enabled=True)


def test_the_disk_shards_open_in_a_thread_and_the_first_use_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """configure_cache returns while the shards are still opening (issue 47: the opening is
    mostly waiting on the disk) with DSPy's cache in place, redacting; the first look-up that
    needs the disk waits for them; an opening that failed raises where the cache is used."""
    import threading

    import dspy.clients
    from dspy.clients.cache import Cache

    from attune_judge.lm._cache import SerialDiskCache

    release = threading.Event()
    opened: list[Cache] = []
    real = Cache

    def slow_cache(*args: Any, **kwargs: Any) -> Cache:
        if args[0]:  # the disk tier: opened on the cache's thread
            release.wait()  # a hang is ended by pytest's timeout, not a fixed wait here
            opened.append(real(*args, **kwargs))
            return opened[-1]
        return real(*args, **kwargs)

    saved = dspy.cache
    monkeypatch.setattr(dspy.clients, "Cache", slow_cache)
    try:
        configure_cache(tmp_path / "slow")  # returns although the opening cannot finish yet
        cache = dspy.cache
        assert isinstance(cache.disk_cache, SerialDiskCache) and not opened
        assert cache._attune_redacting and cache.enable_disk_cache
        cache.put({"model": "m", "messages": "early"}, {"answer": 1})  # not waiting either
        assert not opened
        release.set()
        assert Path(cache.disk_cache.directory) == tmp_path / "slow"  # waited, then real
        assert cache.disk_cache._disk is opened[0].disk_cache
        cache.reset_memory_cache()
        assert cache.get({"model": "m", "messages": "early"}) == {"answer": 1}  # from the disk

        def broken(*args: Any, **kwargs: Any) -> Cache:
            if args[0]:
                raise OSError("disk full")
            return real(*args, **kwargs)

        monkeypatch.setattr(dspy.clients, "Cache", broken)
        configure_cache(tmp_path / "broken")
        dspy.cache.put({"model": "m"}, {"answer": 2})  # not stored on disk: no error
        with pytest.raises(OSError, match="disk full"):
            dspy.cache.get({"model": "other"})
    finally:
        release.set()  # never a cache thread left waiting
        dspy.cache = saved
        configure_cache(None, enabled=True)


def test_the_disk_cache_runs_on_one_thread_and_loses_no_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 47: diskcache opened one SQLite connection per thread and shard (32 judging
    threads, 16 shards: up to 512 during a run) and committed every answer alone; the cache
    cost more than the judging. Now one thread does the disk work: 32 threads storing and then
    reading 640 answers open one connection per shard (besides the opening's own), every
    answer reaches the disk for another reader, a delete queued after a set wins, and a
    process that exits without flushing has written what it stored."""
    import sqlite3
    import subprocess
    import sys
    import threading

    import diskcache

    connections: list[str] = []
    connect = sqlite3.connect

    def counting(*args: object, **kwargs: object) -> sqlite3.Connection:
        connections.append(threading.current_thread().name)
        return connect(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sqlite3, "connect", counting)
    directory = tmp_path / "cache"
    configure_cache(directory)
    try:
        cache = dspy.cache

        def request(t: int, i: int) -> dict[str, object]:
            return {"model": "openai/m", "messages": [{"role": "user", "content": f"{t}:{i}"}]}

        def store(t: int) -> None:
            for i in range(20):
                cache.put(request(t, i), {"answer": f"{t}:{i}"})

        def read(t: int, out: list[object]) -> None:
            out.extend(cache.get(request(t, i)) for i in range(20))

        threads = [threading.Thread(target=store, args=(t,)) for t in range(32)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        gone = request(99, 0)
        cache.put(gone, {"answer": "deleted"})
        cache.disk_cache.delete(cache.cache_key(gone))
        cache.reset_memory_cache()  # what follows reads the disk
        read_back: list[list[object]] = [[] for _ in range(32)]
        threads = [threading.Thread(target=read, args=(t, read_back[t])) for t in range(32)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert read_back == [[{"answer": f"{t}:{i}"} for i in range(20)] for t in range(32)]
        # all on the cache's thread: 16 to open the shards (diskcache closes them), then one
        # per shard; was one per thread and shard
        assert set(connections) == {"attune-cache-io"} and len(connections) <= 32, connections
        cache.disk_cache.flush()
        reader = diskcache.FanoutCache(str(directory), shards=16)
        try:
            assert len(reader) == 640
            assert reader.get(cache.cache_key(request(31, 19))) == {"answer": "31:19"}
            assert reader.get(cache.cache_key(gone)) is None
        finally:
            reader.close()
    finally:
        configure_cache(None, enabled=True)

    other = tmp_path / "exit"
    stored = (
        "import dspy\n"
        "from attune_judge.lm import configure_cache\n"
        f"configure_cache({str(other)!r})\n"
        "for i in range(50):\n"
        "    dspy.cache.put({'model': 'm', 'messages': str(i)}, {'answer': i})\n"
    )
    subprocess.run([sys.executable, "-c", stored], check=True, timeout=120)
    reader = diskcache.FanoutCache(str(other), shards=16)
    try:
        assert len(reader) == 50
    finally:
        reader.close()


def test_a_miss_is_known_without_the_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 47: every new request looks its answer up, and at concurrency 32 each miss waited
    about 10 ms for the cache's thread behind the writes. The opening lists the keys on disk:
    a key neither listed nor stored since is a miss without a disk read; a listed or stored
    key is read from the disk; a key another process stores after the opening is not seen (a
    request asked again, never a wrong answer); above the listing's bound, and in a process
    that shares the cache with siblings (a worker process, a Ray actor), every look-up reads
    the disk."""
    import diskcache
    from dspy.clients.cache import Cache

    from attune_judge.lm._cache import SerialDiskCache, share_request_cache

    reads: list[str] = []
    apply = SerialDiskCache._apply

    def counting(self: SerialDiskCache, op: str, key: Any, default: Any) -> Any:
        reads.append(op)
        return apply(self, op, key, default)

    monkeypatch.setattr(SerialDiskCache, "_apply", counting)
    monkeypatch.setattr(SerialDiskCache, "list_keys", True)  # as in a command's own process
    key_of = Cache(False, False, None).cache_key

    def request(text: str) -> dict[str, Any]:
        return {"model": "openai/m", "messages": [{"role": "user", "content": text}]}

    directory = tmp_path / "cache"
    before = diskcache.FanoutCache(str(directory), shards=16)
    before.set(key_of(request("stored before")), {"answer": "before"})
    saved = dspy.cache
    try:
        configure_cache(directory)
        cache = dspy.cache
        assert cache.get(request("new")) is None and reads == []  # no disk read
        assert key_of(request("new")) not in cache and reads == []
        assert cache.get(request("stored before")) == {"answer": "before"} and reads == ["get"]
        cache.put(request("stored now"), {"answer": "now"})
        cache.reset_memory_cache()
        assert cache.get(request("stored now")) == {"answer": "now"}
        assert reads == ["get", "get"]
        before.set(key_of(request("another process")), {"answer": "later"})
        assert cache.get(request("another process")) is None and len(reads) == 2

        monkeypatch.setattr(SerialDiskCache, "_INDEX_MAX", 1)  # 3 entries: not listed
        configure_cache(tmp_path / "big")
        configure_cache(directory)
        assert dspy.cache.get(request("another process")) == {"answer": "later"}
        assert dspy.cache.get(request("new")) is None and reads.count("get") == 4

        monkeypatch.setattr(SerialDiskCache, "_INDEX_MAX", 1000)
        share_request_cache()  # a worker process or Ray actor (list_keys restored after the test)
        configure_cache(tmp_path / "big")
        configure_cache(directory)
        before.set(key_of(request("a sibling")), {"answer": "sibling"})
        assert dspy.cache.get(request("a sibling")) == {"answer": "sibling"}
        assert reads.count("get") == 5
    finally:
        before.close()
        dspy.cache = saved
        configure_cache(None, enabled=True)


def test_cache_dir_and_engine_knobs_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    before = os.environ["ATTUNE_CACHE_DIR"]  # set by conftest for the whole session
    saved = dspy.cache

    def build(**kwargs: object) -> None:
        # a loopback address nobody answers: nothing is sent while building a model
        resolve_lm(
            LMSettings(lm="openai/m", api_base="http://127.0.0.1:9/v1", **kwargs),
            check_connection=False,
        )

    try:
        monkeypatch.setenv("ATTUNE_CACHE_DIR", str(tmp_path / "from-env"))
        build()  # resolve_lm is where the cache is configured, from ATTUNE_CACHE_DIR
        assert (tmp_path / "from-env").is_dir()
        assert Path(dspy.cache.disk_cache.directory) == tmp_path / "from-env"
        made = dspy.cache
        build(cache=False)  # one model without the cache leaves the shared cache as it is
        assert dspy.cache is made and made.enable_disk_cache
        build(cache_dir=tmp_path / "given")  # an explicit directory wins over the variable
        assert Path(dspy.cache.disk_cache.directory) == tmp_path / "given"
        monkeypatch.setenv("ATTUNE_CACHE", "0")  # off: both caches
        build()
        assert not dspy.cache.enable_disk_cache and not dspy.cache.enable_memory_cache
        monkeypatch.setenv("ATTUNE_CACHE", "1")
        monkeypatch.setenv("ATTUNE_CACHE_DIR", before)
        build()
        assert Path(dspy.cache.disk_cache.directory) == Path(before)
        assert dspy.cache.enable_memory_cache
    finally:
        dspy.cache = saved
    assert env_int("ATTUNE_LOCAL_THREADS", 0, {}) == 0
    assert env_int("ATTUNE_LOCAL_THREADS", 0, {"ATTUNE_LOCAL_THREADS": " 3 "}) == 3
    for bad in ("three", "-1", "2.5"):
        with pytest.raises(UserError, match=r"ATTUNE_LOCAL_THREADS.*non-negative integer"):
            env_int("ATTUNE_LOCAL_THREADS", 0, {"ATTUNE_LOCAL_THREADS": bad})


class Scored(dspy.Signature):
    """Score."""

    text: str = dspy.InputField()
    score: Literal[1, 2, 3] = dspy.OutputField()
    why: str = dspy.OutputField()


def test_schema_from_output_types() -> None:
    schema = output_schema(Scored)
    assert schema["required"] == ["score", "why"]
    assert schema["properties"]["score"]["enum"] == [1, 2, 3]
    assert schema["additionalProperties"] is False
    strict = response_format_for(Scored, "json_schema")
    assert strict is not None and strict["type"] == "json_schema"
    assert strict["json_schema"]["schema"] == schema
    loose = response_format_for(Scored, "json_object")
    assert loose is not None and loose["schema"]["properties"]["why"]["maxLength"] > 0
    assert response_format_for(Scored, "none") is None
    # the embedded engine turns OpenAI's form into llama-cpp-python's
    local = llama_response_format(strict)
    assert local is not None and local["type"] == "json_object"
    assert local["schema"]["properties"]["score"]["enum"] == [1, 2, 3]


def test_adapter_sends_the_schema_through_the_engine() -> None:
    seen: list[object] = []

    class Recording(ScriptedEngine):
        def complete(self, request):  # type: ignore[no-untyped-def]
            seen.append(request.config.response_format)
            return super().complete(request)

    engine = Recording(lambda m: '{"score": 2, "why": "w"}')
    with dspy.context(lm=engine.lm(), adapter=make_adapter("json_schema")):
        assert dspy.Predict(Scored)(text="t").score == 2
    assert isinstance(seen[0], dict) and seen[0]["type"] == "json_schema"
    assert seen[0]["schema"]["properties"]["score"]["enum"] == [1, 2, 3]
    # what the embedded engine hands llama.cpp for exactly this request: the full schema
    local = llama_response_format(seen[0])
    assert local is not None and local["schema"]["properties"]["score"]["enum"] == [1, 2, 3]
    assert local["schema"]["properties"]["why"]["maxLength"] > 0


def test_attune_cache_variable_is_read_by_configure_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    from attune_judge.errors import UserError
    from attune_judge.lm._resolve import cache_enabled_from_env

    for raw, on in (("", True), ("1", True), ("true", True), ("0", False), ("off", False)):
        monkeypatch.setenv("ATTUNE_CACHE", raw)
        assert cache_enabled_from_env() is on
    monkeypatch.delenv("ATTUNE_CACHE")
    assert cache_enabled_from_env() is True
    monkeypatch.setenv("ATTUNE_CACHE", "maybe")
    with pytest.raises(UserError, match="ATTUNE_CACHE: expected 0 or 1"):
        cache_enabled_from_env()
