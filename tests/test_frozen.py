"""quick_init keeps a frozen dataclass's construction behaviour and its immutability."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import pickle
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from harness_lab.frozen import quick_init


@quick_init
@dataclass(frozen=True, slots=True)
class Point:
    x: int
    y: int = 2
    tags: list[str] = field(default_factory=list)
    label: str = field(default="p", kw_only=True)


@quick_init
@dataclass(frozen=True)
class Checked:
    value: int
    doubled: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        if self.value < 0:
            raise ValueError("negative")
        object.__setattr__(self, "doubled", 2 * self.value)


def test_fields_are_set_from_positional_and_keyword_arguments() -> None:
    p = Point(1, 5, ["a"], label="q")
    assert (p.x, p.y, p.tags, p.label) == (1, 5, ["a"], "q")


def test_defaults_fill_missing_arguments() -> None:
    p = Point(7)
    assert (p.y, p.tags, p.label) == (2, [], "p")


def test_each_instance_gets_its_own_default_factory_value() -> None:
    a, b = Point(1), Point(2)
    a.tags.append("only a")
    assert b.tags == []


def test_a_keyword_only_field_refuses_a_positional_argument() -> None:
    with pytest.raises(TypeError):
        Point(1, 2, [], "q")  # type: ignore[misc]


def test_a_missing_required_argument_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]


def test_assigning_a_field_still_raises() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Point(1).x = 3  # type: ignore[misc]


def test_post_init_runs_and_may_refuse() -> None:
    assert Checked(4).doubled == 8
    with pytest.raises(ValueError, match="negative"):
        Checked(-1)


def test_equality_hash_replace_and_pickle_behave_as_before() -> None:
    p = Point(1, 2, label="z")
    assert p == Point(1, 2, [], label="z")
    assert hash(Checked(3)) == hash(Checked(3))
    assert dataclasses.replace(p, y=9) == Point(1, 9, [], label="z")
    assert pickle.loads(pickle.dumps(p)) == p


def test_the_signature_names_the_fields() -> None:
    params = inspect.signature(Point).parameters
    assert list(params) == ["x", "y", "tags", "label"]
    assert params["label"].kind is inspect.Parameter.KEYWORD_ONLY


def test_a_class_that_is_not_a_frozen_dataclass_is_refused() -> None:
    @dataclass
    class Mutable:
        x: int

    with pytest.raises(TypeError, match="not a frozen dataclass"):
        quick_init(Mutable)


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
    assert not stopped.completed


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
