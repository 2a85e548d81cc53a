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


def _shown(value: object) -> str:
    """``value`` as the README's result comments write it: enum members by name."""
    from enum import Enum

    if isinstance(value, Enum):
        return value.name
    if isinstance(value, tuple):
        return "(" + ", ".join(_shown(v) for v in value) + ")"
    return repr(value)


def test_the_readme_example_gives_the_results_its_comments_show() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^```python\n(.*?)^```", text, re.M | re.S)
    assert block is not None
    namespace: dict[str, object] = {}
    lines = block.group(1).splitlines()
    code: list[str] = []
    checked = 0
    for i, line in enumerate(lines):
        if line.startswith("# (") and i > 0:
            exec("\n".join(code[:-1]), namespace)  # noqa: S102 (the README's own example)
            value = eval(code[-1].split("#")[0], namespace)  # noqa: S307
            assert _shown(value) == line[2:], code[-1]
            code = []
            namespace.pop("__builtins__", None)
            checked += 1
        else:
            code.append(line)
    assert checked == 2


LIBRARY_COUNT = re.compile(r"(?<!than\s)\b\d[\d,]*\s+(?:scenarios|scenario files|bases)\b(?!/)")
"""A count of the scenario library written into prose ("133 scenarios", "131 bases"); not a
threshold ("more than 40 scenarios") nor a port before a path (``:8080 scenarios/``)."""


def test_no_page_writes_the_size_of_the_scenario_library_by_hand() -> None:
    # the library grows every week: a count typed into a page is wrong by the next one
    stated = [f"{page.relative_to(ROOT)}: {m.group()}"
              for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
              for m in LIBRARY_COUNT.finditer(page.read_text(encoding="utf-8"))]
    assert stated == []
