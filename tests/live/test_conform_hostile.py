"""conform against a harness whose events and stored runs are not what the contract says: an
error naming what is wrong and where, never a traceback."""

from __future__ import annotations

import socket
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import ClassVar

import pytest

from harness_lab.background_http import BackgroundHTTPServer
from harness_lab.cli import main

SCENARIO = (Path(__file__).resolve().parents[2] / "scenarios" / "outcomes"
            / "conclusion-guards-pass.yaml")
METADATA = b'event: metadata\ndata: {"sessionId": "s-1", "runId": "r-1"}\n\n'
DONE = b'event: done\ndata: {"outcome": "SUCCESS"}\n\n'


class Hostile(BaseHTTPRequestHandler):
    """POST /chat streams ``events``; GET /runs/r-1 answers ``stored``; the trace is 404."""

    events: ClassVar[bytes] = METADATA + DONE
    stored: ClassVar[bytes] = b"{}"
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass

    def do_GET(self) -> None:  # noqa: N802
        if self.path != "/runs/r-1":
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(self.stored)

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        self.wfile.write(self.events)


def conform_error(capsys: pytest.CaptureFixture[str], name: str) -> str:
    """The reason ``conform`` gives for its one scenario's error against the hostile harness."""
    with BackgroundHTTPServer(Hostile, name=f"hostile-{name}") as server:
        assert main(["conform", server.url, str(SCENARIO)]) == 1
    lines = capsys.readouterr().out.splitlines()
    prefix = "conclusion-guards-pass (error): "
    found = [line.removeprefix(prefix) for line in lines if line.startswith(prefix)]
    assert len(found) == 1, lines
    return found[0]


@pytest.mark.parametrize(("events", "why"), [
    (b"event: metadata\ndata: not json\n\n" + DONE,
     "the metadata event's data is not a JSON object: 'not json'"),
    (b"event: metadata\ndata: " + b"[" * 100_000 + b"\n\n",
     "its 'metadata' event (number 1): nested 100000 levels deep, more than the 64 this "
     "toolkit reads"),
    (b'event: metadata\ndata: {"runId": 1' + b"0" * 5000 + b"}\n\n",
     "its 'metadata' event (number 1): an integer of 5001 digits (outside the 64-bit range)"),
], ids=["metadata-not-json", "deeply-nested-event", "five-thousand-digit-number"])
def test_an_event_beyond_json_or_its_limits_is_an_error_naming_the_event(
        events: bytes, why: str, capsys: pytest.CaptureFixture[str]) -> None:
    Hostile.events, Hostile.stored = events, b"{}"
    assert conform_error(capsys, "events").endswith(why)


@pytest.mark.parametrize(("stored", "why"), [
    (b"[1, 2, 3]", "an array, not an object"),
    (b'"SUCCESS"', "a string, not an object"),
    (b"<html>", ":1: not JSON: Expecting value at column 1"),
    (b"[" * 100_000, ": nested 100000 levels deep, more than the 64 this toolkit reads"),
], ids=["an-array", "a-string", "html", "deeply-nested"])
def test_a_stored_run_that_is_not_a_json_object_is_an_error_naming_its_url(
        stored: bytes, why: str, capsys: pytest.CaptureFixture[str]) -> None:
    Hostile.events, Hostile.stored = METADATA + DONE, stored
    error = conform_error(capsys, "stored")
    assert error.startswith("the stored run at http://127.0.0.1:")
    assert error.endswith(f"/runs/r-1{'' if why.startswith(':') else ': '}{why}")


def test_the_reason_is_wrapped_to_the_terminal_under_its_scenario(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    Hostile.events, Hostile.stored = METADATA + DONE, b"[1, 2, 3]"
    monkeypatch.setenv("COLUMNS", "60")
    with BackgroundHTTPServer(Hostile, name="hostile-wrapped") as server:
        assert main(["conform", server.url, str(SCENARIO)]) == 1
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines)
                 if line.startswith("conclusion-guards-pass (error): "))
    said = [lines[start]] + [line for line in lines[start + 1:] if line.startswith("    ")]
    assert len(said) > 1 and max(map(len, said)) <= 60
    assert " ".join(" ".join(said).split()).endswith("/runs/r-1: an array, not an object")


def test_a_url_where_nothing_answers_is_one_line_before_any_scenario_plays(
        capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    assert main(["conform", url, str(SCENARIO)]) == 2
    out, err = capsys.readouterr()
    assert out == ""  # no table of scenarios that each say the same
    assert err.startswith(f"harness-lab conform: nothing answers at {url} (")
    assert err.endswith("give --serve to play against a serve of its own\n")
    assert len(err.splitlines()) == 1


def test_a_database_serve_could_not_open_is_one_line_before_any_serve_starts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path}/nope/runs.db"
    assert main(["conform", "--serve", str(SCENARIO), "--db", db]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (f"harness-lab conform: --db {db}: the directory {tmp_path}/nope does not "
                   "exist\n")
