"""The JSON Schema of log lines holds for every line a real log has."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from harness_lab.logs import log_schema


def test_every_line_of_a_written_log_is_valid_against_the_schema(library_log: Path) -> None:
    validator = jsonschema.Draft202012Validator(log_schema())
    kinds = []
    for line in library_log.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        errors = [e.message for e in validator.iter_errors(data)]
        assert errors == [], (data.get("scenario"), errors[:3])
        kinds.append(data["kind"])
    assert kinds[0] == "header" and kinds[-1] == "footer"
    assert set(kinds[1:-1]) == {"run"}


def test_the_schema_rejects_a_run_line_with_an_unknown_run_state(library_log: Path) -> None:
    run = json.loads(library_log.read_text(encoding="utf-8").splitlines()[1])
    run["record"]["run_state"] = "EXPLODED"
    validator = jsonschema.Draft202012Validator(log_schema())
    assert not validator.is_valid(run)


def test_the_schema_shipped_in_docs_is_the_current_one() -> None:
    shipped = Path(__file__).resolve().parents[2] / "docs" / "log.schema.json"
    assert json.loads(shipped.read_text(encoding="utf-8")) == log_schema(), (
        "docs/log.schema.json is stale: regenerate it as docs/logs.md says")
