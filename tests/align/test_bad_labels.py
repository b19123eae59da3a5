"""``align`` refuses unusable human labels as ``calibrate`` does, with the same checker: NaN,
±Infinity, booleans, text and values off the rubric's scale are one line naming the file, the
line and the field (exit 2), before any model call (issue 30, point 3)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from attune_judge.cli import main
from tests._openai_stub import StubServer
from tests.align._engine import learner, served, write_labels


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[StubServer, list[str]]]:
    """The learner on loopback (its requests are the model calls) and the options naming it."""
    with served(learner, monkeypatch) as found:
        yield found


# the value written into line 5 of the ratings (the epitome rubric's scale is 0..2)
BAD = {
    "NaN": "NaN",
    "Infinity": "Infinity",
    "-Infinity": "-Infinity",
    "true": "true",
    "text": '"good"',
    "99": "99",
    "-5": "-5",
    "2.5": "2.5",
}


@pytest.mark.parametrize("name", list(BAD))
def test_align_refuses_an_unusable_label_with_file_line_and_field(
    tmp_path: Path,
    model: tuple[StubServer, list[str]],
    capsys: pytest.CaptureFixture[str],
    name: str,
) -> None:
    items, ratings = write_labels(tmp_path)
    lines = ratings.read_text("utf-8").splitlines()
    record = json.loads(lines[4])
    assert record["dimension"].startswith("level_")  # a criterion of the rubric
    lines[4] = lines[4].replace(f'"value":{record["value"]}', f'"value":{BAD[name]}')
    assert lines[4] != json.dumps(record, separators=(",", ":"))
    ratings.write_text("\n".join(lines) + "\n", "utf-8")
    argv = ["align", str(ratings), "--items", str(items), "--rubric"]
    argv += ["empathic-communication-epitome", *model[1], "-o", str(tmp_path / "a")]
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2, err
    problem = [line for line in err.splitlines() if line.strip()]
    assert len(problem) == 1, err
    assert f"{ratings}:5: field value:" in problem[0]
    assert "Traceback" not in err
    assert model[0].requests == [] and not (tmp_path / "a").exists()


def test_align_accepts_the_ends_of_the_scale_and_null(tmp_path: Path) -> None:
    from attune_judge.align import load_align_data

    items, ratings = write_labels(tmp_path)
    lines = ratings.read_text("utf-8").splitlines()
    for k, value in ((4, "0"), (5, "2"), (6, "null"), (7, "1.5")):
        record = json.loads(lines[k])
        lines[k] = lines[k].replace(f'"value":{record["value"]}', f'"value":{value}')
    ratings.write_text("\n".join(lines) + "\n", "utf-8")
    data, _ = load_align_data(ratings, items=items, rubric="empathic-communication-epitome")
    assert data.n_ratings == len(lines) - 1  # the null one is missing, the others are used
