"""The JSON Schema of scenario files, for editors: ``harness-lab schema`` prints it.

Every property carries its field's documentation as ``description``, so an editor shows it
on hover. The repository ships the schema as ``scenarios/scenario.schema.json``; a scenario
file names it in its first line, which YAML editors read (the yaml-language-server modeline)::

    # yaml-language-server: $schema=../scenario.schema.json
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["SCHEMA_FILE", "SCHEMA_URI", "modeline", "scenario_schema", "schema_text"]

SCHEMA_FILE = "scenario.schema.json"
"""The schema's file name in the shipped ``scenarios/`` directory."""

SCHEMA_URI = "https://json-schema.org/draft/2020-12/schema"
"""The JSON Schema dialect pydantic writes."""


def scenario_schema() -> dict[str, Any]:
    """The JSON Schema of a scenario file: pydantic's, naming its dialect, with the
    definitions the pattern fields of ``expect`` refer to."""
    from harness_lab.scenarios.patterns import with_pattern_definitions
    from harness_lab.scenarios.spec import Scenario

    return {"$schema": SCHEMA_URI, **with_pattern_definitions(Scenario.model_json_schema())}


def schema_text() -> str:
    """:func:`scenario_schema` as the text of the shipped file (two-space indent, a newline)."""
    return json.dumps(scenario_schema(), indent=2, ensure_ascii=False) + "\n"


def modeline(relative_path: str) -> str:
    """The first line of a scenario file pointing YAML editors at the schema file."""
    return f"# yaml-language-server: $schema={relative_path}"
