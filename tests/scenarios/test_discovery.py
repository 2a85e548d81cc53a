"""Which files a command's paths name: skipped directories and FILE[variant]."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_lab import scenarios
from harness_lab.scenarios.discovery import SelectionError, Selector, discover, select
from harness_lab.scenarios.loader import load_text
from tests.scenarios import missing_context

LISTED = missing_context("listed", "a matrix list", rest="""\
matrix:
  - name: quick
    set: {config.deadline_s: 5.0}
  - name: slow
    set: {config.deadline_s: 50.0}
""")


def test_a_bracketed_suffix_selects_a_variant_unless_the_path_exists_as_written(
        tmp_path: Path) -> None:
    assert Selector.parse("a/b.yaml[quick]") == Selector(Path("a/b.yaml"), "quick")
    assert Selector.parse("a/b.yaml") == Selector(Path("a/b.yaml"))
    odd = tmp_path / "odd[1].yaml]"
    odd.write_text("", encoding="utf-8")
    assert Selector.parse(str(odd)) == Selector(odd)


def test_a_variant_is_named_by_its_label_or_its_whole_name() -> None:
    loaded = load_text(LISTED, "listed.yaml")
    names = [item.scenario.name for item in select(Selector(Path("x"), "quick"), loaded)]
    assert names == ["listed[quick]"]
    whole = select(Selector(Path("x"), "listed[slow]"), loaded)
    assert [item.scenario.name for item in whole] == ["listed[slow]"]
    with pytest.raises(SelectionError, match="its variants: quick, slow"):
        select(Selector(Path("x"), "fast"), loaded)


def test_hidden_directories_environments_and_caches_are_not_searched(tmp_path: Path) -> None:
    for directory in ("kept/deeper", ".git", ".venv/lib", "node_modules/m", "__pycache__",
                      "venv", "pkg.egg", "myenv", "cassettes"):
        (tmp_path / directory).mkdir(parents=True, exist_ok=True)
        (tmp_path / directory / "s.yaml").write_text("", encoding="utf-8")
    (tmp_path / "myenv" / "pyvenv.cfg").write_text("home = /usr\n", encoding="utf-8")
    (tmp_path / "top.yml").write_text("", encoding="utf-8")
    found = [p.relative_to(tmp_path).as_posix() for p in discover([tmp_path])]
    assert found == ["kept/deeper/s.yaml", "top.yml"]


def test_a_file_named_explicitly_is_taken_even_inside_a_hidden_directory(
        tmp_path: Path) -> None:
    hidden = tmp_path / ".hidden" / "s.yaml"
    hidden.parent.mkdir()
    hidden.write_text("", encoding="utf-8")
    assert discover([hidden, f"{hidden}[quick]"]) == [hidden, hidden]


def test_the_public_discover_skips_snapshots_and_recordings_as_the_commands_do(
        tmp_path: Path) -> None:
    for name in ("a.yaml", "__snapshots__/a.snap.yaml", "cassettes/a.yaml", ".hidden/b.yaml",
                 "sub/c.yml"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x", encoding="utf-8")
    assert scenarios.discover([tmp_path]) == [tmp_path / "a.yaml", tmp_path / "sub" / "c.yml"]
