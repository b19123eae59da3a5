"""``attune-judge rubric list | show NAME | check FILE`` (thin: the rubrics package does the work).

Python: :func:`attune_judge.rubrics.available_rubrics`, :func:`~attune_judge.rubrics.load_rubric`
and :func:`~attune_judge.rubrics.parse_rubric` (``check`` = ``load_rubric(path)``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from attune_judge.errors import UserError

if TYPE_CHECKING:
    from attune_judge.rubrics import Rubric

__all__ = ["register"]

rubric_app = typer.Typer(
    help="List, show and check rubrics (built-in names or YAML files).",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def _describe(rubric: Rubric) -> list[str]:
    scales = sorted(
        {f"{rubric.scale_of(c.id).min}..{rubric.scale_of(c.id).max}" for c in rubric.criteria}
        if rubric.kind != "pairwise"
        else {"A/B/tie"}
    )
    lines = [
        f"id: {rubric.id}",
        f"version: {rubric.version}",
        f"kind: {rubric.kind}",
        f"criteria: {len(rubric.criteria)} (scale {', '.join(scales)})",
        f"aggregation: {rubric.aggregation.method}",
        f"hash: sha256:{rubric.content_hash}",
    ]
    polarity = [c.polarity for c in rubric.criteria if c.polarity]
    if polarity:
        counts = {p: polarity.count(p) for p in ("positive", "negative", "neutral")}
        lines.append("polarity: " + ", ".join(f"{n} {p}" for p, n in counts.items()))
    return lines


@rubric_app.command("list")
def list_rubrics() -> None:
    """The built-in rubrics: name, kind, version, criteria."""
    from attune_judge.rubrics import available_rubrics, load_rubric

    for name in available_rubrics():
        r = load_rubric(name)
        print(f"{name:<46} {r.kind:<10} v{r.version:<4} {len(r.criteria):>3} criteria")


@rubric_app.command("show")
def show(
    name: Annotated[str, typer.Argument(help="A built-in rubric name or a rubric .yaml path.")],
) -> None:
    """Print a rubric: identity, hash, and every criterion with its scale and anchors."""
    from attune_judge.rubrics import load_rubric

    rubric = load_rubric(name)
    print("\n".join(_describe(rubric)))
    print(f"description: {rubric.description.strip()}")
    print(f"instructions: {rubric.instructions.strip()}")
    for c in rubric.criteria:
        extra = "".join(
            f" [{k}: {v}]" for k, v in (("category", c.category), ("polarity", c.polarity)) if v
        )
        print(f"- {c.id}{extra}: {c.description.strip()}")
        for level, text in sorted(c.anchors.items()):
            print(f"    {level}: {text}")


@rubric_app.command("check")
def check(
    path: Annotated[Path, typer.Argument(help="A rubric .yaml file.")],
) -> None:
    """Validate a rubric file (schema, anchors inside the scale, ids, weights); print its
    identity and hash. Exit 2 listing every problem when it is invalid."""
    from attune_judge.rubrics import parse_rubric, read_yaml

    if path.suffix not in (".yaml", ".yml"):
        raise UserError(f"{path}: expected a rubric .yaml file")
    rubric = parse_rubric(read_yaml(path, "rubric file"), str(path))
    print(f"{path}: valid rubric")
    print("\n".join(_describe(rubric)))


def register(app: typer.Typer) -> None:
    """Add the ``rubric`` command group to ``app``."""
    app.add_typer(rubric_app, name="rubric")
