"""``pytest --scenario-otlp URL``: each scenario item's runs sent as OpenTelemetry traces (the
pytest plugin calls these hooks).

The URL is checked when the session is configured (a bad one, or a missing ``otel`` extra,
is a usage error before any test runs). Each item's runs, earlier turns of a session
scenario first, are queued as the item is judged, virtual second 0 placed at the wall-clock
time its call started, and sent by a :class:`~harness_lab.otel.background.BackgroundExport`
while the next items run; what is still queued is sent when the session ends, and the
terminal summary says how many spans of how many runs went. Under pytest-xdist each worker
sends the runs of its own items and hands its figures to the controller, which sends nothing
and says the sum.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import pytest

from harness_lab.pytest_session import distributing, handed_over

if TYPE_CHECKING:
    from harness_lab.otel.background import BackgroundExport, BackgroundSummary
    from harness_lab.runner.run import ScenarioResult

__all__ = ["OPTION", "add_option", "close", "open_export", "send_result", "summary_line"]

OPTION = "--scenario-otlp"
"""The option naming the OTLP/HTTP endpoint."""

_EXPORT = pytest.StashKey["BackgroundExport"]()
_URL = pytest.StashKey[str]()
_SENT = pytest.StashKey["BackgroundSummary"]()
_FIGURES = "harness_lab_otlp"
"""The key of a pytest-xdist worker's export figures in what it hands the controller."""


def add_option(group: Any) -> None:
    """``--scenario-otlp URL``."""
    group.addoption(OPTION, metavar="URL", default=None,
                    help="also send each scenario item's runs as OpenTelemetry traces to this "
                         "OTLP/HTTP endpoint (e.g. http://127.0.0.1:4318; needs the otel "
                         "extra)")


def open_export(config: pytest.Config) -> None:
    """Check ``--scenario-otlp`` and start the session's export (nothing without it)."""
    url = config.getoption(OPTION, None)
    if not url:
        return
    from harness_lab.otel.endpoint import checked_endpoint

    try:
        target = checked_endpoint(url)
    except ValueError as exc:
        raise pytest.UsageError(f"{OPTION}: {exc}") from None
    except ModuleNotFoundError as exc:
        raise pytest.UsageError(f"{OPTION} needs the optional package {exc.name!r}; install "
                                "it with: pip install 'harness_lab[otel]'") from None
    config.stash[_URL] = target
    if distributing(config):  # the workers send; this process adds up what they say
        config.pluginmanager.register(_WorkerFigures(config), "harness_lab_otlp_workers")
        return
    from harness_lab.otel.background import BackgroundExport

    config.stash[_EXPORT] = BackgroundExport(target)


def send_result(config: pytest.Config, result: ScenarioResult, started_at: float) -> None:
    """Queue every run of one item's ``result``, virtual second 0 at ``started_at`` (Unix
    time)."""
    export = _export(config)
    if export is None:
        return
    for record in (*result.turns, result.record):
        if record is not None:
            export.submit(record, result.scenario, started_at)


def close(config: pytest.Config) -> BackgroundSummary | None:
    """Send what is still queued and end the export; what it sent and lost (None: there was
    none)."""
    export = _export(config)
    if export is None:
        return None
    del config.stash[_EXPORT]
    sent = config.stash[_SENT] = export.close()
    handed = handed_over(config)
    if handed is not None:
        handed[_FIGURES] = dataclasses.asdict(sent)
    return sent


def summary_line(config: pytest.Config) -> str | None:
    """What the export sent and lost, in one line (None when there was none)."""
    sent = config.stash.get(_SENT, None)
    return None if sent is None else f"harness-lab {sent.describe(config.stash[_URL])}"



def _export(config: pytest.Config) -> BackgroundExport | None:
    return config.stash.get(_EXPORT, None)


class _WorkerFigures:
    """The controller's plugin that adds up the figures each worker hands over at its end."""

    def __init__(self, config: pytest.Config) -> None:
        from harness_lab.otel.background import BackgroundSummary

        self.config = config
        config.stash[_SENT] = BackgroundSummary(0, 0, 0, 0, 0)

    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """Add the figures of the worker ``node``, when it handed any."""
        figures = getattr(node, "workeroutput", {}).get(_FIGURES)
        if figures:
            total = self.config.stash[_SENT]
            self.config.stash[_SENT] = dataclasses.replace(
                total, **{k: getattr(total, k) + figures[k] for k in figures})
