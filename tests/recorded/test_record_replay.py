"""The real record path: reference server -> cassette -> replay with the network blocked."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

from harness_lab.invariants import check
from harness_lab.recorded import CassetteMiss, UnplayedInteractions, cassette
from harness_lab.recorded.cassette import UnplayedInteractionsWarning
from harness_lab.scripted import ReferenceServer
from harness_lab.states import ReleaseOutcome, RunState, SemanticVerdict
from tests.recorded.conftest import API_KEY, DIAGNOSIS_QUERY, Recording, build_harness, run_both


def test_the_live_recorded_runs_went_through_every_adapter(recording: Recording) -> None:
    diagnosis, chat = recording.records
    assert (diagnosis.run_state, diagnosis.release_outcome) == (RunState.SUCCESS,
                                                                ReleaseOutcome.SUCCESS)
    assert diagnosis.evidence_repaired is True
    assert diagnosis.semantic_verdict is SemanticVerdict.SUPPORTED
    assert diagnosis.tool_calls == 2 and diagnosis.usage.tokens > 0
    assert diagnosis.duration_s > 0  # the latency model, not the recording, gave time
    assert chat.content is not None and chat.content["text"].startswith("Hello!")
    assert check(diagnosis) == [] and check(chat) == []
    paths = [r.path for r in recording.server.requests]
    assert paths.count("/v1/chat/completions") == 8
    assert paths.count("/tools/logs") == paths.count("/tools/metrics") == 1
    assert all(r.headers["authorization"] == f"Bearer {API_KEY}"
               for r in recording.server.requests)


def test_replay_without_a_network_gives_the_same_runs(recording: Recording,
                                                      no_network: list[Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with cassette(recording.path) as report:
            replayed = run_both(build_harness(recording.base_url, recording.tool_url))
    assert [r.summary() for r in replayed] == [r.summary() for r in recording.records]
    assert [r.trace_types() for r in replayed] == [r.trace_types() for r in recording.records]
    assert [r.content for r in replayed] == [r.content for r in recording.records]
    assert report.played == report.requests == 10
    assert report.misses == [] and report.unplayed == ()
    assert [s.interaction for s in report.steps] == list(range(10))
    assert no_network == []


def test_other_latency_settings_replay_the_same_calls_on_another_timeline(
        recording: Recording, no_network: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.recorded.conftest import FixedLatency

    slower = {kind: 2 * seconds for kind, seconds in FixedLatency.SECONDS.items()}
    monkeypatch.setattr(FixedLatency, "SECONDS", slower)
    with cassette(recording.path) as report:
        replayed = run_both(build_harness(recording.base_url, recording.tool_url))
    assert report.played == 10
    before, after = recording.records[0].summary(), replayed[0].summary()
    for timed in ("duration_s", "finished_at"):
        assert after.pop(timed) == 2 * before.pop(timed)
    assert after == before


def test_replay_does_not_need_the_api_key(recording: Recording, no_network: list[Any]) -> None:
    with cassette(recording.path) as report:
        replayed = run_both(build_harness(recording.base_url, recording.tool_url,
                                          api_key="another-key"))
    assert replayed[0].summary() == recording.records[0].summary()
    assert report.played == 10


def test_a_changed_query_is_a_cassette_miss_naming_the_request_and_field(
        recording: Recording, no_network: list[Any]) -> None:
    with pytest.raises(CassetteMiss) as caught:
        with cassette(recording.path) as report:
            record = build_harness(recording.base_url, recording.tool_url).run(
                "why is payment slow?")
    miss = caught.value
    assert miss.step == 1 and miss.method == "POST"
    assert miss.url == f"{recording.base_url}/chat/completions"
    assert miss.report.closest == 0
    assert miss.report.divergence is not None
    assert miss.report.divergence.path == "messages[1].content(json).query"
    text = str(miss)
    assert "POST " + miss.url in text and "messages[1].content(json).query" in text
    assert DIAGNOSIS_QUERY in text and "why is payment slow?" in text
    assert report.divergence is miss.report
    # inside the run the miss was a failure of the router, not a lost exception
    assert record.run_state is RunState.FAILED
    assert record.failure is not None and "cassette miss" in str(record.failure)
    assert no_network == []


def test_a_divergence_later_in_the_run_names_its_step(recording: Recording,
                                                      no_network: list[Any],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.recorded import conftest

    monkeypatch.setattr(conftest, "TOOL_SPECS", (
        conftest.TOOL_SPECS[0],
        conftest.ToolSpec("metrics", "Read the metrics of a service.",
                          conftest.SERVICE_SCHEMA)))
    with pytest.raises(CassetteMiss) as caught:
        with cassette(recording.path):
            build_harness(recording.base_url, recording.tool_url).run(DIAGNOSIS_QUERY)
    miss = caught.value
    assert miss.step == 2  # the router replayed; the first model step diverged
    assert miss.report.closest == 1
    assert miss.report.divergence is not None
    assert miss.report.divergence.path == "tools[1].function.description"


def test_unplayed_interactions_are_reported(recording: Recording,
                                            no_network: list[Any]) -> None:
    with pytest.warns(UnplayedInteractionsWarning, match="2 recorded interaction"):
        with cassette(recording.path) as report:
            build_harness(recording.base_url, recording.tool_url).run(DIAGNOSIS_QUERY)
    assert [u.index for u in report.unplayed] == [8, 9]
    assert "hello there" in report.unplayed[1].preview
    with pytest.raises(UnplayedInteractions) as caught:
        with cassette(recording.path, allow_unplayed=False):
            build_harness(recording.base_url, recording.tool_url).run(DIAGNOSIS_QUERY)
    assert len(caught.value.unplayed) == 2


def test_the_cassette_on_disk_holds_no_secret(recording: Recording) -> None:
    text = recording.path.read_text()
    lowered = text.lower()
    for word in ("authorization", "api-key", "cookie", "openai-organization", "bearer"):
        assert word not in lowered, word
    assert API_KEY not in text
    assert "org-reference0001" not in text and "cookie0001" not in text
    data = yaml.safe_load(text)
    assert len(data["interactions"]) == 10
    first = data["interactions"][0]
    assert "content-encoding" not in {k.lower() for k in first["response"]["headers"]}
    assert '"choices"' in first["response"]["body"]["string"]  # stored decoded


def test_secret_looking_text_in_a_tool_answer_replays_strictly_as_the_run_saw_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.recorded import conftest

    answer = {"items": [{"line": "auth by Bearer abc.def.ghi for org-AbCdEf123456 with "
                                 "sk-proj-0123456789abcdefXYZ"}]}
    monkeypatch.setitem(conftest.TOOL_ROUTES, "/tools/logs", answer)
    path = tmp_path / "secrets-in-answer.yaml"
    with ReferenceServer(conftest.script(), tools=conftest.TOOL_ROUTES,
                         api_key=API_KEY) as server:
        base_url, tool_url = server.base_url, server.root_url
        with cassette(path, record_mode="once") as recorded:
            live = run_both(build_harness(base_url, tool_url))
    assert recorded.recorded == 10
    text = path.read_text(encoding="utf-8")
    for secret in ("abc.def.ghi", "org-AbCdEf123456", "sk-proj-0123456789abcdefXYZ", API_KEY):
        assert secret not in text, secret
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with cassette(path, allow_unplayed=False) as report:
            replayed = run_both(build_harness(base_url, tool_url))
    assert report.misses == [] and report.played == 10
    assert [r.to_dict() for r in replayed] == [r.to_dict() for r in live]
    # the live run consumed the scrubbed answer: the model was sent it, never the original
    sent = b"".join(r.body for r in server.chat_requests).decode()
    assert "Bearer REDACTED for org-REDACTED with sk-REDACTED" in sent
    assert "abc.def.ghi" not in sent
