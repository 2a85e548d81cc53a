"""Snapshots: written on request, compared on every run, a diff when they differ."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_lab.cli import main
from harness_lab.runner import run_scenario
from harness_lab.runner.snapshot import snapshot_path, unused_snapshots
from harness_lab.scenarios import load_file
from tests.scenarios import TWO_TOOL_DIAGNOSIS as BASE


def scenario(tmp_path: Path, text: str = BASE, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text + "snapshot: true\n", encoding="utf-8")
    return path


def run(path: Path, update: bool = False) -> object:
    [loaded] = load_file(path)
    return run_scenario(loaded, update_snapshots=update)


def test_a_scenario_without_its_snapshot_fails_saying_how_to_write_it(tmp_path: Path) -> None:
    r = run(scenario(tmp_path))
    assert r.ok is False  # type: ignore[attr-defined]
    assert str(r.mismatches[0]).startswith(  # type: ignore[attr-defined]
        f"snapshot: expected a snapshot in {tmp_path}/__snapshots__/s.snap.yaml, got none yet")


def test_updating_writes_the_snapshot_beside_the_file_and_the_next_run_passes(
        tmp_path: Path) -> None:
    path = scenario(tmp_path)
    assert run(path, update=True).ok is True  # type: ignore[attr-defined]
    assert snapshot_path(path) == tmp_path / "__snapshots__" / "s.snap.yaml"
    text = snapshot_path(path).read_text(encoding="utf-8")
    assert "  - {type: RELEASE_DECISION, t: 3.0, phase: RELEASE, status: OK, " in text
    assert "invocation_id: inv-1" in text  # the run's ids written as the script writes them
    assert run(path).ok is True  # type: ignore[attr-defined]


def test_a_changed_run_fails_with_a_unified_diff(tmp_path: Path) -> None:
    path = scenario(tmp_path)
    run(path, update=True)
    path.write_text(path.read_text().replace("latency_s: 1.0", "latency_s: 1.5"))
    r = run(path)
    [m] = r.mismatches  # type: ignore[attr-defined]
    assert m.field == "snapshot"
    assert "--- base (snapshot)\n+++ base (this run)\n" in m.detail
    assert "-  - {kind: done, t: 3.0, data: {outcome: SUCCESS}}\n" in m.detail
    assert "+  - {kind: done, t: 3.5, data: {outcome: SUCCESS}}\n" in m.detail


def test_a_snapshot_edited_to_say_true_where_the_run_counted_1_fails(tmp_path: Path) -> None:
    path = scenario(tmp_path)
    run(path, update=True)
    snap = snapshot_path(path)
    text = snap.read_text(encoding="utf-8")
    assert " items: 1," in text
    snap.write_text(text.replace(" items: 1,", " items: true,", 1), encoding="utf-8")
    [m] = run(path).mismatches  # type: ignore[attr-defined]
    assert m.field == "snapshot"
    assert " items: true," in m.detail and " items: 1," in m.detail


def test_a_snapshot_path_that_is_a_directory_is_an_error_not_a_pass(tmp_path: Path) -> None:
    path = scenario(tmp_path)
    snapshot_path(path).mkdir(parents=True)
    r = run(path, update=True)
    assert r.verdict == "ERROR"  # type: ignore[attr-defined]
    assert str(snapshot_path(path)) in r.error  # type: ignore[attr-defined]


def test_snapshots_no_scenario_uses_are_listed_and_removed_on_update(tmp_path: Path) -> None:
    path = scenario(tmp_path)
    run(path, update=True)
    gone = scenario(tmp_path, BASE.replace("name: base", "name: gone"), "gone.yaml")
    run(gone, update=True)
    gone.unlink()
    path.write_text(path.read_text().replace("name: base", "name: renamed"))
    unused = [str(u) for u in unused_snapshots([path])]
    assert unused == [f"{tmp_path}/__snapshots__/gone.snap.yaml",
                      f"{tmp_path}/__snapshots__/s.snap.yaml [base]"]
    unused_snapshots([path], remove=True)
    assert unused_snapshots([path]) == []
    assert not (tmp_path / "__snapshots__" / "gone.snap.yaml").exists()


def test_the_run_command_writes_snapshots_and_is_never_fooled_by_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    scenario(tmp_path)
    assert main(["run", "--no-log", "-q", "s.yaml"]) == 1
    assert main(["run", "--no-log", "-q", "--update-snapshots", "s.yaml"]) == 0
    assert "1 snapshot(s) written" in capsys.readouterr().out
    assert main(["run", "--no-log", "-q", "."]) == 0  # __snapshots__ holds no scenario


def test_a_crashed_run_with_a_snapshot_fails_rather_than_skipping_it(tmp_path: Path) -> None:
    text = BASE + "faults:\n  - {kind: crash, at: {when: after, call: tool, n: 1}}\n"
    text += "expect: {crashed: true}\n"
    r = run(scenario(tmp_path, text))
    assert [str(m) for m in r.mismatches] == [  # type: ignore[attr-defined]
        "snapshot: expected a finished run's observation, got none: the host process crashed"]


HOSTILE_SNAPSHOTS = {
    "truncated YAML": b"base:\n  states: {run_state: SUCC",
    "a list": b"- base\n- other\n",
    "a string": b"just text\n",
    "binary": bytes(range(256)) * 4,
    "UTF-16": "base: {}\n".encode("utf-16"),
    "an integer key": b"1: {states: {}}\nbase: {}\n",
    "a null key": b"~: {states: {}}\n",
    "a python tag": b"base: !!python/object/apply:os.system ['true']\n",
    "50,000-deep nesting": b"base: " + b"[" * 50_000 + b"]" * 50_000 + b"\n",
    "2 MiB": b"base:\n" + b"  # padding\n" * (2 * 1024 * 1024 // 12),
}


@pytest.mark.parametrize("content", HOSTILE_SNAPSHOTS.values(), ids=HOSTILE_SNAPSHOTS.keys())
def test_an_unreadable_snapshot_is_named_when_its_scenario_runs_and_replaced_on_update(
        tmp_path: Path, content: bytes, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    path = scenario(tmp_path)
    other = scenario(tmp_path, BASE.replace("name: base", "name: other"), "other.yaml")
    snapshot_path(path).parent.mkdir()
    snapshot_path(path).write_bytes(content)
    broken = run(path)
    assert broken.verdict == "ERROR"  # type: ignore[attr-defined]
    assert broken.error.startswith(f"{snapshot_path(path)}")  # type: ignore[attr-defined]
    assert "--update-snapshots replaces it" in broken.error  # type: ignore[attr-defined]
    # a run of another scenario of the directory is not disturbed by it
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--no-log", "-q", "--update-snapshots", "other.yaml"]) == 0
    assert main(["run", "--no-log", "-q", "other.yaml"]) == 0
    assert unused_snapshots([path, other]) == []
    assert snapshot_path(path).read_bytes() == content
    # asked to update, its own scenario replaces it
    assert run(path, update=True).extra == {"snapshot": "replaced"}  # type: ignore[attr-defined]
    assert run(path).ok is True  # type: ignore[attr-defined]
    capsys.readouterr()


def test_a_snapshot_file_that_is_a_link_is_neither_read_nor_written(tmp_path: Path) -> None:
    path = scenario(tmp_path)
    outside = tmp_path / "notes.txt"
    outside.write_text("keep me\n", encoding="utf-8")
    snapshot_path(path).parent.mkdir()
    snapshot_path(path).symlink_to(outside)
    r = run(path, update=True)
    assert r.verdict == "ERROR"  # type: ignore[attr-defined]
    assert "the snapshot file is a link" in r.error  # type: ignore[attr-defined]
    assert outside.read_text(encoding="utf-8") == "keep me\n"


def test_a_linked_snapshot_directory_never_loses_a_file_to_an_update(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    kept = elsewhere / "unrelated.snap.yaml"
    kept.write_text("someone: {}\n", encoding="utf-8")
    suite = tmp_path / "suite"
    suite.mkdir()
    path = scenario(suite)
    (suite / "__snapshots__").symlink_to(elsewhere, target_is_directory=True)
    assert unused_snapshots([path], remove=True) == []
    r = run(path, update=True)
    assert r.verdict == "ERROR"  # type: ignore[attr-defined]
    assert "the snapshot directory is a link" in r.error  # type: ignore[attr-defined]
    assert sorted(p.name for p in elsewhere.iterdir()) == ["unrelated.snap.yaml"]
    assert kept.read_text(encoding="utf-8") == "someone: {}\n"
