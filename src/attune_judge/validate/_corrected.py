"""``rank RUN --human LABELS --method rogan-gladen``: a pass/fail judge's pass rate per model
corrected for its errors (Rogan–Gladen, :func:`attune_judge.calibration.corrected_pass_rates`),
with PPI++ on the same rows beside it. The rows are :func:`ppi_rank`'s join of the run's
judgments with the human labels (``calibration.ppi_columns``).
"""

from __future__ import annotations

from typing import Any

from attune_judge import calibration as cal
from attune_judge.errors import UserError

__all__ = ["METHODS", "check_method", "corrected_rank"]

METHODS = ("ppi", "rogan-gladen")
"""What ``rank --human --method`` accepts."""


def check_method(method: str, report_dir: object) -> None:
    """UserError for an unknown ``--method``, or ``--report`` with ``rogan-gladen``."""
    if method not in METHODS:
        raise UserError(f"--method must be ppi or rogan-gladen, not {method!r}")
    if method != "ppi" and report_dir is not None:
        raise UserError("--report is not available with --method rogan-gladen yet (use -o FILE)")


def corrected_rank(
    cols: Any, *, level: float, B: int, seed: int, weighted: bool
) -> tuple[str, dict[str, Any]]:
    """Markdown and JSON data of the corrected pass rates of the joined rows ``cols``
    (a ``PPIColumns``); ``weighted``: the labels carried inclusion weights (not used here)."""
    for i, (v, m) in enumerate(zip(cols.judge, cols.models, strict=True)):
        if v not in (0.0, 1.0):
            raise UserError(
                f"--method rogan-gladen needs pass/fail judge scores (0 or 1); model {m!r} "
                f"row {i} has {v!r} (use --field normalized with a pass/fail rubric)"
            )
    for v in cols.human:
        if v is not None and v not in (0.0, 1.0):
            raise UserError(
                f"--method rogan-gladen needs pass/fail human labels (0/1, yes/no); found {v!r} "
                "(several raters averaged? choose one with --human-raters)"
            )
    res = cal.corrected_pass_rates(
        cols.models, cols.clusters, cols.judge, cols.human, B=B, level=level, seed=seed
    )
    text = cal.corrected_pass_rates_markdown(res)
    if weighted:
        text += (
            "\nThe labels were drawn with unequal inclusion probabilities, but the corrected "
            "rates are NOT weighted (PPI++ is, in `--method ppi`).\n"
        )
    data = {**res.model_dump(mode="json"), "dimension": cols.dimension}
    data["warnings"] = [f"{w.code}: {w.message}" for w in res.warnings]
    return text, data
