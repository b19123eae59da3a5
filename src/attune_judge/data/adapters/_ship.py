"""Build the shipped sets: converted human labels in ``calibration/<set>/`` and conversations
in ``data/<set>/``, each with the dataset's licence and a provenance note beside it.

Run from a source checkout with the raw datasets at hand::

    python -m attune_judge.data.adapters._ship /path/to/datasets /path/to/repo
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from attune_judge.data._jsonl import write_jsonl
from attune_judge.data.adapters._duo import convert_duo
from attune_judge.data.adapters._empathic import convert_empathic_communication
from attune_judge.data.adapters._esconv import convert_esconv
from attune_judge.data.adapters._ieval import convert_ieval
from attune_judge.data.adapters._result import AdapterResult

__all__ = [
    "ESCONV_SHIPPED_CONVERSATIONS",
    "IEVAL_SHIPPED_TASKS",
    "SHIPPED_SETS",
    "ShippedSet",
    "build_shipped_sets",
]

IEVAL_SHIPPED_TASKS = 30
"""iEval tasks (participants) shipped: tasks 0..29 of 240, to keep the package small."""

ESCONV_SHIPPED_CONVERSATIONS = 100
"""FailedESConv conversations shipped: the first 100 of 196."""


@dataclass(frozen=True)
class ShippedSet:
    """One shipped set: where its licence is and what to say about where it came from."""

    name: str
    licence_file: str
    """Path of the licence inside the raw dataset folder."""
    licence_name: str
    provenance: str
    """Markdown: source, authors, citation, licence, what was converted."""


SHIPPED_SETS: dict[str, ShippedSet] = {
    "empathic-communication": ShippedSet(
        "empathic-communication",
        "LICENSE",
        "MIT",
        "Source: Aakriti Kumar et al. (2025), *When LLMs are reliable for judging empathic "
        "communication*; data and replication code at github.com/aakriti1kumar/"
        "replication-data-and-code-when-LLMs-reliable-empathic-communication @ 7134581 "
        "(MIT License, Copyright (c) 2025 Aakriti Kumar; LICENSE beside this file). The "
        "conversation texts come from EmpatheticDialogues (Rashkin et al. 2019), EPITOME "
        "(Sharma et al. 2020) and the Lend an Ear pilot; Perceived Empathy texts are not public "
        "(ratings only). Caution: the MIT licence is the replication repository's; the "
        "EmpatheticDialogues texts are distributed by their authors under CC BY-NC 4.0 and the "
        "EPITOME texts are Reddit posts -- check those terms before commercial use of "
        "`../data/empathic-communication/items.jsonl`.\n\n"
        "Converted with `attune-judge data convert empathic-communication`: "
        "all ratings of expert1-3, the crowd means, GPT-4o, Claude 3.7 Sonnet and Gemini 2.5 "
        "Pro on 4 sources x 50 conversations x 21 dimensions, plus the Perceived Empathy "
        "seekers' own ratings; texts as conversation-level items.",
    ),
    "duo": ShippedSet(
        "duo",
        "ed/LICENSE.txt",
        "CC BY-NC 4.0",
        "Source: DUO dataset, EmpatheticDialogues setting, github.com/ikuminumaya/duo-dataset "
        "@ a1c4243. Numaya Ikumi, Moriya Shoji, Sato Shiki, Akama Reina, Suzuki Jun (2025): "
        "*How Stylistic Similarity Shapes Preferences in Dialogue Dataset with User and Third "
        "Party Evaluations* (SIGDIAL 2025) and *Dialogue Evaluation Is Affected by How Raters "
        "Perceive Stylistic Similarity* (Journal of Natural Language Processing 32(4), 2025). "
        "Emotion labels derive from EmpatheticDialogues (Rashkin et al. 2019, CC BY-NC 4.0).\n\n"
        "Licence: CC BY-NC 4.0 (LICENSE.txt beside this file) -- **non-commercial use only**. "
        "Changes: converted to attune-judge records (all 157 English and 68 Japanese "
        "dialogues; participant ratings and every outside rater's score).",
    ),
    "ieval": ShippedSet(
        "ieval",
        "LICENSE",
        "CC BY 4.0",
        "Source: iEval, github.com/Sea94/ieval @ bc98053. Ekaterina Svikhnushina, Anastasiia "
        "Filippova, Pearl Pu (2022): *iEval: Interactive Evaluation Framework for Open-Domain "
        "Empathetic Chatbots* (SIGDIAL 2022). Licence: CC BY 4.0 (LICENSE beside this file).\n\n"
        f"Changes: converted to attune-judge records; only tasks 0-{IEVAL_SHIPPED_TASKS - 1} "
        f"of 240 are shipped ({IEVAL_SHIPPED_TASKS * 8} conversations) to keep the package "
        "small; `attune-judge data convert ieval` converts the whole file.",
    ),
    "esconv": ShippedSet(
        "esconv",
        "original-thu-coai/LICENSE",
        "CC BY-NC 4.0",
        "Source: ESConv, github.com/thu-coai/Emotional-Support-Conversation @ f262d06, "
        f"FailedESConv.json (the first {ESCONV_SHIPPED_CONVERSATIONS} of 196 conversations "
        "dropped during collection). Siyang Liu, Chujie "
        "Zheng, Orianna Demasi, Sahand Sabour, Yu Li, Zhou Yu, Yong Jiang, Minlie Huang (2021): "
        "*Towards Emotional Support Dialog Systems* (ACL 2021). Copyright (c) 2021 CoAI Group, "
        "Tsinghua University; data for academic research use.\n\nLicence: CC BY-NC 4.0 "
        "(LICENSE beside this file) -- **non-commercial use only**. Changes: converted to "
        "attune-judge records (conversation-level items; supporter strategy labels, seeker "
        "in-chat feedback and end-of-chat survey as ratings). The full 1,300-conversation "
        "ESConv (third-party FADO reformat) is not shipped; convert it with "
        "`attune-judge data convert esconv`.",
    ),
}


def _ieval_subset(result: AdapterResult) -> AdapterResult:
    keep = {f"ieval:{t}" for t in range(IEVAL_SHIPPED_TASKS)}
    return AdapterResult(
        ratings=[r for r in result.ratings if r.cluster in keep],
        preferences=[p for p in result.preferences if p.cluster in keep],
        items=[i for i in result.items if ":".join(i.item_id.split(":")[:2]) in keep],
        report=result.report,
    )


def _write_set(spec: ShippedSet, result: AdapterResult, raw: Path, repo: Path) -> list[Path]:
    cal, data = repo / "calibration" / spec.name, repo / "data" / spec.name
    written: list[Path] = []
    for folder in (cal, data):
        folder.mkdir(parents=True, exist_ok=True)
        licence = folder / Path(spec.licence_file).name
        shutil.copyfile(raw / spec.licence_file, licence)
        prov = folder / "PROVENANCE.md"
        prov.write_text(
            f"# {spec.name} ({spec.licence_name})\n\n{spec.provenance}\n", encoding="utf-8"
        )
        written += [licence, prov]
    if result.ratings:
        write_jsonl(cal / "ratings.jsonl", result.ratings)
        written.append(cal / "ratings.jsonl")
    if result.preferences:
        write_jsonl(cal / "preferences.jsonl", result.preferences)
        written.append(cal / "preferences.jsonl")
    write_jsonl(data / "items.jsonl", result.items)
    written.append(data / "items.jsonl")
    report = result.report.model_dump() if result.report else {}
    report["source"] = f"<raw datasets>/{spec.name}"
    report["shipped"] = {
        "ratings": len(result.ratings),
        "preferences": len(result.preferences),
        "items": len(result.items),
    }
    (cal / "report.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    written.append(cal / "report.json")
    return written


def build_shipped_sets(datasets: Path, repo: Path) -> list[Path]:
    """Convert the raw datasets under ``datasets`` into ``repo/calibration`` and ``repo/data``."""
    datasets, repo = Path(datasets), Path(repo)
    failed_only = datasets / "esconv"
    results = {
        "empathic-communication": convert_empathic_communication(
            datasets / "empathic-communication"
        ),
        "duo": convert_duo(datasets / "duo"),
        "ieval": _ieval_subset(convert_ieval(datasets / "ieval")),
        "esconv": _esconv_failed(failed_only),
    }
    written: list[Path] = []
    for name, result in results.items():
        written += _write_set(SHIPPED_SETS[name], result, datasets / name, repo)
    return written


def _esconv_failed(src: Path) -> AdapterResult:
    result = convert_esconv(src, item_level="conversation")
    keep = {f"esconv:failed:{n:04d}" for n in range(ESCONV_SHIPPED_CONVERSATIONS)}
    return AdapterResult(
        ratings=[r for r in result.ratings if r.cluster in keep],
        items=[i for i in result.items if i.conversation_id in keep],
        report=result.report,
    )


if __name__ == "__main__":  # pragma: no cover
    for path in build_shipped_sets(Path(sys.argv[1]), Path(sys.argv[2])):
        print(path)
