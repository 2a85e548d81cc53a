"""The README's quick start is the two commands the project promises, and its links resolve."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _quick_start_lines() -> list[str]:
    section = README.split("## Quick start", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None, "the Quick start section has no sh block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_readme_opens_with_a_quick_start_of_exactly_two_commands() -> None:
    first_heading = re.search(r"^## (.+)$", README, re.M)
    assert first_heading is not None and first_heading.group(1) == "Quick start"
    lines = _quick_start_lines()
    assert len(lines) == 2
    assert lines[0].endswith("harness-lab run")
    assert "pytest" in lines[1]


def test_ci_runs_the_second_quick_start_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _quick_start_lines()[1] in ci


def test_every_relative_link_of_the_readme_and_docs_resolves() -> None:
    broken = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert broken == []
