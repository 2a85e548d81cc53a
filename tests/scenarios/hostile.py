"""Hostile scenario files, generated: each family writes one file a user could feed the loader.

Every family must be refused with a problem naming the file, fast and in bounded memory; the
tests check the refusal, ``benchmarks/bench_hostile.py`` times it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

__all__ = ["FAMILIES", "HEAD", "write"]

HEAD = "name: hostile\ndescription: a file a hostile user wrote\n"
"""The two required fields, so each family's refusal is about the hostile part."""

TOOL = "tools:\n  logs: {}\n"


def _flow_nesting() -> str:
    return HEAD + "tags: " + "[" * 500 + "]" * 500 + "\n"


def _block_nesting(levels: int) -> Callable[[], str]:
    def text() -> str:
        body = "".join(" " * i + "k:\n" for i in range(levels))
        return HEAD + "config:\n" + "".join(" " + line for line in body.splitlines(True))
    return text


def _long_integer() -> str:
    return HEAD + "expect:\n  tool_calls: " + "9" * 4400 + "\n"


def _beyond_int64() -> str:
    return HEAD + "model:\n  - report: {}\n    usage: {input: " + str(10 ** 30) + "}\n"


def _alias_bomb() -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    scope = "\n".join("      " + line for line in lines)
    return HEAD + TOOL + "model:\n  - tool: logs\n    scope:\n" + scope + "\n"


def _merge_bomb() -> str:
    lines = ["m0: &m0 {k: v}"]
    lines += [f"m{i}: &m{i} {{<<: [" + ", ".join([f"*m{i - 1}"] * 9) + f"], k{i}: v}}"
              for i in range(1, 10)]
    scope = "\n".join("      " + line for line in lines)
    return HEAD + TOOL + "model:\n  - tool: logs\n    scope:\n" + scope + "\n"


def _recursive_alias() -> str:
    return HEAD + TOOL + "model:\n  - tool: logs\n    scope: &s {again: *s}\n"


def _matrix_product() -> str:
    axes = "".join(f"  axis{a}: [{', '.join(str(v) for v in range(10))}]\n" for a in range(6))
    return HEAD + "matrix:\n" + axes


def _unknown_keys(count: int) -> Callable[[], str]:
    return lambda: HEAD + "".join(f"key{i}: 1\n" for i in range(count))


def _duplicate_keys(count: int) -> Callable[[], str]:
    return lambda: HEAD + "config:\n" + "  deadline_s: 1\n" * count


def _oversize() -> str:
    return HEAD + ("# padding\n" * 120_000)


def _infinite_latency() -> str:
    return HEAD + "latency: {model: .inf}\nfaults:\n  - {kind: deadline, at_s: .nan}\n"


TEXT_FAMILIES: dict[str, Callable[[], str]] = {
    "flow nesting (500 '[')": _flow_nesting,
    "block nesting (3,000 levels)": _block_nesting(3_000),
    "block nesting (800 levels, under the size limit)": _block_nesting(800),
    "4,400-digit integer": _long_integer,
    "integer beyond 64 bits": _beyond_int64,
    "alias bomb in a tool scope": _alias_bomb,
    "merge-key bomb": _merge_bomb,
    "recursive alias": _recursive_alias,
    "matrix of six 10-value axes": _matrix_product,
    "50,000 unknown keys": _unknown_keys(50_000),
    "30,000 unknown keys (under the value limit)": _unknown_keys(30_000),
    "50,000 duplicate keys": _duplicate_keys(50_000),
    "30,000 duplicate keys (under the value limit)": _duplicate_keys(30_000),
    "file over 1 MiB": _oversize,
    "infinite and NaN times": _infinite_latency,
}
"""Families written as ordinary files: their text is the hostile part."""


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _directory(path: Path) -> None:
    path.mkdir()


FILE_FAMILIES: dict[str, Callable[[Path], None]] = {
    "FIFO named x.yaml": _fifo,
    "symlink to /dev/zero": _dev_zero,
    "directory named x.yaml": _directory,
}
"""Families that are not regular files."""

FAMILIES = (*TEXT_FAMILIES, *FILE_FAMILIES)
"""Every family's name."""


def write(family: str, directory: Path) -> Path:
    """Write the file of ``family`` into ``directory`` as ``x.yaml``; its path."""
    path = directory / "x.yaml"
    if family in TEXT_FAMILIES:
        path.write_text(TEXT_FAMILIES[family](), encoding="utf-8")
    else:
        FILE_FAMILIES[family](path)
    return path
