"""What a scripted provider answers a request: an :class:`Answer`, and the bodies inside one.

The paths are the ones the harness's adapters call (:mod:`harness_lab.recorded.adapters`,
:class:`~harness_lab.recorded.tool.HttpJsonTool`, the live HTTP retriever); the bodies are
OpenAI's shapes: a chat completion, an error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["CHAT_PATH", "RETRIEVER_PATH", "TOOL_PREFIX", "Answer", "chat_completion",
           "encode", "error_body", "error_response"]

CHAT_PATH = "/v1/chat/completions"
"""Where the OpenAI-compatible callers post (base URL ``.../v1``)."""
TOOL_PREFIX = "/tools/"
"""A tool named ``logs`` answers ``POST /tools/logs`` (what the live HTTP source posts to)."""
RETRIEVER_PATH = "/retriever"
"""The knowledge retriever: ``POST {"query": ...}`` answers ``{"passages": [...]}``."""


def encode(data: Any) -> bytes:
    """``data`` as compact, sorted JSON bytes."""
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode("utf-8")


@dataclass(frozen=True, slots=True)
class Answer:
    """One response: status, body (a JSON value, or bytes and text sent as they are: a
    malformed body), content type, the scripted latency the server sleeps before sending it,
    and ``pad_to``, a size the JSON body is padded up to (an oversize tool result really is
    that large)."""

    status: int = 500
    body: Mapping[str, Any] | bytes | str = b""
    content_type: str = "application/json"
    latency_s: float = 0.0
    pad_to: int = 0

    def payload(self) -> bytes:
        """The body as bytes; a JSON body padded with a ``padding`` field up to ``pad_to``."""
        if isinstance(self.body, bytes | str):
            return self.body.encode("utf-8") if isinstance(self.body, str) else self.body
        raw = encode(self.body)
        if len(raw) >= self.pad_to:
            return raw
        base = len(encode({**self.body, "padding": ""}))
        return encode({**self.body, "padding": "x" * max(0, self.pad_to - base)})


def error_body(message: str, type_: str = "server_error") -> dict[str, Any]:
    """An OpenAI-style error body."""
    return {"error": {"message": message, "type": type_}}


def error_response(status: int, message: str, *, type_: str = "server_error",
                   latency_s: float = 0.0) -> Answer:
    """An OpenAI-style error answer with ``status``."""
    return Answer(status, error_body(message, type_), latency_s=latency_s)


def chat_completion(content: str | None, tool_calls: Sequence[Mapping[str, Any]],
                    usage: tuple[int, int], *, completion_id: str, model: str,
                    finish_reason: str | None = None) -> dict[str, Any]:
    """A ``chat.completion`` body: one assistant message with ``content`` and ``tool_calls``
    (OpenAI's shape), and ``usage`` as (prompt, completion) tokens."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [dict(call) for call in tool_calls]
    finish = finish_reason or ("tool_calls" if tool_calls else "stop")
    return {"id": completion_id, "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                      "total_tokens": usage[0] + usage[1]}}
