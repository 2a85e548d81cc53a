"""A throwaway Arize Phoenix server for tests: ``phoenix serve`` on free ports, its SQLite
database in a temporary working directory, stopped at the end.

Phoenix is a program the tests talk to over HTTP alone (OTLP in, its REST API out), like the
PostgreSQL server of ``tests/postgres.py``: its ``phoenix`` command is looked for beside this
interpreter, then on ``PATH``, and the tests that need it skip, saying why, when it is not
installed (``pip install arize-phoenix``, which the ``test`` extra has). It takes some 20 s
to start.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

__all__ = ["PhoenixServer", "phoenix", "phoenix_command"]

START_S = 180.0
"""Seconds Phoenix gets to answer its health check."""


def phoenix_command() -> str | None:
    """The ``phoenix`` command: beside this interpreter, else on ``PATH``; None if neither."""
    beside = Path(sys.executable).with_name("phoenix")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("phoenix")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class PhoenixServer:
    """``phoenix serve`` in a temporary working directory: its URL, and its spans as its
    REST API gives them."""

    def __init__(self, command: str) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="harness-lab-phoenix-"))
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "PHOENIX_WORKING_DIR": str(self.home),
               "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(self.port),
               "PHOENIX_GRPC_PORT": str(_free_port()),
               "PHOENIX_SQL_DATABASE_URL": f"sqlite:///{self.home / 'phoenix.db'}",
               "PHOENIX_TELEMETRY_ENABLED": "false"}
        self.log = (self.home / "phoenix.log").open("w")
        self.process = subprocess.Popen([command, "serve"], env=env, stdout=self.log,
                                        stderr=subprocess.STDOUT, cwd=self.home)
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_S
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"phoenix serve exited {self.process.returncode}:\n"
                                   f"{self._log_tail()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"phoenix serve did not answer within {START_S:g} s:\n"
                                   f"{self._log_tail()}")
            time.sleep(0.5)

    def _log_tail(self) -> str:
        self.log.flush()
        return "\n".join((self.home / "phoenix.log").read_text().splitlines()[-30:])

    def spans(self, **query: Any) -> list[dict[str, Any]]:
        """The spans of the default project that ``query`` selects (``trace_id``,
        ``parent_id``, ``name``, ...; the REST API's ``GET /v1/projects/ID/spans``)."""
        found: list[dict[str, Any]] = []
        cursor = None
        while True:
            params = {**query, "limit": 1000, **({"cursor": cursor} if cursor else {})}
            answer = httpx.get(f"{self.url}/v1/projects/default/spans", params=params,
                               timeout=30.0)
            answer.raise_for_status()
            page = answer.json()
            found += page["data"]
            cursor = page.get("next_cursor")
            if not cursor:
                return found

    def trace_of(self, count: int, **attributes: Any) -> list[dict[str, Any]]:
        """The spans of the trace whose root has ``attributes``, once ``count`` of them are
        stored (Phoenix stores what it receives in batches, a moment later); [] after 60 s."""
        deadline = time.monotonic() + 60.0
        while True:
            roots = [s for s in self.spans(parent_id="null")
                     if all(s["attributes"].get(k) == v for k, v in attributes.items())]
            if len(roots) == 1:
                spans = self.spans(trace_id=roots[0]["context"]["trace_id"])
                if len(spans) >= count:
                    return spans
            if time.monotonic() > deadline:
                return []
            time.sleep(0.5)

    def stop(self) -> None:
        """Stop the server and remove its directory."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        shutil.rmtree(self.home, ignore_errors=True)


@pytest.fixture(scope="module")
def phoenix() -> Iterator[PhoenixServer]:
    """A Phoenix server for the module's tests; skipped, saying why, when none is installed."""
    command = phoenix_command()
    if command is None:
        pytest.skip("Arize Phoenix is not installed: pip install arize-phoenix (in the test "
                    "extra), or put its phoenix command on PATH")
    server = PhoenixServer(command)
    try:
        yield server
    finally:
        server.stop()
