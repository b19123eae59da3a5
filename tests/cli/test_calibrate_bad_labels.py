"""``calibrate`` refuses human labels that are not a rating: NaN, ±Infinity, booleans, and text
mixed with numbers (unless ``--measurement nominal``), naming the file and the line; exit 2.

The files are written by hand (raw JSON lines), because these values are exactly what a
record model would coerce (``true`` → 1.0) or pass through (``NaN``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attune_judge.cli import main
from attune_judge.errors import UserError
from attune_judge.validate import calibrate_files, check_human_labels

ITEMS = [f"c{i}:0:original" for i in range(8)]
GOOD = [1, 2, 3, 4, 5, 2, 4, 3]


def _line(item: str, rater: str, value_json: str) -> str:
    return (
        f'{{"item_id": "{item}", "rater": "{rater}", "dimension": "empathy", '
        f'"value": {value_json}, "cluster": "{item.split(":")[0]}"}}'
    )


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def judge_file(tmp_path: Path) -> Path:
    rows = [_line(i, "judge", str(v)) for i, v in zip(ITEMS, [2, 2, 3, 4, 4, 2, 5, 3], strict=True)]
    return _write(tmp_path / "judge.jsonl", rows)


def _human(tmp_path: Path, bad_at: int, bad: str) -> Path:
    """Two raters on every item; line ``bad_at`` (1-based) holds the raw value ``bad``."""
    values = [
        (item, rater, str(v if rater == "h1" else 6 - v))
        for item, v in zip(ITEMS, GOOD, strict=True)
        for rater in ("h1", "h2")
    ]
    lines = [
        _line(item, rater, bad if n == bad_at else value)
        for n, (item, rater, value) in enumerate(values, 1)
    ]
    return _write(tmp_path / "human.jsonl", lines)


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as ex:
        main(argv)
    out = capsys.readouterr()
    return int(ex.value.code or 0), out.out, out.err


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ("NaN", "nan is not a rating"),
        ("Infinity", "inf is not a rating"),
        ("-Infinity", "-inf is not a rating"),
        ("true", "true is a boolean"),
        ("false", "false is a boolean"),
    ],
)
def test_non_finite_and_boolean_labels_exit_2_naming_file_and_line(
    raw: str, said: str, tmp_path: Path, judge_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    human = _human(tmp_path, 5, raw)
    # the raw value really is in the file on line 5 (and Python's json reads it)
    assert json.loads(human.read_text().splitlines()[4])["value"] is not None
    code, out, err = _run(["calibrate", "--human", str(human), "--judge", str(judge_file)], capsys)
    assert code == 2
    assert out == ""
    assert f"{human}:5: field value: {said}" in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_text_mixed_with_numbers_exits_2_naming_both_lines(
    tmp_path: Path, judge_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    human = _human(tmp_path, 7, '"high"')
    code, _, err = _run(["calibrate", "--human", str(human), "--judge", str(judge_file)], capsys)
    assert code == 2
    assert f"{human}:7: field value: text and numbers mixed (line 1 is a number, line 7" in err
    assert "--measurement nominal" in err
    # every level that reads numbers refuses the mix
    for level in ("interval", "ratio"):
        code, _, err = _run(
            [
                "calibrate",
                "--human",
                str(human),
                "--judge",
                str(judge_file),
                "--measurement",
                level,
            ],
            capsys,
        )
        assert code == 2 and f"{human}:7:" in err


def test_text_mixed_with_numbers_is_fine_at_nominal_level(
    tmp_path: Path, judge_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a numeric string is a category too: the mix is only a problem where order matters
    human = _human(tmp_path, 7, '"4"')
    code, out, err = _run(
        # --level: the option's old name, still accepted (hidden from --help)
        ["calibrate", "--human", str(human), "--judge", str(judge_file), "--level", "nominal"],
        capsys,
    )
    assert code == 0, err
    assert "empathy" in out


def test_clean_labels_pass_the_check_and_null_is_missing(tmp_path: Path) -> None:
    human = _human(tmp_path, 3, "null")
    check_human_labels(human, "ordinal")  # no error: null is a missing rating
    texts = _write(tmp_path / "t.jsonl", [_line("a", "h", '"low"'), _line("b", "h", '"high"')])
    check_human_labels(texts, "ordinal")  # only text: categories, not a mix


def test_the_library_call_refuses_the_same_labels(tmp_path: Path, judge_file: Path) -> None:
    human = _human(tmp_path, 2, "NaN")
    with pytest.raises(UserError, match=r"human\.jsonl:2: field value: nan is not a rating"):
        calibrate_files(human, judge_file)


@pytest.mark.parametrize("raw", ["99", "-5", "5.5"])
def test_off_scale_labels_exit_2_when_a_scale_is_declared(
    raw: str, tmp_path: Path, judge_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    human = _human(tmp_path, 6, raw)
    argv = ["calibrate", "--human", str(human), "--judge", str(judge_file)]
    code, out, err = _run([*argv, "--scale", "1,2,3,4,5"], capsys)
    assert code == 2 and out == ""
    assert f"{human}:6: field value: {float(raw):g} is off the declared scale 1–5" in err
    assert "--scale" in err and len(err.strip().splitlines()) == 1
    # without a declared scale a number is a number (the scale is the user's to declare)
    code, _, err = _run(argv, capsys)
    assert code == 0, err
    # only the dimensions compared are checked
    code, _, err = _run([*argv, "--scale", "1,2,3,4,5", "--dimension", "warmth"], capsys)
    assert "off the declared scale" not in err
