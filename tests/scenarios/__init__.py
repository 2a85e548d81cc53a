"""Tests of the scenario package, and the scenario text several of them start from."""

from pathlib import Path

import pytest

from harness_lab.scenarios import ScenarioError, load_text


def missing_context(name: str, description: str = "a missing-context fallback", *,
                    header: str = "", rest: str = "") -> str:
    """A scenario file whose model asks which service, so that the run falls back for the
    missing context: ``name`` and ``description``, then the ``header`` lines (``tags:``,
    ``case:``), one tool and the model, then the ``rest`` (``expect:``, ``matrix:``)."""
    return (f"name: {name}\ndescription: {description}\n{header}"
            "tools: {logs: {}}\nmodel:\n  - draft: {missing_info: [which service]}\n" + rest)


MISSING_CONTEXT = missing_context(
    "good", rest="expect: {release_outcome: FALLBACK, fallback_type: MISSING_REQUIRED_CONTEXT}\n")
"""A scenario file that passes: the model asks which service, and the run falls back for the
missing context, as it expects."""

WRONG_EXPECTATION = (MISSING_CONTEXT.replace("name: good", "name: wrong")
                     .replace("FALLBACK,", "SUCCESS,"))
"""The same run named ``wrong`` and expected to succeed: a scenario file that fails."""


def good_and_wrong(directory: Path) -> Path:
    """``directory``, made if missing, holding ``good.yaml`` (:data:`MISSING_CONTEXT`) and
    ``wrong.yaml`` (:data:`WRONG_EXPECTATION`)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "good.yaml").write_text(MISSING_CONTEXT, encoding="utf-8")
    (directory / "wrong.yaml").write_text(WRONG_EXPECTATION, encoding="utf-8")
    return directory

TWO_TOOL_MODEL = """\
model:
  - tool: logs
    scope: {service: checkout}
  - tool: metrics
    scope: {service: checkout}
    progress: {assessment: GAINED, facts: [{statement: timeouts, citations: [inv-1]}]}
  - draft:
      conclusion: pool exhausted
      evidence: [{invocation_id: inv-1, claim: timeouts}]
    progress: {assessment: GAINED}
"""
"""The model script of a two-tool diagnosis: two tool calls, a verified fact, a conclusion."""

TWO_TOOL_DIAGNOSIS = """\
name: base
description: a two-tool diagnosis with a conclusion
tools:
  logs: {latency_s: 2.0}
  metrics: {latency_s: 1.0}
""" + TWO_TOOL_MODEL
"""A scenario file: two tools, a verified fact and a conclusion that passes both guards."""


def problems_of(text: str, path: str = "m.yaml") -> list[str]:
    """The problems loading ``text`` as the file ``path`` is refused with, each as printed."""
    with pytest.raises(ScenarioError) as info:
        load_text(text, path)
    return [str(p) for p in info.value.problems]
