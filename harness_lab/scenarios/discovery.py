"""Which scenario files a command's paths name: directories searched as pytest searches
them, ``FILE[variant]`` selecting one matrix variant.

Light on purpose (no run core): ``validate`` and ``show`` start from here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness_lab.scenarios.loader import LoadedScenario, ScenarioError, load_file, load_text
from harness_lab.scenarios.spec import Scenario

__all__ = ["CASSETTE_DIRECTORY", "SKIPPED_DIRECTORIES", "SelectionError", "Selector",
           "discover", "load_scenario", "select", "variant_names"]

CASSETTE_DIRECTORY = "cassettes"
"""Files inside a directory of this name are recordings, never scenarios."""

class SelectionError(ValueError):
    """A path names a matrix variant its file does not have, or no scenario (a usage error)."""


@dataclass(frozen=True, slots=True)
class Selector:
    """A path as given on the command line: a file or directory, and optionally one matrix
    variant of the file (``FILE[variant]``)."""

    path: Path
    variant: str | None = None

    @classmethod
    def parse(cls, text: str | Path) -> Selector:
        """``scenarios/x.yaml[silent]`` selects the variant ``silent``; a path that exists as
        written (brackets and all) is a plain path."""
        raw = str(text)
        if (isinstance(text, Path) or not raw.endswith("]") or "[" not in raw
                or Path(raw).exists()):
            return cls(Path(raw))
        at = raw.index("[")
        return cls(Path(raw[:at]), raw[at + 1:-1])

    def keeps(self, scenario_name: str) -> bool:
        """True when ``scenario_name`` is the selected variant (or no variant is selected).

        A variant is named by its label (``silent``, or ``config.deadline_s=6.5`` of a product
        matrix) or by its whole name (``base[silent]``)."""
        if self.variant is None:
            return True
        return scenario_name == self.variant or scenario_name.endswith(f"[{self.variant}]")


def variant_names(loaded: Sequence[LoadedScenario]) -> list[str]:
    """The variant labels of a file's scenarios (what ``FILE[variant]`` accepts)."""
    return [item.scenario.name[item.scenario.name.index("[") + 1:-1]
            for item in loaded if item.scenario.name.endswith("]")
            and "[" in item.scenario.name]


def select(selector: Selector, loaded: Sequence[LoadedScenario]) -> list[LoadedScenario]:
    """The scenarios of one file that ``selector`` keeps; raise :class:`SelectionError` when
    it names a variant the file does not have."""
    kept = [item for item in loaded if selector.keeps(item.scenario.name)]
    if not kept and selector.variant is not None:
        known = variant_names(loaded)
        offer = (f"its variants: {', '.join(known)}" if known
                 else "it has no matrix, so no variants")
        raise SelectionError(f"{selector.path} has no variant {selector.variant!r}; {offer}")
    return kept


def load_scenario(path: str | Path | None, variant: str | None = None, *,
                  content: str | None = None) -> tuple[Scenario, str]:
    """The scenario (one variant of it, the first by default) in ``path``, or in the YAML
    ``content`` given for it, and its name; SelectionError if there is none."""
    try:
        if content is not None:
            loaded = load_text(content, str(path or "<script>"))
        elif path is not None:
            loaded = load_file(path)
        else:
            raise SelectionError("give the scenario's path or its content")
    except ScenarioError as exc:
        raise SelectionError(str(exc)) from None
    except OSError as exc:
        raise SelectionError(f"{path}: {exc.strerror or exc}") from None
    if not loaded:
        raise SelectionError(f"{path}: the file holds no scenario")
    selector = Selector(Path(path or "<script>"), variant)
    for item in loaded:
        if selector.keeps(item.scenario.name):
            return item.scenario, item.scenario.name
    names = ", ".join(item.scenario.name for item in loaded)
    raise SelectionError(f"{path}: no variant {variant!r}; the file has: {names}")


SKIPPED_DIRECTORIES = frozenset({"__pycache__", "node_modules", "venv", "site-packages",
                                 "__snapshots__"})
"""Directories never searched for scenarios (``__snapshots__`` holds scenarios' snapshots),
besides hidden ones (``.venv``, ``.git``...),
``*.egg`` and any virtual environment (a directory holding ``pyvenv.cfg``), as pytest's
``norecursedirs`` has it."""


def _skipped(directory: Path) -> bool:
    name = directory.name
    if name.startswith(".") or name in SKIPPED_DIRECTORIES or name.endswith(".egg"):
        return True
    try:
        return (directory / "pyvenv.cfg").is_file()  # a virtual environment
    except OSError:  # a directory that cannot be searched: the walk reports it
        return False


def _walk(root: Path) -> list[Path]:
    """The ``.yaml``/``.yml`` files under ``root``, sorted, skipping :func:`_skipped`
    directories (``root`` itself is searched whatever its name). A directory that cannot be
    listed is returned among the files: loading it fails with a problem saying so, so it is
    never skipped silently."""
    found: list[Path] = []

    def unreadable(exc: OSError) -> None:
        found.append(Path(exc.filename) if exc.filename else root)

    for directory, subdirectories, names in os.walk(root, onerror=unreadable):
        here = Path(directory)
        subdirectories[:] = [d for d in subdirectories if not _skipped(here / d)]
        found.extend(here / n for n in names if n.endswith((".yaml", ".yml")))
    return sorted(found)


def discover(paths: Iterable[str | Path]) -> list[Path]:
    """The scenario files under ``paths``, as every command finds them: a file as given
    (``FILE[variant]`` names its file); a directory searched recursively in name order,
    skipping hidden directories, virtual environments, ``node_modules``, ``__pycache__`` and
    ``__snapshots__`` (see :data:`SKIPPED_DIRECTORIES`) and any ``cassettes`` directory
    (recordings)."""
    files: list[Path] = []
    for searched in (Selector.parse(p).path for p in paths):
        if searched.is_dir():
            files.extend(f for f in _walk(searched) if not _in_cassettes(f, searched))
        else:
            files.append(searched)
    return files


def _in_cassettes(file: Path, searched: Path) -> bool:
    return CASSETTE_DIRECTORY in (searched.name, *file.relative_to(searched).parts[:-1])
