"""Tests of the scenario package, and the scenario text several of them start from."""

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
