"""Scripted and callback diagnosis models, the builders of their replies, and script plumbing.

Every payload a builder returns is JSON-shaped, exactly what ``json.loads`` would give for the
same reply: objects are dicts, arrays are lists, enums are their string values.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from harness_lab.codec import data
from harness_lab.errors import ProviderError, ScriptExhausted
from harness_lab.fakes.values import check_reply, check_seconds, check_usage
from harness_lab.ports import (
    AgentRequest,
    AnswerReply,
    GuardReply,
    ModelReply,
    RetrievalReply,
    RouteReply,
    TokenUsage,
    ToolCallRequest,
)
from harness_lab.states import InformationGain

__all__ = ["INVOCATION_REF", "CallbackModel", "EvidenceItem", "FactItem", "Script",
           "ScriptedModel", "Step", "call_tool", "cites_relative", "draft", "empty_reply",
           "expand_ids", "fresh_error", "invalid_json", "play_step", "progress",
           "provider_error", "report", "schema_invalid_draft", "with_defaults"]

T = TypeVar("T")
Q = TypeVar("Q")
S = TypeVar("S")
R = TypeVar("R", ModelReply, RouteReply, AnswerReply, RetrievalReply, GuardReply)

Step = ModelReply | BaseException | Callable[[AgentRequest], ModelReply]
"""One scripted model step: a reply returned as is, an exception raised, or a callable."""

EvidenceItem = tuple[str, str] | Mapping[str, Any]
"""A draft evidence reference: ``(invocation_id, claim)`` or a dict with those keys."""

FactItem = tuple[str, Sequence[str] | str] | Mapping[str, Any]
"""A verified fact: ``(statement, [invocation ids])`` or a dict with statement and citations."""

_NO_USAGE = TokenUsage()


class Script(Generic[T]):
    """Steps handed out one per call, in order; with ``repeat`` its single step, forever.

    ``take`` raises :class:`ScriptExhausted` naming ``component`` and the 1-based call number
    once every step has been used.
    """

    __test__ = False

    def __init__(self, component: str, steps: Iterable[T], *, repeat: bool = False) -> None:
        self.component = component
        self.steps: tuple[T, ...] = tuple(check_reply(component, step) for step in steps)
        self.repeat = repeat
        self.used = 0
        if repeat and len(self.steps) != 1:
            raise ValueError(f"{component}: a repeating script holds exactly one step")

    @property
    def remaining(self) -> int | None:
        """Steps not yet handed out; ``None`` for a repeating script."""
        return None if self.repeat else len(self.steps) - self.used

    @property
    def exhausted(self) -> bool:
        """True once a non-repeating script has handed out every step."""
        return self.remaining == 0

    def rewind(self) -> None:
        """Hand out the steps again from the first."""
        self.used = 0

    def take(self, call: int) -> T:
        """The next step for the ``call``-th call (1-based) of the fake that owns the script."""
        if self.repeat:
            return self.steps[0]
        if self.used >= len(self.steps):
            raise ScriptExhausted(self.component, call, len(self.steps))
        self.used += 1
        return self.steps[self.used - 1]


def with_defaults(reply: R, latency_s: float | None, usage: TokenUsage | None) -> R:
    """``reply`` with ``latency_s`` / ``usage`` filled in where it carries none of its own.

    A reply carries no latency when its ``latency_s`` is None and no usage when its usage is
    ``TokenUsage(0, 0)``; a ``None`` default leaves the reply's field as it is.
    """
    changes: dict[str, Any] = {}
    if latency_s is not None and reply.latency_s is None:
        changes["latency_s"] = latency_s
    if usage is not None and reply.usage == _NO_USAGE:
        changes["usage"] = usage
    return dataclasses.replace(reply, **changes) if changes else reply


def fresh_error(error: BaseException) -> BaseException:
    """A new exception like the scripted ``error``, for one call to raise.

    Raising the script's own instance on every call would chain each call's traceback onto
    the last (a script that repeats one error grows it without end) and keep the frames of
    every earlier run alive through it. The copy has the type, message and attributes of
    ``error``; an exception that cannot be copied is raised itself, its traceback cleared.
    """
    try:
        clone = copy.copy(error)
    except Exception:
        return error.with_traceback(None)
    if type(clone) is not type(error) or clone.args != error.args:
        return error.with_traceback(None)
    return clone


def play_step(step: object, request: Any, reply_type: type[R]) -> R:
    """Perform one scripted step: raise an exception, return a reply, or call a callable."""
    if isinstance(step, BaseException):
        raise fresh_error(step)
    if isinstance(step, reply_type):
        return step
    if callable(step):
        result = step(request)
        if isinstance(result, reply_type):
            return result
        raise TypeError(f"a scripted step returned {type(result).__name__}, "
                        f"not {reply_type.__name__}")
    raise TypeError(f"not a scripted step: {step!r}")


INVOCATION_REF = re.compile(r"^inv-(\d+)$")
"""A run-relative invocation id, as scripts write them: ``inv-2`` is the run's second."""


def expand_ids(value: Any, run_id: str) -> Any:
    """Replace ``inv-N`` strings (anywhere in JSON data) with ``<run_id>-inv-N``."""
    if isinstance(value, str):
        m = INVOCATION_REF.match(value)
        return f"{run_id}-inv-{m.group(1)}" if m else value
    if isinstance(value, list):
        return [expand_ids(v, run_id) for v in value]
    if isinstance(value, dict):
        return {k: expand_ids(v, run_id) for k, v in value.items()}
    return value


def cites_relative(value: Any) -> bool:
    """True when ``inv-N`` strings stand anywhere in JSON data (``expand_ids`` would change it)."""
    if isinstance(value, str):
        return INVOCATION_REF.match(value) is not None
    if isinstance(value, list):
        return any(cites_relative(v) for v in value)
    if isinstance(value, dict):
        return any(cites_relative(v) for v in value.values())
    return False


class Scripted(Generic[Q, S]):
    """Shared state of the scripted fakes: name, defaults, script and recorded requests.

    A fake plays its script from the top for each run, as a test model of pydantic-ai does:
    a request of another run than the one before (its ``run_id``) rewinds it, so a
    ``Harness`` built once can run again; ``across_runs=True`` plays one script through
    successive runs instead (a conversation scripted turn after turn). Within a run, a script
    that runs out fails loudly.
    """

    __test__ = False

    def __init__(self, name: str, script: Script[S], latency_s: float | None = None,
                 usage: TokenUsage | None = None, *, across_runs: bool = False) -> None:
        self.name = name
        self.across_runs = across_runs
        self.script = script
        self.latency_s = check_seconds(name, "latency_s", latency_s)
        self.usage = check_usage(name, "usage", usage)
        self.requests: list[Q] = []
        self._run: str | None = None

    @property
    def remaining(self) -> int | None:
        """Steps not yet played; ``None`` when a single step repeats."""
        return self.script.remaining

    def rewind(self) -> None:
        """Play again from the first step, with no request recorded (a fresh run's fake)."""
        self.requests = []
        self.script.rewind()

    def _next(self, request: Q) -> S:
        run = getattr(request, "run_id", None)
        if run and not self.across_runs:  # a request without its run id continues the run
            if self._run is not None and run != self._run:
                self.rewind()
            self._run = run
        self.requests.append(request)
        return self.script.take(len(self.requests))

    def _play(self, request: Q, reply_type: type[R], step: object = None) -> R:
        """Record ``request`` and play ``step`` (by default the script's next) as a
        ``reply_type``, filled in with this fake's default latency and usage."""
        played = play_step(self._next(request) if step is None else step, request, reply_type)
        return with_defaults(played, self.latency_s, self.usage)


class ScriptedModel(Scripted[AgentRequest, Step]):
    """A DiagnosisModel that plays ``steps`` in order, one per ``step`` call.

    ``latency_s`` and ``usage`` fill in replies that carry none of their own.
    """

    def __init__(self, steps: Sequence[Step], *, name: str = "ScriptedModel",
                 latency_s: float | None = None, usage: TokenUsage | None = None,
                 across_runs: bool = False) -> None:
        super().__init__(name, Script(name, steps), latency_s, usage, across_runs=across_runs)

    def step(self, request: AgentRequest) -> ModelReply:
        """Record ``request`` and play the next step (ScriptExhausted after the last); the
        run-relative ids a step cites (``inv-1``) become the run's own (``run-000002-inv-1``)."""
        reply = self._play(request, ModelReply)
        if reply.payload is None or not cites_relative(reply.payload):
            return reply
        return dataclasses.replace(reply, payload=expand_ids(reply.payload, request.run_id))


class CallbackModel:
    """A DiagnosisModel whose every step is ``fn(request)``."""

    __test__ = False

    def __init__(self, fn: Callable[[AgentRequest], ModelReply], *, name: str = "CallbackModel",
                 latency_s: float | None = None, usage: TokenUsage | None = None) -> None:
        self.fn = fn
        self.name = name
        self.latency_s = check_seconds(name, "latency_s", latency_s)
        self.usage = check_usage(name, "usage", usage)
        self.requests: list[AgentRequest] = []

    def step(self, request: AgentRequest) -> ModelReply:
        """Record ``request`` and return what ``fn`` returns for it."""
        self.requests.append(request)
        return with_defaults(play_step(self.fn, request, ModelReply), self.latency_s, self.usage)


def _ids(citations: Sequence[str] | str) -> list[str]:
    return [citations] if isinstance(citations, str) else list(citations)


def _evidence_ref(item: EvidenceItem) -> dict[str, Any]:
    if isinstance(item, Mapping):
        return dict(item)
    invocation_id, claim = item
    return {"invocation_id": invocation_id, "claim": claim}


def _fact(item: FactItem) -> dict[str, Any]:
    if isinstance(item, Mapping):
        return dict(item)
    statement, citations = item
    return {"statement": statement, "citations": _ids(citations)}


def _reply(payload: Mapping[str, Any] | None, latency_s: float | None,
           usage: TokenUsage | None, **fields: Any) -> ModelReply:
    check_seconds("model reply", "latency_s", latency_s)
    check_usage("model reply", "usage", usage)
    return ModelReply(payload=None if payload is None else data(payload),
                      usage=usage or _NO_USAGE, latency_s=latency_s, **fields)


def progress(assessment: InformationGain | str | None = None, facts: Iterable[FactItem] = (),
             missing_info: Iterable[str] = (), next: str | None = None) -> dict[str, Any]:
    """A progress report as JSON data; only the fields given appear in it.

    ``assessment`` must name an InformationGain (``"GAINED"`` or ``"NO_GAIN"``).
    """
    body: dict[str, Any] = {}
    if assessment is not None:
        body["assessment"] = InformationGain(assessment).value
    fact_list = [_fact(f) for f in facts]
    if fact_list:
        body["facts"] = fact_list
    missing = list(missing_info)
    if missing:
        body["missing_info"] = missing
    if next is not None:
        body["next"] = next
    report_body: dict[str, Any] = data(body)
    return report_body


def call_tool(name: str, scope: Mapping[str, Any] | None = None, *, call_id: str | None = None,
              progress: Mapping[str, Any] | None = None, latency_s: float | None = None,
              usage: TokenUsage | None = None) -> ModelReply:
    """A reply requesting one tool, with an optional progress report beside it."""
    payload = None if progress is None else {"progress": progress}
    return _reply(payload, latency_s, usage,
                  tool_call=ToolCallRequest(name, dict(scope or {}), call_id))


def report(progress: Mapping[str, Any], *, latency_s: float | None = None,
           usage: TokenUsage | None = None) -> ModelReply:
    """A reply carrying only a progress report: no draft and no tool request."""
    return _reply({"progress": progress}, latency_s, usage)


def draft(conclusion: str | None = None, *, evidence: Iterable[EvidenceItem] = (),
          findings: Iterable[FactItem] = (), missing_info: Iterable[str] = (),
          recommendations: Iterable[str] = (), progress: Mapping[str, Any] | None = None,
          latency_s: float | None = None, usage: TokenUsage | None = None) -> ModelReply:
    """A reply carrying a DiagnosisDraft; only the fields given appear in the draft.

    ``draft()`` with no argument is the empty draft ``{"draft": {}}``.
    """
    body: dict[str, Any] = {}
    if conclusion is not None:
        body["conclusion"] = conclusion
    for key, values in (("evidence", [_evidence_ref(e) for e in evidence]),
                        ("findings", [_fact(f) for f in findings]),
                        ("missing_info", list(missing_info)),
                        ("recommendations", list(recommendations))):
        if values:
            body[key] = values
    payload: dict[str, Any] = {"draft": body}
    if progress is not None:
        payload["progress"] = progress
    return _reply(payload, latency_s, usage)


def invalid_json(text: str = "{not json", *, latency_s: float | None = None,
                 usage: TokenUsage | None = None) -> ModelReply:
    """A reply whose content is not valid JSON (and which has no payload)."""
    return _reply(None, latency_s, usage, content=text)


def schema_invalid_draft(payload: Mapping[str, Any] | None = None, *,
                         latency_s: float | None = None,
                         usage: TokenUsage | None = None) -> ModelReply:
    """A reply whose payload is JSON the strict draft schema refuses.

    The payload is ``payload`` when given, else ``{"draft": {"conclusion": 42}}``.
    """
    return _reply({"draft": {"conclusion": 42}} if payload is None else payload, latency_s, usage)


def empty_reply(*, latency_s: float | None = None, usage: TokenUsage | None = None) -> ModelReply:
    """A reply with nothing in it: no content, no payload and no tool request."""
    return _reply(None, latency_s, usage)


def provider_error(message: str = "provider unavailable", *, latency_s: float = 0.0,
                   status: int | None = 503) -> ProviderError:
    """A ProviderError to put in a script: the step raises it."""
    check_seconds("provider_error", "latency_s", latency_s)
    return ProviderError(message, latency_s=latency_s, status=status)
