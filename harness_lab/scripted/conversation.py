"""A scripted conversation: chat completions played in order, and fixed tool routes.

What :class:`~harness_lab.scripted.server.ReferenceServer` plays to exercise the real record
path without a provider: each chat completion request gets the next scripted completion
(content or tool calls, with usage) or scripted :class:`~harness_lab.scripted.answer.Answer`
(an error, a malformed body), and each tool path its fixed answer.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness_lab.scripted.answer import CHAT_PATH, Answer, chat_completion, error_response

__all__ = ["Conversation", "ScriptedCompletion", "ScriptedToolCall", "ToolRoute", "completion",
           "json_completion", "tool_call_completion"]


@dataclass(frozen=True, slots=True)
class ScriptedToolCall:
    """One function call in a scripted completion; ``id`` defaults to ``call_<n>_<i>``."""

    name: str
    arguments: Mapping[str, Any]
    id: str | None = None


@dataclass(frozen=True, slots=True)
class ScriptedCompletion:
    """One scripted chat completion: content and/or tool calls, with token usage."""

    content: str | None = None
    tool_calls: Sequence[ScriptedToolCall] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None

    def body(self, model: str, n: int) -> dict[str, Any]:
        """The completion as the JSON body of the ``n``-th answer (1-based)."""
        calls = [{"id": call.id or f"call_{n}_{i}", "type": "function",
                  "function": {"name": call.name,
                               "arguments": json.dumps(dict(call.arguments), sort_keys=True)}}
                 for i, call in enumerate(self.tool_calls)]
        return chat_completion(self.content, calls, (self.prompt_tokens, self.completion_tokens),
                               completion_id=f"chatcmpl-reference-{n}", model=model,
                               finish_reason=self.finish_reason)


ToolRoute = Mapping[str, Any] | Answer | Callable[[Any], Mapping[str, Any] | Answer]
"""What a tool path answers: a fixed JSON body, an answer, or ``fn(scope)``."""


def completion(content: str, *, usage: tuple[int, int] = (0, 0)) -> ScriptedCompletion:
    """A completion answering ``content``; ``usage`` is (prompt, completion) tokens."""
    return ScriptedCompletion(content, prompt_tokens=usage[0], completion_tokens=usage[1])


def json_completion(payload: Mapping[str, Any], *, usage: tuple[int, int] = (0, 0)
                    ) -> ScriptedCompletion:
    """A completion whose content is ``payload`` as JSON text."""
    return completion(json.dumps(payload, sort_keys=True), usage=usage)


def tool_call_completion(name: str, arguments: Mapping[str, Any] | None = None, *,
                         call_id: str | None = None,
                         content: str | Mapping[str, Any] | None = None,
                         usage: tuple[int, int] = (0, 0)) -> ScriptedCompletion:
    """A completion calling one tool; ``content`` (text or a JSON object) goes beside it."""
    text = json.dumps(content, sort_keys=True) if isinstance(content, Mapping) else content
    return ScriptedCompletion(text, (ScriptedToolCall(name, dict(arguments or {}), call_id),),
                              prompt_tokens=usage[0], completion_tokens=usage[1])


class Conversation:
    """``responses`` played in order on the chat path, ``tools`` (path -> route) beside them.

    Once the responses are used up, a chat request gets HTTP 500. Thread-safe.
    """

    def __init__(self, responses: Sequence[ScriptedCompletion | Answer],
                 tools: Mapping[str, ToolRoute] | None = None) -> None:
        self.responses = tuple(responses)
        self.tools = dict(tools or {})
        self.used = 0
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int:
        """Scripted completions not yet served."""
        return len(self.responses) - self.used

    def serves(self, path: str) -> bool:
        """Whether ``path`` is the chat path or one of the tool routes."""
        return path == CHAT_PATH or path in self.tools

    def answer(self, path: str, body: Mapping[str, Any]) -> Answer:
        """The next scripted completion, or the tool route's answer."""
        if path != CHAT_PATH:
            route = self.tools[path]
            answer = route(body) if callable(route) else route
            return answer if isinstance(answer, Answer) else Answer(200, answer)
        with self._lock:
            if self.used >= len(self.responses):
                return error_response(500, f"reference server: script exhausted after "
                                           f"{self.used} completion(s)")
            self.used += 1
            n, scripted = self.used, self.responses[self.used - 1]
        if isinstance(scripted, Answer):
            return scripted
        return Answer(200, scripted.body(str(body.get("model", "reference")), n))
