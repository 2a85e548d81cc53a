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
from harness_lab.scripted.recorded import cassette_file

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
    """The scenario's cassette must exist and be one a strict replay can read."""
    cassette = cassette_file(item.scenario, item.path)
    if cassette is None:
        return []
    line = item.key_lines.get("cassette")
    if not cassette.exists():
        return [Problem(item.path, line, "cassette",
                        f"the cassette {cassette} does not exist: a replay cannot start "
                        f"(record it with `harness-lab record {item.path}`)")]
    from harness_lab.recorded.cassette_file import CassetteError, check_cassette

    try:
        check_cassette(cassette)
    except CassetteError as exc:
        return [Problem(item.path, line, "cassette", f"a replay cannot read it: {exc}")]
    return []
