"""The OTLP/HTTP endpoint a command is given: checked before anything runs, completed with
the traces path when it has none (as ``OTEL_EXPORTER_OTLP_ENDPOINT`` is)."""

from __future__ import annotations

import importlib
from typing import Final
from urllib.parse import urlsplit, urlunsplit

__all__ = ["TRACES_PATH", "checked_endpoint", "endpoint_problem", "traces_url"]

TRACES_PATH: Final = "/v1/traces"
"""Where an OTLP/HTTP receiver takes spans."""


def endpoint_problem(url: str) -> str | None:
    """What is wrong with ``url`` as an OTLP/HTTP endpoint, or None when nothing is."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - reading it checks the port
    except ValueError as exc:
        return f"{url!r} is not a URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return f"{url!r} is not an http:// or https:// URL (OTLP over HTTP)"
    if not parts.hostname:
        return f"{url!r} names no host"
    return None


def traces_url(url: str) -> str:
    """``url`` with the path :data:`TRACES_PATH` when it has no path of its own."""
    parts = urlsplit(url)
    if parts.path in ("", "/"):
        return urlunsplit(parts._replace(path=TRACES_PATH))
    return url


def checked_endpoint(url: str) -> str:
    """The traces URL of a command's ``--otlp url``, checked before anything runs: ValueError
    naming what is wrong with it (:func:`endpoint_problem`), ModuleNotFoundError when the
    ``otel`` extra is not installed (the export's module is imported here, so a command that
    runs for hours does not find out at its end)."""
    problem = endpoint_problem(url)
    if problem is not None:
        raise ValueError(problem)
    importlib.import_module("harness_lab.otel.export")
    return traces_url(url)
