"""A run's manifest records the model settings as it did before the configs held one
``LMSettings`` (issue 45): ``api_base`` in its place and the decoding options as
``model_options``. The expected dicts are regression pins computed with the pre-refactor code
(main at 865b3bc, where the configs had ``api_base`` and ``model_options: ModelOptions``
fields); the manifest is an output file, so it must stay byte-identical.

``_arguments`` is score's private manifest builder: this test is about that unit.
"""

from __future__ import annotations

import json
from pathlib import Path

from attune_judge.lm import LMSettings
from attune_judge.runner import ScoreConfig, run_arguments

# private unit: score's manifest builder (_arguments), pinned field by field
from attune_judge.runner._score_run import _arguments
from attune_judge.sensitivity import SensitivityConfig
from attune_judge.tasks import BenchConfig

P = Path("/tmp/x")
SERVER = "http://h:1/v1"

# Pre-refactor: ScoreConfig(lm=["local", "openai/x"], api_base=SERVER,
# model_options=ModelOptions(temperature=0.5, timeout=9.0))
SCORE_WITH_OPTIONS = '{"max_concurrency": 8, "adaptive": true, "max_failure_rate": 0.25, "min_attempts": 20, "max_retries": 5, "parse_retries": 1, "retry_base_delay_s": 1.0, "seed": 0, "retry_failed": false, "data": "/tmp/x", "out": "/tmp/x", "rubric": "attunebench-reference", "lm": ["local", "openai/x"], "jury": "mean", "price_in": null, "price_out": null, "max_cost": null, "api_base": "http://h:1/v1", "model_options": {"temperature": 0.5, "max_tokens": null, "response_format": null, "timeout": 9.0}, "score_mode": null, "per_criterion": false, "candidates": null, "models": null, "B": 2000, "level": 0.95, "fsync_interval_s": 0.2, "batch": false, "batch_poll_s": 30.0}'  # noqa: E501
# Pre-refactor: ScoreConfig(lm="openai/x") (no options: no model_options key)
SCORE_PLAIN = '{"max_concurrency": 8, "adaptive": true, "max_failure_rate": 0.25, "min_attempts": 20, "max_retries": 5, "parse_retries": 1, "retry_base_delay_s": 1.0, "seed": 0, "retry_failed": false, "data": "/tmp/x", "out": "/tmp/x", "rubric": "attunebench-reference", "lm": "openai/x", "jury": "mean", "price_in": null, "price_out": null, "max_cost": null, "api_base": null, "score_mode": null, "per_criterion": false, "candidates": null, "models": null, "B": 2000, "level": 0.95, "fsync_interval_s": 0.2, "batch": false, "batch_poll_s": 30.0}'  # noqa: E501
# Pre-refactor: BenchConfig(models=["openai/m"], api_base=SERVER,
# model_options=ModelOptions(max_tokens=50)); model_options came after max_failure_rate
BENCH = '{"max_concurrency": 8, "adaptive": true, "data": "/tmp/x", "models": ["openai/m"], "judge_lm": "local", "jury": "mean", "out": "/tmp/x", "tasks": ["drafting", "emotion", "behaviour", "preference", "conversation"], "seed": 0, "api_base": "http://h:1/v1", "max_conversations": null, "B": 2000, "max_failure_rate": 0.25, "model_options": {"temperature": null, "max_tokens": 50, "response_format": null, "timeout": null}, "retry_failed": false}'  # noqa: E501
# Pre-refactor: SensitivityConfig(lm="openai/x", api_base=SERVER,
# model_options=ModelOptions(response_format="json_object"))
SENSITIVITY = '{"max_concurrency": 8, "adaptive": true, "max_failure_rate": 0.25, "min_attempts": 20, "max_retries": 5, "parse_retries": 1, "retry_base_delay_s": 1.0, "seed": 0, "retry_failed": false, "data": "/tmp/x", "variants": "/tmp/x", "out": "/tmp/x", "rubric": null, "lm": "openai/x", "jury_lms": null, "jury": "mean", "api_base": "http://h:1/v1", "model_options": {"temperature": null, "max_tokens": null, "response_format": "json_object", "timeout": null}, "candidates": null, "models": null, "only": null, "B": null}'  # noqa: E501


def _same(args: dict[str, object], pinned: str) -> None:
    assert json.dumps(args) == pinned  # key order too: the manifest is written in this order


def test_score_manifest_arguments_are_unchanged() -> None:
    settings = LMSettings(api_base=SERVER, temperature=0.5, timeout=9.0, cache_dir="/c", seed=3)
    config = ScoreConfig(data=P, out=P, lm=["local", "openai/x"], lm_settings=settings)
    _same(_arguments(config), SCORE_WITH_OPTIONS)
    _same(_arguments(ScoreConfig(data=P, out=P, lm="openai/x")), SCORE_PLAIN)


def test_bench_and_sensitivity_manifest_arguments_are_unchanged() -> None:
    bench = BenchConfig(
        data=P, out=P, models=["openai/m"], lm_settings=LMSettings(api_base=SERVER, max_tokens=50)
    )
    _same(run_arguments(bench, "quiet", options_after="max_failure_rate"), BENCH)
    sensitivity = SensitivityConfig(
        data=P,
        out=P,
        variants=P,
        lm="openai/x",
        lm_settings=LMSettings(api_base=SERVER, response_format="json_object"),
    )
    _same(run_arguments(sensitivity, "quiet", "fsync"), SENSITIVITY)
