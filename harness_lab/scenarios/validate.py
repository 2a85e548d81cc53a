"""Validate scenario files without running them: everything ``run`` would refuse, at once.

Beyond loading each file (schema, names, limits: :func:`~harness_lab.scenarios.load_file`),
a set of files is checked for what only shows when they are run together or replayed: a
scenario name given by two files (``run`` refuses the second), and a cassette that does not
exist (a strict replay cannot start without it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from harness_lab.scenarios.loader import LoadedScenario, Problem, ScenarioError, load_file
from harness_lab.scenarios.recorded import cassette_file

__all__ = ["Validation", "validate_files"]


@dataclass(slots=True)
class Validation:
    """What validating files found: how many scenarios are valid, and each file's problems."""

    scenarios: int = 0
    problems: dict[str, list[Problem]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when no file has a problem."""
        return not self.problems

    def add(self, path: str, problems: Iterable[Problem]) -> None:
        """Note ``problems`` of the file ``path``."""
        found = list(problems)
        if found:
            self.problems.setdefault(path, []).extend(found)


def validate_files(files: Iterable[str | Path]) -> Validation:
    """Load every file of ``files`` and check them together (see the module)."""
    result = Validation()
    first_use: dict[str, tuple[str, str]] = {}  # scenario name -> (file, ``file:line``)
    for path in map(Path, files):
        try:
            loaded = load_file(path)
        except ScenarioError as exc:
            result.add(str(path), exc.problems)
            continue
        problems: list[Problem] = []
        for item in loaded:
            problems += _cassette_problems(item)
            problems += _name_problems(item, first_use)
        result.add(str(path), problems)
        if not problems:
            result.scenarios += len(loaded)
    return result


def _name_problems(item: LoadedScenario, first_use: dict[str, tuple[str, str]]
                   ) -> list[Problem]:
    name = item.scenario.name
    line = item.key_lines.get("name")
    here = f"{item.path}:{line}" if line is not None else item.path
    file, first = first_use.setdefault(name, (item.path, here))
    if file == item.path:
        return []
    return [Problem(item.path, line, "name",
                    f"scenario name {name!r} is already used by {first}; `run` refuses "
                    f"the second file of a name")]


def _cassette_problems(item: LoadedScenario) -> list[Problem]:
    cassette = cassette_file(item.scenario, item.path)
    if cassette is None or cassette.is_file():
        return []
    state = "is not a regular file" if cassette.exists() else "does not exist"
    return [Problem(item.path, item.key_lines.get("cassette"), "cassette",
                    f"the cassette {cassette} {state}: a replay cannot start (record it with "
                    f"`harness-lab record {item.path}`)")]
