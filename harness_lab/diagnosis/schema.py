"""The DiagnosisDraft and progress-report schemas (SPEC §5.5), validated strictly.

The lifecycle document names these contracts but not their fields, so the toolkit defines
them here (and in ``docs/protocol.md``). An agent reply is one JSON object with up to two
keys: ``progress`` (a :class:`ProgressReport`) and ``draft`` (a :class:`DiagnosisDraft`); a
reply may instead carry one tool request, optionally with a ``progress`` report beside it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field, StrictStr, StringConstraints, ValidationError

from harness_lab.states import InformationGain

__all__ = ["AgentEnvelope", "DiagnosisDraft", "EvidenceRef", "Fact", "ProgressReport",
           "decode_output", "parse_json_object", "refusal", "validator_of"]

NonEmpty = Annotated[StrictStr, StringConstraints(min_length=1, strip_whitespace=True)]
# Unknown keys are refused and every string must be a JSON string (no number for a string);
# arrays validate into tuples and enum fields take their JSON string values, exactly as JSON
# data decoded from a real provider's reply would.
_STRICT = ConfigDict(extra="forbid", frozen=True)


class Fact(BaseModel):
    """A statement the agent verified, citing the invocation ids that support it."""

    model_config = _STRICT
    statement: NonEmpty
    citations: Annotated[tuple[NonEmpty, ...], Field(min_length=1)]


class ProgressReport(BaseModel):
    """The per-step progress protocol: the agent's view after each tool observation.

    ``assessment`` judges the last observation whose gain the agent must decide (a non-empty,
    non-duplicate READY result); the harness decides NO_GAIN itself for NO_EVIDENCE and for
    duplicates. ``facts`` may only cite READY invocations of this run.
    """

    model_config = _STRICT
    assessment: InformationGain | None = None
    facts: tuple[Fact, ...] = ()
    missing_info: tuple[NonEmpty, ...] = ()
    next: str | None = None


class EvidenceRef(BaseModel):
    """One piece of evidence a conclusion rests on."""

    model_config = _STRICT
    invocation_id: NonEmpty
    claim: NonEmpty


class DiagnosisDraft(BaseModel):
    """The agent's final answer.

    With a ``conclusion`` it must pass EvidenceGuard, EvidenceRepair and SemanticGuard; without
    one, verified ``findings`` make an INSUFFICIENT_EVIDENCE fallback and ``missing_info`` a
    MISSING_REQUIRED_CONTEXT one. A draft with none of conclusion, evidence, findings or
    missing_info is empty (an exception, doc §6).
    """

    model_config = _STRICT
    conclusion: NonEmpty | None = None
    evidence: tuple[EvidenceRef, ...] = ()
    findings: tuple[Fact, ...] = ()
    missing_info: tuple[NonEmpty, ...] = ()
    recommendations: tuple[NonEmpty, ...] = ()

    @property
    def is_empty(self) -> bool:
        """True when the draft says nothing at all."""
        return not (self.conclusion or self.evidence or self.findings or self.missing_info)

    def public(self) -> dict[str, Any]:
        """The draft as JSON-ready data: ``model_dump(mode="json")``, read field by field."""
        from harness_lab.diagnosis.data import draft_data  # data imports this module

        return draft_data(self)


class AgentEnvelope(BaseModel):
    """The outer JSON object of one agent reply (used for the JSON Schema export)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    progress: ProgressReport | None = None
    draft: DiagnosisDraft | None = None


M = TypeVar("M", bound=BaseModel)


def parse_json_object(model: type[M], raw: Any) -> M:
    """Validate ``raw`` (already-decoded JSON data) with JSON's own typing rules.

    Arrays become tuples and enum fields take their string values; strings must be strings
    (a number is refused), unknown keys are refused. A payload decoded by a fake and the same
    text sent by a real provider are judged alike.
    """
    return model.model_validate(raw)


def refusal(exc: ValidationError, root: str) -> str:
    """Where and why a schema refused a value: each problem as ``at PATH: MESSAGE``, in the
    order the schema found them, joined by ``; ``. A problem with the value as a whole (an
    empty path) is at ``root``."""
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or root
        problems.append(f"at {where}: {error['msg']}")
    return "; ".join(problems)


def validator_of(model: type[M]) -> Callable[[Any], M]:
    """:func:`parse_json_object` for ``model``, bound once: the model's own core validator.

    The run core validates a progress report at every model step; calling the validator
    itself skips two Python frames a call (this function and ``model_validate``).
    """
    return cast("Callable[[Any], M]", model.__pydantic_validator__.validate_python)


def decode_output(text: str) -> Any:
    """The JSON value of a model's text output; ValueError saying why it has none. Text that
    is JSON but that no parser takes whole (nested past the parser's recursion limit, an
    integer of thousands of digits) has none either: the draft contract treats it as output
    that is not JSON, as a harness whose parser refuses it would, never as a failure of the
    harness itself."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(exc.msg) from None
    except RecursionError:
        raise ValueError("nested too deeply to decode") from None
    except ValueError:  # CPython's limit on the digits of an integer it converts
        raise ValueError("a number too long to decode") from None
