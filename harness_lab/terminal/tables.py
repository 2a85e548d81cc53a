"""Tables that fit the terminal: long names shortened, states never.

A table has one *name* column (scenario or variant names, which matrix variants make long)
and value columns (states, verdicts) that are shown whole. The name column gets the width the
others leave, down to :data:`MIN_NAME_WIDTH`; names longer than that are shortened in the
middle, keeping a matrix variant's ``[...]`` part, which tells variants apart. Before a
name is cut under :data:`COMFORTABLE_NAME_WIDTH`, the *optional* columns (the run table's
intent) are left out, and a last line says which.
"""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TextIO

from harness_lab.terminal.console import UNBOUNDED, console, holds, printable

__all__ = ["COMFORTABLE_NAME_WIDTH", "ELLIPSIS", "MIN_NAME_WIDTH", "Column", "fit_widths", "human",
           "print_table", "shorten", "shown_columns"]

ELLIPSIS = "…"
MIN_NAME_WIDTH = 12
"""The narrowest the name column gets before value columns would have to be cut (they never
are: on a terminal narrower than that, lines wrap)."""

COMFORTABLE_NAME_WIDTH = 32
"""The name column's width (or its widest name, if narrower) below which optional columns
are left out to give names room: most scenario names of the shipped library fit in it."""

_VARIANT_KEYS = re.compile(r"(?<=[\[,])[^=\[\],]+=([^,\]]*)")
_DOTTED_KEY = re.compile(r"(?<=[\[,])[A-Za-z_][\w]*\.(?=[\w.]*=)")


@dataclass(frozen=True, slots=True)
class Column:
    """One column: its key in the rows, its header, and how its cells are styled.

    ``style`` maps a cell's text to a rich style (a colour such as ``#117733``), or to None
    for the default; ``row_style`` maps the whole row instead (a release outcome coloured as
    its fallback type and run state make it). ``name=True`` marks the one column that may be
    shortened; ``optional=True`` marks a column left out on a terminal too narrow for
    comfortable names, ``optional="fit"`` one left out only when the line would not fit the
    terminal otherwise (optional columns go in the order they are listed).
    """

    key: str
    header: str
    name: bool = False
    style: Callable[[str], str | None] | None = None
    row_style: Callable[[Mapping[str, Any]], str | None] | None = None
    right: bool = False
    optional: bool | Literal["fit"] = False


def human(value: Any) -> str:
    """A cell's text for people: ``-`` for nothing, floats to three significant figures
    (``0.000549``, ``0.877``, ``12.3``), thousands separated (``16,739``), a multi-line value
    joined with ``; ``."""
    if value is None or (isinstance(value, float) and value != value):
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return f"{int(value):,}"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.3g}"
    return "; ".join(map(printable, str(value).splitlines()))


def shorten(name: str, width: int) -> str:
    """``name`` in at most ``width`` characters.

    A matrix variant's keys lose their dotted prefix first (``[config.deadline_s=6.5]`` reads
    ``[deadline_s=6.5]``), then, if still too long, the keys themselves (``[6.5,3]``: the
    values tell the variants of one file apart); then the base name is cut before the part
    that tells variants apart (a matrix variant's ``[...]``, an explored variant's
    ``@point/fault``), or, when that part alone is too long, the middle of the whole name
    gives way to ``…``.
    """
    if len(name) <= width:
        return name
    for pattern, kept in ((_DOTTED_KEY, ""), (_VARIANT_KEYS, r"\1")):
        name = pattern.sub(kept, name)
        if len(name) <= width:
            return name
    if width <= 1:
        return ELLIPSIS[:width]
    cut = min((i for i in (name.find("["), name.find("@")) if i > 0), default=-1)
    if cut > 0:
        base, variant = name[:cut], name[cut:]
        room = width - len(variant) - len(ELLIPSIS)
        if room >= 1:
            return base[:room] + ELLIPSIS + variant
    head = (width - len(ELLIPSIS) + 1) // 2
    tail = width - len(ELLIPSIS) - head
    return name[:head] + ELLIPSIS + (name[-tail:] if tail else "")


def shorten_all(names: Sequence[str], width: int) -> list[str]:
    """Each of ``names`` in at most ``width`` characters (:func:`shorten`), told apart: names
    whose shortened forms would read alike are shown instead by a window of ``width`` around
    where they first differ (``…get-tokens``, ``…get-bytes``), so no two rows look the same."""
    shown = [shorten(n, width) for n in names]
    for _ in range(8):  # a window can meet another name's: look again, a few times at most
        groups: dict[str, list[int]] = {}
        for i, s in enumerate(shown):
            groups.setdefault(s, []).append(i)
        clashes = [ix for ix in groups.values() if len({names[i] for i in ix}) > 1]
        if not clashes or width < 3:
            break
        for indices in clashes:
            first = len(os.path.commonprefix([names[i] for i in indices]))
            for i in indices:
                shown[i] = _window(names[i], max(0, first - 3), width)
    return shown


def _window(name: str, start: int, width: int) -> str:
    """``width`` characters of ``name`` from ``start``, ``…`` marking what is left out."""
    if len(name) <= width:
        return name
    start = min(start, max(0, len(name) - width + 1))
    lead = ELLIPSIS if start > 0 else ""
    room = width - len(lead)
    body = name[start:start + room]
    if start + room < len(name):
        body = body[:room - 1] + ELLIPSIS
    return lead + body


def fit_widths(cells: Sequence[Sequence[str]], columns: Sequence[Column], width: int,
               gap: int = 2) -> tuple[list[int], int]:
    """Each column's width and the gap between columns, so a line fits ``width``.

    Value columns keep their widest cell; the gap narrows from ``gap`` to 1 before the name
    column goes under its widest cell, and the name column never under
    :data:`MIN_NAME_WIDTH` (nor its widest cell, if that is narrower).
    """
    natural = [max([len(c.header)] + [len(row[i]) for row in cells])
               for i, c in enumerate(columns)]
    i = next((i for i, c in enumerate(columns) if c.name), None)
    if i is None:
        return natural, gap
    others = sum(w for j, w in enumerate(natural) if j != i)
    for g in range(gap, 0, -1):
        room = width - others - g * (len(columns) - 1)
        if room >= natural[i]:
            return natural, g
    room = width - others - (len(columns) - 1)
    widths = list(natural)
    widths[i] = max(min(natural[i], MIN_NAME_WIDTH), room)
    return widths, 1


def shown_columns(cells: Sequence[Sequence[str]], columns: Sequence[Column],
                  width: int) -> list[int]:
    """The indices of the columns to show at ``width``: all, unless the name column would be
    narrower than :data:`COMFORTABLE_NAME_WIDTH` (or its widest name), when the
    ``optional=True`` columns are left out in order until the names have that room; and
    ``optional="fit"`` columns, in order, while a line would still be wider than ``width``."""
    keep = list(range(len(columns)))
    named = next((i for i, c in enumerate(columns) if c.name), None)
    if named is None:
        return keep
    wanted = min(COMFORTABLE_NAME_WIDTH,
                 max([len(columns[named].header)] + [len(row[named]) for row in cells]))
    comfort = [i for i, c in enumerate(columns) if c.optional is True]
    fit = [i for i, c in enumerate(columns) if c.optional == "fit"]
    while True:
        widths, gap = fit_widths([[row[i] for i in keep] for row in cells],
                                 [columns[i] for i in keep], width)
        if widths[keep.index(named)] < wanted and comfort:
            keep.remove(comfort.pop(0))
        elif sum(widths) + gap * (len(widths) - 1) > width and fit:
            keep.remove(fit.pop(0))
        else:
            return keep


def print_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[Column],
                stream: TextIO | None = None, *, plain: bool = False) -> None:
    """Print ``rows`` as a table that fits the stream's width, coloured on a terminal.

    ``plain`` (a file written with ``--out``): no colour and nothing shortened.
    """
    from rich.table import Table
    from rich.text import Text

    out = console(stream, width=UNBOUNDED, colour=False) if plain else console(stream)
    terminal_width = out.width
    cells = [[human(row.get(c.key)) for c in columns] for row in rows]
    keep = shown_columns(cells, columns, out.width)
    hidden = [c.header for i, c in enumerate(columns) if i not in keep]
    columns = [columns[i] for i in keep]
    cells = [[line[i] for i in keep] for line in cells]
    widths, gap = fit_widths(cells, columns, out.width)
    out.width = max(out.width, sum(widths) + gap * (len(widths) - 1))  # states are never cut
    table = Table(box=None, padding=(0, gap, 0, 0), pad_edge=False, show_edge=False,
                  header_style="bold", collapse_padding=True)
    for c, w in zip(columns, widths, strict=True):
        table.add_column(c.header, no_wrap=True, width=w, overflow="ellipsis",
                         justify="right" if c.right else "left")
    names = {j: shorten_all([line[j] for line in cells], w)
             for j, (c, w) in enumerate(zip(columns, widths, strict=True)) if c.name}
    for k, (row, line) in enumerate(zip(rows, cells, strict=True)):
        texts = []
        for j, (c, text) in enumerate(zip(columns, line, strict=True)):
            shown = names[j][k] if c.name else text
            style = (c.row_style(row) if c.row_style is not None
                     else c.style(text) if c.style is not None else None)
            texts.append(Text(shown, style=style or ""))
        table.add_row(*texts)
    with out.capture() as captured:
        out.print(table)
    lines = captured.get().splitlines()
    if hidden:
        note = (f"({', '.join(hidden)} left out at this width: widen the terminal or use "
                "--format json)")
        lines += textwrap.wrap(note, width=terminal_width)
    text = "".join(line.rstrip() + "\n" for line in lines)
    if not holds(ELLIPSIS, out.file):  # one character still, so the columns stay aligned
        text = text.replace(ELLIPSIS, "~")
    out.file.write(text)
