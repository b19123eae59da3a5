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
(instructions, conversation, reply), which is then evaluated once. That alone is lost as soon
as calls of several judgments take turns on the model (the runner keeps several judgments in
flight, and the model's lock lets their calls in one by one): each call then finds another
judgment's prompt in the context and evaluates its whole prompt again. :class:`PrefixStates`
keeps the model's state (llama.cpp's key/value cache of the sequence) after each newly
evaluated prompt, a few of them, least recently used dropped first; a call that shares more
of its prompt with a kept state than with the context restores that state and evaluates only
the rest. The cache holds exactly what evaluating those tokens wrote, so the probabilities are
those of evaluating the prompt from scratch (a test checks this to 1e-6).
"""

from __future__ import annotations

import ctypes
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dspy.lm15 import Response

__all__ = ["MAX_LOGPROB_TOKENS", "PrefixStates", "complete_with_logprobs", "render_prompt"]

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


def _shared(cached: Any, tokens: Any) -> int:
    """Length of the common start of two token arrays."""
    import numpy as np

    n = min(len(cached), len(tokens))
    differ = np.flatnonzero(cached[:n] != tokens[:n])
    return int(differ[0]) if len(differ) else n


def _common_prefix(llama: Any, tokens: Any) -> int:
    # at least one token must be evaluated to get fresh logits
    return min(_shared(llama.input_ids[: llama.n_tokens], tokens), len(tokens) - 1)


class PrefixStates:
    """Saved model states (sequence 0's key/value cache) of recent prompts, by their tokens.

    Parameters
    ----------
    max_bytes, max_states
        Memory the saved states may take together, and how many there may be (least
        recently used dropped first; one is kept per judgment in flight, so ``max_states`` above
        the judgments in flight is enough).
    min_gain
        Restore a state only when it shares at least this many more tokens with the prompt
        than the context does (restoring copies the state; a few tokens are cheaper to
        evaluate).
    max_question
        A new state replaces the kept states it holds all but at most this many final tokens
        of: the same judgment's earlier questions (a criterion's question is 65-93 tokens in
        the shipped rubrics), whose prefix the new state serves as well.
    """

    def __init__(
        self, max_bytes: int, max_states: int = 16, min_gain: int = 32, max_question: int = 128
    ) -> None:
        self.max_bytes = max_bytes
        self.max_states = max_states
        self.min_gain = min_gain
        self.max_question = max_question
        self._states: OrderedDict[int, tuple[Any, Any]] = OrderedDict()
        self._bytes = 0
        self._next = 0
        self._lock = threading.Lock()
        self.restored = 0
        """States restored so far (for tests and benchmarks)."""

    def best(self, tokens: Any) -> tuple[int, int | None]:
        """``(shared tokens, key)`` of the kept state sharing most of ``tokens``."""
        with self._lock:
            found, key = 0, None
            for k, (saved, _) in self._states.items():
                n = _shared(saved, tokens)
                if n > found:
                    found, key = n, k
            return found, key

    def restore(self, llama: Any, key: int) -> int:
        """Put state ``key`` into the model's sequence 0; the number of tokens it holds."""
        from llama_cpp import llama_cpp

        with self._lock:
            saved, blob = self._states[key]
            self._states.move_to_end(key)
        size = len(blob)
        buf = (ctypes.c_uint8 * size).from_buffer(blob)
        if llama_cpp.llama_state_seq_set_data(llama.ctx, buf, size, 0) != size:
            llama.n_tokens = 0  # the context is no longer what input_ids says
            raise RuntimeError("llama.cpp could not restore a saved prompt state")
        n = len(saved)
        llama.input_ids[:n] = saved
        llama.n_tokens = n
        self.restored += 1
        return n

    def save(self, llama: Any) -> None:
        """Keep the model's current state (its ``n_tokens`` evaluated tokens) in place of the
        kept states it holds all but at most ``max_question`` final tokens of."""
        from llama_cpp import llama_cpp

        size = int(llama_cpp.llama_state_seq_get_size(llama.ctx, 0))
        if size <= 0 or size > self.max_bytes:
            return
        blob = bytearray(size)
        buf = (ctypes.c_uint8 * size).from_buffer(blob)
        if int(llama_cpp.llama_state_seq_get_data(llama.ctx, buf, size, 0)) != size:
            return
        saved = llama.input_ids[: llama.n_tokens].copy()
        with self._lock:
            for key in [
                k
                for k, (t, _) in self._states.items()
                if _shared(t, saved) >= len(t) - self.max_question
            ]:
                self._bytes -= len(self._states.pop(key)[1])
            self._states[self._next] = (saved, blob)
            self._next += 1
            self._bytes += size
            while len(self._states) > 1 and (
                self._bytes > self.max_bytes or len(self._states) > self.max_states
            ):
                _, (_, old) = self._states.popitem(last=False)
                self._bytes -= len(old)


def _start(llama: Any, tokens: Any, states: PrefixStates | None) -> int:
    """Tokens of ``tokens`` already evaluated, after restoring a kept state if one shares
    at least ``states.min_gain`` more of them than the context does."""
    keep = _common_prefix(llama, tokens)
    if states is not None:
        found, key = states.best(tokens)
        if key is not None and found >= keep + states.min_gain:
            states.restore(llama, key)
            keep = min(found, len(tokens) - 1)
    return keep


def _last_logprobs(llama: Any) -> Any:
    import numpy as np
    from llama_cpp import llama_cpp

    n_vocab = llama.n_vocab()
    logits = np.ctypeslib.as_array(
        llama_cpp.llama_get_logits_ith(llama.ctx, -1), shape=(n_vocab,)
    ).astype(np.float64)
    shifted = logits - logits.max()
    return shifted - np.log(np.exp(shifted).sum())


def _top(logprobs: Any, n: int) -> list[int]:
    """The ``n`` most probable token ids, most probable first, ties by id: what a stable
    ``argsort`` of the whole vocabulary gives, from a partition and a sort of ``n`` values."""
    import numpy as np

    if n <= 0:
        return []
    if n >= len(logprobs):
        return list(np.argsort(-logprobs, kind="stable").tolist())
    cut = -np.partition(-logprobs, n - 1)[n - 1]  # the n-th largest value
    above = np.flatnonzero(logprobs > cut)
    tied = np.flatnonzero(logprobs == cut)[: n - len(above)]
    picked = np.concatenate([above, tied])
    return list(picked[np.lexsort((picked, -logprobs[picked]))].tolist())


def _token_text(llama: Any, token_id: int) -> tuple[str, tuple[int, ...]]:
    raw = llama.detokenize([token_id])
    return raw.decode("utf-8", errors="replace"), tuple(raw)


def complete_with_logprobs(
    llama: Any,
    messages: list[dict[str, str]],
    *,
    top_n: int,
    max_tokens: int,
    model: str,
    states: PrefixStates | None = None,
) -> Response:
    """Greedy answer to ``messages`` with per-token log-probabilities (``top_n`` alternatives).

    Call with the model's lock held. ``max_tokens`` is capped at :data:`MAX_LOGPROB_TOKENS`;
    generation stops at the end-of-generation token. ``states``: saved prompt states to
    restore from and add to (see :class:`PrefixStates`).
    """
    import numpy as np
    from dspy.lm15 import Message, Response, TextPart, TokenLogprob, TopLogprob, Usage
    from llama_cpp import llama_cpp

    prompt = render_prompt(llama, messages)
    tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
    if len(tokens) + max_tokens > llama.n_ctx():
        raise ValueError(f"prompt of {len(tokens)} tokens exceeds the context window")
    array = np.asarray(tokens, dtype=np.intc)
    keep = _start(llama, array, states)
    llama.n_tokens = keep
    llama.eval(tokens[keep:])
    if states is not None and len(tokens) - keep >= states.min_gain:
        states.save(llama)
    out: list[TokenLogprob] = []
    text_bytes = b""
    steps = max(1, min(max_tokens, MAX_LOGPROB_TOKENS))
    for step in range(steps):
        logprobs = _last_logprobs(llama)
        chosen = int(np.argmax(logprobs))
        if llama_cpp.llama_vocab_is_eog(llama._model.vocab, chosen):
            break
        order = _top(logprobs, top_n)
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
        if step < steps - 1:  # the last token's successor is never read
            llama.eval([chosen])
    return Response(
        id=None,
        model=model,
        message=Message.assistant([TextPart(text_bytes.decode("utf-8", errors="replace"))]),
        finish_reason="stop",
        usage=Usage(input_tokens=len(tokens), output_tokens=len(out)),
        logprobs=tuple(out) or None,
    )
