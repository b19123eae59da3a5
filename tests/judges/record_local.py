"""Re-record the embedded model's answers on a few sample items (run by hand, not by pytest).

    .venv/bin/python -m tests.judges.record_local

Writes tests/judges/recordings/local-samples.json, replayed by test_samples.py. Re-run it
after changing a rubric text or a judge signature (the replay keys are hashes of the prompts).
"""

from __future__ import annotations

from pathlib import Path

from attune_judge.judges import JudgeOptions, Jury, build_judge
from attune_judge.lm import LMSettings, register_model, resolve_lm
from attune_judge.testing import ReplayEngine
from tests.judges.sample_items import RECORDING_MODEL, sample_items

OUT = Path(__file__).parent / "recordings" / "local-samples.json"


def main() -> None:
    local = resolve_lm(LMSettings(lm="local", cache=False, max_tokens=400))
    engine = ReplayEngine(OUT, mode="record_missing", source=local)
    lm = engine.lm(RECORDING_MODEL)
    register_model(lm, response_format="json_schema")
    reference, pairs, behaviour = sample_items()
    for item in reference:
        print(build_judge("attunebench-reference", lm).judge(item).status, flush=True)
    for item in pairs:
        print(build_judge("attunebench-pairwise", lm).judge(item).status, flush=True)
    for item in behaviour:
        print(build_judge("attunebench-behaviours", lm).judge(item).status, flush=True)
    jury = Jury(
        [build_judge("attunebench-reference", lm, JudgeOptions(reasoning=r)) for r in (False, True)]
    )
    for item in reference:
        print(jury.judge(item).status, flush=True)
    engine.save()
    print(f"{engine.recorded} new recordings in {OUT}")


if __name__ == "__main__":
    main()
