"""The ``panels`` block of ``summary.json``: juries and several judges on the same items.

For a jury: its members' values (kept in each jury judgment's ``details["members"]``) against
each other and against the jury's combined value. For a run with several independent judges
(``--jury none``): the judges against each other and their mean (or majority). Each entry is
an :class:`attune_judge.calibration.PanelAgreement` (α among the judges, each judge against the
consensus, self-preference), see :mod:`attune_judge.calibration.agreement._panel`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from attune_judge._bootstrap import DEFAULT_LEVEL
from attune_judge.calibration import panel_agreement
from attune_judge.data import JudgeSpec, Judgment
from attune_judge.errors import UserError
from attune_judge.runs import PanelBlock, PanelNote

__all__ = ["panel_blocks"]

log = logging.getLogger(__name__)


def _value(entry: Mapping[str, Any]) -> float | str | None:
    if entry.get("verdict") is not None:
        return str(entry["verdict"])
    value = entry.get("normalized")
    return float(value) if value is not None else None


def panel_blocks(
    specs: Mapping[str, JudgeSpec],
    ok: Mapping[str, Sequence[Judgment]],
    candidate_models: Mapping[str, str | None],
    *,
    seed: int,
    B: int,
    level: float = DEFAULT_LEVEL,
) -> list[PanelBlock | PanelNote]:
    """Panel analyses of a run (empty when there is no jury and only one judge).

    ``specs``: judge id → spec; ``ok``: judge id → its ok judgments; ``candidate_models``:
    item id → the model that wrote the judged reply.
    """
    plain = [jid for jid, spec in specs.items() if not spec.is_jury]
    if len(plain) < 2 and len(plain) == len(specs):
        return []  # one judge, no jury: nothing to compare (and no statistics to import)

    out: list[PanelBlock | PanelNote] = []
    clusters: dict[str, str] = {}
    for judgments in ok.values():
        for j in judgments:
            clusters[j.item_id] = j.conversation_id or j.item_id
    panels: list[tuple[str | None, dict[str, dict[str, float | str]], dict[str, Any], dict]] = []
    for jid, spec in specs.items():
        if not spec.is_jury:
            continue

        models = {m.judge_id(): m.model_name() for m in spec.members or []}
        values: dict[str, dict[str, float | str]] = {m: {} for m in models}
        consensus: dict[str, float | str] = {}
        for j in ok.get(jid, []):
            combined = _value({"verdict": j.verdict, "normalized": j.normalized})
            if combined is not None:
                consensus[j.item_id] = combined
            for member in j.details.get("members") or []:
                value = _value(member) if member.get("status") == "ok" else None
                if value is not None and member.get("judge_id") in values:
                    values[str(member["judge_id"])][j.item_id] = value
        panels.append((jid, values, models, consensus))
    if len(plain) >= 2:
        values = {
            jid: {
                j.item_id: v
                for j in ok.get(jid, [])
                if (v := _value({"verdict": j.verdict, "normalized": j.normalized})) is not None
            }
            for jid in plain
        }
        panels.append((None, values, {jid: specs[jid].model_name() for jid in plain}, {}))
    for jury_id, values, models, consensus in panels:
        kinds = {isinstance(v, str) for vals in values.values() for v in vals.values()}
        if len(values) < 2 or len(kinds) != 1:
            continue
        try:
            res = panel_agreement(
                values,
                clusters,
                models=models,
                candidate_models=candidate_models,
                consensus=consensus or None,
                B=B,
                level=level,
                seed=seed,
            )
        except UserError as exc:  # too few shared items: say so, do not fail the run
            out.append(PanelNote(jury_id=jury_id, note=str(exc)))
            continue
        out.append(PanelBlock(jury_id=jury_id, **dict(res)))
    return out
