"""Scripted routers, responders, retrievers, semantic guards and evidence repairs.

One rule for every fake here: a single item (not a list or tuple) is the answer to every
call, forever; a list or tuple is consumed one item per call and ScriptExhausted follows the
last. An exception item is raised. ``latency_s`` and ``usage`` fill in replies that carry
none of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from harness_lab.errors import ProviderError
from harness_lab.fakes.model import EvidenceItem, FactItem, Script, Scripted, draft
from harness_lab.ports import (
    AnswerReply,
    AnswerRequest,
    GuardReply,
    GuardRequest,
    ModelReply,
    RepairRequest,
    RetrievalReply,
    RetrievalRequest,
    RouteReply,
    RouteRequest,
    TokenUsage,
)
from harness_lab.states import IntentType, SemanticVerdict

__all__ = [
    "AnswerStep",
    "DEFAULT_ANSWER",
    "DEFAULT_PASSAGES",
    "GuardStep",
    "RepairStep",
    "RetrievalStep",
    "RouteStep",
    "ScriptedRepair",
    "ScriptedResponder",
    "ScriptedRetriever",
    "ScriptedRouter",
    "ScriptedSemanticGuard",
    "repaired",
]

T = TypeVar("T")

DEFAULT_ANSWER = "A scripted answer."
"""What a ScriptedResponder answers when given no answers."""

DEFAULT_PASSAGES: tuple[str, ...] = ("A scripted knowledge passage.",)
"""What a ScriptedRetriever retrieves when given neither passages nor a script."""

RouteStep = IntentType | str | RouteReply | BaseException
"""One router step: an intent (or its name), a full reply, or an exception to raise."""

AnswerStep = str | AnswerReply | BaseException
"""One responder step: the answer text, a full reply, or an exception to raise."""

RetrievalStep = Sequence[str] | RetrievalReply | BaseException
"""One retriever script step: the passages, a full reply, or an exception to raise."""

GuardStep = SemanticVerdict | str | GuardReply | BaseException
"""One guard step: a verdict (or its name; UNAVAILABLE raises), a reply, or an exception."""

RepairStep = ModelReply | BaseException | Callable[[RepairRequest], ModelReply]
"""One repair step: a reply returned as is, an exception raised, or a callable."""


def _script(component: str, value: Any, coerce: Callable[[Any], T]) -> Script[T]:
    if isinstance(value, list | tuple):
        return Script(component, [coerce(v) for v in value])
    return Script(component, [coerce(value)], repeat=True)


def _intent(value: RouteStep) -> RouteStep:
    if isinstance(value, str):
        value = IntentType(value)
    return RouteReply(value) if isinstance(value, IntentType) else value


def _answer(value: AnswerStep) -> AnswerStep:
    return AnswerReply(value) if isinstance(value, str) else value


class ScriptedRouter(Scripted[RouteRequest, RouteStep]):
    """A Router answering scripted intents; one intent repeats, a sequence is consumed."""

    def __init__(self, intents: RouteStep | Sequence[RouteStep], *,
                 latency_s: float | None = None, usage: TokenUsage | None = None,
                 name: str = "ScriptedRouter") -> None:
        super().__init__(name, _script(name, intents, _intent), latency_s, usage)

    def route(self, request: RouteRequest) -> RouteReply:
        """Record ``request`` and return the next intent (or raise the next error)."""
        return self._play(request, RouteReply)


class ScriptedResponder(Scripted[AnswerRequest, AnswerStep]):
    """A Responder answering scripted texts; one text repeats, a sequence is consumed."""

    def __init__(self, answers: AnswerStep | Sequence[AnswerStep] = DEFAULT_ANSWER, *,
                 latency_s: float | None = None, usage: TokenUsage | None = None,
                 name: str = "ScriptedResponder") -> None:
        super().__init__(name, _script(name, answers, _answer), latency_s, usage)

    def answer(self, request: AnswerRequest) -> AnswerReply:
        """Record ``request`` and return the next answer (or raise the next error)."""
        return self._play(request, AnswerReply)


def _passages(value: RetrievalStep) -> RetrievalStep:
    if isinstance(value, RetrievalReply | BaseException):
        return value
    return RetrievalReply((value,) if isinstance(value, str) else tuple(value))


class ScriptedRetriever(Scripted[RetrievalRequest, RetrievalStep]):
    """A Retriever: ``passages`` answer every call; ``script`` is consumed one step per call.

    ``ScriptedRetriever(("a", "b"))`` retrieves ``("a", "b")`` forever;
    ``ScriptedRetriever(script=[("a",), provider_error()])`` retrieves ``("a",)`` once, then
    raises, then is exhausted. Give one of the two, not both.
    """

    def __init__(self, passages: Sequence[str] | str | None = None, *,
                 script: Sequence[RetrievalStep] | None = None, latency_s: float | None = None,
                 usage: TokenUsage | None = None, name: str = "ScriptedRetriever") -> None:
        if passages is not None and script is not None:
            raise ValueError(f"{name}: give passages or script, not both")
        steps: Script[RetrievalStep] = (
            Script(name, [_passages(s) for s in script]) if script is not None
            else Script(name, [_passages(DEFAULT_PASSAGES if passages is None else passages)],
                        repeat=True))
        super().__init__(name, steps, latency_s, usage)

    def retrieve(self, request: RetrievalRequest) -> RetrievalReply:
        """Record ``request`` and return the next passages (or raise the next error)."""
        return self._play(request, RetrievalReply)


def _verdict(value: GuardStep) -> GuardStep:
    if isinstance(value, str):
        return SemanticVerdict(value)
    return value


class ScriptedSemanticGuard(Scripted[GuardRequest, GuardStep]):
    """A SemanticGuard playing verdicts; one verdict repeats, a sequence is consumed.

    SUPPORTED and UNSUPPORTED become a GuardReply with ``rationale``; UNAVAILABLE raises
    ProviderError("semantic guard unavailable") with the guard's ``latency_s`` (0.0 if None).
    """

    def __init__(self, verdicts: GuardStep | Sequence[GuardStep] = SemanticVerdict.SUPPORTED, *,
                 rationale: str = "", latency_s: float | None = None,
                 usage: TokenUsage | None = None, name: str = "ScriptedSemanticGuard") -> None:
        super().__init__(name, _script(name, verdicts, _verdict), latency_s, usage)
        self.rationale = rationale

    def judge(self, request: GuardRequest) -> GuardReply:
        """Record ``request`` and return the next verdict (or raise the next error)."""
        step = self._next(request)
        if step is SemanticVerdict.UNAVAILABLE:
            raise ProviderError("semantic guard unavailable", latency_s=self.latency_s,
                                status=503)
        if isinstance(step, SemanticVerdict):
            step = GuardReply(step is SemanticVerdict.SUPPORTED, self.rationale)
        return self._play(request, GuardReply, step)


class ScriptedRepair(Scripted[RepairRequest, RepairStep]):
    """An EvidenceRepair playing ``steps`` in order, one per ``repair`` call."""

    def __init__(self, steps: Sequence[RepairStep], *, latency_s: float | None = None,
                 usage: TokenUsage | None = None, name: str = "ScriptedRepair") -> None:
        super().__init__(name, Script(name, steps), latency_s, usage)

    def repair(self, request: RepairRequest) -> ModelReply:
        """Record ``request`` and play the next step (ScriptExhausted after the last)."""
        return self._play(request, ModelReply)


def repaired(conclusion: str | None, evidence: Iterable[EvidenceItem] = (), *,
             findings: Iterable[FactItem] = (), missing_info: Iterable[str] = (),
             recommendations: Iterable[str] = (), latency_s: float | None = None,
             usage: TokenUsage | None = None) -> ModelReply:
    """A repair reply: the repaired draft as ``{"draft": {...}}`` (see :func:`draft`)."""
    return draft(conclusion, evidence=evidence, findings=findings, missing_info=missing_info,
                 recommendations=recommendations, latency_s=latency_s, usage=usage)
