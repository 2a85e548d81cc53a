"""The adapter file: defaults are the documented contract; mistakes name file, field, line."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_lab.live.adapter import AdapterError, load_adapter


def test_an_adapter_file_maps_paths_and_event_names(tmp_path: Path) -> None:
    path = tmp_path / "java.yaml"
    path.write_text("chat: {path: /api/diagnose, query_field: message}\n"
                    "events: {content: answer}\ncancel_path: /api/runs/{runId}/stop\n")
    adapter = load_adapter(path)
    assert (adapter.chat.path, adapter.chat.query_field, adapter.events.content,
            adapter.events.done, adapter.cancel_path) == (
        "/api/diagnose", "message", "answer", "done", "/api/runs/{runId}/stop")


def test_a_misspelt_key_is_named_with_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("chat:\n  path: /chat\n  querry_field: q\n")
    with pytest.raises(AdapterError, match=r"bad\.yaml:3: chat\.querry_field"):
        load_adapter(path)


@pytest.mark.parametrize(("text", "where"), [
    ("chat: {path: api/diagnose}\n", "bad.yaml:1: chat.path: Value error, a URL path"),
    ('chat:\n  path: "/api\\ndiagnose"\n', "bad.yaml:2: chat.path: Value error, a URL path"),
    ("cancel_path: /runs/{runId}/stop now\n", "bad.yaml:1: cancel_path: Value error, a URL"),
    ("trace_path: " + "/x" * 2000 + "\n", "bad.yaml:1: trace_path: Value error, a URL path"),
    ('events:\n  done: ""\n', "bad.yaml:2: events.done: Value error, a name of one line"),
    ('headers:\n  Authorization: "Bearer a\\nX-Evil: 1"\n',
     "bad.yaml:2: headers.Authorization: Value error, a header value holds visible ASCII"),
    ('headers:\n  "Bad Name": x\n', "bad.yaml:2: headers.Bad Name.[key]: Value error, a "
                                     "header name"),
    ("database: {url: not-a-url}\n", "bad.yaml:1: database.url: Value error, not a "
                                      "SQLAlchemy database URL"),
    ("database:\n  url: sqlite:///runs.db\n  mapping: {diagnosis_run: {table: [t]}}\n",
     "bad.yaml:3: database.mapping: Value error, mapping.diagnosis_run.table: a table name"),
], ids=["a path without its slash", "a path with a line break", "a path with a space",
        "a path too long", "an empty event name", "a header value with a line break",
        "a header name with a space", "a database URL that is not one",
        "a mapping that cannot be used"])
def test_a_value_no_request_could_carry_is_refused_naming_file_line_and_field(
        tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(AdapterError) as caught:
        load_adapter(path)
    assert str(caught.value).startswith(f"{tmp_path}/{where}"), str(caught.value)


def test_an_adapter_that_is_not_a_mapping_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- /chat\n")
    with pytest.raises(AdapterError, match="list.yaml:1: the adapter must be a mapping"):
        load_adapter(path)


def test_an_endless_device_is_refused_as_not_a_regular_file() -> None:
    with pytest.raises(AdapterError, match=r"^/dev/zero: not a regular file \(a character "
                                           r"device\); an adapter file is a YAML file"):
        load_adapter("/dev/zero")


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "adapter.fifo"
    os.mkfifo(fifo)
    with pytest.raises(AdapterError, match="not a regular file \\(a FIFO\\)"):
        load_adapter(fifo)


def test_a_deeply_nested_adapter_is_refused_naming_its_line(tmp_path: Path) -> None:
    path = tmp_path / "adapter.yaml"
    path.write_text("chat_path: " + "[" * 50_000 + "]" * 50_000 + "\n", encoding="utf-8")
    with pytest.raises(AdapterError, match=rf"^{path}:1: .*nest"):
        load_adapter(path)


def test_a_python_tag_in_an_adapter_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "adapter.yaml"
    path.write_text("chat_path: !!python/object/apply:os.system ['true']\n", encoding="utf-8")
    with pytest.raises(AdapterError, match=rf"^{path}:1: malformed YAML"):
        load_adapter(path)
