"""Model strings → ``dspy.LM``: hosted APIs, OpenAI-compatible servers, the embedded model.

``resolve_lm(LMSettings(lm="local"))`` runs SmolLM2-135M-Instruct in-process;
``resolve_lm(LMSettings(lm="openai/<name>", api_base="http://host:port/v1"))`` reaches vLLM,
llama.cpp or any OpenAI-compatible server; any other DSPy model string works with its
provider's key variable set.
"""

from attune_judge.lm._adapter import make_adapter
from attune_judge.lm._cache import flush_request_cache, share_request_cache
from attune_judge.lm._calls import (
    CallRecorder,
    evict,
    retry_after_of,
    trim_history,
    typed_call_kwargs,
)
from attune_judge.lm._errors import is_transient_error
from attune_judge.lm._handle import (
    ModelHandle,
    lm_response_format,
    lm_spec,
    model_handle,
    register_model,
    server_identity,
)
from attune_judge.lm._local import default_gguf_path
from attune_judge.lm._log import library_output_to
from attune_judge.lm._messages import (
    AsyncTwin,
    EngineBase,
    make_response,
    prompt_size,
    request_key,
    request_messages,
)
from attune_judge.lm._resolve import (
    check_model,
    configure_cache,
    resolve_lm,
    start_request_cache,
)
from attune_judge.lm._server import ServerAddress
from attune_judge.lm._settings import (
    LMSettings,
    member_api_base,
    parse_model_spec,
    read_env,
)
from attune_judge.lm._untrusted import QUOTED_PREFIX, untrusted

__all__ = [
    "QUOTED_PREFIX",
    "AsyncTwin",
    "CallRecorder",
    "EngineBase",
    "LMSettings",
    "ModelHandle",
    "ServerAddress",
    "check_model",
    "configure_cache",
    "default_gguf_path",
    "evict",
    "flush_request_cache",
    "is_transient_error",
    "library_output_to",
    "lm_response_format",
    "lm_spec",
    "make_adapter",
    "make_response",
    "member_api_base",
    "model_handle",
    "parse_model_spec",
    "prompt_size",
    "read_env",
    "register_model",
    "request_key",
    "request_messages",
    "resolve_lm",
    "retry_after_of",
    "server_identity",
    "share_request_cache",
    "start_request_cache",
    "trim_history",
    "typed_call_kwargs",
    "untrusted",
]
