"""The frozen value classes of the run core: pickled by constructor, and their written inits."""

from __future__ import annotations

import ast
import copyreg
import dataclasses
import importlib
import pickle
from pathlib import Path

import pytest

from harness_lab.frozen import reduce_by_fields
from harness_lab.native import compiled_module_names


def _written_inits() -> list[tuple[str, list[tuple[str, str | None]], list[tuple[str, str | None]],
                                   list[str], bool, bool]]:
    """Each ``init=False`` frozen dataclass of the package: its fields, its ``__init__``'s
    parameters (name and default, as source text), the fields that ``__init__`` sets, whether
    the class has a ``__post_init__`` and whether the ``__init__`` calls it."""
    import harness_lab

    found = []
    for path in sorted(Path(harness_lab.__file__).parent.rglob("*.py")):
        src = path.read_text()
        for node in ast.walk(ast.parse(src)):
            if not isinstance(node, ast.ClassDef):
                continue
            decorators = "".join(ast.get_source_segment(src, d) or "" for d in node.decorator_list)
            if "init=False" not in decorators or "frozen=True" not in decorators:
                continue
            fields = [(i.target.id, ast.get_source_segment(src, i.value) if i.value else None)
                      for i in node.body
                      if isinstance(i, ast.AnnAssign) and isinstance(i.target, ast.Name)]
            init = next(i for i in node.body
                        if isinstance(i, ast.FunctionDef) and i.name == "__init__")
            args = init.args.args[1:]
            defaults = [None] * (len(args) - len(init.args.defaults)) + [
                ast.get_source_segment(src, d) for d in init.args.defaults]
            params = [(a.arg, d) for a, d in zip(args, defaults, strict=True)]
            sets = [c.args[1].value for c in ast.walk(init)
                    if isinstance(c, ast.Call) and ast.unparse(c.func) == "object.__setattr__"
                    and isinstance(c.args[1], ast.Constant)]
            has_post = any(isinstance(i, ast.FunctionDef) and i.name == "__post_init__"
                           for i in node.body)
            calls_post = any(isinstance(c, ast.Call)
                             and ast.unparse(c.func) == "self.__post_init__"
                             for c in ast.walk(init))
            found.append((node.name, fields, params, sets, has_post, calls_post))
    return found


def test_the_written_inits_of_the_compiled_value_classes_take_and_set_exactly_their_fields(
        ) -> None:
    classes = _written_inits()
    assert {"TraceEvent", "SseEvent", "CanonicalInvocation"} <= {c[0] for c in classes}
    for name, fields, params, sets, has_post, calls_post in classes:
        # a field with a default factory is taken as None for "not given"
        wanted = [(f, "None" if d is not None and d.startswith("field(default_factory=") else d)
                  for f, d in fields]
        assert params == wanted, name
        assert sets == [f for f, _ in fields], name
        assert calls_post == has_post, name  # as dataclasses' own __init__ would


def test_a_written_init_runs_the_classs_post_init_checks() -> None:
    from harness_lab.diagnosis.agent import DiagnosisAgentExecution
    from harness_lab.diagnosis.progress import ProgressSnapshot
    from harness_lab.states import DiagnosisStopReason

    with pytest.raises(ValueError, match="xor"):
        DiagnosisAgentExecution(None, None, ProgressSnapshot())
    stopped = DiagnosisAgentExecution(None, DiagnosisStopReason.INFORMATION_SATURATED,
                                      ProgressSnapshot())
    assert stopped.draft is None


def test_a_compiled_or_written_init_builds_the_same_value_as_the_dataclass_would() -> None:
    from harness_lab.states import TraceEventStatus, TraceEventType, TracePhase
    from harness_lab.trace import TraceEvent

    event = TraceEvent("run-1", 3, 1.5, TraceEventType.RUN_STARTED, TracePhase.RUN,
                       TraceEventStatus.OK, {"a": 1})
    assert dataclasses.astuple(event) == ("run-1", 3, 1.5, TraceEventType.RUN_STARTED,
                                          TracePhase.RUN, TraceEventStatus.OK, {"a": 1})
    assert dataclasses.replace(event, seq=4).seq == 4
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.seq = 5  # type: ignore[misc]


def test_a_written_init_makes_a_fresh_default_for_a_field_with_a_default_factory() -> None:
    from harness_lab.ports import ToolOutput

    first, second = ToolOutput(()), ToolOutput(())
    assert first.meta == {} and second.meta == {}
    assert first.meta is not second.meta
    assert ToolOutput((), meta={"http_status": 200}).meta == {"http_status": 200}
    assert ToolOutput((), meta=None).meta == {}  # in either core


def test_a_played_run_record_pickles_and_deep_copies_to_an_equal_record() -> None:
    import copy

    import yaml

    from harness_lab.sweep.sample import GridPoint

    canonical = Path(__file__).resolve().parents[1] / "benchmarks" / "canonical.yaml"
    record = GridPoint(yaml.safe_load(canonical.read_text()), 0, 1).record(0)
    assert record.trace and record.invocations and record.sse_events
    assert pickle.loads(pickle.dumps(record)) == record
    assert copy.deepcopy(record) == record


def test_every_frozen_dataclass_of_the_run_core_is_pickled_by_its_constructor() -> None:
    frozen = [cls for name in compiled_module_names()
              for cls in vars(importlib.import_module(name)).values()
              if isinstance(cls, type) and cls.__module__ == name
              and dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen]
    assert len(frozen) > 30
    unregistered = [c.__qualname__ for c in frozen
                    if copyreg.dispatch_table.get(c) is not reduce_by_fields]
    assert unregistered == []


def test_a_session_context_pickles_and_deep_copies_to_an_equal_value() -> None:
    import copy

    from harness_lab.ports import PreviousTurn, Turn
    from harness_lab.states import IntentType
    from harness_lab.store.base import SessionContext

    context = SessionContext((Turn("run-1", "hi", IntentType.SYSTEM_CHAT, "hello"),),
                             PreviousTurn("run-0", "why?", "disk full", {"conclusion": "x"}))
    assert pickle.loads(pickle.dumps(context)) == context
    assert copy.deepcopy(context) == context


def test_a_live_run_starts_with_every_field_at_its_declared_default() -> None:
    from harness_lab.application.live import LiveRun
    from harness_lab.sse import ChatSseSession

    sse = ChatSseSession(lambda: 0.0)
    first, second = LiveRun("run-1", "s-1", "why?", sse), LiveRun("run-2", "s-1", "why?", sse)
    declared = {f.name: (f.default_factory() if f.default_factory is not dataclasses.MISSING
                         else f.default)
                for f in dataclasses.fields(LiveRun) if f.name not in ("run_id", "session_id",
                                                                       "query", "sse")}
    assert {name: getattr(first, name) for name in declared} == declared
    assert (first.run_id, first.session_id, first.query, first.sse) == ("run-1", "s-1", "why?", sse)
    assert first.statuses is not second.statuses and first.extra is not second.extra
