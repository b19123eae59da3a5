"""Test engines that run every pipeline through the real DSPy ``LM`` code path, offline.

``ScriptedEngine`` answers from a function or a queue (with optional latency and injected
failures); ``ReplayEngine`` answers from recordings keyed by a hash of the request messages.
"""

from attune_judge.testing._common import (
    make_response,
    rate_limit_error,
    request_key,
    request_messages,
    timeout_error,
)
from attune_judge.testing._replay import AsyncReplayEngine, MissingRecordingError, ReplayEngine
from attune_judge.testing._scripted import (
    AsyncScriptedEngine,
    Messages,
    ScriptedEngine,
    ScriptedReply,
    TokenReply,
    truncated,
)

__all__ = [
    "AsyncReplayEngine",
    "AsyncScriptedEngine",
    "Messages",
    "MissingRecordingError",
    "ReplayEngine",
    "ScriptedEngine",
    "ScriptedReply",
    "TokenReply",
    "make_response",
    "rate_limit_error",
    "request_key",
    "request_messages",
    "timeout_error",
    "truncated",
]
