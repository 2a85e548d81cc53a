"""A starter scenario directory a newcomer can copy from (``harness-lab init [DIR]``).

It holds one scenario of each path (system chat, knowledge query, a published diagnosis
report, a fallback), each opening with the editor modeline that points at
``scenario.schema.json`` (the JSON Schema of scenario files, written beside them), and a
README of what to try next.
The directory passes ``harness-lab run DIR``; nothing that exists is overwritten.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from harness_lab.scenarios.schema import SCHEMA_FILE, modeline

__all__ = ["MODELINE", "SCENARIOS", "scaffold"]

MODELINE = modeline(f"./{SCHEMA_FILE}") + "\n"
"""The first line of each scaffolded scenario: editors with the YAML language server (VS Code,
Neovim, Helix...) then complete and check keys against ``scenario.schema.json``."""

SCENARIOS: dict[str, str] = {
    "system-chat.yaml": """\
name: starter-system-chat
description: A SYSTEM_CHAT query gets one answer from the responder; no diagnosis runs.
tags: [starter, system-chat]
query: Hello, what can you do?
router: SYSTEM_CHAT
latency: {router: 0.2, responder: 0.8}
responder: {text: "I diagnose service problems from logs and metrics."}
expect:
  intent: SYSTEM_CHAT
  run_state: SUCCESS
  release_outcome: SUCCESS
  db_status: SUCCESS
  sse: [metadata, status, status, content, done]
""",
    "knowledge.yaml": """\
name: starter-knowledge
description: A KNOWLEDGE_QUERY retrieves passages once and answers from them.
tags: [starter, knowledge]
query: What does the checkout runbook say about pool exhaustion?
router: KNOWLEDGE_QUERY
latency: {router: 0.2, retriever: 0.3, responder: 0.8}
retriever:
  passages: ["Runbook: on pool exhaustion, raise the pool size and find the slow query."]
responder: {text: "Raise the pool size, then look for the slow query."}
expect:
  intent: KNOWLEDGE_QUERY
  run_state: SUCCESS
  release_outcome: SUCCESS
  db_status: SUCCESS
""",
    "diagnosis-report.yaml": """\
name: starter-diagnosis-report
description: The agent calls two tools, cites both in its conclusion, passes both guards and
  publishes the report.
tags: [starter, diagnosis]
query: Why do payments fail since the deploy?
latency: {router: 0.2, model: 1.0, tool: 1.5, guard: 0.5}
tools:
  deploys:
    default: {evidence: [{deploy: payments-v42, at: "09:58"}]}
  logs:
    default: {evidence: [{line: "10:01 payments: missing config key PSP_URL"}]}
model:
  - tool: deploys
    scope: {service: payments}
  - tool: logs
    scope: {service: payments}
    progress:
      assessment: GAINED
      facts: [{statement: "payments-v42 was deployed at 09:58", citations: [inv-1]}]
  - draft:
      conclusion: The payments-v42 deploy dropped the PSP_URL configuration key.
      evidence:
        - {invocation_id: inv-1, claim: "deploy at 09:58"}
        - {invocation_id: inv-2, claim: "missing PSP_URL since 10:01"}
    progress: {assessment: GAINED}
expect:
  intent: DIAGNOSIS
  run_state: SUCCESS
  release_outcome: SUCCESS
  fallback_type: none
  db_status: SUCCESS
  tool_calls: 2
  published_result: true
""",
    "fallback.yaml": """\
name: starter-fallback
description: The agent cannot conclude without knowing the service; it asks for it, and the
  run releases a MISSING_REQUIRED_CONTEXT fallback instead of a report.
tags: [starter, fallback]
query: Why is it slow?
tools: {logs: {}}
model:
  - draft: {missing_info: [which service is slow]}
expect:
  run_state: SUCCESS
  release_outcome: FALLBACK
  fallback_type: MISSING_REQUIRED_CONTEXT
  db_status: SUCCESS
""",
}
"""The scaffolded scenario files (without their modeline), by file name."""

README = """\
# Scenarios

Each file scripts one run of the diagnosis harness on virtual time: what the router decides,
what the model and tools answer, and what the run must end in (`expect`).

| file | path |
|---|---|
| `system-chat.yaml` | SYSTEM_CHAT: one answer, no diagnosis |
| `knowledge.yaml` | KNOWLEDGE_QUERY: retrieval, then an answer |
| `diagnosis-report.yaml` | DIAGNOSIS: tools, guards, a published report |
| `fallback.yaml` | DIAGNOSIS ending in a MISSING_REQUIRED_CONTEXT fallback |

Try next, from the directory that holds the project's `.venv` (with the environment
activated, `harness-lab` alone will do):

    .venv/bin/harness-lab run {dir}                  # a row per scenario; exit 1 if one fails
    .venv/bin/harness-lab show {dir}/fallback.yaml   # its SSE events and trace, virtual times
    .venv/bin/harness-lab validate {dir}             # check files without running them
    .venv/bin/harness-lab explore {dir}/diagnosis-report.yaml   # every fault at every boundary
    .venv/bin/python -m pytest {dir}/*.yaml          # a pytest item per scenario

pytest collects the YAML files below a directory named `scenarios` by itself, and a file
named on its command line wherever it lies.

Then copy a file and change one thing: add
`faults: [{{kind: deadline, at: {{when: before, call: tool, n: 2}}}}]` to a copy of
`diagnosis-report.yaml` (with its own `name`) and see which expectations fail: the run times
out before its second tool call. The first line of each file points editors at
`scenario.schema.json` for completion and checking.
"""


def scaffold(directory: str | Path) -> list[Path]:
    """Write the starter files into ``directory`` (created if missing); return their paths.

    All or nothing: the files are written beside their places first and then linked into
    them, each refusing a name that exists (a dangling link included), so a failure part way
    (a name taken, a full disk) removes what was placed and leaves the directory as it was.
    Raise FileExistsError, writing nothing, when any of them exists already.
    """
    from harness_lab.scenarios.schema import schema_text

    root = Path(directory)
    contents = {name: MODELINE + text for name, text in SCENARIOS.items()}
    contents[SCHEMA_FILE] = schema_text()
    contents["README.md"] = README.format(dir=directory)
    existing = [root / name for name in contents if os.path.lexists(root / name)]
    if existing:
        raise FileExistsError(", ".join(map(str, existing)))
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".harness-lab-init-", dir=root) as staging:
        for name, text in contents.items():
            Path(staging, name).write_text(text, encoding="utf-8")
        placed: list[Path] = []
        try:
            for name in contents:
                os.link(Path(staging, name), root / name)  # refuses any existing name
                placed.append(root / name)
        except BaseException:
            for path in placed:
                path.unlink(missing_ok=True)
            raise
    return placed
