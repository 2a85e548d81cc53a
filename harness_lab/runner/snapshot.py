"""Snapshots: a scenario's whole normalised observation, pinned in a file beside it.

``scenarios/sse/x.yaml`` keeps its snapshots in ``scenarios/sse/__snapshots__/x.snap.yaml``,
one entry per scenario (matrix variant) of the file that sets ``snapshot: true``, keyed by
its name. Each entry is the observation of :mod:`harness_lab.runner.observe` (with the
earlier turns' under ``turns``), written one event or record per line so that a change reads
as a short unified diff. Files are written atomically (a temporary file in the same
directory, then renamed over the old one): a reader never sees half a snapshot, and a write
that fails leaves the old file as it was and is reported, never taken for success.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness_lab.atomic import write_atomically
from harness_lab.scenarios.safe_yaml import YamlInputError, load_yaml

__all__ = ["SNAPSHOT_DIRECTORY", "SnapshotError", "Unused", "check_snapshot", "diff", "dump",
           "read_entry", "snapshot_path", "unused_report", "unused_snapshots", "write_entry"]

SNAPSHOT_DIRECTORY = "__snapshots__"
"""The directory beside scenario files holding their snapshots (never searched for
scenarios)."""

SUFFIX = ".snap.yaml"
_HEADER = ("# Snapshots of {name}: each scenario's whole normalised observation.\n"
           "# Written by `harness-lab run --update-snapshots` (or `pytest --snapshot-update`);"
           " do not edit.\n")


class SnapshotError(Exception):
    """A snapshot file that cannot be read or written (the message names the file)."""


def snapshot_path(scenario_file: str | Path) -> Path:
    """Where the snapshots of ``scenario_file`` live."""
    p = Path(scenario_file)
    return p.parent / SNAPSHOT_DIRECTORY / f"{p.stem}{SUFFIX}"


def _flow(value: Any) -> str:
    """``value`` as one line of YAML flow style."""
    if isinstance(value, Mapping | list):
        return yaml.safe_dump(value, default_flow_style=True, width=float("inf"),
                              allow_unicode=True, sort_keys=False).strip()
    return _flow([value])[1:-1]


def _pair(key: str, value: Any) -> str:
    return f"{_flow(key)}: {_flow(value)}"


def dump(observation: Mapping[str, Any], indent: str = "") -> str:
    """An observation as YAML text: one line per state, event, record or row column."""
    lines: list[str] = []
    for part, value in observation.items():
        if isinstance(value, list) and value and part not in ("statuses", "gains"):
            lines.append(f"{indent}{part}:")
            for item in value:
                if part == "turns" and isinstance(item, Mapping):
                    body = dump(item, indent + "    ")
                    lines.append(f"{indent}  - " + body[len(indent) + 4:])
                else:
                    lines.append(f"{indent}  - {_flow(item)}")
        elif isinstance(value, Mapping) and value:
            lines.append(f"{indent}{part}:")
            lines.extend(f"{indent}  {_pair(k, v)}" for k, v in value.items())
        else:
            lines.append(f"{indent}{_pair(part, value)}")
    return "\n".join(lines) + "\n"


def _own(path: Path) -> None:
    """Refuse a snapshot file that is not the scenario's own: a link, or one whose
    ``__snapshots__`` directory is a link (reading or writing through it would reach files
    that belong to something else)."""
    if path.parent.is_symlink():
        raise SnapshotError(f"{path.parent}: the snapshot directory is a link; snapshots are "
                            "read and written only in a scenario's own __snapshots__ directory")
    if path.is_symlink():
        raise SnapshotError(f"{path}: the snapshot file is a link; snapshots are read and "
                            "written only as files of their own")


def _read(path: Path) -> dict[str, Any]:
    """The entries of the snapshot file ``path`` ({} when there is none), read within the
    scenario files' limits; raise :class:`SnapshotError` naming the file (and line) of one
    that cannot be read or is not a mapping of scenario names."""
    _own(path)
    if not path.exists():
        return {}
    try:
        _, data = load_yaml(path, "a snapshot file")
    except YamlInputError as exc:
        raise SnapshotError(f"{exc.source}{'' if exc.line is None else f':{exc.line}'}: "
                            f"cannot read the snapshot file: {exc.message}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SnapshotError(f"{path}: a snapshot file is a mapping of scenario names; "
                            f"this one holds a {type(data).__name__}")
    for name, entry in data.items():
        if not isinstance(name, str) or not isinstance(entry, dict | None):
            raise SnapshotError(f"{path}: a snapshot file maps scenario names to observations; "
                                f"it holds {name!r}: {type(entry).__name__}")
    return data


def read_entry(scenario_file: str | Path, name: str) -> dict[str, Any] | None:
    """The snapshot of scenario ``name`` of ``scenario_file``, or None when it has none."""
    entry = _read(snapshot_path(scenario_file)).get(name)
    return entry if isinstance(entry, dict) else None


def diff(stored: Mapping[str, Any], observed: Mapping[str, Any], label: str) -> str:
    """A unified diff from the snapshot to the observation (empty when they are equal)."""
    return "".join(difflib.unified_diff(
        dump(stored).splitlines(keepends=True), dump(observed).splitlines(keepends=True),
        fromfile=f"{label} (snapshot)", tofile=f"{label} (this run)", n=2))


def _write(path: Path, entries: Mapping[str, Any], scenario_file: Path) -> None:
    """Write ``entries`` atomically to ``path`` (removing it when there are none); never
    through a link."""
    _own(path)
    try:
        if not entries:
            path.unlink(missing_ok=True)
            return
        path.parent.mkdir(exist_ok=True)
        text = _HEADER.format(name=scenario_file.name) + "".join(
            f"{_flow(name)}:\n" + dump(obs, "  ") for name, obs in sorted(entries.items()))
        write_atomically(path, text)
    except OSError as exc:
        raise SnapshotError(f"{path}: cannot write the snapshot: {exc.strerror or exc}"
                            ) from exc


def write_entry(scenario_file: str | Path, name: str, observation: Mapping[str, Any]) -> Path:
    """Set the snapshot of scenario ``name`` (other entries of the file are kept); the path
    written. Raise :class:`SnapshotError` when it cannot be written."""
    path = snapshot_path(scenario_file)
    try:
        entries = _read(path)
    except SnapshotError:
        entries = {}  # an unreadable file is replaced by what this run observes
    entries[name] = dict(observation)
    _write(path, entries, Path(scenario_file))
    return path


@dataclass(frozen=True, slots=True)
class Unused:
    """A snapshot no scenario uses: a whole file (``name`` None) or one entry of it."""

    path: Path
    name: str | None

    def __str__(self) -> str:
        return f"{self.path}" if self.name is None else f"{self.path} [{self.name}]"


def unused_report(unused: list[Unused], *, removed: bool, flag: str) -> list[str]:
    """Lines reporting snapshots no scenario uses: a count, then one line each (none when
    every snapshot is used); ``flag`` is the option that removes them."""
    if not unused:
        return []
    verb = "removed" if removed else f"no scenario uses (remove them with {flag})"
    return [f"{len(unused)} snapshot(s) {verb}:"] + [f"  {u}" for u in unused]


def unused_snapshots(scenario_files: Iterable[str | Path], *, remove: bool = False
                     ) -> list[Unused]:
    """The snapshots beside ``scenario_files`` that no scenario uses: a file whose scenario
    file is gone, or an entry naming no scenario of its file that sets ``snapshot: true``.
    ``remove`` deletes them (``--update-snapshots`` does, as syrupy's ``--snapshot-update``
    does). A scenario file that does not load keeps its snapshots, and so does a snapshot
    file that cannot be read (it is named when its scenario runs); nothing is listed or
    removed in a ``__snapshots__`` directory that is a link, or through a file that is."""
    from harness_lab.scenarios.loader import ScenarioError, load_file

    # realpath, not resolve(): a file that links to itself must not raise here (its loader
    # names it)
    files = {Path(os.path.realpath(f)): Path(f) for f in scenario_files}
    directories = sorted({p.parent / SNAPSHOT_DIRECTORY for p in files.values()})
    unused: list[Unused] = []
    for directory in directories:
        if not directory.is_dir() or directory.is_symlink():
            continue
        for snap in sorted(directory.glob(f"*{SUFFIX}")):
            if snap.is_symlink():
                continue
            stem = snap.name[:-len(SUFFIX)]
            owners = [directory.parent / f"{stem}{ext}" for ext in (".yaml", ".yml")]
            owner = next((o for o in owners if o.exists()), None)
            if owner is None:
                unused.append(Unused(snap, None))
                if remove:
                    _write(snap, {}, snap)
                continue
            try:
                names = {item.scenario.name for item in load_file(owner)
                         if item.scenario.snapshot}
                entries = _read(snap)
            except (ScenarioError, SnapshotError):
                continue
            gone = sorted(n for n in entries if n not in names)
            unused.extend(Unused(snap, n) for n in gone)
            if remove and gone:
                _write(snap, {n: e for n, e in entries.items() if n in names}, owner)
    return unused


def check_snapshot(scenario_file: str | None, name: str, observation: Mapping[str, Any], *,
                   update: bool = False) -> tuple[list[Any], str | None, dict[str, Any]]:
    """Compare (or, with ``update``, write) one scenario's snapshot: its mismatches (one,
    carrying the diff), an error (a snapshot that cannot be read or written), and what
    happened, for the result's ``extra`` (``{"snapshot": "written" | "unchanged" | ...}``)."""
    from harness_lab.scenarios.match import Mismatch, Shown, same

    if scenario_file is None or scenario_file.startswith("<"):
        return [], "a snapshot needs a scenario file to live beside; this one has none", {}
    path = snapshot_path(scenario_file)
    unreadable = False
    try:
        stored = read_entry(scenario_file, name)
    except SnapshotError as exc:
        if not update:
            return [], f"{exc} (--update-snapshots replaces it)", {}
        stored, unreadable = None, True
    if same(stored, observation):  # a snapshot's true is not the observed 1
        return [], None, {"snapshot": "unchanged"}
    if update:
        try:
            write_entry(scenario_file, name, observation)
        except SnapshotError as exc:
            return [], str(exc), {}
        done = "replaced" if unreadable else "written" if stored is None else "updated"
        return [], None, {"snapshot": done}
    if stored is None:
        return [Mismatch("snapshot", Shown(f"a snapshot in {path}"),
                         Shown("none yet; write it with `harness-lab run --update-snapshots "
                               f"{scenario_file}`"))], None, {"snapshot": "missing"}
    text = diff(stored, observation, name)
    changed = sum(1 for line in text.splitlines()
                  if line[:1] in "+-" and not line.startswith(("+++", "---")))
    return [Mismatch("snapshot", Shown(f"the observation in {path}"),
                     Shown(f"{changed} changed line(s) (update with --update-snapshots)"),
                     text)], None, {"snapshot": "differs"}
