"""cassette(): JSON matching, scrubbing, record modes, strict replay and unplayed reports."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml  # type: ignore[import-untyped]
from vcr.request import Request as VcrRequest  # type: ignore[import-untyped]

from harness_lab.errors import HarnessError
from harness_lab.recorded import (
    CassetteMiss,
    UnplayedInteractions,
    UnplayedInteractionsWarning,
    cassette,
    cassette_path,
)
from harness_lab.recorded.cassette import json_body, scrub_request, scrub_response

URL = "https://api.provider.test/v1/chat/completions"
SECRET = "sk-live-abcdefghijklmnop1234"


def serve(answers: list[Any] | None = None) -> Callable[[httpx.Request], httpx.Response]:
    """A MockTransport handler; with no answers it fails (replay must not reach it)."""
    queue = list(answers or [])

    def handler(request: httpx.Request) -> httpx.Response:
        if not queue:
            raise AssertionError(f"the transport was reached: {request.url}")
        answer = queue.pop(0)
        return answer if isinstance(answer, httpx.Response) else httpx.Response(200,
                                                                                 json=answer)

    return handler


def post(handler: Callable[[httpx.Request], httpx.Response], body: bytes | dict[str, Any],
         url: str = URL, headers: dict[str, str] | None = None) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    with httpx.Client(transport=httpx.MockTransport(handler)) as http:
        return http.post(url, content=content,
                         headers={"content-type": "application/json", **(headers or {})})


def record(path: Path, bodies: list[dict[str, Any]], **kw: Any) -> None:
    with cassette(path, record_mode="once", **kw):
        handler = serve([{"n": i} for i in range(len(bodies))])
        for body in bodies:
            post(handler, body)


def test_json_bodies_match_whatever_their_key_order(tmp_path: Path) -> None:
    path = tmp_path / "order.yaml"
    record(path, [{"a": 1, "b": {"c": 2, "d": 3}}])
    with cassette(path) as report:
        response = post(serve(), b'{"b": {"d": 3, "c": 2}, "a": 1}')
    assert response.json() == {"n": 0}
    assert report.played == 1 and report.steps[0].interaction == 0


def test_a_number_of_another_json_type_is_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "types.yaml"
    record(path, [{"a": 1}])
    with pytest.raises(CassetteMiss) as caught:
        with cassette(path):
            post(serve(), {"a": 1.0})
    assert caught.value.report.divergence is not None
    assert caught.value.report.divergence.path == "a"


@pytest.mark.parametrize(("live", "recorded", "same"), [
    (b"plain text", b"plain text", True),
    (b"plain text", b"plain text!", False),
    (b'{"a": 1}', b"not json", False),
    (None, b"", True),
    (b'{"a": [1, 2]}', b'{"a": [2, 1]}', False),
    (b'{"a": 1, "b": 2}', b'{"b":2,"a":1}', True),
], ids=["same text", "other text", "json and text", "no body and empty", "list order",
        "key order and spacing"])
def test_the_body_matcher_compares_json_as_data_and_anything_else_as_bytes(
        live: bytes | None, recorded: bytes, same: bool) -> None:
    def request(body: bytes | None) -> VcrRequest:
        return VcrRequest("POST", "http://x.test/", body, {})

    if same:
        assert json_body(request(live), request(recorded)) is None
    else:
        with pytest.raises(AssertionError):
            json_body(request(live), request(recorded))


def test_a_missing_cassette_is_a_miss_in_record_mode_none(tmp_path: Path) -> None:
    with pytest.raises(CassetteMiss, match="does not exist") as caught:
        with cassette(tmp_path / "absent") as report:
            with pytest.raises(CassetteMiss):
                post(serve(), {"a": 1})
    assert isinstance(caught.value, HarnessError)
    assert caught.value.reason == "cassette_not_found"
    assert str(caught.value).endswith("record it first: `harness-lab record SCENARIO` for a "
                                      "scenario, record_mode='once' for cassette()")
    assert caught.value.report.closest is None
    assert report.path == tmp_path / "absent.yaml"
    assert not report.path.exists()


def test_a_repeated_request_is_a_miss_once_its_interaction_was_played(tmp_path: Path) -> None:
    path = tmp_path / "repeat.yaml"
    record(path, [{"a": 1}])
    with pytest.raises(CassetteMiss, match="already played") as caught:
        with cassette(path):
            post(serve(), {"a": 1})
            post(serve(), {"a": 1})
    assert caught.value.step == 2 and caught.value.report.closest == 0
    with cassette(path, allow_playback_repeats=True) as report:
        post(serve(), {"a": 1})
        post(serve(), {"a": 1})
    assert report.played == 2


def test_the_closest_recording_is_the_one_with_fewest_differences(tmp_path: Path) -> None:
    path = tmp_path / "closest.yaml"
    record(path, [{"q": "x", "k": 1, "j": 1}, {"q": "y", "k": 2, "j": 2}])
    with pytest.raises(CassetteMiss) as caught:
        with cassette(path, allow_unplayed=True):
            post(serve(), {"q": "y", "k": 2, "j": 3})
    assert caught.value.report.closest == 1
    assert caught.value.report.divergence is not None
    assert caught.value.report.divergence.path == "j"


def test_without_strict_the_miss_is_only_reported(tmp_path: Path) -> None:
    path = tmp_path / "lenient.yaml"
    record(path, [{"a": 1}])
    with cassette(path, strict=False) as report:
        with pytest.raises(CassetteMiss):
            post(serve(), {"a": 2})
    assert len(report.misses) == 1 and report.divergence is report.misses[0].report
    assert [s.outcome for s in report.steps] == ["miss"]


def test_unplayed_interactions_warn_or_raise(tmp_path: Path) -> None:
    path = tmp_path / "unplayed.yaml"
    record(path, [{"a": 1}, {"a": 2}])
    with pytest.warns(UnplayedInteractionsWarning, match="interaction 1"):
        with cassette(path) as report:
            post(serve(), {"a": 1})
    assert [u.index for u in report.unplayed] == [1]
    with pytest.raises(UnplayedInteractions, match="1 recorded interaction"):
        with cassette(path, allow_unplayed=False):
            post(serve(), {"a": 1})


def test_secrets_are_scrubbed_before_anything_is_written(tmp_path: Path) -> None:
    path = tmp_path / "secrets.yaml"
    answer = httpx.Response(200, json={"org": "org-ABCdef123456", "echo": SECRET, "ok": True},
                            headers={"Set-Cookie": "sid=cookie-value-1", "OpenAI-Organization":
                                     "org-ABCdef123456", "OpenAI-Project": "proj_123"})
    headers = {"Authorization": f"Bearer {SECRET}", "api-key": "azure-key-1",
               "x-api-key": "other-key-1", "OpenAI-Organization": "org-ABCdef123456",
               "Cookie": "sid=cookie-value-1"}
    with cassette(path, record_mode="once", secrets=["my-own-token-77"]):
        post(serve([answer]), {"q": "my-own-token-77 and Bearer abc.def"},
             url=URL + "?api-key=query-key-1&x=1", headers=headers)
    text = path.read_text()
    for leaked in (SECRET, "azure-key-1", "other-key-1", "org-ABCdef123456", "cookie-value-1",
                   "query-key-1", "my-own-token-77", "abc.def", "proj_123"):
        assert leaked not in text, leaked
    for header in ("authorization", "api-key", "cookie", "openai-organization",
                   "openai-project"):
        assert header not in text.lower(), header
    interaction = yaml.safe_load(text)["interactions"][0]
    assert interaction["request"]["uri"] == URL + "?x=1"
    assert "REDACTED" in interaction["request"]["body"]
    # the live request is scrubbed alike before matching, so it still replays
    with cassette(path, secrets=["my-own-token-77"]) as report:
        response = post(serve(), {"q": "my-own-token-77 and Bearer abc.def"},
                        url=URL + "?api-key=another&x=1", headers=headers)
    assert response.json()["ok"] is True and report.played == 1


def test_compressed_responses_are_stored_decoded(tmp_path: Path) -> None:
    path = tmp_path / "gzip.yaml"
    raw = json.dumps({"zipped": True}).encode()
    answer = httpx.Response(200, content=gzip.compress(raw),
                            headers={"Content-Encoding": "gzip",
                                     "Content-Type": "application/json"})
    with cassette(path, record_mode="once"):
        assert post(serve([answer]), {"a": 1}).json() == {"zipped": True}
    stored = yaml.safe_load(path.read_text())["interactions"][0]["response"]
    assert "content-encoding" not in {k.lower() for k in stored["headers"]}
    assert json.loads(stored["body"]["string"]) == {"zipped": True}
    with cassette(path):
        assert post(serve(), {"a": 1}).json() == {"zipped": True}


def test_new_episodes_adds_and_all_rerecords(tmp_path: Path) -> None:
    path = tmp_path / "modes.yaml"
    record(path, [{"a": 1}])
    with cassette(path, record_mode="new_episodes") as report:
        post(serve(), {"a": 1})
        post(serve([{"new": True}]), {"a": 2})
    assert [s.outcome for s in report.steps] == ["played", "recorded"]
    assert len(yaml.safe_load(path.read_text())["interactions"]) == 2
    with cassette(path, record_mode="all") as report:
        post(serve([{"fresh": 1}]), {"a": 1})
    assert report.recorded == 1 and report.unplayed == ()
    assert len(yaml.safe_load(path.read_text())["interactions"]) == 1  # from scratch
    with cassette(path, allow_unplayed=False):
        assert post(serve(), {"a": 1}).json() == {"fresh": 1}


def test_a_block_that_raises_records_nothing(tmp_path: Path) -> None:
    path = tmp_path / "raised.yaml"
    with pytest.raises(RuntimeError):
        with cassette(path, record_mode="once"):
            post(serve([{"a": 1}]), {"a": 1})
            raise RuntimeError("boom")
    assert not path.exists()


def test_record_modes_are_validated_and_paths_follow_the_convention(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="record_mode"):
        with cassette(tmp_path / "x", record_mode="sometimes"):
            pass
    assert cassette_path("checkout", tmp_path) == tmp_path / "cassettes" / "checkout.yaml"
    assert cassette_path("a.yml", tmp_path).name == "a.yml"


def test_a_compressed_answer_holding_a_secret_reaches_the_caller_scrubbed_as_replay_gives_it(
        tmp_path: Path) -> None:
    path = tmp_path / "gzip-secret.yaml"
    raw = json.dumps({"line": f"key {SECRET} used by org-ABCdef123456"}).encode()
    answer = httpx.Response(200, content=gzip.compress(raw),
                            headers={"Content-Encoding": "gzip", "Content-Length":
                                     str(len(gzip.compress(raw))),
                            "Content-Type": "application/json"})
    with cassette(path, record_mode="once"):
        live = post(serve([answer]), {"a": 1})
    with cassette(path) as report:
        replayed = post(serve(), {"a": 1})
    assert live.json() == {"line": "key sk-REDACTED used by org-REDACTED"}
    assert replayed.content == live.content and report.played == 1
    stored = yaml.safe_load(path.read_text())["interactions"][0]["response"]
    assert stored["headers"]["content-length"] == [str(len(live.content))]


@pytest.mark.parametrize("value", [
    "token BEARER abc.def= and bearer\txyz", "ORG-ABCDEF1234 org-abcdef1234 org-short",
    "SK-LONGENOUGHKEY123 sk-longenoughkey123 sk-short", "plain text with no credential",
])
def test_scrubbing_text_and_bytes_replaces_exactly_what_the_patterns_name(value: str) -> None:
    expected = {
        "token BEARER abc.def= and bearer\txyz": "token Bearer REDACTED and Bearer REDACTED",
        "ORG-ABCDEF1234 org-abcdef1234 org-short": "ORG-ABCDEF1234 org-REDACTED org-short",
        "SK-LONGENOUGHKEY123 sk-longenoughkey123 sk-short":
            "SK-LONGENOUGHKEY123 sk-REDACTED sk-short",
        "plain text with no credential": "plain text with no credential",
    }[value]
    request = VcrRequest("POST", URL, value, {})
    assert scrub_request(request).body == expected.encode()
    response = scrub_response({"headers": {}, "body": {"string": value}})
    assert response["body"]["string"] == expected
