"""Token log-probabilities from the embedded model (llama.cpp in-process).

llama-cpp-python only reports logprobs for a model loaded with ``logits_all=True``, which
keeps a logits row per context token (8192 x 49152 floats for SmolLM2: 1.6 GB). This module
instead reads the logits of the last evaluated token after each step, which llama.cpp keeps
anyway, and decodes greedily: each generated token comes with its log-probability and the
``top_n`` most probable alternatives, computed by a full softmax over the vocabulary.

A request whose last message is the assistant's is *prefilled*: the chat template is applied
to the messages before it, and the assistant text is appended verbatim, so the model
continues it (``"Rating:"`` puts the next token at the score position).

The prompt's tokens are compared with the tokens already in the model's context, and only
the new suffix is evaluated: per-criterion questions about one reply share their long prefix
(instructions, conversation, reply), which is then evaluated once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dspy.lm15 import Response

__all__ = ["MAX_LOGPROB_TOKENS", "complete_with_logprobs", "render_prompt"]

MAX_LOGPROB_TOKENS = 16
"""Upper bound on tokens generated in a logprobs request (they are for reading scores)."""


def render_prompt(llama: Any, messages: list[dict[str, str]]) -> str:
    """The model's chat template applied to ``messages`` (a trailing assistant turn prefilled)."""
    from llama_cpp import llama_chat_format

    prefill = ""
    if messages and messages[-1]["role"] == "assistant":
        prefill = messages[-1]["content"]
        messages = messages[:-1]
    template = llama.metadata.get("tokenizer.chat_template")
    if not template:
        raise ValueError("the local model has no chat template; logprobs need one")
    model = llama._model

    def special(token_id: int) -> str:
        return str(model.token_get_text(token_id)) if token_id != -1 else ""

    formatter = llama_chat_format.Jinja2ChatFormatter(
        template=template,
        eos_token=special(llama.token_eos()),
        bos_token=special(llama.token_bos()),
    )
    chat: Any = messages
    return str(formatter(messages=chat).prompt) + prefill


def _common_prefix(llama: Any, tokens: list[int]) -> int:
    cached = llama.input_ids[: llama.n_tokens].tolist()
    n = 0
    for a, b in zip(cached, tokens, strict=False):
        if a != b:
            break
        n += 1
    # at least one token must be evaluated to get fresh logits
    return min(n, len(tokens) - 1)


def _last_logprobs(llama: Any) -> Any:
    import numpy as np
    from llama_cpp import llama_cpp

    n_vocab = llama.n_vocab()
    logits = np.ctypeslib.as_array(
        llama_cpp.llama_get_logits_ith(llama.ctx, -1), shape=(n_vocab,)
    ).astype(np.float64)
    shifted = logits - logits.max()
    return shifted - np.log(np.exp(shifted).sum())


def _token_text(llama: Any, token_id: int) -> tuple[str, tuple[int, ...]]:
    raw = llama.detokenize([token_id])
    return raw.decode("utf-8", errors="replace"), tuple(raw)


def complete_with_logprobs(
    llama: Any, messages: list[dict[str, str]], *, top_n: int, max_tokens: int, model: str
) -> Response:
    """Greedy answer to ``messages`` with per-token log-probabilities (``top_n`` alternatives).

    Call with the model's lock held. ``max_tokens`` is capped at :data:`MAX_LOGPROB_TOKENS`;
    generation stops at the end-of-generation token.
    """
    import numpy as np
    from dspy.lm15 import Message, Response, TextPart, TokenLogprob, TopLogprob, Usage
    from llama_cpp import llama_cpp

    prompt = render_prompt(llama, messages)
    tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
    if len(tokens) + max_tokens > llama.n_ctx():
        raise ValueError(f"prompt of {len(tokens)} tokens exceeds the context window")
    keep = _common_prefix(llama, tokens)
    llama.n_tokens = keep
    llama.eval(tokens[keep:])
    out: list[TokenLogprob] = []
    text_bytes = b""
    for _ in range(max(1, min(max_tokens, MAX_LOGPROB_TOKENS))):
        logprobs = _last_logprobs(llama)
        chosen = int(np.argmax(logprobs))
        if llama_cpp.llama_vocab_is_eog(llama._model.vocab, chosen):
            break
        order: list[int] = (
            np.argsort(-logprobs, kind="stable")[:top_n].tolist() if top_n > 0 else []
        )
        alternatives = []
        for token_id in order:
            text, raw = _token_text(llama, int(token_id))
            alternatives.append(
                TopLogprob(
                    token=text, logprob=float(logprobs[token_id]), bytes=raw, token_id=int(token_id)
                )
            )
        text, raw = _token_text(llama, chosen)
        out.append(
            TokenLogprob(
                token=text,
                logprob=float(logprobs[chosen]),
                bytes=raw,
                token_id=chosen,
                top=tuple(alternatives),
            )
        )
        text_bytes += bytes(raw)
        llama.eval([chosen])
    return Response(
        id=None,
        model=model,
        message=Message.assistant([TextPart(text_bytes.decode("utf-8", errors="replace"))]),
        finish_reason="stop",
        usage=Usage(input_tokens=len(tokens), output_tokens=len(out)),
        logprobs=tuple(out) or None,
    )
