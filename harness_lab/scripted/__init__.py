"""Scripted providers over HTTP: one local server for recording and for conformance.

* :class:`ProvidersServer` (:mod:`~harness_lab.scripted.server`) answers the paths the
  harness's adapters call from a script, sleeps each answer's scripted latency, refuses
  malformed requests with OpenAI-style errors, and has control paths to load a scenario and
  to hold a call at a lifecycle point;
* its scripts: a scenario's providers (:class:`ScriptedProviders`,
  :mod:`~harness_lab.scripted.scenario`), served by ``harness-lab conform`` and
  ``harness-lab providers FILE``; a scripted conversation (:class:`Conversation`,
  :mod:`~harness_lab.scripted.conversation`), served by :class:`ReferenceServer` as a hosted
  provider would, for ``harness-lab record --reference FILE`` and the recording tests;
* :mod:`~harness_lab.scripted.answer`: what a scripted provider answers.
"""

from harness_lab.scripted.answer import Answer, error_response
from harness_lab.scripted.conversation import (
    Conversation,
    ScriptedCompletion,
    ScriptedToolCall,
    ToolRoute,
    completion,
    json_completion,
    tool_call_completion,
)
from harness_lab.scripted.scenario import ScriptedProviders, ScriptError, load_script
from harness_lab.scripted.server import ProvidersServer, ReceivedRequest, ReferenceServer

__all__ = [
    "Answer",
    "Conversation",
    "ProvidersServer",
    "ReceivedRequest",
    "ReferenceServer",
    "ScriptError",
    "ScriptedCompletion",
    "ScriptedProviders",
    "ScriptedToolCall",
    "ToolRoute",
    "completion",
    "error_response",
    "json_completion",
    "load_script",
    "tool_call_completion",
]
