"""Hostile OTLP JSON files: each is refused by ``harness-lab audit`` with one line naming the
file, the line and the field, exit 2, never a traceback, and a file of gigabytes or a trace
of a million spans is refused having read a bounded part of it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness_lab.cli import main

TRACE = "5b8efff798038103d269b633813fc60c"
ROOT = "eee19b7ec3c1b174"
CHILD = "0f0f0f0f0f0f0f0f"
SPANS = "resourceSpans[0].scopeSpans[0].spans"
AT = re.escape(SPANS)


def _span(span_id: str = ROOT, parent: str | None = None, **fields: Any) -> dict[str, Any]:
    span: dict[str, Any] = {"traceId": TRACE, "spanId": span_id, "name": "harness_lab.run",
                            "kind": 1, "startTimeUnixNano": "1735689600000000000",
                            "endTimeUnixNano": "1735689606700000000"}
    if parent is not None:
        span |= {"parentSpanId": parent, "name": "chat"}
    return span | fields


def _request(*spans: dict[str, Any]) -> str:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]})


GOOD = _request(_span(traceId="1" * 32))
"""A line of a span of another trace, so each hostile line is the second."""


def _not_hex() -> str:
    return _request(_span(traceId="zz" * 16))


def _huge_int() -> str:
    return _request(_span(attributes=[{"key": "harness_lab.tokens",
                                       "value": {"intValue": "9" * 30}}]))


def _int_past_64_bits() -> str:
    return _request(_span(attributes=[{"key": "harness_lab.tokens",
                                       "value": {"intValue": "9223372036854775808"}}]))


def _ends_before_it_starts() -> str:
    return _request(_span(endTimeUnixNano="1735689599000000000"))


def _orphan() -> str:
    return _request(_span(), _span(CHILD, parent="1111111111111111"))


def _cycle() -> str:
    return _request(_span(), _span(CHILD, parent="2222222222222222"),
                    _span("2222222222222222", parent=CHILD))


def _double_in_words() -> str:
    return _request(_span(attributes=[{"key": "harness_lab.duration_s",
                                       "value": {"doubleValue": "six"}}]))


def _status_a_list() -> str:
    return _request(_span(status=[]))


def _deep() -> str:
    return '{"resourceSpans": ' + "[" * 100_000 + "]" * 100_000 + "}"


def _number_of_5000_digits() -> str:
    return '{"resourceSpans": [{"scopeSpans": [{"spans": [{"kind": ' + "9" * 5000 + "}]}]}]}"


HOSTILE: list[tuple[str, Callable[[], str], str]] = [
    ("not-hex", _not_hex, rf"2: {AT}\[0\]\.traceId: 'zzzz.* is not an id of 32 hex digits"),
    ("huge-int", _huge_int, rf"2: {AT}\[0\]\.attributes\[0\]\.value\.intValue: '9{{30}}' "
                            "is not a 64-bit integer"),
    ("int-past-64-bits", _int_past_64_bits,
     rf"2: {AT}\[0\]\.attributes\[0\]\.value\.intValue: 9223372036854775808 is outside "
     "the signed 64-bit range"),
    ("ends-before-start", _ends_before_it_starts,
     rf"2: {AT}\[0\]\.endTimeUnixNano: 1735689599000000000 is before the span's start"),
    ("orphan", _orphan, rf"2: {AT}\[1\]\.parentSpanId: 1111111111111111 is not a span of "
                        f"trace {TRACE}"),
    ("cycle", _cycle, rf"2: {AT}\[[12]\]\.parentSpanId: span \w+ of trace {TRACE} is its "
                      r"own ancestor \(a cycle of parents\)"),
    ("double-in-words", _double_in_words,
     rf"2: {AT}\[0\]\.attributes\[0\]\.value\.doubleValue: 'six' is not a valid doubleValue"),
    ("status-a-list", _status_a_list, rf"2: {AT}\[0\]\.status: not an object"),
    ("deep", _deep, "2: nested 100001 levels deep, more than the 64"),
    ("5000-digits", _number_of_5000_digits, "2: an integer of 5000 digits"),
]


@pytest.mark.parametrize(("text", "problem"), [(h[1], h[2]) for h in HOSTILE],
                         ids=[h[0] for h in HOSTILE])
def test_a_hostile_line_is_refused_naming_file_line_and_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: Callable[[], str],
        problem: str) -> None:
    path = tmp_path / "traces.otlp.jsonl"
    path.write_text(GOOD + "\n" + text() + "\n", encoding="utf-8")
    assert main(["audit", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert re.search(rf"^harness-lab audit: {re.escape(str(path))}:{problem}", err), err


def test_a_file_that_is_not_json_is_refused_at_its_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "traces.otlp.json"
    path.write_text("{\n  \"resourceSpans\": [\n    oops\n", encoding="utf-8")
    assert main(["audit", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"harness-lab audit: {path}:3: not JSON: Expecting value at column 5\n")


def _audited_in_a_process(path: Path) -> tuple[int, str, int]:
    """Exit code, standard error and peak RSS (KiB) of ``harness-lab audit PATH`` run in a
    process of its own."""
    code = ("import resource, sys\nfrom harness_lab.cli import main\n"
            f"code = main(['audit', {str(path)!r}])\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
            "sys.exit(code)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600, check=False)
    *lines, rss = done.stderr.splitlines()
    return done.returncode, "\n".join(lines), int(rss)


def test_a_line_of_two_gibibytes_is_refused_reading_64_mib_of_it(tmp_path: Path) -> None:
    path = tmp_path / "huge.otlp.jsonl"
    with path.open("wb") as f:
        f.truncate(2 << 30)  # sparse: nothing is written, the file reads as 2 GiB of zeros
    code, err, rss_kib = _audited_in_a_process(path)
    assert (code, err) == (2, f"harness-lab audit: {path}:1: a line longer than 67,108,864 "
                              "characters, more than this toolkit reads")
    assert rss_kib < 512 * 1024


@pytest.mark.slow  # writes and reads a 200 MiB file
def test_a_trace_of_a_million_spans_is_refused_past_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "million.otlp.jsonl"
    per_line = 10_000
    with path.open("w", encoding="utf-8") as f:
        f.write(_request(_span()) + "\n")
        for line in range(100):
            f.write(_request(*(_span(f"{line * per_line + n + 1:016x}", parent=ROOT)
                               for n in range(per_line))) + "\n")
    try:
        code, err, rss_kib = _audited_in_a_process(path)
    finally:
        path.unlink()  # 217 MiB: not kept with the test's other files
    assert (code, err) == (2, f"harness-lab audit: {path}:11: {SPANS}[9999]: trace {TRACE} "
                              "holds more than 100,000 spans, more than this toolkit reads")
    assert rss_kib < 1024 * 1024
