"""The one writer and reader of ``summary.json``: stamped, redacted, atomic, versioned."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attune_judge.errors import UserError
from attune_judge.runs import (
    SCHEMA_VERSION,
    PpiBlock,
    PpiSummary,
    SensitivitySummary,
    read_summary,
    summary_json,
    write_summary,
)
from tests.conftest import FIXTURES

# the smallest prediction-powered block (no model) a summary of kind ppi holds
_PPI = '"ppi": {"rows": [], "differences": [], "level": 0.95, "n_clusters": 0, "clip": null, '
_PPI += '"dimension": "d", "n_human_items": 0, "n_matched": 0}'


def _ppi(**extra: object) -> dict[str, object]:
    return {**json.loads("{" + _PPI + "}")["ppi"], **extra}


def test_write_stamps_the_version_and_redacts_and_read_gives_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOME_API_KEY", "sk-secret-value-123")
    block = PpiBlock.model_validate(_ppi(note="key sk-secret-value-123 at http://u:pw@h/x"))
    written = write_summary(tmp_path, PpiSummary(ppi=block))
    text = (tmp_path / "summary.json").read_text("utf-8")
    assert "sk-secret-value-123" not in text and ":pw@" not in text
    data = json.loads(text)
    assert data == {
        "schema_version": SCHEMA_VERSION,
        "kind": "ppi",
        "ppi": _ppi(note="key *** at http://u:***@h/x"),
    }
    assert not list(tmp_path.glob("*.tmp"))
    record = read_summary(tmp_path)
    assert isinstance(record, PpiSummary) and isinstance(written, PpiSummary)
    assert summary_json(record) == data
    assert read_summary(tmp_path / "summary.json") == record
    assert read_summary(tmp_path / "empty") is None


def test_write_summary_takes_only_a_model(tmp_path: Path) -> None:
    # a dict (even a valid layout) is a writer's bug: refused before any file is written
    with pytest.raises(TypeError, match="RunSummary model"):
        write_summary(tmp_path, {"kind": "ppi", "ppi": _ppi()})  # type: ignore[arg-type]
    assert not (tmp_path / "summary.json").exists()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('{"schema_version": 99, "kind": "ppi", ' + _PPI + "}", "schema_version 99 is newer"),
        ('{"schema_version": "one", "kind": "ppi", ' + _PPI + "}", "'one' is not a layout"),
        ('{"kind": "ppi"}', "not a ppi summary of schema_version 1 (field ppi: Field required)"),
        ('{"kind": "ppi", "extra": 1, ' + _PPI + "}", "field extra: Extra inputs"),
        ('{"kind": "ppi", "ppi": {"rows": []}}', "field ppi.differences: Field required"),
        ('{"kind": "nope"}', "unknown summary kind 'nope'"),
        ("[1]", "expected a JSON object"),
        ("{", "cannot read it as JSON"),
    ],
)
def test_bad_or_newer_summaries_are_refused_in_one_line(
    tmp_path: Path, body: str, message: str
) -> None:
    (tmp_path / "summary.json").write_text(body, "utf-8")
    with pytest.raises(UserError) as err:
        read_summary(tmp_path)
    assert message in str(err.value) and str(tmp_path / "summary.json") in str(err.value)
    assert "\n" not in str(err.value)


def test_a_summary_from_before_versioning_reads_as_version_1_and_is_migrated(
    tmp_path: Path,
) -> None:
    (tmp_path / "summary.json").write_text('{"kind": "ppi", ' + _PPI + "}", "utf-8")
    record = read_summary(tmp_path)
    assert isinstance(record, PpiSummary) and record.schema_version == SCHEMA_VERSION == 2
    assert summary_json(record) == {
        "schema_version": 2,
        "kind": "ppi",
        **json.loads("{" + _PPI + "}"),
    }


def test_a_version_1_sensitivity_summary_reads_its_bootstrap_count_as_b(tmp_path: Path) -> None:
    # written by attune-judge at schema_version 1, when the settings said bootstrap_replicates
    old = json.loads((FIXTURES / "runs" / "sensitivity-schema-v1.summary.json").read_text())
    assert old["schema_version"] == 1 and old["sensitivity"]["settings"]["bootstrap_replicates"]
    (tmp_path / "summary.json").write_text(json.dumps(old), "utf-8")
    record = read_summary(tmp_path)
    assert isinstance(record, SensitivitySummary)
    assert record.sensitivity.settings.B == old["sensitivity"]["settings"]["bootstrap_replicates"]
    new = summary_json(record)
    settings = dict(old["sensitivity"]["settings"])
    settings["B"] = settings.pop("bootstrap_replicates")
    assert new["sensitivity"]["settings"] == settings
    # everything else is the file as it was (fields added since, unset in the old file, are
    # written as null or empty: a leaderboard row's no_rank_claim, the analysis' warnings, issue 42)
    for judge in new["judges"].values():
        for row in (judge.get("leaderboard") or {}).get("rows", []):
            if row.get("no_rank_claim", "") is None:
                del row["no_rank_claim"]
    analysis = new["sensitivity"].get("analysis") or {}
    if analysis.get("warnings", None) == []:  # the analysis' warnings (issue 42)
        del analysis["warnings"]
    assert {**new, "schema_version": 1, "sensitivity": old["sensitivity"]} == old
    assert {k: v for k, v in new["sensitivity"].items() if k != "settings"} == {
        k: v for k, v in old["sensitivity"].items() if k != "settings"
    }
