"""Recorded adapters: the ports on OpenAI-compatible HTTP APIs, recorded and replayed.

* :class:`OpenAICompatibleClient` speaks ``/chat/completions`` (hosted or local servers).
* The adapters (:class:`OpenAIDiagnosisModel`, :class:`OpenAIRouter`,
  :class:`OpenAIResponder`, :class:`OpenAISemanticGuard`, :class:`OpenAIRepair`) implement
  the protocols of :mod:`harness_lab.ports` on top of it; :class:`HttpJsonTool` is a tool
  backed by an HTTP JSON API.
* :func:`cassette` records and strictly replays their HTTP traffic with vcrpy, scrubbing
  secrets; :func:`first_divergence` and :class:`CassetteMiss` say where a replay diverged;
  a cassette file that cannot be read is a :class:`CassetteError` naming file, line and
  interaction (:func:`check_cassette` checks one without replaying it).
* :func:`~harness_lab.recorded.recording.record_scenario` records a scenario's cassette,
  replacing the old one only with a sound recording.
* A local scripted OpenAI-compatible server to record against is
  :class:`~harness_lab.scripted.ReferenceServer`.

Recordings keep no timing: every reply has ``latency_s=None`` and the harness's latency
model decides each call's virtual latency. See ``docs/recording.md``.
"""

from harness_lab.recorded.adapters import (
    DIAGNOSIS_SYSTEM_PROMPT,
    GUARD_SYSTEM_PROMPT,
    KNOWLEDGE_SYSTEM_PROMPT,
    REPAIR_SYSTEM_PROMPT,
    ROUTER_SYSTEM_PROMPT,
    STOP_REQUIRED_NOTE,
    SYSTEM_CHAT_PROMPT,
    OpenAIDiagnosisModel,
    OpenAIRepair,
    OpenAIResponder,
    OpenAIRouter,
    OpenAISemanticGuard,
    ToolSpec,
    openai_providers,
)
from harness_lab.recorded.cassette import (
    CASSETTE_DIR,
    DEFAULT_MATCH_ON,
    RECORD_MODES,
    CassetteError,
    CassetteMiss,
    CassetteReport,
    RequestStep,
    UnplayedInteraction,
    UnplayedInteractions,
    UnplayedInteractionsWarning,
    cassette,
    cassette_path,
)
from harness_lab.recorded.cassette_file import check_cassette
from harness_lab.recorded.client import ChatCompletion, ChatToolCall, OpenAICompatibleClient
from harness_lab.recorded.divergence import Divergence, DivergenceReport, first_divergence
from harness_lab.recorded.tool import HttpJsonTool

__all__ = ["CASSETTE_DIR", "DEFAULT_MATCH_ON", "DIAGNOSIS_SYSTEM_PROMPT", "GUARD_SYSTEM_PROMPT",
           "KNOWLEDGE_SYSTEM_PROMPT", "RECORD_MODES", "REPAIR_SYSTEM_PROMPT",
           "ROUTER_SYSTEM_PROMPT", "STOP_REQUIRED_NOTE", "SYSTEM_CHAT_PROMPT", "CassetteError",
           "CassetteMiss", "CassetteReport", "ChatCompletion", "ChatToolCall", "Divergence",
           "DivergenceReport", "HttpJsonTool", "OpenAICompatibleClient", "OpenAIDiagnosisModel",
           "OpenAIRepair", "OpenAIResponder", "OpenAIRouter", "OpenAISemanticGuard", "RequestStep",
           "ToolSpec", "UnplayedInteraction", "UnplayedInteractions", "UnplayedInteractionsWarning",
           "cassette", "cassette_path", "check_cassette", "first_divergence", "openai_providers"]
