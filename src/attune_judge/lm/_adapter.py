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

The same adapter reads answers strictly (:func:`attune_judge.lm.strict_parse`: one JSON object,
exact types, nothing else) and defuses DSPy field markers inside every input value
(:mod:`attune_judge.lm._untrusted`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attune_judge.lm._settings import ResponseFormat

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


def make_adapter(mode: ResponseFormat) -> dspy.Adapter:
    """A DSPy JSON adapter that sends the signature's schema in ``mode``."""
    import dspy

    from attune_judge.lm._strict import strict_parse
    from attune_judge.lm._untrusted import neutralize_value

    class SchemaJSONAdapter(dspy.JSONAdapter):
        """JSONAdapter with an explicit ``response_format`` policy, strict parsing and
        defused field markers in input values."""

        response_mode: ResponseFormat = mode

        def parse(self, signature: Any, completion: str) -> dict[str, Any]:
            return strict_parse(signature, completion)

        def format_user_message_content(
            self,
            signature: Any,
            inputs: dict[str, Any],
            prefix: str = "",
            suffix: str = "",
            main_request: bool = False,
        ) -> str:
            clean = {k: neutralize_value(v) for k, v in inputs.items()}
            return super().format_user_message_content(
                signature, clean, prefix=prefix, suffix=suffix, main_request=main_request
            )

        def _prepare_response_format(
            self, lm: Any, lm_kwargs: dict[str, Any], signature: Any
        ) -> None:
            if self.response_mode == "auto":
                super()._prepare_response_format(lm, lm_kwargs, signature)
                return
            value = response_format_for(signature, self.response_mode)
            if value is None:
                lm_kwargs.pop("response_format", None)
            else:
                lm_kwargs["response_format"] = value

    return SchemaJSONAdapter()
