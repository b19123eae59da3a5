"""Test-wide settings: offline, with DSPy's and our caches in a temporary directory.

These variables are set at import time, before any test module imports dspy or litellm.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

_CACHE_ROOT = Path(tempfile.mkdtemp(prefix="attune-test-cache-"))
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["DSPY_CACHEDIR"] = str(_CACHE_ROOT / "dspy")
os.environ["ATTUNE_CACHE_DIR"] = str(_CACHE_ROOT / "attune")
os.environ.setdefault("MPLBACKEND", "Agg")
for _var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "ATTUNE_LM"):
    os.environ.pop(_var, None)

REPO_ROOT = Path(__file__).resolve().parents[1]
# Facts the tests read, inside the repository (cut by tests/fixtures/make_fixtures.py):
# published reference values, the instrument file, small samples of each public dataset.
FIXTURES = REPO_ROOT / "tests" / "fixtures"
DATASETS = FIXTURES / "datasets"
DESIGN = FIXTURES / "design"
SAMPLES = REPO_ROOT / "data" / "samples" / "attunebench"
