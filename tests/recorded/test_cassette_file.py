"""Cassette files: every tampered kind is one CassetteError naming file, line, interaction."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from harness_lab.recorded import cassette
from harness_lab.recorded.cassette_file import (
    MAX_CASSETTE_BYTES,
    CassetteError,
    check_cassette,
    nesting_problem,
    read_cassette,
)
from harness_lab.runner import run_paths
from tests.recorded.hostile import (
    CASSETTES,
    GOOD,
    without_response_of_interaction_1,
    write,
)

ROOT = Path(__file__).resolve().parents[2]
URL = "https://api.provider.test/v1/chat/completions"

def post(body: dict[str, int]) -> httpx.Response:
    """POST ``body`` through a transport that fails if it is ever reached."""

    def unreachable(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"the transport was reached: {request.url}")

    with httpx.Client(transport=httpx.MockTransport(unreachable)) as http:
        return http.post(URL, content=json.dumps(body).encode(),
                         headers={"content-type": "application/json"})


def test_the_hand_written_cassette_replays(tmp_path: Path) -> None:
    path = write(tmp_path / "good.yaml", GOOD)
    with cassette(path, allow_unplayed=False) as report:
        assert post({"a": 0}).json() == {"n": 0}
        assert post({"a": 1}).json() == {"n": 1}
    assert report.played == 2
    assert check_cassette(path) == 2


@pytest.mark.parametrize(("kind", "make", "message", "line", "interaction"), CASSETTES,
                         ids=[case[0] for case in CASSETTES])
def test_a_tampered_cassette_is_one_error_naming_file_line_and_interaction(
        tmp_path: Path, kind: str, make: Callable[[Path], Path], message: str,
        line: int | None, interaction: int | None) -> None:
    path = make(tmp_path / "tampered.yaml")
    with pytest.raises(CassetteError) as caught:
        with cassette(path):
            post({"a": 0})
    error = caught.value
    assert str(error).startswith(f"cassette {path}:{line}: "), str(error)
    assert message in str(error)
    assert (error.path, error.line, error.interaction) == (path, line, interaction)


def test_a_directory_a_fifo_and_an_oversized_file_are_refused_by_what_they_are(
        tmp_path: Path) -> None:
    directory = tmp_path / "dir.yaml"
    directory.mkdir()
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    huge = tmp_path / "huge.yaml"
    with huge.open("wb") as handle:
        handle.truncate(MAX_CASSETTE_BYTES + 1)  # sparse: no disk used
    cases = {directory: "is a directory", fifo: "is not a regular file",
             huge: f"{MAX_CASSETTE_BYTES:,} bytes"}
    for path, message in cases.items():
        with pytest.raises(CassetteError, match=message) as caught:
            read_cassette(path)
        assert caught.value.path == path
        with pytest.raises(CassetteError, match=message):
            with cassette(path):
                pass


def test_a_missing_file_is_refused_by_check_cassette_only(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="does not exist"):
        check_cassette(tmp_path / "absent.yaml")


def test_record_mode_all_replaces_a_broken_cassette_without_reading_it(tmp_path: Path) -> None:
    path = write(tmp_path / "broken.yaml", "interactions: 5\n")

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"fresh": True})

    with cassette(path, record_mode="all") as report:
        with httpx.Client(transport=httpx.MockTransport(answer)) as http:
            http.post(URL, json={"a": 1})
    assert report.recorded == 1
    assert check_cassette(path) == 1


def test_a_run_on_a_tampered_cassette_is_one_error_row_naming_the_cassette(
        tmp_path: Path) -> None:
    broken = write(tmp_path / "broken.yaml", without_response_of_interaction_1(GOOD))
    source = (ROOT / "scenarios" / "recorded" / "diagnosis-success.yaml").read_text(
        encoding="utf-8")
    scenario = tmp_path / "scenarios" / "s.yaml"
    scenario.parent.mkdir()
    scenario.write_text(source.replace("../../cassettes/recorded-diagnosis-success.yaml",
                                       str(broken)), encoding="utf-8")
    results = run_paths([scenario])
    assert len(results) == 1
    [result] = results
    assert result.verdict == "ERROR"
    assert result.error == (f"CassetteError: cassette {broken}:11: interaction 1: "
                            "`response` is missing")


def test_a_recording_saved_into_a_missing_directory_makes_it(tmp_path: Path) -> None:
    path = tmp_path / "new" / "deeper" / "made.yaml"

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"made": True})

    with cassette(path, record_mode="all"):
        with httpx.Client(transport=httpx.MockTransport(answer)) as http:
            http.post(URL, json={"a": 1})
    assert "made" in path.read_text(encoding="utf-8")
    assert sorted(p.name for p in path.parent.iterdir()) == ["made.yaml"]


def test_a_block_that_raises_leaves_an_existing_cassette_byte_identical(tmp_path: Path) -> None:
    path = write(tmp_path / "keep.yaml", GOOD)

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"new": True})

    with pytest.raises(RuntimeError):
        with cassette(path, record_mode="all"):
            with httpx.Client(transport=httpx.MockTransport(answer)) as http:
                http.post(URL, json={"a": 9})
            raise RuntimeError("boom")
    assert path.read_text(encoding="utf-8") == GOOD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.yaml"]


def test_a_hand_written_response_without_message_list_headers_or_body_still_replays(
        tmp_path: Path) -> None:
    path = write(tmp_path / "terse.yaml", GOOD.replace(
        "    body: {string: '{\"n\": 0}'}\n    headers: {content-type: [application/json]}\n"
        "    status: {code: 200, message: OK}",
        "    body: {string: null}\n    headers: {content-type: application/json}\n"
        "    status: {code: 204}"))
    with cassette(path) as report:
        response = post({"a": 0})
        assert post({"a": 1}).json() == {"n": 1}
    assert (response.status_code, response.content) == (204, b"")
    assert response.headers["content-type"] == "application/json"
    assert report.played == 2


# -- one parse per process, a fresh copy per read ---------------------------------------------


def test_a_cassette_rewritten_in_place_with_the_same_size_and_time_is_read_again(
        tmp_path: Path) -> None:
    path = write(tmp_path / "edited.yaml", GOOD)
    with cassette(path):
        assert post({"a": 0}).json() == {"n": 0}
        assert post({"a": 1}).json() == {"n": 1}
    stamp = path.stat()
    edited = GOOD.replace('{"n": 0}', '{"n": 7}')
    assert len(edited) == len(GOOD)
    write(path, edited)
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    with cassette(path):
        assert post({"a": 0}).json() == {"n": 7}
        assert post({"a": 1}).json() == {"n": 1}
    _, responses = read_cassette(path)
    assert responses[0]["body"]["string"] == b'{"n": 7}'


def test_a_cassette_tampered_after_a_good_read_is_refused_naming_its_line(
        tmp_path: Path) -> None:
    path = write(tmp_path / "tampered-later.yaml", GOOD)
    assert check_cassette(path) == 2
    write(path, without_response_of_interaction_1(GOOD))
    with pytest.raises(CassetteError, match="`response` is missing") as caught:
        read_cassette(path)
    assert (caught.value.line, caught.value.interaction) == (11, 1)


def test_what_one_read_changes_no_later_read_of_the_same_file_sees(tmp_path: Path) -> None:
    path = write(tmp_path / "shared.yaml", GOOD)
    requests, responses = read_cassette(path)
    requests[0].body = b"changed"
    requests[0].headers["content-type"] = "text/plain"
    requests[1].uri = "https://elsewhere.test/"
    responses[0]["body"]["string"] = b"changed"
    responses[0]["headers"]["content-type"].append("text/plain")
    responses[1]["status"]["code"] = 500
    again, answers = read_cassette(path)
    assert [r.body for r in again] == [b'{"a": 0}', b'{"a": 1}']
    assert again[0].headers["content-type"] == "application/json"
    assert again[1].uri == URL
    assert [a["body"]["string"] for a in answers] == [b'{"n": 0}', b'{"n": 1}']
    assert answers[0]["headers"]["content-type"] == ["application/json"]
    assert answers[1]["status"]["code"] == 200


def test_a_replay_that_scrubs_a_secret_leaves_the_next_replay_the_recorded_request(
        tmp_path: Path) -> None:
    token = "tok-live-0123456789"
    path = write(tmp_path / "token.yaml",
                 GOOD.replace('{"a": 0}', f'{{"a": "{token}"}}'))

    def ask() -> httpx.Response:
        with httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(599))) as http:
            return http.post(URL, content=json.dumps({"a": token}).encode(),
                             headers={"content-type": "application/json"})

    with cassette(path, secrets=[token]) as scrubbed:
        assert ask().json() == {"n": 0}
        post({"a": 1})
    with cassette(path) as plain:
        assert ask().json() == {"n": 0}
        post({"a": 1})
    assert (scrubbed.played, plain.played, plain.misses) == (2, 2, [])


def test_nesting_and_aliases_are_found_with_their_line_before_the_yaml_is_built() -> None:
    assert nesting_problem("a: [1, {b: 2}]\n") is None
    assert nesting_problem("a: &x 1\nb: *x\n") is None
    assert nesting_problem("a: &x 1\nb: *x\n", aliases=False) == (
        2, "YAML aliases are not accepted")
    assert nesting_problem("\n" + "[" * 40 + "]" * 40 + "\n") == (
        2, "nests deeper than 32 levels")
