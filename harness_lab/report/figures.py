"""Figures the plotting functions draw on: Axes that show themselves in Jupyter, PNG bytes.

Every figure is a plain :class:`matplotlib.figure.Figure`, never registered with pyplot, so
any number can be drawn, from any thread, each freed with its last reference; the
:class:`PlotAxes` a plotting function returns shows its whole figure inline in Jupyter, once.
A user's own ``ax`` (from ``plt.subplots``) is drawn on and shown by pyplot as usual. Why:
docs/plots.md, "Showing and saving a plot".
"""

from __future__ import annotations

import io
import struct
from pathlib import Path
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure, SubFigure

__all__ = ["PlotAxes", "PlotFigure", "axis_label", "figure_of", "figure_png", "new_axes"]

DISPLAY_DPI = 100
"""Dots per inch of a figure's displayed size; its PNG is rendered at twice that (HiDPI)."""


class _Inline:
    """What shows a figure, or an Axes's whole figure, inline in Jupyter."""

    def _repr_png_(self: Any) -> bytes:
        return figure_png(self)

    def _repr_mimebundle_(self: Any, include: Any = None, exclude: Any = None
                          ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A PNG at twice the display resolution with its display size, so it stays sharp."""
        data = figure_png(self, dpi=2 * DISPLAY_DPI)
        width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk's size fields
        return ({"image/png": data, "text/plain": repr(self)},
                {"image/png": {"width": width // 2, "height": height // 2}})


class PlotFigure(_Inline, Figure):
    """A figure that displays itself inline in Jupyter, like the :class:`PlotAxes` on it.

    So ``ax.figure`` as the last expression of a cell shows the plot too.
    """


class PlotAxes(_Inline, Axes):
    """An Axes that displays its figure inline in Jupyter and saves it in one call.

    Everything an Axes does works unchanged; on top, ``_repr_png_`` and
    ``_repr_mimebundle_`` let IPython show the figure, and :meth:`savefig` and :meth:`png`
    write it. Plotting functions make one through :func:`new_axes`.
    """

    name = "harness_lab_plot"

    def png(self, *, dpi: int = DISPLAY_DPI) -> bytes:
        """The whole figure as PNG bytes."""
        return figure_png(self, dpi=dpi)

    def savefig(self, path: str | Path, **kwargs: Any) -> None:
        """Write the whole figure to ``path`` (any format matplotlib knows by its suffix)."""
        figure_of(self).savefig(path, **kwargs)


def new_axes(figsize: tuple[float, float]) -> PlotAxes:
    """A :class:`PlotAxes` on a new constrained-layout :class:`PlotFigure` (never pyplot's)."""
    fig = PlotFigure(figsize=figsize, layout="constrained")
    ax = fig.add_subplot(axes_class=PlotAxes)
    assert isinstance(ax, PlotAxes)
    return ax


def figure_of(artist: Axes | Figure | SubFigure) -> Figure:
    """The top-level figure holding ``artist``."""
    fig: Any = artist if isinstance(artist, Figure) else artist.figure
    while not isinstance(fig, Figure):
        fig = fig.figure
    return fig


def figure_png(ax_or_fig: Axes | Figure | SubFigure, *, dpi: int = DISPLAY_DPI) -> bytes:
    """The whole figure holding ``ax_or_fig`` rendered as PNG bytes (no pyplot involved)."""
    buffer = io.BytesIO()
    figure_of(ax_or_fig).savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    return buffer.getvalue()


_UNITS = (("_ms", "ms"), ("_s", "s"), ("_rate", "per virtual s"), ("_bytes", "bytes"),
          ("_tokens", "tokens"))


def axis_label(name: str) -> str:
    """A column name as an axis label with its unit: ``config.deadline_s (s)``.

    The unit is read from the name's suffix (``_s``, ``_ms``, ``_rate``, ``_bytes``,
    ``_tokens``); a name without one is returned as is.
    """
    for suffix, unit in _UNITS:
        if name.endswith(suffix):
            return f"{name} ({unit})"
    return name
