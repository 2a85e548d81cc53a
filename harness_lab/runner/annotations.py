"""GitHub Actions annotations of a run's failures: one ``::error`` workflow command per
scenario that did not pass, which GitHub shows on the file's line in the pull request.

The command's properties and message are escaped as GitHub's own toolkit escapes them
(``@actions/core``: ``%``, carriage return and line feed in both, ``:`` and ``,`` in
properties too), so a message keeps its lines and a path its colons.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from harness_lab.runner.junit import located_problems
from harness_lab.runner.results import location

if TYPE_CHECKING:
    from harness_lab.runner.run import ScenarioResult

__all__ = ["escape_data", "escape_property", "github_annotations"]


def escape_data(text: str) -> str:
    """``text`` as a workflow command's message: ``%``, CR and LF percent-encoded."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """``text`` as a workflow command's property value: as :func:`escape_data`, and ``:``
    and ``,``, which separate properties, percent-encoded too."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotations(results: Sequence[ScenarioResult], *,
                       workspace: str | None = None) -> list[str]:
    """One ``::error file=PATH,line=N,title=VERDICT SCENARIO::MESSAGE`` line per result
    that is not ok, in order: the line of its first problem, the message each problem on a
    line of its own. A path inside ``workspace`` (the checkout, ``GITHUB_WORKSPACE``) is
    given relative to it, wherever the command ran, as GitHub resolves annotation paths from
    the repository's root."""
    lines = []
    for result in results:
        if result.ok:
            continue
        path, line = location(result)
        problems = located_problems(result)
        if problems and problems[0][0] is not None:
            line = problems[0][0]
        props = []
        if path is not None:
            props.append(f"file={escape_property(_relative(path, workspace))}")
            if line is not None:
                props.append(f"line={line}")
        props.append(f"title={escape_property(f'{result.verdict} {result.scenario}')}")
        message = "\n".join(text for _, text in problems) or result.verdict
        lines.append(f"::error {','.join(props)}::{escape_data(message)}")
    return lines


def _relative(path: str, workspace: str | None) -> str:
    if workspace is None:
        return path
    try:
        return Path(path).absolute().relative_to(Path(workspace).absolute()).as_posix()
    except ValueError:
        return path
