"""Test engines that run every pipeline through the real DSPy ``LM`` code path, offline, and a
fault-injecting OpenAI-compatible server on loopback (:class:`FaultServer`).

``ScriptedEngine`` answers from a function or a queue (with optional latency and injected
failures); ``ReplayEngine`` answers from recordings keyed by a hash of the request messages.
``FakeBatchServer`` is a loopback OpenAI-compatible HTTP server (chat completions, files and
batches) for tests of the HTTP path, the batch path and the Ray executor.
"""

from attune_judge.testing._batch_server import FakeBatchServer
from attune_judge.testing._common import close_http_clients, rate_limit_error
from attune_judge.testing._fault_server import (
    BAD_ANSWER_FAULTS,
    FAULTS,
    FaultServer,
    answer_for_schema,
)
from attune_judge.testing._replay import MissingRecordingError, ReplayEngine
from attune_judge.testing._scripted import Messages, ScriptedEngine, TokenReply, truncated

__all__ = [
    "BAD_ANSWER_FAULTS",
    "FAULTS",
    "FakeBatchServer",
    "FaultServer",
    "Messages",
    "MissingRecordingError",
    "ReplayEngine",
    "ScriptedEngine",
    "TokenReply",
    "answer_for_schema",
    "close_http_clients",
    "rate_limit_error",
    "truncated",
]
