"""Record and replay the HTTP calls of a run with vcrpy, strictly.

>>> with cassette("cassettes/checkout.yaml", record_mode="once") as report:  # doctest: +SKIP
...     record = harness.run("why is checkout slow?")
>>> report.unplayed, report.misses                                          # doctest: +SKIP

Record modes are vcrpy's (``none``, the default, replays only; ``once``, ``new_episodes``,
``all``); requests match on method, URL parts and the body as parsed JSON (``json_body``).
Credentials and ``secrets`` are scrubbed before anything is written, a response body before
the run reads it, so a replay gives the run the bytes the recording did. A request with no
unplayed recorded match raises :class:`CassetteMiss` (where it is made, and again when the
context exits) naming the closest recorded request and the first differing JSON field;
interactions never played back are reported in :attr:`CassetteReport.unplayed`. Cassette
files are read strictly and written atomically (:mod:`~harness_lab.recorded.cassette_file`).
vcrpy keeps no timing: replayed calls take the virtual latency the harness's latency model
gives them. The details: ``docs/recording.md``.
"""

from __future__ import annotations

import functools
import json
import os
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AnyStr
from unittest import mock

import httpx
import vcr  # type: ignore[import-untyped]
from vcr.errors import CannotOverwriteExistingCassetteException  # type: ignore[import-untyped]
from vcr.request import Request as VcrRequest  # type: ignore[import-untyped]

from harness_lab.errors import HarnessError
from harness_lab.recorded.cassette_file import CassetteError, CassettePersister
from harness_lab.recorded.divergence import (
    DivergenceReport,
    body_digest,
    count_differences,
    first_divergence,
    parse_body,
    preview,
)

__all__ = ["CASSETTE_DIR", "DEFAULT_MATCH_ON", "RECORD_MODES", "REDACTED", "SECRET_HEADERS",
           "SECRET_QUERY_PARAMETERS", "CassetteError", "CassetteMiss", "CassetteReport",
           "RequestStep", "UnplayedInteraction", "UnplayedInteractions",
           "UnplayedInteractionsWarning", "build_vcr", "cassette", "cassette_path", "json_body",
           "scrub_request", "scrub_response"]

CASSETTE_DIR = "cassettes"
"""The conventional directory of cassettes, next to the scenario that uses them."""

RECORD_MODES = ("none", "once", "new_episodes", "all")
"""The record modes :func:`cassette` accepts."""

DEFAULT_MATCH_ON = ("method", "scheme", "host", "port", "path", "query", "json_body")
"""What two requests must share to match."""

SECRET_HEADERS = ("authorization", "proxy-authorization", "api-key", "x-api-key",
                  "openai-organization", "openai-project", "cookie", "set-cookie")
"""Headers never written to a cassette, in requests or responses."""

SECRET_QUERY_PARAMETERS = ("api-key", "api_key", "key")
"""Query parameters removed from recorded URLs."""

REDACTED = "REDACTED"
"""What a scrubbed value is replaced with."""

# (pattern, replacement, a text every match contains once lower-cased: without it in the
# lower-cased value the pattern cannot match, and the value is not searched)
_PATTERNS: tuple[tuple[str, str, str], ...] = (
    (r"\borg-[A-Za-z0-9]{6,}", f"org-{REDACTED}", "org-"),
    (r"\bsk-[A-Za-z0-9_\-]{12,}", f"sk-{REDACTED}", "sk-"),
    (r"(?i)\bbearer\s+[A-Za-z0-9._~+/\-]+=*", f"Bearer {REDACTED}", "bearer"),
)
_TEXT_PATTERNS = tuple((re.compile(p), r, m) for p, r, m in _PATTERNS)
_BYTE_PATTERNS = tuple((re.compile(p.encode()), r.encode(), m.encode()) for p, r, m in _PATTERNS)


# -- reports and errors ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RequestStep:
    """One HTTP request made inside a cassette context.

    ``outcome`` is ``"played"`` (answered from the cassette), ``"recorded"`` (sent and
    stored), ``"miss"`` (no match: CassetteMiss) or ``"error"`` (the live call failed);
    ``interaction`` is the 0-based index of the interaction used or stored, ``status`` the
    HTTP status of the answer and ``error`` why a live call failed.
    """

    step: int
    method: str
    url: str
    body_digest: str
    outcome: str
    interaction: int | None = None
    status: int | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class UnplayedInteraction:
    """A recorded interaction the run never asked for."""

    index: int
    method: str
    url: str
    body_digest: str
    preview: str

    def describe(self) -> str:
        """One readable line."""
        return (f"interaction {self.index}: {self.method} {self.url} "
                f"(body {self.body_digest}) {self.preview}")


@dataclass
class CassetteReport:
    """What happened inside one :func:`cassette` context; complete once it exited."""

    path: Path
    record_mode: str
    loaded: int = 0
    steps: list[RequestStep] = field(default_factory=list)
    misses: list[CassetteMiss] = field(default_factory=list)
    unplayed: tuple[UnplayedInteraction, ...] = ()

    @property
    def requests(self) -> int:
        """HTTP requests made inside the context."""
        return len(self.steps)

    @property
    def played(self) -> int:
        """Requests answered from the cassette."""
        return sum(1 for s in self.steps if s.outcome == "played")

    @property
    def recorded(self) -> int:
        """Requests sent to a server and stored."""
        return sum(1 for s in self.steps if s.outcome == "recorded")

    @property
    def http_errors(self) -> list[RequestStep]:
        """Requests recorded in this context whose answer was an HTTP error (400 and up)."""
        return [s for s in self.steps
                if s.outcome == "recorded" and s.status is not None and s.status >= 400]

    @property
    def failed(self) -> list[RequestStep]:
        """Requests that got no answer at all (connection refused, timeout, ...)."""
        return [s for s in self.steps if s.outcome == "error"]

    @property
    def divergence(self) -> DivergenceReport | None:
        """Where replay first left the recording, if it did."""
        return self.misses[0].report if self.misses else None


class CassetteMiss(HarnessError):
    """A request the cassette cannot answer under strict replay (an authoring error).

    ``report`` is the :class:`DivergenceReport`: the request's step number, method, URL and
    body digest, the closest recorded interaction and the first differing field; ``step``
    (the 1-based number of the request within the cassette context), ``method`` and ``url``
    are the report's.
    """

    def __init__(self, report: DivergenceReport, *, cassette_path: Path, record_mode: str,
                 reason: str) -> None:
        self.report = report
        self.step, self.method, self.url = report.step, report.method, report.url
        self.cassette_path = cassette_path
        self.record_mode = record_mode
        self.reason = reason
        super().__init__(_miss_message(self))


class UnplayedInteractions(HarnessError):
    """Recorded interactions were never played back (with ``allow_unplayed=False``)."""

    def __init__(self, path: Path, unplayed: Sequence[UnplayedInteraction]) -> None:
        self.path = path
        self.unplayed = tuple(unplayed)
        super().__init__(_unplayed_message(path, self.unplayed))


class UnplayedInteractionsWarning(UserWarning):
    """Recorded interactions were never played back: the run asked for less than recorded."""


_REASONS = {
    "cassette_not_found": "the cassette does not exist",
    "already_played": "its matching interaction was already played back",
    "no_match": "no recorded interaction matches it",
    "nothing_similar": "nothing recorded resembles it",
}


def _miss_message(miss: CassetteMiss) -> str:
    r = miss.report
    reason = _REASONS.get(miss.reason, miss.reason)
    lines = [f"cassette miss at request {r.step}: {r.method} {r.url} (body {r.body_digest}) "
             f"in {miss.cassette_path} (record_mode {miss.record_mode!r}): {reason}"]
    if r.closest is not None:
        lines.append(f"closest recorded: interaction {r.closest}, "
                     f"{r.closest_method} {r.closest_url}")
        if r.divergence is not None:
            lines.append(f"first difference at {r.divergence.describe()}")
    if miss.reason == "cassette_not_found":
        lines.append("record it first: `harness-lab record SCENARIO` for a scenario, "
                     "record_mode='once' for cassette()")
    else:
        lines.append("if the change is intended, record again with record_mode="
                     "'new_episodes' (add it) or 'all' (re-record the cassette)")
    return "\n".join(lines)


def _unplayed_message(path: Path, unplayed: Sequence[UnplayedInteraction]) -> str:
    shown = "\n".join(f"  {u.describe()}" for u in unplayed[:5])
    more = f"\n  ... and {len(unplayed) - 5} more" if len(unplayed) > 5 else ""
    return (f"{len(unplayed)} recorded interaction(s) of {path} were never played back:\n"
            f"{shown}{more}")


# -- matching and scrubbing -------------------------------------------------------------------


def _read(request: Any) -> Any:
    body: Any = getattr(request, "body", None)
    if hasattr(body, "read"):
        return body.read()
    return body


def _canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def json_body(r1: Any, r2: Any) -> None:
    """vcrpy matcher: bodies equal as parsed JSON (key order ignored), else as bytes.

    Raises AssertionError naming the first differing field (vcrpy's matcher protocol; it
    calls matchers with the live request first and the recorded one second).
    """
    b1, b2 = _read(r1), _read(r2)
    if (b1 or b"") == (b2 or b""):
        return
    c1, c2 = _canonical_body(b1), _canonical_body(b2)
    if c1 is None or c1 != c2:
        divergence = first_divergence(b2, b1)
        raise AssertionError(divergence.describe() if divergence else "the bodies differ")


def _canonical_body(body: Any) -> str | None:
    """The canonical JSON text of a body; None when it is not JSON."""
    if isinstance(body, bytes | str):
        return _canonical_text(body)
    ok, data = parse_body(body)
    return _canonical(data) if ok else None


@functools.lru_cache(maxsize=64)
def _canonical_text(body: bytes | str) -> str | None:
    """:func:`_canonical_body` of bytes or text, kept: vcrpy matches each request against
    every recorded one, and a replay sends the same bodies again."""
    ok, data = parse_body(body)
    return _canonical(data) if ok else None


def _scrub(value: Any, secrets: Sequence[str]) -> Any:
    if isinstance(value, bytes | bytearray):
        return _scrubbed(bytes(value), [s.encode("utf-8") for s in secrets], REDACTED.encode(),
                         _BYTE_PATTERNS)
    if isinstance(value, str):
        return _scrubbed(value, secrets, REDACTED, _TEXT_PATTERNS)
    return value


def _scrubbed(text: AnyStr, secrets: Sequence[AnyStr], redacted: AnyStr,
              patterns: Sequence[tuple[re.Pattern[AnyStr], AnyStr, AnyStr]]) -> AnyStr:
    for secret in secrets:
        text = text.replace(secret, redacted)
    lowered = text.lower()
    for pattern, replacement, marker in patterns:
        if marker in lowered:
            text = pattern.sub(replacement, text)
    return text


def scrub_request(request: Any, secrets: Sequence[str] = ()) -> Any:
    """A vcrpy request with secret headers dropped and secrets scrubbed from URL and body.

    vcrpy applies it to live requests before matching too, so both sides compare alike.
    """
    headers = request.headers
    for name in [k for k in headers if str(k).lower() in SECRET_HEADERS]:
        del headers[name]
    request.headers = headers
    request.uri = _scrub(request.uri, secrets)
    body = _read(request)
    if body is not None:
        request.body = _scrub(body, secrets)
    return request


def scrub_response(response: dict[str, Any], secrets: Sequence[str] = ()) -> dict[str, Any]:
    """A vcrpy response dict with secret headers dropped and secrets scrubbed from the body.

    The live response handed to the run is scrubbed the same way first
    (:func:`scrubbed_response`), so the stored body is exactly what the run consumed.
    """
    headers = response.get("headers") or {}
    response["headers"] = {k: [_scrub(v, secrets) for v in values]
                           for k, values in headers.items()
                           if str(k).lower() not in SECRET_HEADERS}
    body = response.get("body")
    if isinstance(body, dict) and "string" in body:
        before = body["string"]
        body["string"] = _scrub(before, secrets)
        if body["string"] != before:
            for name in list(response["headers"]):
                if str(name).lower() == "content-length":
                    response["headers"][name] = [str(len(body["string"]))]
    return response


def scrubbed_response(response: httpx.Response, secrets: Sequence[str] = ()) -> httpx.Response:
    """``response`` (unread, as a transport returns it) as the run may read it: its body
    scrubbed as :func:`scrub_response` stores it, decoded. Returns ``response`` itself, still
    unread, when scrubbing changes nothing."""
    raw = b"".join(response.stream)  # type: ignore[arg-type]
    response.stream = httpx.ByteStream(raw)
    content = httpx.Response(response.status_code, headers=response.headers,
                             stream=httpx.ByteStream(raw)).read()
    clean = _scrub(content, secrets)
    if clean == content:
        return response
    headers = [(k, v) for k, v in response.headers.multi_items()
               if k.lower() not in ("content-encoding", "content-length")]
    return httpx.Response(response.status_code, headers=headers, content=clean,
                          extensions=response.extensions)


def build_vcr(*, match_on: Sequence[str] = DEFAULT_MATCH_ON,
              secrets: Iterable[str] = ()) -> vcr.VCR:
    """The configured ``vcr.VCR``: JSON matching, scrubbing, decoded bodies, YAML, strict
    reads and atomic writes (:class:`CassettePersister`)."""
    secret_values = tuple(s for s in secrets if s)
    recorder = vcr.VCR(
        serializer="yaml",
        match_on=tuple(match_on),
        filter_headers=SECRET_HEADERS,
        filter_query_parameters=SECRET_QUERY_PARAMETERS,
        before_record_request=lambda r: scrub_request(r, secret_values),
        before_record_response=lambda r: scrub_response(r, secret_values),
        decode_compressed_response=True,
        record_on_exception=False,
    )
    recorder.register_matcher("json_body", json_body)
    recorder.register_persister(CassettePersister())
    return recorder


def cassette_path(name: str, root: str | Path = ".") -> Path:
    """``root/cassettes/<name>.yaml``: where a scenario's cassette lives by convention."""
    path = Path(root) / CASSETTE_DIR / name
    return path if path.suffix in (".yaml", ".yml") else path.with_name(path.name + ".yaml")


# -- the context --------------------------------------------------------------------------


class _Tracker:
    """Wraps vcrpy's httpx stubs: numbers each request, notes its outcome, explains misses."""

    def __init__(self, cass: Any, report: CassetteReport, secrets: Sequence[str] = ()) -> None:
        self.cass = cass
        self.report = report
        self.secrets = tuple(secrets)

    def wrap(self, inner: Callable[..., httpx.Response]) -> Callable[..., httpx.Response]:
        def handle_request(transport: Any, request: httpx.Request) -> httpx.Response:
            return self.handle(inner, transport, request)

        return handle_request

    def handle(self, inner: Callable[..., httpx.Response], transport: Any,
               request: httpx.Request) -> httpx.Response:
        cass, steps = self.cass, self.report.steps
        body = bytes(request.read())
        step = len(steps) + 1
        noted = functools.partial(RequestStep, step, request.method, str(request.url),
                                  body_digest(body))
        before = dict(cass.play_counts)
        size = len(cass)
        try:
            response = inner(transport, request)
        except CannotOverwriteExistingCassetteException as exc:
            miss = self._miss(step, request, body, getattr(exc, "reason", "no_match"))
            steps.append(noted("miss"))
            self.report.misses.append(miss)
            raise miss from None
        except Exception as exc:
            steps.append(noted("error", error=f"{type(exc).__name__}: {exc}"))
            raise
        status = response.status_code
        played = [i for i, n in cass.play_counts.items() if n > before.get(i, 0)]
        if played:
            steps.append(noted("played", played[0], status))
        elif len(cass) > size:
            steps.append(noted("recorded", len(cass) - 1, status))
            response = scrubbed_response(response, self.secrets)
        else:
            steps.append(noted("passthrough", status=status))
        return response

    def _miss(self, step: int, request: httpx.Request, body: bytes, reason: str) -> CassetteMiss:
        cass = self.cass
        live = cass.filter_request(VcrRequest(request.method, str(request.url), body,
                                              dict(request.headers)))
        live_body = _read(live) if live is not None else body
        live_uri = live.uri if live is not None else str(request.url)
        index = min(range(len(cass.requests)), default=None, key=lambda i: (
            cass.requests[i].method != request.method, cass.requests[i].uri != live_uri,
            cass.play_counts[i] > 0,
            count_differences(_read(cass.requests[i]), live_body, limit=200),
            abs(i - (step - 1))))
        closest = cass.requests[index] if index is not None else None
        report = DivergenceReport(
            step, request.method, str(request.url), body_digest(body), index,
            closest and closest.method, closest and closest.uri,
            closest and first_divergence(_read(closest), live_body))
        return CassetteMiss(report, cassette_path=self.report.path,
                            record_mode=self.report.record_mode, reason=reason)


def _preview(body: Any) -> str:
    ok, data = parse_body(body)
    if ok and isinstance(data, Mapping) and isinstance(data.get("messages"), list):
        last = data["messages"][-1] if data["messages"] else {}
        text = str(last.get("content") if isinstance(last, Mapping) else last)
    else:
        text = data if isinstance(data, str) else _canonical(data)
    return preview(" ".join(text.split()), 80)


def _unplayed(cass: Any, loaded: int, mode: str) -> tuple[UnplayedInteraction, ...]:
    if mode == "all":
        return ()
    return tuple(UnplayedInteraction(i, r.method, r.uri, body_digest(r.body), _preview(r.body))
                 for i, r in enumerate(cass.requests[:loaded]) if cass.play_counts[i] == 0)


def _mode(record_mode: str) -> str:
    mode = str(getattr(record_mode, "value", record_mode))
    if mode not in RECORD_MODES:
        raise ValueError(f"record_mode must be one of {', '.join(RECORD_MODES)}, "
                         f"not {record_mode!r}")
    return mode


def _cassette_file(path: str | Path) -> Path:
    p = Path(path)
    return p if p.suffix else p.with_name(p.name + ".yaml")


def _check_target(file: Path, *, writing: bool) -> None:
    """Refuse a cassette path that can never be read or written, before any request."""
    if file.is_dir():
        raise CassetteError(file, "is a directory, not a cassette file")
    if file.exists() and not file.is_file():
        raise CassetteError(file, "is not a regular file (a cassette is a YAML file)")
    if not writing:
        return
    parent = file.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise CassetteError(file, f"cannot be written: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise CassetteError(file, f"cannot be written: the directory {parent} is not writable")


@contextmanager
def cassette(path: str | Path, *, record_mode: str = "none",
             match_on: Sequence[str] = DEFAULT_MATCH_ON, allow_unplayed: bool = True,
             strict: bool = True, secrets: Iterable[str] = (),
             allow_playback_repeats: bool = False) -> Iterator[CassetteReport]:
    """Record or replay every httpx request made inside the context; yield its report.

    ``path`` gets a ``.yaml`` suffix when it has none (see :func:`cassette_path` for the
    ``cassettes/`` convention). ``secrets`` are extra values (API keys, tokens) to replace
    by ``REDACTED`` wherever they appear; a recorded response body is scrubbed before the
    code inside the context reads it, exactly as a replay will give it. A cassette that exists but
    is not readable is a :class:`CassetteError` (file, line, interaction) when the context
    opens; in record mode ``all`` the old file is not read and is replaced, atomically, only
    when the context exits without raising. With ``strict`` (the default) the first
    :class:`CassetteMiss` is raised again on exit, so a run that swallowed it cannot pass
    unnoticed. Unplayed interactions warn (:class:`UnplayedInteractionsWarning`), or raise
    :class:`UnplayedInteractions` when ``allow_unplayed=False``; neither is checked when the
    block raised or missed. A block that raises records nothing new.
    """
    mode = _mode(record_mode)
    file = _cassette_file(path)
    _check_target(file, writing=mode != "none")
    report = CassetteReport(file, mode)
    secret_values = tuple(s for s in secrets if s)
    recorder = build_vcr(match_on=match_on, secrets=secret_values)
    with ExitStack() as stack:
        cass = stack.enter_context(recorder.use_cassette(
            str(file), record_mode=mode, allow_playback_repeats=allow_playback_repeats,
            drop_unused_requests=mode == "all",
            persister=CassettePersister(read_existing=mode != "all")))
        report.loaded = len(cass)
        tracker = _Tracker(cass, report, secret_values)
        for transport in (httpx.HTTPTransport, httpx.MockTransport):
            stack.enter_context(mock.patch.object(
                transport, "handle_request", tracker.wrap(transport.handle_request)))
        try:
            yield report
        finally:
            report.unplayed = _unplayed(cass, report.loaded, mode)
    if report.misses and strict:
        raise report.misses[0]
    if report.unplayed and not report.misses:
        if not allow_unplayed:
            raise UnplayedInteractions(file, report.unplayed)
        warnings.warn(UnplayedInteractionsWarning(_unplayed_message(file, report.unplayed)),
                      stacklevel=3)
