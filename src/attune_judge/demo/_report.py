"""The demo's report: its run directory's ``report.md`` and ``report.html`` (figures
embedded), composed from the report package's section builders, the validation sections of
:mod:`attune_judge.validate` and the demo's own explanations.

The demo stores its results in ``summary.json`` under keys the report package knows
(``recorded_judges``, ``duo``, ``calibration``, ``sensitivity``), so
``attune-judge report RUN`` redraws the numbers and figures (without the explanations).
"""

from __future__ import annotations

from pathlib import Path

from attune_judge.errors import UserError
from attune_judge.report import (
    SECTION_BUILDERS,
    KeyValues,
    Paragraph,
    Report,
    Section,
    load_run,
    recorded_judges_section,
)
from attune_judge.runs import DemoSummary, ValidateSummary, read_summary
from attune_judge.validate import judge_rows_table, validation_sections

__all__ = ["demo_report"]


_PART_A = (
    "Each judge against the median of the experts; α among the experts and with the judge as a "
    "fourth coder; leave-one-out ceilings (each expert vs the median of the other two, and the "
    "judge vs the same medians); the alternative annotator test (ε = 0.2). Full calibration "
    "reports per source: calibration-<source>.md in this directory."
)
_PART_C_HEAD = (
    "The conversations are held out from the model's shipped calibration head "
    "(calibration/heads/: fitted on the other conversations' experts): its calibrated scores "
    "of the same judgments stand beside the raw ones, before and after, without another model "
    "call."
)
_PART_C = (
    "Scored with the rubric empathic-communication-epitome and compared with the same experts, "
    "beside the recorded judges on the same conversations. With so few conversations the "
    "intervals are wide; the point is how far a 135M model is from the recorded judges. Its "
    "own run directory (judgments, runner report): c-local-judge/."
)


def demo_report(out: Path, *, seconds: float, local_lm: str = "local") -> Report:
    """The demo's report from its run directory (``summary.json`` and the part folders)."""
    run = load_run(out)
    summary = run.record
    if not isinstance(summary, DemoSummary):
        raise UserError(f"{out}: not a demo run directory (no demo summary.json)")
    parts = summary.parts
    about = Section(
        "About this demo",
        [
            Paragraph(
                "Validating judges on real human labels, offline. Every interval is a cluster "
                "bootstrap over conversations. Data: the repository's calibration/ folder (see "
                "its README for sources and licences)."
            ),
            KeyValues(
                [
                    ("parts", ", ".join(parts)),
                    ("bootstrap replicates B", str(summary.B)),
                    ("seed", str(summary.seed)),
                    ("wall time", f"{seconds:.0f} s"),
                ]
            ),
        ],
    )
    sections = [about]
    rows = summary.recorded_judges or []
    if rows:
        sections.append(
            Section(
                "a. Recorded LLM judges (GPT-4o, Claude 3.7 Sonnet, Gemini 2.5 Pro) and the "
                "crowd vs three experts",
                [Paragraph(_PART_A)],
                [
                    recorded_judges_section(rows, title="Each judge beside the expert ceiling"),
                    Section("All statistics", [judge_rows_table(rows)]),
                ],
            )
        )
    duo = SECTION_BUILDERS["duo"](run)
    if duo:
        sections.append(
            Section("b. DUO: observers vs participants; bot models and style prompts", [], duo)
        )
    local = read_summary(out / "c-local-judge") if "c" in parts else None
    if isinstance(local, ValidateSummary):
        sections.append(
            Section(
                f"c. The embedded local judge ({local_lm}) on {local.validation.n_items} "
                "EPITOME conversations",
                [Paragraph(_PART_C + (" " + _PART_C_HEAD if local.calibrated else ""))],
                validation_sections(local, title="Result"),
            )
        )
    if summary.sensitivity:
        sens = Section("d. Rubric sensitivity", [])
        for note in summary.sensitivity_notes or []:
            sens.blocks.append(Paragraph(note))
        sens.subsections = SECTION_BUILDERS["sensitivity"](run)  # its details inside
        sections.append(sens)
    return Report(
        "attune-judge demo: validating judges on real human labels",
        sections,
        f"Run directory {out.name}",
    )
