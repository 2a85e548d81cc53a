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
