"""first_divergence: the first differing field path between a recorded and a live body."""

from __future__ import annotations

import json

from harness_lab.recorded import first_divergence
from harness_lab.recorded.divergence import (
    BODY,
    DivergenceReport,
    body_digest,
    count_differences,
)

RECORDED = {"model": "m", "messages": [{"role": "system", "content": "s"},
                                       {"role": "user", "content": "why?"},
                                       {"role": "user", "content": '{"query": "a", "n": 1}'}],
            "tools": [{"function": {"name": "logs", "parameters": {"type": "object"}}}]}


def changed(**edits: object) -> dict[str, object]:
    body = json.loads(json.dumps(RECORDED))
    for path, value in edits.items():
        exec(f"body{path} = value", {"body": body, "value": value})  # noqa: S102
    return body


def test_equal_bodies_have_no_divergence_whatever_their_key_order() -> None:
    reordered = json.dumps(dict(reversed(list(RECORDED.items()))))
    assert first_divergence(json.dumps(RECORDED).encode(), reordered) is None
    assert first_divergence(RECORDED, RECORDED) is None


def test_a_changed_message_names_its_path() -> None:
    d = first_divergence(RECORDED, changed(**{"['messages'][1]['content']": "how?"}))
    assert d is not None and (d.path, d.kind) == ("messages[1].content", "value")
    assert (d.recorded, d.actual) == ("why?", "how?")
    assert d.describe() == 'messages[1].content: recorded "why?" != this request "how?"'


def test_nested_tool_parameters_are_named() -> None:
    d = first_divergence(RECORDED, changed(**{"['tools'][0]['function']['parameters']":
                                              {"type": "array"}}))
    assert d is not None and d.path == "tools[0].function.parameters.type"


def test_json_inside_a_string_is_walked_into() -> None:
    d = first_divergence(RECORDED, changed(**{"['messages'][2]['content']":
                                              '{"query": "b", "n": 1}'}))
    assert d is not None and d.path == "messages[2].content(json).query"


def test_missing_extra_and_type_differences() -> None:
    shorter = changed()
    shorter["messages"].pop()  # type: ignore[attr-defined]
    d = first_divergence(RECORDED, shorter)
    assert d is not None and (d.path, d.kind) == ("messages[2]", "missing")
    assert "missing in this request" in d.describe()
    d = first_divergence(RECORDED, changed(**{"['seed']": 1}))
    assert d is not None and (d.path, d.kind) == ("seed", "extra")
    d = first_divergence({"n": 1}, {"n": "1"})
    assert d is not None and d.kind == "type"
    d = first_divergence({"n": 1}, {"n": True})
    assert d is not None and d.kind == "type"


def test_non_json_bodies_are_compared_as_text() -> None:
    d = first_divergence(b"hello world", b"hello there")
    assert d is not None and (d.path, d.kind) == (f"{BODY}@6", "text")
    assert first_divergence(b"", None) is None


def test_whole_body_type_change_is_at_the_root() -> None:
    d = first_divergence([1], {"a": 1})
    assert d is not None and d.path == BODY


def test_count_and_digest() -> None:
    assert count_differences(RECORDED, RECORDED) == 0
    assert count_differences({"a": 1, "b": 2}, {"a": 2, "b": 3}) == 2
    assert body_digest(b"x").startswith("sha256:") and len(body_digest(b"x")) == 19
    assert body_digest(b"") == body_digest(None) == "empty"


def test_a_report_describes_the_step_and_the_closest_recording() -> None:
    d = first_divergence({"a": 1}, {"a": 2})
    report = DivergenceReport(3, "POST", "http://x/v1/chat/completions", "sha256:abc", 2,
                              "POST", "http://x/v1/chat/completions", d)
    text = report.describe()
    assert text.startswith("replay diverged at request 3: POST http://x/v1/chat/completions")
    assert "interaction 2" in text and "first difference at a: recorded 1" in text
    empty = DivergenceReport(1, "GET", "http://x", "empty", None, None, None, None)
    assert "holds no interaction" in empty.describe()
