"""Conformance: a scenario file played against a live harness over HTTP and SSE.

For each scenario :func:`conform_scenario` loads its scripts into the scripted providers
(:class:`~harness_lab.scripted.server.ProvidersServer`), sends its query as a real SSE
client, injects its client disconnects (the connection really closed) and user cancels (the
cancel endpoint) at the lifecycle points it names, synchronised by holding the named provider
call, collects the SSE events, the stored row and the trace, rebuilds the run (the audit's
:func:`~harness_lab.audit.rebuild.rebuild`) and checks the expectations that can be observed
from outside and the invariants; then compares the live outcome with the simulated prediction
(the same scenario run by the scenario runner).

A lifecycle point ``before`` a call cannot be reached from outside the harness (it passes it
without any I/O): it is realised while the call is in flight, so that call's result arrives
after the cancellation and is discarded instead of never being asked for.

Times are compared on the simulated run's timeline: a live trace counts from the server's
start and a live row is dated by the wall clock, so each live time is taken relative to the
live run's own start and placed after the simulated run's start. Times and durations then
match an expected value within a :class:`Tolerance` (a wall clock's jitter); states,
outcomes, kinds, the order and the counts of events are still compared exactly.
"""

from __future__ import annotations

import math
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard, TypeVar

import httpx

from harness_lab.bounded_json import NotJsonError, parse_json
from harness_lab.live.adapter import Adapter, StreamLimitsSpec
from harness_lab.redact import shown_url
from harness_lab.runner.expect import Mismatch, compare
from harness_lab.runner.observe import observe
from harness_lab.scenarios import faults as fs
from harness_lab.scenarios.loader import LoadedScenario
from harness_lab.scenarios.spec import Expect, Scenario
from harness_lab.scripted import ProvidersServer
from harness_lab.states import CancellationReason, TraceEventType

__all__ = ["LIVE_FIELDS", "OUTCOME_AXES", "ConformResult", "Outcome", "StreamLimitError",
           "Tolerance", "conform_scenario", "default_tolerance", "held_for_the_disconnect",
           "not_applicable"]

INVOCATION_RULES = ("cited_ready_only", "ready_has_evidence_status", "no_evidence_not_promoted",
                    "no_evidence_tool_after_saturation")
"""Invariants that read the run's tool invocations: checked only where a database gives them."""

LIVE_FIELDS = ("run_state", "release_outcome", "fallback_type", "db_status", "intent",
               "termination_reason", "sse", "sse_state", "trace", "trace_contains",
               "trace_excludes", "tool_calls", "model_calls", "failure_code", "done_outcome",
               "published_result", "crashed", "statuses", "row")
"""Expectations a live run can be checked on (from the SSE stream, the row and the trace);
the others (what each call received, the ProgressSnapshot, ``discarded``, ``gains``,
``rejections``...) are the model's own bookkeeping."""

OUTCOME_AXES = ("run_state", "release_outcome", "fallback_type", "db_status", "sse",
                "statuses")
"""What parity compares between the simulated and the live run."""

SETTLE_S = 0.3
"""Wall seconds a held call waits after a disconnect or cancel, for the harness to see it."""

DISCONNECT_HOLD_S = 2.0
"""Wall seconds at the most that the call in flight is held while a client that leaves between
two events closes (:func:`held_for_the_disconnect`): a harness that makes that call before the
event the client waits for goes on after it, one call's answer late."""

_T = TypeVar("_T")


class StreamLimitError(RuntimeError):
    """A stream that broke one of the adapter's stream limits
    (:class:`~harness_lab.live.adapter.StreamLimitsSpec`)."""


@dataclass(frozen=True, slots=True)
class Tolerance:
    """How far a live time or duration may be from the expected one and still match it:
    ``seconds`` (virtual seconds) plus ``share`` of the time the run had taken by then (of
    a duration, of the duration itself)."""

    seconds: float
    share: float

    def __post_init__(self) -> None:
        for name in ("seconds", "share"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"a tolerance's {name} must be a finite number >= 0, "
                                 f"got {value!r}")

    @classmethod
    def parse(cls, text: str) -> Tolerance:
        """``SECONDS`` or ``SECONDS+PERCENT%`` (``0.5+5%``; ``0``: exact); ValueError
        saying the form otherwise."""
        m = _TOLERANCE.fullmatch(text.strip())
        if m is None:
            raise ValueError(f"{text!r}: give SECONDS or SECONDS+PERCENT% (e.g. 0.5+5%)")
        return cls(float(m["seconds"]), float(m["percent"] or 0) / 100)

    def allows(self, expected: float, observed: float, elapsed: float, unit: float) -> bool:
        """Whether ``observed`` matches ``expected``, ``elapsed`` after the run's start
        (in ``unit`` per virtual second: 1000 for milliseconds)."""
        return abs(observed - expected) <= self.seconds * unit + self.share * abs(elapsed)

    def __str__(self) -> str:
        return f"{self.seconds:g} s + {self.share * 100:g}%"


_TOLERANCE = re.compile(r"(?P<seconds>\d+(\.\d*)?|\.\d+)"
                        r"(\s*\+\s*(?P<percent>\d+(\.\d*)?|\.\d+)\s*%)?")

JITTER_WALL_S = 0.125
"""Wall seconds a live time was seen to stray from the simulated one by a wall clock's own
jitter (scheduling, the providers' HTTP, a busy machine): the default tolerance's absolute
part, measured on the library (docs/conform.md, Times and tolerance)."""

JITTER_SHARE = 0.05
"""The default tolerance's share of the run's elapsed time."""


def default_tolerance(time_scale: float) -> Tolerance:
    """The tolerance ``conform`` uses unless told otherwise: :data:`JITTER_WALL_S` in
    virtual seconds at ``time_scale`` (2.5 s at 0.05) plus :data:`JITTER_SHARE`."""
    return Tolerance(JITTER_WALL_S / time_scale, JITTER_SHARE)


class _Near(float):
    """A live time or duration: equal to each expected number within its tolerance (the
    matching language compares with ``==``; exact data stays exact)."""

    __slots__ = ("tolerance", "origin", "unit")
    tolerance: Tolerance
    origin: float
    unit: float

    def __new__(cls, value: float, tolerance: Tolerance, origin: float = 0.0,
                unit: float = 1.0) -> _Near:
        near = super().__new__(cls, value)
        near.tolerance, near.origin, near.unit = tolerance, origin, unit
        return near

    def __eq__(self, other: object) -> bool:
        if isinstance(other, bool) or not isinstance(other, int | float):
            return False
        return self.tolerance.allows(float(other), float(self), float(other) - self.origin,
                                     self.unit)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = float.__hash__

    def __repr__(self) -> str:
        return repr(round(float(self), 3))

    __str__ = __repr__


@dataclass(frozen=True, slots=True)
class Outcome:
    """The outcome axes of one run, as parity compares them."""

    run_state: str | None
    release_outcome: str | None
    fallback_type: str | None
    db_status: str | None
    sse: tuple[str, ...]
    statuses: tuple[str, ...]

    def differences(self, other: Outcome) -> list[str]:
        """``axis: mine != theirs`` for each axis that differs."""
        return [f"{axis}: {getattr(self, axis)} vs {getattr(other, axis)}"
                for axis in OUTCOME_AXES if getattr(self, axis) != getattr(other, axis)]

    def to_dict(self) -> dict[str, Any]:
        """JSON data."""
        return {a: (list(v) if isinstance(v := getattr(self, a), tuple) else v)
                for a in OUTCOME_AXES}


@dataclass(frozen=True, slots=True)
class ConformResult:
    """One scenario's conformance: ``pass``, ``fail``, ``n/a`` (with reasons) or ``error``."""

    scenario: str
    path: str
    verdict: str
    reasons: tuple[str, ...] = ()
    simulated: Outcome | None = None
    live: Outcome | None = None
    unchecked: tuple[str, ...] = ()
    run_id: str | None = None
    seconds: float = 0.0

    @property
    def applicable(self) -> bool:
        """Whether the scenario was played live."""
        return self.verdict != "n/a"

    @property
    def agrees(self) -> bool | None:
        """Whether the simulated and live outcomes agree (None when not both known)."""
        if self.simulated is None or self.live is None:
            return None
        return not self.simulated.differences(self.live)

    def to_dict(self) -> dict[str, Any]:
        """JSON data."""
        return {"scenario": self.scenario, "path": self.path, "verdict": self.verdict,
                "reasons": list(self.reasons), "run_id": self.run_id,
                "agrees": self.agrees, "unchecked": list(self.unchecked),
                "simulated": self.simulated.to_dict() if self.simulated else None,
                "live": self.live.to_dict() if self.live else None,
                "seconds": round(self.seconds, 3)}


def not_applicable(sc: Scenario, *, configurable: bool) -> list[str]:
    """Why ``sc`` cannot be played live (empty: it can).

    ``configurable``: the harness under test is started with the scenario's configuration
    (``conform --serve``), so configuration-level faults (a deadline in seconds, a budget
    exhausted from the start, a tool not authorised or not read-only) apply.
    """
    why: list[str] = []
    if sc.recorded is not None or sc.cassette is not None:
        why.append("replays a recorded cassette: its providers are the recording, not scripts")
    if sc.config.defects:
        why.append("seeds a defect into the toolkit's own core")
    for f in sc.faults:
        label = fs.describe(f)
        if isinstance(f, fs.Crash):
            why.append(f"{label}: the host process dying mid-run is simulated, not served")
        elif isinstance(f, fs.ServerShutdown):
            why.append(f"{label}: stopping the server under test mid-run would end every "
                       "later play; conform plays the library against one running server")
        elif isinstance(f, fs.Deadline | fs.BudgetExhausted) and f.at is not None:
            why.append(f"{label}: moves a limit at a lifecycle point inside the harness "
                       "(virtual time only)")
        elif fs.from_start(f):
            if not configurable:
                why.append(f"{label}: a configuration of the harness, which conform cannot set")
        elif isinstance(f, fs.ToolRejection) and f.reason in ("REQUEST", "STORE"):
            why.append(f"{label}: the harness's own request check or invocation store "
                       "refuses it; no provider can make it")
        elif isinstance(f, fs.ToolError) and f.error == "store":
            why.append(f"{label}: the harness's invocation store fails; no provider can")
        elif isinstance(f, fs.StoreFailure):
            why.append(f"{label}: the served harness's own run store would have to fail; a "
                       "live harness's database is not the scenario's to break")
        elif isinstance(f, fs.UserCancel) and f.at_s == 0:
            why.append(f"{label}: a cancel before the run has started; a client can name the "
                       "run only once its metadata event has come, when the run has begun")
    return why


def _sent_after_the_end(sc: Scenario, record: Any) -> list[str]:
    """A failed send of an SSE event the simulated run made after it had ended: live, the
    server learns of the closed connection before that (n/a, with the reason)."""
    ended = record is not None and record.run_state.value != "CANCELLED"
    return [f"{fs.describe(f)}: the send of event {f.sse_event} fails after the run has "
            "ended; a client can only close between events, and a live server notices the "
            "closed connection at once, before it has decided the release"
            for f in sc.faults if isinstance(f, fs.ClientDisconnect)
            and (f.sse_event or 0) > 1 and ended]


def held_for_the_disconnect(loaded: LoadedScenario) -> fs.At | None:
    """The provider call to hold while a client that leaves between two SSE events closes
    its connection: the first call the simulated run ended after the event before the one
    whose send failed (None: no such disconnect, or no call after that event).

    Live, the harness learns of the closed connection while that call is in flight, as the
    simulated run learns of it at the next send. On a loaded machine the call could end
    before the client has even closed, and the run go on to what the closed connection
    should have stopped; held until the harness had time to see it, it cannot."""
    from harness_lab.explore.boundaries import ExplorationError, record_base

    sc = loaded.scenario
    events = [f.sse_event for f in sc.faults
              if isinstance(f, fs.ClientDisconnect) and f.sse_event is not None
              and f.sse_event > 1]
    if not events:
        return None
    try:
        base = record_base(loaded)
    except ExplorationError:
        return None
    last_read = next((s for s in base.sends if s.k == min(events) - 1), None)
    if last_read is None:
        return None
    return next((b.at() for b in base.boundaries[last_read.boundaries_before:]
                 if b.when == "after"), None)


def _tied_with_the_deadline(sc: Scenario, record: Any) -> list[str]:
    """A cancel at a lifecycle point that the simulated run makes at the very instant its
    deadline is reached: which of the two comes first is decided inside one virtual instant
    (by the deadline detection policy), a tie the wall clock cannot play (n/a, said)."""
    cancels = [f for f in sc.faults
               if isinstance(f, fs.ClientDisconnect | fs.UserCancel) and f.at is not None]
    if record is None or not cancels:
        return []
    asked = {CancellationReason.USER_REQUESTED.value, CancellationReason.CLIENT_DISCONNECTED.value}
    instants = [at for (_, _, at), cause in zip(record.terminations, record.termination_causes,
                                                 strict=False) if cause in asked]
    instants += [e.detail.get("at") for e in record.trace
                 if e.type is TraceEventType.TERMINATION_REJECTED
                 and e.detail.get("reason") in asked]
    if not any(_number(t) and t == record.deadline_at for t in instants):
        return []
    return [f"{fs.describe(f)}: comes at the instant the {record.deadline_at:g} s deadline is "
            "reached; which wins is decided within one virtual instant, a tie no wall clock "
            "plays" for f in cancels]


def _at_once(f: Any) -> bool:
    """A client disconnect at the run's very start: the client leaves before any event."""
    return isinstance(f, fs.ClientDisconnect) and f.at_s == 0


BEFORE_FIELDS = ("trace", "trace_contains", "trace_excludes")
"""Expectations a lifecycle point ``before`` a call cannot hold live: the point is realised
while the call is in flight, so the call's outcome is traced (as cancelled). So is a client
gone before the first event (the harness has begun its first call before it learns so) and a
failed send of the k-th event (from outside, the client closes after the event before, and
the harness may learn so while a call is in flight rather than at that send)."""


class _Stream:
    """The SSE connection of one run, read on the caller's thread, closable from another."""

    def __init__(self, client: httpx.Client, url: str, body: Mapping[str, Any],
                 headers: Mapping[str, str], limits: StreamLimitsSpec) -> None:
        self.client = client
        self.limits = limits
        self.breach: str | None = None
        self.url = url
        self.body = body
        self.headers = headers
        self.response: httpx.Response | None = None
        self.closed_by_us = threading.Event()
        self.events: list[tuple[str, Any]] = []
        self.arrived: list[float] = []
        """When each event arrived (``time.monotonic()``)."""

    def close(self) -> None:
        """Really close the connection (a client disconnect)."""
        self.closed_by_us.set()
        response = self.response
        if response is None:
            return
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is not None:
            try:  # the reader may be blocked in recv: shut the socket under it
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        else:
            response.close()

    def read(self, on_event: Callable[[str, Any], None], timeout_s: float) -> None:
        """Read events until the stream ends, ``on_event`` after each one."""
        headers = {"Accept": "text/event-stream", **self.headers}
        try:
            with self.client.stream("POST", self.url, json=dict(self.body), headers=headers,
                                    timeout=httpx.Timeout(timeout_s, connect=5.0)) as response:
                self.response = response
                if self.closed_by_us.is_set():
                    return
                if response.status_code != 200:
                    head = b""
                    for chunk in response.iter_bytes():  # an error body is read 200 bytes far
                        head += chunk
                        if len(head) >= 200:
                            break
                    raise RuntimeError(f"POST {shown_url(self.url)}: HTTP {response.status_code}: "
                                       f"{head[:200].decode('utf-8', 'replace')}")
                self._parse(response, on_event)
                if self.breach is not None:
                    raise StreamLimitError(self.breach)
        except (httpx.HTTPError, OSError, ValueError, RuntimeError) as exc:
            if isinstance(exc, StreamLimitError):
                raise
            if self.breach is not None:
                raise StreamLimitError(self.breach) from exc
            if not self.closed_by_us.is_set():
                raise RuntimeError(f"the SSE stream of {shown_url(self.url)} failed: "
                                   f"{exc}") from exc

    def _parse(self, response: httpx.Response, on_event: Callable[[str, Any], None]) -> None:
        """Split the raw bytes into SSE lines and events within the limits (a line is never
        held whole beyond ``event_bytes``); a watchdog closes the socket at ``seconds``."""
        limits = self.limits
        watchdog = threading.Timer(limits.seconds, self._expire)
        watchdog.daemon = True
        watchdog.start()
        try:
            kind, pending, total = "message", b"", 0
            data: list[str] = []
            for chunk in response.iter_bytes():
                total += len(chunk)
                if total > limits.total_bytes:
                    raise self._breach(f"the stream sent more than {limits.total_bytes:,} bytes")
                pending += chunk
                *lines, pending = pending.split(b"\n")
                if len(pending) > limits.event_bytes:
                    raise self._breach(f"an SSE line longer than {limits.event_bytes:,} bytes")
                for raw in lines:
                    line = raw.rstrip(b"\r").decode("utf-8", "replace")
                    if line == "":
                        if data:
                            self._event(kind, "\n".join(data), on_event)
                            if len(self.events) >= limits.events:
                                raise self._breach(f"the stream sent more than "
                                                   f"{limits.events:,} events")
                        kind, data = "message", []
                    elif line.startswith("event:"):
                        kind = line[6:].strip()
                    elif line.startswith("data:"):
                        data.append(line[5:].lstrip())
            if data:
                self._event(kind, "\n".join(data), on_event)
        finally:
            watchdog.cancel()

    def _breach(self, why: str) -> StreamLimitError:
        """Note the limit the stream broke (``why``); the error saying so."""
        self.breach = f"the SSE stream of {shown_url(self.url)} broke a limit: {why}"
        return StreamLimitError(self.breach)

    def _expire(self) -> None:
        self._breach(f"still open after {self.limits.seconds:g} s")
        self.close()

    def _event(self, kind: str, text: str, on_event: Callable[[str, Any], None]) -> None:
        """Record one event: its data's JSON value, or its text when that is not JSON; JSON
        beyond the bounded reader's limits (a 100,000-deep array, a 5,000-digit number) ends
        the stream with an error naming the event."""
        try:
            data = parse_json(text, source=f"its {kind!r} event (number {len(self.events) + 1})")
        except NotJsonError:
            data = text
        self.events.append((kind, data))
        self.arrived.append(time.monotonic())
        on_event(kind, data)


@dataclass(slots=True)
class _Play:
    """One live run's bookkeeping."""

    run_id: str | None = None
    session_id: str | None = None
    started: float = 0.0
    arrived: list[float] = field(default_factory=list)
    """When each event of the stream arrived (``time.monotonic()``)."""
    errors: list[str] = field(default_factory=list)
    run_known: threading.Event = field(default_factory=threading.Event)


class _Player:
    """Plays one scenario against a harness at ``base`` with scripted providers."""

    def __init__(self, base: str, providers: ProvidersServer, adapter: Adapter, *,
                 time_scale: float, settle_s: float, timeout_s: float) -> None:
        self.base = base.rstrip("/")
        self.providers = providers
        self.adapter = adapter
        self.time_scale = time_scale
        self.settle_s = settle_s
        self.timeout_s = timeout_s
        self.http = httpx.Client(trust_env=False)

    def close(self) -> None:
        """Close the HTTP client."""
        self.http.close()

    def send(self, query: str, session: str | None, faults: Sequence[Any],
             hold: fs.At | None = None) -> tuple[_Play, list[tuple[str, Any]]]:
        """Send one query, inject ``faults``, and return what the stream delivered; ``hold``
        (:func:`held_for_the_disconnect`) is held until the client that leaves between two
        events has closed its connection and the harness had ``settle_s`` to see it."""
        a = self.adapter
        play = _Play()
        stream = _Stream(self.http, self.base + a.chat.path,
                         {a.chat.query_field: query, a.chat.session_field: session},
                         a.headers, a.limits)
        names = a.events
        disconnect_after: int | None = None
        for f in faults:
            if isinstance(f, fs.ClientDisconnect) and f.sse_event is not None:
                disconnect_after = f.sse_event - 1
            elif _at_once(f):
                disconnect_after = 0
        def on_event(kind: str, data: Any) -> None:
            if kind == names.metadata and not isinstance(data, Mapping):
                play.errors.append(f"the {kind} event's data is not a JSON object: "
                                   f"{str(data)[:80]!r}")
            elif kind == names.metadata:
                play.started = time.monotonic()
                self.providers.run_started(play.started)
                play.run_id = str(data.get(a.fields.run_id) or "") or None
                play.session_id = str(data.get(a.fields.session_id) or "") or None
                play.run_known.set()
            if disconnect_after is not None and len(stream.events) >= disconnect_after:
                stream.close()

        asked = [f for f in faults if isinstance(f, fs.ClientDisconnect | fs.UserCancel)]
        workers = [threading.Thread(target=self._inject, args=(f, stream, play), daemon=True)
                   for f in asked if (f.at is not None or f.at_s is not None) and not _at_once(f)]
        self._holds = {id(f): self.providers.hold(f.at.when, f.at.call.value, f.at.n, f.at.tool)
                       for f in asked if f.at is not None}
        if hold is not None:  # bounded: a harness may make that call before that event
            self.providers.hold(hold.when, hold.call.value, hold.n, hold.tool,
                                limit_s=DISCONNECT_HOLD_S)
        for w in workers:
            w.start()
        if disconnect_after == 0:
            stream.closed_by_us.set()
        try:
            stream.read(on_event, self.timeout_s)
        except RuntimeError as exc:
            play.errors.append(str(exc))
        if hold is not None and stream.closed_by_us.is_set():
            time.sleep(self.settle_s)
        play.run_known.set()
        for w in workers:
            w.join(self.timeout_s)
        self.providers.release()
        play.arrived = stream.arrived
        return play, stream.events

    def _inject(self, f: Any, stream: _Stream, play: _Play) -> None:
        if f.at is not None:
            hold = self._holds[id(f)]
            if not hold.released.wait(0) and not self._wait_hit(hold):
                return
        else:  # seconds after the run starts: its metadata event says it has
            play.run_known.wait(self.timeout_s)
            delay = play.started + f.at_s * self.time_scale - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        if isinstance(f, fs.ClientDisconnect):
            stream.close()
        else:
            play.run_known.wait(self.timeout_s)
            self.cancel(play)
        if f.at is not None:
            time.sleep(self.settle_s)
            self.providers.release(self._holds[id(f)].id)

    def _wait_hit(self, hold: Any) -> bool:
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            if hold.hit:
                return True
            if hold.released.is_set():
                return False
            time.sleep(0.005)
        return False

    def cancel(self, play: _Play) -> None:
        """POST the cancel endpoint of the run."""
        path = self.adapter.cancel_path
        if path is None or play.run_id is None:
            play.errors.append("user cancel: the harness has no cancel endpoint or the run "
                               "id is unknown")
            return
        response = self.http.post(self.base + path.replace("{runId}", play.run_id),
                                  headers=self.adapter.headers, timeout=10.0)
        if response.status_code not in (200, 202, 409):
            play.errors.append(f"user cancel: HTTP {response.status_code}")

    def stored(self, run_id: str) -> tuple[dict[str, Any] | None, list[dict[str, Any]] | None,
                                          list[dict[str, Any]] | None]:
        """The run's stored row, trace and (from a database only) tool invocations, polling
        until the row leaves RUNNING."""
        a = self.adapter
        if a.database is not None:
            found = _poll(lambda: next((r for r in _stored_runs(a)
                                        if str(r.row["run_id"]) == run_id), None),
                          lambda r: r is not None and _ended(r.row), self.timeout_s, 0.05)
            return (found.row, found.trace, found.invocations) if found else (None, None, None)
        row: dict[str, Any] | None = None
        if a.run_path is not None:
            path = a.run_path.replace("{runId}", run_id)
            row = _poll(lambda: self._get(path, "the stored run", dict), _ended, self.timeout_s,
                        0.02)
        trace: list[dict[str, Any]] | None = None
        if a.trace_path is not None:
            trace = self._get(a.trace_path.replace("{runId}", run_id), "the run's trace", list)
        return row, trace, None

    def _get(self, path: str, what: str, kind: type) -> Any:
        """The JSON value, of type ``kind``, that a GET of ``path`` answers (None unless
        200), read within the adapter's stream byte limit and the bounded JSON reader's;
        ValueError naming ``what`` and the URL for anything else."""
        url, limit = self.base + path, self.adapter.limits.total_bytes
        with self.http.stream("GET", url, headers=self.adapter.headers,
                              timeout=10.0) as response:
            if response.status_code != 200:
                return None
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > limit:
                    raise ValueError(f"{what} at {url}: more than {limit:,} bytes")
        value = parse_json(body.decode("utf-8", "replace"), source=f"{what} at {url}",
                           wide_ints=True)  # a run's usage may sum past 64 bits, as logged
        if not isinstance(value, kind):
            raise ValueError(f"{what} at {url}: {_JSON_KINDS[type(value)]}, not "
                             f"{_JSON_KINDS[kind]}")
        return value


_JSON_KINDS = {dict: "an object", list: "an array", str: "a string", int: "a number",
               float: "a number", bool: "true or false", type(None): "null"}
"""What a JSON value of each Python type is called in a message."""


def _poll(read: Callable[[], _T], enough: Callable[[_T], bool], timeout_s: float,
          every_s: float) -> _T:
    """``read()`` every ``every_s`` seconds until ``enough`` says so of what it gave, or
    ``timeout_s`` has passed; the last thing read."""
    deadline = time.monotonic() + timeout_s
    while not enough(got := read()) and time.monotonic() <= deadline:
        time.sleep(every_s)
    return got


def _ended(row: Mapping[str, Any] | None) -> bool:
    """Whether a stored row is there and has left RUNNING."""
    return row is not None and row.get("status") != "RUNNING"


def _stored_runs(adapter: Adapter) -> Iterator[Any]:
    """The runs of the adapter's database, with their trace and invocations."""
    from harness_lab.audit.sources import iter_sql

    assert adapter.database is not None
    return iter_sql(adapter.database.url, adapter.database.mapping)


def _new_run(adapter: Adapter, before: set[str], query: str, timeout_s: float) -> str | None:
    """The run of ``query`` stored since ``before`` was taken (a client that left before
    the metadata event never learnt its id)."""
    new = _poll(lambda: [str(r.row["run_id"]) for r in _stored_runs(adapter)
                         if str(r.row["run_id"]) not in before and r.row.get("query") == query],
                bool, timeout_s, 0.05)
    return new[-1] if new else None


def _simulated_outcome(record: Any, stored: Mapping[str, Any] | None) -> Outcome:
    status = (stored or {}).get("status")
    if record is None:
        return Outcome(None, None, None, status, (), ())
    return Outcome(record.run_state.value, record.release_outcome.value,
                   _v(record.fallback_type), _v(record.stored_status) or status,
                   tuple(record.sse_kinds()),
                   _statuses([(e.kind.value, e.data) for e in record.sse_events], "status"))


def _v(x: Any) -> Any:
    return None if x is None else getattr(x, "value", x)


def _statuses(events: Sequence[tuple[str, Any]], key: str) -> tuple[str, ...]:
    return tuple(str(d.get(key)) for k, d in events if k == "status" and isinstance(d, Mapping))


def _kinds(events: Sequence[tuple[str, Any]], adapter: Adapter) -> list[tuple[str, Any]]:
    """The events under the contract's kind names."""
    back = {name: kind for kind, name in adapter.events.model_dump().items()}
    return [(back.get(kind, kind), data) for kind, data in events]


def _live_record(row: Mapping[str, Any], trace: Sequence[Mapping[str, Any]] | None,
                 invocations: Sequence[Mapping[str, Any]] | None,
                 events: Sequence[tuple[str, Any]], arrived: Sequence[float],
                 time_scale: float) -> Any:
    """The live run rebuilt from its stored rows and the events its stream delivered, each
    event timed in virtual seconds since the first one arrived."""
    from harness_lab.audit.rebuild import rebuild

    first = arrived[0] if arrived else 0.0
    sse_rows = [{"seq": i, "t": (at - first) / time_scale, "kind": kind, "data": data}
                for i, ((kind, data), at) in enumerate(zip(events, arrived, strict=True), 1)
                if kind in ("metadata", "status", "content", "failure", "done")]
    return rebuild(row, list(trace or []), list(invocations or []), sse_rows)


TIME_DETAILS = ("at", "lost_to_at")
"""The trace details that are times of the run's clock: when a losing termination was tried
and when the one that won it happened (``TERMINATION_REJECTED``)."""


_TIMED = re.compile(r"\.(t|at|lost_to_at|created_at|finished_at|duration_ms)$")
"""The path of a mismatch on a time or a duration."""


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _live_start(record: Any) -> float:
    """When the live run started on its server's clock: its ``RUN_STARTED`` (else its first
    trace event)."""
    started = [e.t for e in record.trace if e.type.value == "RUN_STARTED"]
    return started[0] if started else min((e.t for e in record.trace), default=0.0)


def _on_timeline(seen: Mapping[str, Any], *, live_start: float, start: float,
                 time_scale: float, tolerance: Tolerance) -> dict[str, Any]:
    """A live run's observation with its times where the simulated run, started at
    ``start``, has them, each matching an expected time within ``tolerance``.

    Trace times (and their :data:`TIME_DETAILS`) count from the live run's ``RUN_STARTED``
    (``live_start``, the server's clock), SSE times from the first event's arrival, the row's
    ``finished_at`` from its ``created_at`` (wall seconds: divided by ``time_scale``) and
    ``created_at`` is the start itself; ``duration_ms`` is kept, with the tolerance."""
    def near(since_start: float) -> _Near:
        return _Near(start + since_start, tolerance, start)

    def detail(d: Mapping[str, Any]) -> dict[str, Any]:
        return {k: near(v - live_start) if k in TIME_DETAILS and _number(v) else v
                for k, v in d.items()}

    out = dict(seen)
    out["trace"] = [{**e, "t": near(e["t"] - live_start), "detail": detail(e["detail"])}
                    for e in seen["trace"]]
    out["sse"] = [{**e, "t": near(e["t"])} for e in seen["sse"]]
    row = seen.get("row")
    if row is not None:
        row = out["row"] = dict(row)
        created, finished = row.get("created_at"), row.get("finished_at")
        if _number(created):
            row["created_at"] = near(0.0)
            if _number(finished):
                row["finished_at"] = near((finished - created) / time_scale)
        if _number(row.get("duration_ms")):
            row["duration_ms"] = _Near(row["duration_ms"], tolerance, 0.0, 1000.0)
    return out


def _as_simulated(value: Any, ids: dict[str, str]) -> Any:
    """``value`` with the live run's and session's ids written as the simulated run's, so an
    expectation that names a scenario's own ids (``run-000001``) holds live too."""
    if isinstance(value, str):
        return ids.get(value, value)
    if isinstance(value, dict):
        return {k: _as_simulated(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_simulated(v, ids) for v in value]
    return value


def _checkable(expect: Expect, has_trace: bool, has_invocations: bool
               ) -> tuple[Expect, list[str]]:
    """``expect`` without the fields a live run cannot be checked on, and their names."""
    given = expect.model_dump(exclude_unset=True, exclude_defaults=True)
    keep = {k: v for k, v in given.items()
            if (k in LIVE_FIELDS and (has_trace or not k.startswith("trace")))
            or (has_invocations and k == "tool_calls_by_name")}
    if not has_invocations:
        keep.pop("tool_calls", None)
    dropped = sorted(k for k in given if k not in keep)
    return Expect.model_validate(keep), dropped


def conform_scenario(loaded: LoadedScenario, base: str, providers: ProvidersServer,
                     adapter: Adapter, *, time_scale: float, configurable: bool,
                     settle_s: float = SETTLE_S, timeout_s: float = 60.0,
                     simulated: Any = None, tolerance: Tolerance | None = None
                     ) -> ConformResult:
    """Play one scenario against the harness at ``base`` and judge it (never raises for a
    failure of the run; an unreachable harness is an ``error`` result). Live times and
    durations match the expected ones within ``tolerance`` (None:
    :func:`default_tolerance`), on the simulated run's timeline."""
    from harness_lab.invariants import INVARIANTS
    from harness_lab.runner.run import expectations, run_scenario

    sc = loaded.scenario
    began = time.monotonic()
    why = not_applicable(sc, configurable=configurable)
    sim = simulated if simulated is not None else run_scenario(loaded)
    why += _sent_after_the_end(sc, sim.record) + _tied_with_the_deadline(sc, sim.record)
    predicted = _simulated_outcome(sim.record, sim.stored_row)
    if why:
        return ConformResult(sc.name, loaded.path, "n/a", tuple(why), predicted)

    def judged(verdict: str, reasons: Sequence[str], live: Outcome | None = None,
               run_id: str | None = None, unchecked: Sequence[str] = ()) -> ConformResult:
        return ConformResult(sc.name, loaded.path, verdict, tuple(reasons), predicted, live,
                             tuple(unchecked), run_id, time.monotonic() - began)

    player = _Player(base, providers, adapter, time_scale=time_scale, settle_s=settle_s,
                     timeout_s=timeout_s)
    try:
        session = sc.session_id
        for t in range(len(sc.turns)):
            providers.load(sc, turn=t, time_scale=time_scale)
            play, _ = player.send(sc.turns[t].query, session, ())
            session = session or play.session_id
        providers.load(sc, time_scale=time_scale)
        blind = any(isinstance(f, fs.ClientDisconnect) and (f.sse_event == 1 or _at_once(f))
                    for f in sc.faults) and adapter.database is not None
        before = {str(r.row["run_id"]) for r in _stored_runs(adapter)} if blind else set()
        play, raw = player.send(sc.query, session, sc.faults, held_for_the_disconnect(loaded))
        events = _kinds(raw, adapter)
        if play.run_id is None and blind:  # gone before the metadata: the new stored run
            play.run_id = _new_run(adapter, before, sc.query, timeout_s)
        if play.run_id is None:
            return judged("error", play.errors or ["no metadata event: no run id"])
        row, trace, invocations = player.stored(play.run_id)
    except (httpx.HTTPError, OSError, ValueError) as exc:  # a ValueError says what it is
        said = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        return judged("error", [said])
    finally:
        player.close()
    statuses = _statuses(events, adapter.fields.status)
    kinds = tuple(k for k, _ in events)
    if row is None:
        live = Outcome(None, None, None, None, kinds, statuses)
        return judged("fail", [*play.errors, "no stored row for the run"], live, play.run_id)
    disconnected = any(isinstance(f, fs.ClientDisconnect) for f in sc.faults)
    try:
        record = _live_record(row, trace, invocations, events, play.arrived, time_scale)
    except Exception as exc:  # noqa: BLE001 - a row conform cannot read is a failure, shown
        live = Outcome(None, None, None, row.get("status"), kinds, statuses)
        return judged("fail", [f"the stored run cannot be read: {type(exc).__name__}: {exc}"],
                      live, play.run_id)
    live = Outcome(record.run_state.value, record.release_outcome.value,
                   _v(record.fallback_type), _v(record.stored_status), kinds, statuses)
    expect, unchecked = _checkable(expectations(sc), trace is not None, invocations is not None)
    if disconnected:
        expect = expect.model_copy(update={"sse_state": None})
    if any((f.at is not None and f.at.when == "before") or _at_once(f)
           or getattr(f, "sse_event", None) is not None
           for f in sc.faults if isinstance(f, fs.ClientDisconnect | fs.UserCancel)):
        unchecked += [k for k in BEFORE_FIELDS if getattr(expect, k) is not None]
        expect = expect.model_copy(update={k: None for k in BEFORE_FIELDS})
    simulated_ids = ({} if sim.record is None else  # a crashed simulation is n/a: never here
                     {record.run_id: sim.record.run_id, record.session_id: sim.record.session_id})
    tolerance = tolerance or default_tolerance(time_scale)
    seen = _on_timeline(_as_simulated(observe(record), simulated_ids),
                        live_start=_live_start(record),
                        start=sim.record.started_at if sim.record is not None else 0.0,
                        time_scale=time_scale, tolerance=tolerance)
    mismatches: list[Mismatch] = compare(expect, record, seen)
    reasons = [str(m) for m in mismatches] + play.errors
    if any(_TIMED.search(m.field) for m in mismatches):
        reasons.append(f"live times count from the run's start and match within {tolerance} "
                       "of its time so far (--tolerance)")
    rules = {k: v for k, v in INVARIANTS.items() if trace is not None or k == "sse_protocol"}
    if invocations is None:
        rules = {k: v for k, v in rules.items() if k not in INVOCATION_RULES}
    if disconnected:
        rules.pop("sse_protocol", None)  # the client left: the stream it saw is cut short
    broken = [f"invariant {name}: {msg}" for name, fn in rules.items() for msg in fn(record)]
    reasons += [b for b in broken if not any(b.startswith(f"invariant {v}:")
                                             for v in expect.violations)]
    return judged("fail" if reasons else "pass", reasons, live, play.run_id, unchecked)
