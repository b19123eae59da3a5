"""A candidates JSONL is checked as AttuneBench files are: every problem of the file at once,
each naming file, line and field, exit 2, nothing judged (issue 30, point 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attune_judge.cli import main
from attune_judge.errors import UserError
from attune_judge.runner import load_judge_items
from tests.conftest import SAMPLES

GOOD = {"conversation_id": "synthetic-5", "turn": 1, "model": "m1", "response": "hello"}


def _line(**changes: object) -> bytes:
    return json.dumps({**GOOD, **changes}).encode("utf-8")


# (line, what the problem line must say); line 1 is good
BAD: list[tuple[bytes, str]] = [
    (
        b'{"conversation_id": "synthetic-5", "turn": 1, "turn": 1, "model": "m2", "response": "x"}',
        "key 'turn' appears twice",
    ),
    (_line(model="m3", turn=1.0), "$.turn: Input should be a valid integer"),
    (_line(model="m4", turn="1"), "$.turn: Input should be a valid integer"),
    (_line(model="m5", turn=True), "$.turn: Input should be a valid integer"),
    (_line(model="m6", response=""), "$.response: response is empty"),
    (_line(model="m7", response="  \n\t "), "$.response: response is empty"),
    (_line(model="m8", response="fine\u0000 then"), "control character U+0000"),
    (_line(model="m9", response="esc \u001b[31m red"), "control character U+001B"),
    (_line(model=""), "$.model: model name is empty"),
    (_line(model="original"), "'original' is reserved"),
    (_line(model="reference"), "'reference' is reserved"),
    (_line(model="human_edited"), "'human_edited' is reserved"),
    (_line(model="LLM_improved"), "'LLM_improved' is reserved"),
    (
        b'{"conversation_id": "synthetic-5", "turn": 1, "model": "m10", "response": "caf\xe9"}',
        "byte 0xe9 is not UTF-8",
    ),
    (
        b'{"conversation_id": "synthetic-5", "turn": NaN, "model": "m11", "response": "x"}',
        "NaN is not valid JSON",
    ),
    (_line(model="m12", response=None), "$.response: Input should be a valid string"),
    (_line(), "duplicate candidate for conversation 'synthetic-5' turn 1 model 'm1' (also line 1)"),
]


def _write(path: Path) -> Path:
    path.write_bytes(b"\n".join([_line(), *(line for line, _ in BAD)]) + b"\n")
    return path


def test_every_problem_of_the_file_is_named_at_once(tmp_path: Path) -> None:
    path = _write(tmp_path / "cands.jsonl")
    with pytest.raises(UserError) as caught:
        load_judge_items(SAMPLES, candidates=path)
    err = caught.value
    assert err.message.startswith(f"{path}: {len(BAD)} problem(s)")
    assert len(err.problems) == len(BAD)
    for n, ((_, expected), problem) in enumerate(zip(BAD, err.problems, strict=True), start=2):
        assert problem.startswith((f"{path}:{n}: ", f"{path}: not UTF-8 text (line {n},")), problem
        assert expected in problem, (expected, problem)


def test_score_refuses_the_file_and_judges_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "cands.jsonl")
    run = tmp_path / "run"
    argv = ["score", str(SAMPLES), "--rubric", "lexical", "-o", str(run), "-q"]
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--candidates", str(path)])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"{len(BAD)} problem(s)" in err
    assert sum(f"{path}:" in line for line in err.splitlines()) >= len(BAD)
    assert not (run / "judgments.jsonl").exists()


def test_a_good_file_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "cands.jsonl"
    rows = [_line(), _line(model="m2", response="tab\tand\r\nnewlines are text"), b""]
    path.write_bytes(b"\xef\xbb\xbf" + b"\n".join(rows))  # a BOM is fine
    items = load_judge_items(SAMPLES, candidates=path)
    assert [i.candidate_model for i in items] == ["m1", "m2"]
    assert items[1].candidate == "tab\tand\r\nnewlines are text"


def test_pairwise_items_keep_the_asked_models_and_name_a_missing_one(tmp_path: Path) -> None:
    import shutil

    from attune_judge.data import (
        attunebench_to_judge_items,
        load_attunebench,
        read_judgments,
    )
    from attune_judge.lm import LMSettings
    from attune_judge.runner import ScoreConfig, run_score
    from tests._openai_stub import openai_stub

    data = tmp_path / "data"  # one sample conversation: a few pairs to judge
    data.mkdir()
    shutil.copy(SAMPLES / "conversation_5.json", data)
    turn = next(iter(attunebench_to_judge_items(load_attunebench(data))))
    cands = tmp_path / "candidates.jsonl"
    row = {"conversation_id": turn.conversation_id, "turn": turn.turn, "response": "hi"}
    cands.write_text("".join(json.dumps({**row, "model": m}) + "\n" for m in ("a", "b", "c")))
    prefix = f"{turn.conversation_id}:{turn.turn}:pair"

    def judged(server_url: str, models: list[str] | None, out: str) -> set[str]:
        """The item ids a pairwise score run judges (the stub's answers do not matter)."""
        config = ScoreConfig(
            data=data,
            out=tmp_path / out,
            rubric="attunebench-pairwise",
            candidates=cands,
            models=models,
            lm="openai/stub",
            lm_settings=LMSettings(api_base=server_url),
            max_failure_rate=1.0,
            max_retries=0,
            quiet=True,
            B=50,
        )
        run_score(config)
        return {j.item_id for j in read_judgments(tmp_path / out / "judgments.jsonl")}

    with openai_stub(lambda body: "{}") as server:
        every = judged(server.url, None, "every")
        only_ab = judged(server.url, ["a", "b"], "ab")
        with pytest.raises(UserError, match=r"candidates.jsonl: no candidates for model\(s\) 'z'"):
            judged(server.url, ["a", "z"], "az")
    pair_ids = {i for i in only_ab if i.startswith(f"{prefix}:")}
    assert f"{prefix}:a:c" in every
    assert pair_ids == {f"{prefix}:a:b", f"{prefix}:a:reference", f"{prefix}:b:reference"}
