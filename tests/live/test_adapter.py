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
