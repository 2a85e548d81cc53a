"""The console of a stream: how wide, whether in colour, as the environment says."""

from __future__ import annotations

import functools
import io
import os
import re
import shutil
import sys
from typing import IO, TYPE_CHECKING, Literal, TextIO

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["UNBOUNDED", "colour_wanted", "console", "cut", "holds", "is_terminal", "printable",
           "tolerant_streams", "width_of"]

UNBOUNDED = 100_000
"""The width of a stream that is not a terminal and has no ``COLUMNS``: nothing is shortened,
so piped output keeps whole names for grep and friends."""


_UNPRINTABLE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` as a terminal may be given it: each control character but the line break
    written as its escape (``\\x1b``, ``\\r``, ``\\t``, ``\\u202e``), so that text from a
    file (a scenario's name, a model's answer) can neither recolour nor rewrite the screen
    nor reorder a line; the caller splits or joins its lines."""
    return _UNPRINTABLE.sub(lambda m: repr(m.group())[1:-1], text)


def holds(text: str, stream: IO[str]) -> bool:
    """True when ``stream``'s encoding can write ``text`` (a stream that names no encoding
    is taken to)."""
    encoding = getattr(stream, "encoding", None)
    if not encoding:
        return True
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def tolerant_streams() -> None:
    """Make standard output and error write what their encoding cannot hold as escapes
    (``\\u2026``), as pytest does, rather than end a command in a UnicodeEncodeError: a
    console or ``PYTHONIOENCODING`` that is not UTF-8."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and not holds("\u2026\u00a7\u2192", stream):
            stream.reconfigure(errors="backslashreplace")


def is_terminal(stream: TextIO) -> bool:
    """True when ``stream`` is attached to a terminal."""
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def colour_wanted(stream: TextIO) -> bool:
    """Colour on a terminal and nowhere else; ``NO_COLOR`` (any non-empty value) turns it off,
    ``FORCE_COLOR`` (any non-empty value) on, as https://no-color.org and
    https://force-color.org ask. ``NO_COLOR`` wins when both are set."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return is_terminal(stream)


def width_of(stream: TextIO) -> int:
    """``COLUMNS`` when it is a positive number, else the terminal's width on a terminal, else
    :data:`UNBOUNDED`."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if is_terminal(stream):
        return shutil.get_terminal_size().columns
    return UNBOUNDED


def cut(line: str, width: int) -> str:
    """``line`` cut to ``width`` characters, ending in ``…`` when cut."""
    return line if len(line) <= width else line[:max(width - 1, 0)] + "…"


def console(stream: TextIO | None = None, *, width: int | None = None,
            colour: bool | None = None) -> Console:
    """A rich console writing to ``stream`` (standard output by default) with the width and
    colour this module decides (or ``width`` and ``colour`` when given: a file written with
    ``--out`` is neither coloured nor cut); no markup, emoji or highlighting is read from
    the text."""
    out = sys.stdout if stream is None else stream
    colour = colour_wanted(out) if colour is None else colour
    # what a terminal supports (rich reads COLORTERM and TERM); 24-bit colour when FORCE_COLOR
    # asks for colour on something that is not a terminal
    system: Literal["auto", "truecolor"] | None = (
        ("auto" if is_terminal(out) else "truecolor") if colour else None)
    return _console_class()(file=out, width=width_of(out) if width is None else width,
                            force_terminal=colour, no_color=not colour, color_system=system,
                            highlight=False, markup=False, emoji=False, soft_wrap=False,
                            legacy_windows=False)


@functools.cache
def _console_class() -> type[Console]:
    """rich's Console, but a closed pipe raises BrokenPipeError to the command (which exits
    141, as a shell has it) instead of rich's ``SystemExit(1)``."""
    from rich.console import Console

    class PipeConsole(Console):
        """A console that lets a closed pipe reach the command line's handler."""

        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    return PipeConsole
