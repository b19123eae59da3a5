"""The demo: the validate-a-judge job on real shipped data (recorded LLM judges vs experts,
DUO observers vs participants, bot model and style comparisons, the embedded local judge, a
short rubric-sensitivity run), written as one report with figures.

Validating a judge itself (``attune-judge validate``, the recorded judges beside the experts)
lives in :mod:`attune_judge.validate`.
"""

from attune_judge.demo._run import run_demo

__all__ = [
    "run_demo",
]
