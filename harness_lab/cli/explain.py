"""Why did the user get this outcome? Why did collection stop? Why is there no SSE done? Each
answer cites the states and trace events it comes from."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness_lab.cli.common import add_command, fail, nearest_path
from harness_lab.explanation.answers import QUESTIONS
from harness_lab.logs.sources import is_log_file

__all__ = ["register", "split_log_ref"]


def split_log_ref(text: str) -> tuple[Path, str | None] | None:
    """``(log, ref)`` for ``LOG#ref`` or ``(log, None)`` for a log file; None for anything
    else (a scenario path)."""
    if "#" in text:
        head, _, ref = text.rpartition("#")
        if Path(head).is_file():
            return Path(head), ref
    path = Path(text)
    if path.is_file() and is_log_file(path):
        return path, None
    return None


def _targets(run: str) -> Iterator[Any]:
    """The scenario results (or log entries) that ``run`` names; raise LookupError or
    ValueError (a LogError, a SelectionError) with a message for a usage error."""
    from harness_lab.logs.sources import read_noted

    logged = split_log_ref(run)
    if logged is not None:
        path, ref = logged
        log = read_noted(path)
        if ref is None:
            yield from log.entries
        else:
            yield log.find(ref)
        return
    from harness_lab.runner.run import plan_paths

    plan = plan_paths([run])
    if not plan:
        logs = sorted(Path(run).glob("*.jsonl")) if Path(run).is_dir() else []
        hint = (f"; it holds run logs: name one, e.g. {logs[-1]}#SCENARIO" if logs else "")
        raise ValueError(f"no scenario under {run}{hint}")
    for entry in plan:
        yield entry.run()


def _missing(runs: list[str]) -> str | None:
    """Why a RUN names nothing there (checked for all before any is explained), with the
    ``LOG#NAME`` form when it follows a log, as a scenario name after it would; or None."""
    from harness_lab.runner.run import Selector

    for n, run in enumerate(runs):
        if split_log_ref(run) is not None or Selector.parse(run).path.exists():
            continue
        if "#" in run:
            return f"{run.rpartition('#')[0]}: no such log file"
        logs = [ref[0] for ref in map(split_log_ref, runs[:n]) if ref is not None]
        near = nearest_path(run)
        hint = (f" (to explain one scenario or run of the log before it: {logs[-1]}#{run})"
                if logs else f" (did you mean {near}?)" if near else "")
        return f"{run}: no such file or directory{hint}"
    return None


def _cmd_explain(args: argparse.Namespace) -> int:
    from harness_lab.explanation import explain
    from harness_lab.terminal.console import width_of

    if problem := _missing(args.run):
        return fail("explain", problem)
    questions = tuple(args.question) if args.question else None
    width = width_of(sys.stdout)
    explained: list[Any] = []
    status = 0
    for run in args.run:
        try:
            for target in _targets(run):
                item = explain(target, questions)
                if not item.answers:
                    status = 1
                explained.append(item)
                if args.format == "text":
                    print(item.text(width))
        except (ValueError, KeyError) as exc:
            return fail("explain", exc.args[0] if isinstance(exc, KeyError) else str(exc))
    if args.format == "json":
        print(json.dumps([e.to_dict() for e in explained], indent=2, ensure_ascii=False))
    if not explained:
        return fail("explain", f"nothing selected by {', '.join(args.run)}")
    return status


def register(sub: Any) -> None:
    """Add ``harness-lab explain``."""
    p = add_command(sub, "explain", __doc__, func=_cmd_explain)
    p.add_argument("run", nargs="+", metavar="RUN",
                   help="a scenario file, FILE[variant] or directory (run now), a run log "
                        "(every run in it), or LOG#NAME for one scenario or run id of a log")
    p.add_argument("--question", action="append", choices=list(QUESTIONS),
                   help="only this question (repeatable; default: all)")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text for people, json for tools")
