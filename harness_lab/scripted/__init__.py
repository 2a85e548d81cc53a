"""The scripted world: a scenario's components, the faults injected into them, and the
scripted providers served over HTTP for recording and conformance.

* :mod:`~harness_lab.scripted.build`: the scripted fakes, configuration and latency model a
  scenario's script describes; :mod:`~harness_lab.scripted.inject`: the fault plan that
  carries out its ``faults``; :mod:`~harness_lab.scripted.recorded`: components that answer
  from recorded (or live) OpenAI-compatible endpoints instead;

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

Names are imported on first use: building a scenario's components loads no HTTP server.
"""

from typing import TYPE_CHECKING

from harness_lab.lazy import on_first_use

if TYPE_CHECKING:
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

_EXPORTS = {name: f"harness_lab.scripted.{module}" for module, names in {
    "answer": ("Answer", "error_response"),
    "conversation": ("Conversation", "ScriptedCompletion", "ScriptedToolCall", "ToolRoute",
                     "completion", "json_completion", "tool_call_completion"),
    "scenario": ("ScriptedProviders", "ScriptError", "load_script"),
    "server": ("ProvidersServer", "ReceivedRequest", "ReferenceServer"),
}.items() for name in names}

__all__ = ["Answer", "Conversation", "ProvidersServer", "ReceivedRequest", "ReferenceServer",
           "ScriptError", "ScriptedCompletion", "ScriptedProviders", "ScriptedToolCall",
           "ToolRoute", "completion", "error_response", "json_completion", "load_script",
           "tool_call_completion"]

__getattr__, __dir__ = on_first_use(__name__, globals(), _EXPORTS)
