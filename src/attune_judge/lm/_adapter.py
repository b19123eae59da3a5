"""A JSON adapter that always asks for the judge's output schema in a form the server accepts.

DSPy's ``JSONAdapter`` sends no ``response_format`` for models it does not know (an
``openai/<served-name>`` behind llama.cpp, the embedded model), and a small model then
writes anything but the fields. :class:`SchemaJSONAdapter` derives a JSON schema from the
signature's output types (``Literal[1, ..., 7]`` becomes an integer ``enum``) and sends it as

- ``json_schema``: ``{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}``
  (OpenAI structured outputs, vLLM);
- ``json_object``: ``{"type": "json_object", "schema": ...}`` (llama-cpp-python's server, the
  embedded model);
- ``none``: nothing; ``auto``: DSPy's own choice.

The same adapter reads answers strictly (:func:`attune_judge.lm._strict.strict_parse`: one JSON
object, exact types, nothing else) and defuses DSPy field markers inside every input value
(:mod:`attune_judge.lm._untrusted`).

Per-judgment cost (the client's CPU is what limits a run against a fast server): what depends
only on the signature — the system message, the output-format reminder, the response schema —
is built once per signature and reused (keyed by the signature's content, so a signature
changed by an optimizer is formatted anew), and a plain-text input value is written as is
instead of going through a pydantic ``TypeAdapter`` per field. The messages are exactly
DSPy's own (``tests/lm/test_adapter_speed.py`` compares them with an unmodified
``JSONAdapter``).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from attune_judge.lm._settings import ResponseFormat
from attune_judge.lm._strict import strict_parse
from attune_judge.lm._untrusted import neutralize_value

if TYPE_CHECKING:
    import dspy

__all__ = ["MAX_TEXT_CHARS", "make_adapter", "output_schema", "response_format_for"]

MAX_TEXT_CHARS = 600
"""Upper bound on free-text output fields under grammar-constrained decoding (``json_object``).

llama.cpp refuses a grammar whose repetition count is too large (a ``maxLength`` of 1200
already fails, and the server then decodes *without* the grammar), so keep this well below.
"""


def output_schema(signature: type[dspy.Signature], *, bound_text: bool = False) -> dict[str, Any]:
    """JSON schema of a signature's output fields (all required, no extra properties).

    Parameters
    ----------
    signature
        A DSPy signature.
    bound_text
        Add ``maxLength`` to string fields (for grammar-constrained decoding, so a small
        model cannot ramble until ``max_tokens`` and leave unparseable JSON).
    """
    from pydantic import TypeAdapter

    properties: dict[str, Any] = {}
    for name, field in signature.output_fields.items():
        schema = TypeAdapter(field.annotation).json_schema()
        if bound_text and schema.get("type") == "string" and "enum" not in schema:
            schema["maxLength"] = MAX_TEXT_CHARS
        properties[name] = schema
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def response_format_for(
    signature: type[dspy.Signature], mode: ResponseFormat
) -> dict[str, Any] | None:
    """The ``response_format`` value sent for ``signature`` in ``mode`` (``None`` = none)."""
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {
                "name": signature.__name__ or "output",
                "schema": output_schema(signature),
                "strict": True,
            },
        }
    if mode == "json_object":
        return {"type": "json_object", "schema": output_schema(signature, bound_text=True)}
    return None


def signature_key(signature: Any) -> Hashable:
    """What DSPy's formatting of ``signature`` depends on: the class, its instructions and its
    fields (name and field object: DSPy rebuilds both the class and its field objects when
    instructions, descriptions or types change, so a changed signature gets a new key).

    The key holds the class, so its field objects stay alive and their ids are not reused.
    """
    fields = signature.fields
    return (signature, signature.instructions, tuple(fields), tuple(map(id, fields.values())))


class SignatureMemo:
    """A small thread-safe memo of per-signature strings and schemas (at most ``size``
    entries; the oldest is dropped first)."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._values: dict[Hashable, Any] = {}

    def get(self, kind: str, signature: Any, make: Callable[[], Any]) -> Any:
        """The memoised ``make()`` for ``(kind, signature)``."""
        try:
            key: Hashable = (kind, signature_key(signature))
            hash(key)
        except TypeError:  # an unhashable annotation: format every time
            return make()
        with self._lock:
            if key in self._values:
                return self._values[key]
        value = make()
        with self._lock:
            if len(self._values) >= self.size:
                self._values.pop(next(iter(self._values)))
            self._values[key] = value
        return value


def make_adapter(mode: ResponseFormat) -> dspy.Adapter:
    """A DSPy JSON adapter that sends the signature's schema in ``mode``."""
    import dspy
    from dspy.adapters.utils import format_field_value

    class SchemaJSONAdapter(dspy.JSONAdapter):
        """JSONAdapter with an explicit ``response_format`` policy, strict parsing, defused
        field markers in input values, and per-signature parts built once."""

        response_mode: ResponseFormat = mode

        def __init__(self) -> None:
            super().__init__()
            self.memo = SignatureMemo()

        def parse(self, signature: Any, completion: str) -> dict[str, Any]:
            return strict_parse(signature, completion)

        def format_system_message(self, signature: Any) -> str:
            make = super().format_system_message
            return str(self.memo.get("system", signature, lambda: make(signature)))

        def _get_history_field_name(self, signature: Any) -> str | None:
            make = super()._get_history_field_name
            name: str | None = self.memo.get("history", signature, lambda: make(signature))
            return name

        def _get_tool_call_output_field_name(self, signature: Any) -> str | None:
            make = super()._get_tool_call_output_field_name
            name: str | None = self.memo.get("tool-out", signature, lambda: make(signature))
            return name

        def user_message_output_requirements(self, signature: Any) -> str:
            make = super().user_message_output_requirements
            value: str | None = self.memo.get("requirements", signature, lambda: make(signature))
            return value  # type: ignore[return-value]

        def format_user_message_content(
            self,
            signature: Any,
            inputs: dict[str, Any],
            prefix: str = "",
            suffix: str = "",
            main_request: bool = False,
        ) -> str:
            # DSPy's ChatAdapter layout ("[[ ## name ## ]]" sections, then the reminder); a
            # plain str value is written as is (what DSPy's pydantic round trip gives for it)
            parts = [prefix]
            for name, field in signature.input_fields.items():
                if name in inputs:
                    value = neutralize_value(inputs[name])
                    text = value if type(value) is str else format_field_value(field, value)
                    parts.append(f"[[ ## {name} ## ]]\n{text}")
            if main_request:
                requirements = self.user_message_output_requirements(signature)
                if requirements is not None:
                    parts.append(requirements)
            parts.append(suffix)
            return "\n\n".join(parts).strip()

        def _prepare_response_format(
            self, lm: dspy.BaseLM, lm_kwargs: dict[str, Any], signature: Any
        ) -> None:
            if self.response_mode == "auto":
                super()._prepare_response_format(lm, lm_kwargs, signature)
                return
            response_mode = self.response_mode
            value = self.memo.get(
                f"format-{response_mode}",
                signature,
                lambda: response_format_for(signature, response_mode),
            )
            if value is None:
                lm_kwargs.pop("response_format", None)
            else:
                lm_kwargs["response_format"] = copy.deepcopy(value)

    return SchemaJSONAdapter()
