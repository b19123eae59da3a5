"""The task programs' output schemas: flat, vocabulary-constrained, usable by a grammar."""

from __future__ import annotations

import json

from attune_judge.data.instrument import PANAS_ITEMS, Q3_MODEL_FIT_OPTIONS

# private unit: each bench task's DSPy program and output schema
from attune_judge.lm._adapter import output_schema
from attune_judge.tasks._programs import (
    behaviour_program,
    conversation_program,
    emotion_program,
    preference_program,
)

PROGRAMS = {
    "emotion": emotion_program(),
    "behaviour": behaviour_program((("B1", "Did it?"), ("B13", "Did it ask?"))),
    "preference": preference_program(),
    "conversation": conversation_program(),
}


def test_no_schema_uses_references_a_grammar_cannot_resolve():
    for name, program in PROGRAMS.items():
        text = json.dumps(output_schema(program.signature))
        assert "$ref" not in text, name


def test_outputs_are_constrained_to_the_instrument():
    props = output_schema(PROGRAMS["emotion"].signature)["properties"]
    assert props["emotions"]["items"]["enum"] == list(PANAS_ITEMS)
    assert props["intensities"]["items"]["enum"] == [1, 2, 3, 4, 5, 6, 7]
    assert props["emotions"]["maxItems"] == props["intensities"]["maxItems"] == 6
    props = output_schema(PROGRAMS["behaviour"].signature)["properties"]
    assert set(props) == {"B1_did", "B1_wanted", "B13_did", "B13_wanted"}
    assert all(p["enum"] == ["yes", "no"] for p in props.values())
    assert output_schema(PROGRAMS["preference"].signature)["properties"]["choice"]["enum"] == [
        "1",
        "2",
    ]
    props = output_schema(PROGRAMS["conversation"].signature)["properties"]
    assert props["model_fit"]["enum"] == list(Q3_MODEL_FIT_OPTIONS)
    assert len([k for k in props if k.startswith("panas_")]) == 20
