"""Exploring a library: every explorable file under a directory, the others with why."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness_lab.cli import main
from harness_lab.explore.explorer import explore
from harness_lab.explore.library import explore_library
from tests.explore.helpers import REPORT, SATURATED

CRASH = Path(__file__).parents[2] / "scenarios" / "faults" / "crash-before-guard.yaml"


@pytest.fixture
def library(tmp_path: Path) -> Path:
    shutil.copy(REPORT, tmp_path / "report.yaml")
    (tmp_path / "more").mkdir()
    shutil.copy(SATURATED, tmp_path / "more" / "saturated.yaml")
    shutil.copy(CRASH, tmp_path / "crash.yaml")
    (tmp_path / "broken.yaml").write_text("name: broken\ndescription: x\nmodle: []\n",
                                          encoding="utf-8")
    return tmp_path


def test_a_directory_explores_every_explorable_file_and_lists_the_others_with_why(
        library: Path) -> None:
    explored = explore_library([library], faults={"deadline"}, workers=1)
    assert sorted(Path(b.path).name for b in explored.result.bases) == [
        "report.yaml", "saturated.yaml"]
    reasons = {Path(u.path).name: u.reason for u in explored.unexplored}
    assert sorted(reasons) == ["broken.yaml", "crash.yaml"]
    assert "modle: unknown key" in reasons["broken.yaml"]
    assert "cannot be explored" in reasons["crash.yaml"]
    assert explored.files == 4


@pytest.mark.slow
def test_the_library_judges_each_base_as_exploring_it_alone_does(library: Path) -> None:
    together = explore_library([library / "report.yaml", library / "more"],
                               faults={"deadline", "crash"}, workers=2)
    alone = [explore(library / "report.yaml", faults={"deadline", "crash"}),
             explore(library / "more" / "saturated.yaml", faults={"deadline", "crash"})]
    assert [f.row() for f in together.result.findings] == [
        f.row() for r in alone for f in r.findings]


def test_explore_on_a_directory_prints_the_unexplored_files_and_a_summary(
        library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", str(library), "--fault", "deadline", "--format", "csv"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("flag,variant,")
    assert f"not explored: {library / 'broken.yaml'}: " in err
    assert f"not explored: {library / 'crash.yaml'} [fault-crash-before-guard]: " in err
    assert "variants of 2 bases in 4 files, 0 flagged" in err


def test_a_directory_with_nothing_explorable_is_a_usage_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(CRASH, tmp_path / "crash.yaml")
    assert main(["explore", str(tmp_path)]) == 2
    assert "nothing under" in capsys.readouterr().err


LIBRARY = Path(__file__).parents[2] / "scenarios"


@pytest.mark.slow
@pytest.mark.parametrize("base", [
    # a store that refuses a write: the stored row is the fault's, and a refused completion
    # releases FAILED what would have been released (doc §2), as each base states
    "faults/store-refuses-completion.yaml", "faults/store-refuses-cancelled-completion.yaml",
    "faults/store-refuses-failed-completion.yaml", "faults/store-refuses-history.yaml",
    "faults/store-refuses-running-row.yaml",
    # a disconnect or cancel of the base's own at the boundary whose check would first find a
    # deadline a variant moved earlier: no check has found it yet, so the cancel wins
    "faults/client-disconnect-at.yaml", "policy/deadline-at-call-end.yaml",
    "recorded/disconnect-after-second-tool.yaml",
    # a turn after one that crashed runs on a harness built anew
    "sessions/crashed-turn-not-carried.yaml",
])
def test_a_shipped_base_whose_own_faults_decide_part_of_the_outcome_is_not_flagged(
        base: str) -> None:
    explored = explore_library([LIBRARY / base], workers=1)
    assert explored.result.variant_count > 0 and not explored.unexplored
    assert [f.variant.name for f in explored.result.flagged] == []
