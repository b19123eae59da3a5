"""The score command's per-model lines keep their columns under model names over 20 characters
(issue 46: they broke at 20)."""

from __future__ import annotations

# private unit: the console column aligner
from attune_judge.cli._score import aligned


def test_long_model_names_keep_the_columns_aligned() -> None:
    rows = [
        ("gpt-4o", "0.612 [0.55, 0.67]", "n_ok=10/10"),
        ("provider/an-unusually-long-candidate-model-name", "0.501 [0.44, 0.56]", "n_ok=9/10"),
        ("m", "—", "n_ok=0/10 {'parse_error': 10}"),
    ]
    lines = aligned(rows)
    starts = {line.index(cell) for line, (_, cell, _) in zip(lines, rows, strict=True)}
    assert len(starts) == 1  # every estimate starts in the same column
    (start,) = starts
    assert start > len("  provider/an-unusually-long-candidate-model-name")
    assert all(line.startswith("  " + name) for line, (name, _, _) in zip(lines, rows, strict=True))
    short = aligned([("a", "0.5", "n")])
    assert short[0].index("0.5") == 2 + 20 + 1  # short names keep the 20-wide column
