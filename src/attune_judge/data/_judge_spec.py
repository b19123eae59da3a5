"""A judge's spec, typed: its identity (``judge_id`` is a hash of it) and what readers ask of it.

Judges follow an open protocol, so a spec keeps every key it was given (a user's own judge adds
its own) and dumps exactly those keys, in the order given, with the values given: the
canonical JSON that :meth:`JudgeSpec.judge_id` hashes, and ``manifest.json``, stay
byte-identical to what the judge wrote. The known keys are typed; the readers (cost, summary,
panels, export, report) ask the spec's methods instead of sniffing keys.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    ModelWrapValidatorHandler,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

__all__ = ["JudgeSpec", "LMSpec"]


class _Given(BaseModel):
    """Dumps the keys it was given, in that order (unset fields and defaults are not added)."""

    model_config = ConfigDict(extra="allow", frozen=True, strict=True)

    _keys: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _remember_keys(cls, data: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
        model = handler(data)
        if isinstance(data, Mapping):
            model._keys = tuple(data)
        elif isinstance(data, _Given):
            model._keys = data._keys
        return model

    @model_serializer(mode="wrap")
    def _dump_given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        return {k: data[k] for k in self._keys if k in data}


class LMSpec(_Given):
    """A judge model's identity in a spec (``attune_judge.lm.lm_spec``)."""

    lm: str | None = None
    """The model string the user gave (``local``, ``openai/...``)."""
    temperature: float | int | None = None
    max_tokens: int | None = None
    seed: int | None = None
    response_format: str | None = None
    api_base: str | None = None
    """The OpenAI-compatible server it answers from (credentials redacted); absent otherwise."""


class JudgeSpec(_Given):
    """A judge's spec: ``program`` and ``program_version`` always; a model judge's ``rubric``,
    ``lm`` and ``options``; a jury's ``method`` and ``members``; a bench evaluator's ``task``,
    ``model`` (the evaluated one) and drafting judges; an aligned or calibrated judge's
    artifact."""

    program: str = "judge"
    program_version: str | int | None = None
    task: str | None = None
    model: str | None = None
    method: str | None = None
    members: list[JudgeSpec] | None = None
    rubric: dict[str, Any] | None = None
    lm: LMSpec | str | None = None
    options: dict[str, Any] | None = None
    presentation_seed: int | None = None
    draft_judge: JudgeSpec | None = None
    behaviour_judge: JudgeSpec | None = None
    program_state: str | None = None
    aligned: dict[str, Any] | None = None
    calibrated: dict[str, Any] | None = None

    @classmethod
    def of(cls, spec: JudgeSpec | Mapping[str, Any]) -> JudgeSpec:
        """``spec`` typed (a judge of the open protocol may give a plain mapping)."""
        return spec if isinstance(spec, JudgeSpec) else cls.model_validate(spec)

    def judge_id(self) -> str:
        """``<program>-<first 16 hex of sha256(canonical JSON of the spec)>``."""
        canonical = json.dumps(
            self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False, separators=(",", ":")
        )
        return f"{self.program}-{hashlib.sha256(canonical.encode('utf-8')).hexdigest()[:16]}"

    def with_keys(self, **keys: Any) -> JudgeSpec:
        """This spec with ``keys`` added (after its own) or replaced."""
        return JudgeSpec.model_validate({**self.model_dump(), **keys})

    @property
    def is_jury(self) -> bool:
        """Whether the spec is a jury's (its ``members`` are the judges' specs)."""
        return self.program == "jury"

    def model_name(self) -> str | None:
        """The judge model's string (``None``: no model recorded, e.g. a baseline or jury)."""
        if isinstance(self.lm, LMSpec):
            return self.lm.lm or (self.lm.model_extra or {}).get("model") or None
        return self.lm

    def server(self) -> str | None:
        """The OpenAI-compatible server of the judge model (``None``: its provider's own)."""
        return (self.lm.api_base or None) if isinstance(self.lm, LMSpec) else None

    def rubric_hash(self) -> str | None:
        """The rubric content hash, wherever the judge put it."""
        extra = self.model_extra or {}
        for key in ("rubric_hash", "rubric_sha256"):
            if isinstance(extra.get(key), str):
                return str(extra[key])
        for key in ("hash", "content_hash", "sha256"):
            if isinstance((self.rubric or {}).get(key), str):
                return str((self.rubric or {})[key])
        return None

    def rubric_name(self) -> str | None:
        """``id@version`` of the rubric (or a recorded ``rubric_id``)."""
        if self.rubric and self.rubric.get("id"):
            return f"{self.rubric['id']}@{self.rubric.get('version', '?')}"
        rubric_id = (self.model_extra or {}).get("rubric_id")
        return rubric_id if isinstance(rubric_id, str) else None

    def label(self) -> str:
        """A short human label: program, rubric, model, aligned artifact."""
        extra = self.model_extra or {}
        given = "program" in self._keys
        program = (
            self.program
            if given
            else next((extra[k] for k in ("name", "kind") if isinstance(extra.get(k), str)), None)
        )
        model = self.model_name() or self.model
        aligned = (self.aligned or {}).get("artifact_hash")
        parts = [program, self.rubric_name(), model, aligned and f"aligned {aligned}"]
        return " · ".join(p for p in parts if p) or "judge"
