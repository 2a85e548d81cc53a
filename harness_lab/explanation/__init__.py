"""explain(): the answers to doc §15's troubleshooting questions for one run.

``explain(record)`` (or a scenario result, or a log entry) returns an :class:`Explanation`:
one answer per question, each two or three sentences citing the state axes and the trace
events (type, virtual time, status) it was read from. It prints as text, shows as HTML in
Jupyter and converts to data for JSON. A run whose times contradict each other (a clock bug,
a tampered copy) is explained all the same, its note saying what contradicts what, as the
``times_consistent`` invariant finds it.
"""

from __future__ import annotations

import html
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness_lab.explanation.answers import QUESTIONS
from harness_lab.invariants import TIMES, time_contradictions
from harness_lab.terminal.console import printable

if TYPE_CHECKING:
    from harness_lab.logs.reader import LogEntry
    from harness_lab.record import RunRecord
    from harness_lab.runner.run import ScenarioResult

__all__ = ["QUESTIONS", "Answer", "Explanation", "explain"]


@dataclass(frozen=True, slots=True)
class Answer:
    """One question of doc §15 and its answer for one run."""

    key: str
    question: str
    text: str


@dataclass(frozen=True, slots=True)
class Explanation:
    """The answers for one run (``answers`` empty when there is no record to read)."""

    run_id: str | None
    scenario: str | None
    answers: tuple[Answer, ...]
    note: str | None = None

    def __getitem__(self, key: str) -> str:
        """The answer text of one question, by key (``outcome``, ``sse_done``...)."""
        for a in self.answers:
            if a.key == key:
                return a.text
        raise KeyError(f"no answer {key!r}; the keys are {', '.join(QUESTIONS)}")

    def title(self) -> str:
        """``scenario (run id)`` or what is known of it."""
        parts = [p for p in (self.scenario, self.run_id and f"run {self.run_id}") if p]
        return " / ".join(parts) or "run"

    def text(self, width: int = 100) -> str:
        """The answers as plain text wrapped to ``width`` columns."""
        lines = [f"== {printable(self.title())}"]
        if self.note:
            lines += textwrap.wrap(printable(self.note), width)
        for a in self.answers:
            lines.append(a.question)
            lines += textwrap.wrap(printable(a.text), width, initial_indent="  ",
                                   subsequent_indent="  ")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def to_dict(self) -> dict[str, Any]:
        """The explanation as JSON data."""
        return {"scenario": self.scenario, "run_id": self.run_id, "note": self.note,
                "answers": [{"key": a.key, "question": a.question, "answer": a.text}
                            for a in self.answers]}

    def answers_html(self) -> str:
        """The questions and answers as an HTML definition list (the report's drill-down)."""
        items = "".join(f"<dt><b>{html.escape(a.question)}</b></dt>"
                        f"<dd>{html.escape(a.text)}</dd>" for a in self.answers)
        note = f"<p>{html.escape(self.note)}</p>" if self.note else ""
        return f'{note}<dl class="hl-explain">{items}</dl>'

    def _repr_html_(self) -> str:
        return f"<div><h4>{html.escape(self.title())}</h4>{self.answers_html()}</div>"


def explain(target: RunRecord | ScenarioResult | LogEntry,
            questions: tuple[str, ...] | None = None) -> Explanation:
    """Answer doc §15's questions (all, or the ``questions`` keys, in order) for a run.
    TypeError for anything else (a path: ``read_log(path)`` or ``run_paths([path])`` first)."""
    from harness_lab.record import RunRecord
    from harness_lab.runner.run import ScenarioResult

    if not isinstance(target, RunRecord | ScenarioResult) and not hasattr(target, "result"):
        raise TypeError(f"explain takes a RunRecord, a ScenarioResult or a log entry, not "
                        f"{type(target).__name__}; read_log(path) or run_paths([path]) gives "
                        "them from a file")

    keys = tuple(QUESTIONS) if questions is None else questions
    unknown = [k for k in keys if k not in QUESTIONS]
    if unknown:
        raise KeyError(f"unknown question(s) {', '.join(unknown)}; the keys are "
                       f"{', '.join(QUESTIONS)}")
    result = getattr(target, "result", target)
    record = target if isinstance(target, RunRecord) else getattr(result, "record", None)
    scenario = None if isinstance(target, RunRecord) else getattr(result, "scenario", None)
    if record is None:
        crash = dict(getattr(result, "extra", None) or {}).get("crash")
        why = getattr(result, "error", None) or (
            f"the run crashed ({crash})" if getattr(result, "crashed", False) else "no record")
        return Explanation(None, scenario, (), note=f"No run record to explain: {why}.")
    answers = tuple(Answer(k, QUESTIONS[k][0], QUESTIONS[k][1](record)) for k in keys)
    return Explanation(record.run_id, scenario, answers, note=_times_note(record))


def _times_note(record: RunRecord) -> str | None:
    """What contradicts what among the run's times, which the answers quote as stored; None
    when they agree."""
    found = time_contradictions(record)
    if not found:
        return None
    return (f"The run's times contradict each other ({TIMES}): {'; '.join(found)}. The times "
            "below are quoted as stored.")
