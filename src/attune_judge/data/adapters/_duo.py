"""DUO (Numaya et al. 2025), EmpatheticDialogues setting: people chatting with gpt-4o or
Llama-3.1-70B bots under three style prompts, rated by themselves and by outside raters.

Layout read: ``ed/en/*.json`` and ``ed/ja/*.json`` (one dialogue per file). The participant's
own 1-5 ratings become ``Rating`` records with rater ``participant`` (group ``participant``);
each outside rater's score becomes a ``Rating`` with rater ``observer1..3`` (group
``observers``) -- the dataset does not say whether position *k* is the same person across
dialogues, so treat the observers as exchangeable (noted in the report).
``metadata["participant_id"]`` (``<lang>:<user_id>``) identifies the participant: each talked
with several bots, so model comparisons can cluster by participant.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from attune_judge.data._records import ChatMessage, JudgeItem, Rating
from attune_judge.data.adapters._result import (
    AdapterReport,
    AdapterResult,
    messages_to_item,
    parse_number,
    require_dir,
    value_ranges,
)
from attune_judge.errors import UserError

__all__ = ["DUO_DIMENSIONS", "convert_duo"]

DUO_DIMENSIONS = ("preference", "empathy", "consistency", "stylistic_similarity")
"""The four 1-5 dimensions of the ED setting (``engagingness`` belongs to WoW, kept if seen)."""
_SCALE = (1.0, 5.0)
_README_EN_WITH_OBSERVERS = 70


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not valid JSON: {exc.msg} (line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected one dialogue object")
    for key in ("dialogue_id", "model", "prompt", "subjective_evaluation", "dialogue"):
        if key not in data:
            raise UserError(f"{path}: $.{key}: missing")
    return data


def _messages(path: Path, dialogue: list[dict[str, Any]]) -> list[ChatMessage]:
    msgs: list[ChatMessage] = []
    for i, turn in enumerate(dialogue):
        speaker = turn.get("speaker")
        if speaker not in ("Human", "Bot"):
            raise UserError(f"{path}: $.dialogue[{i}].speaker: {speaker!r} is not Human or Bot")
        role = "user" if speaker == "Human" else "assistant"
        text = str(turn.get("message", "")).strip()
        if msgs and msgs[-1].role == role:
            msgs[-1].content += "\n" + text
        else:
            msgs.append(ChatMessage(role=role, content=text))
    return msgs


def _rating(
    item_id: str, rater: str, group: str, dim: str, value: float | None, meta: dict[str, Any]
) -> Rating:
    return Rating(
        item_id=item_id,
        rater=rater,
        rater_group=group,
        dimension=dim,
        value=value,
        cluster=item_id,
        metadata={**meta, "scale_min": _SCALE[0], "scale_max": _SCALE[1]},
    )


def _observer_ratings(
    path: Path, item_id: str, obj: dict[str, Any], meta: dict[str, Any], report: AdapterReport
) -> list[Rating]:
    out: list[Rating] = []
    for key, scores in obj.items():
        if not key.endswith("_scores"):
            continue
        dim = key.removesuffix("_scores")
        if not isinstance(scores, list):
            raise UserError(f"{path}: $.objective_evaluation.{key}: expected a list")
        values = [parse_number(s) for s in scores]
        for k, value in enumerate(values, start=1):
            out.append(_rating(item_id, f"observer{k}", "observers", dim, value, meta))
        known = [v for v in values if v is not None]
        mean = parse_number(obj.get(dim))
        if known and mean is not None and abs(round(sum(known) / len(known), 2) - mean) > 0.011:
            report.unmatched.setdefault("observer mean differs from its scores", []).append(
                f"{item_id} {dim}: mean {mean} vs scores {values}"
            )
    return out


def convert_duo(src_dir: Path, languages: tuple[str, ...] = ("en", "ja")) -> AdapterResult:
    """Convert the DUO EmpatheticDialogues-setting dialogues.

    Parameters
    ----------
    src_dir
        The DUO folder (holding ``ed/en`` and ``ed/ja``) or its ``ed`` folder.
    languages
        Which language folders to read.

    Returns
    -------
    AdapterResult
        One conversation-level ``JudgeItem`` per dialogue (item id ``duo:<lang>:<id>``, the
        last bot message as candidate, bot model as ``candidate_model``, style prompt, emotion
        and episode in metadata), the participant's ratings and every observer score.
    """
    src = Path(src_dir)
    ed = src / "ed" if (src / "ed").is_dir() else src
    require_dir(ed, *languages)
    report = AdapterReport(dataset="duo", source=str(src))
    ratings: list[Rating] = []
    items: list[JudgeItem] = []
    for lang in languages:
        files = sorted((ed / lang).glob("*.json"))
        n_obs = numeric_ids = 0
        for path in files:
            data = _load(path)
            raw_id = data["dialogue_id"]
            if not isinstance(raw_id, str):
                numeric_ids += 1
            did = str(raw_id).zfill(4)
            if did != path.stem:
                report.unmatched.setdefault("dialogue_id differs from file name", []).append(
                    f"{path.name}: {raw_id}"
                )
            iid = f"duo:{lang}:{did}"
            users = sorted({str(t.get("user_id")) for t in data["dialogue"] if "user_id" in t})
            meta = {
                "participant_id": f"{lang}:{users[0]}" if len(users) == 1 else None,
                "language": lang,
                "setting": data.get("setting"),
                "model": data["model"],
                "style_prompt": data["prompt"],
            }
            msgs = _messages(path, data["dialogue"])
            item_meta = {**meta, "emotion": data.get("emotion"), "episode": data.get("episode")}
            items.append(messages_to_item(iid, iid, msgs, str(data["model"]), item_meta))
            for dim, value in data["subjective_evaluation"].items():
                num = parse_number(value)
                ratings.append(_rating(iid, "participant", "participant", dim, num, meta))
            obj = data.get("objective_evaluation")
            if obj:
                n_obs += 1
                ratings.extend(_observer_ratings(path, iid, obj, meta, report))
            else:
                report.unmatched.setdefault(f"{lang}: dialogues without observer ratings", [])
                report.unmatched[f"{lang}: dialogues without observer ratings"].append(iid)
        if numeric_ids:
            report.notes.append(f"{lang}: {numeric_ids} numeric dialogue_id values kept as text")
        styles = sorted({str(i.metadata["style_prompt"]) for i in items if i.item_id[4:6] == lang})
        report.notes.append(f"{lang}: style prompts {styles}")
        report.counts[f"{lang}_dialogues"] = len(files)
        report.counts[f"{lang}_participants"] = len(
            {i.metadata["participant_id"] for i in items if i.item_id[4:6] == lang}
        )
        report.counts[f"{lang}_dialogues_with_observers"] = n_obs
    if "en" in languages and report.counts.get("en_dialogues_with_observers") is not None:
        report.notes.append(
            f"README says {_README_EN_WITH_OBSERVERS} English ED dialogues have outside raters; "
            f"the files hold {report.counts['en_dialogues_with_observers']}"
        )
    report.notes.append(
        "observer1..3 are positions in each file's score lists; the dataset does not say "
        "whether a position is the same person across dialogues: treat them as exchangeable"
    )
    scales = {d: _SCALE for d in {r.dimension for r in ratings}}
    ranges, outside = value_ranges(ratings, scales)
    report.value_ranges = ranges
    report.unmatched["values outside the declared scale"] = outside
    report.counts["ratings"] = len(ratings)
    report.counts["items"] = len(items)
    return AdapterResult(ratings=ratings, items=items, report=report)
