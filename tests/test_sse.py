import pytest

from harness_lab.sse import ChatSseSession, SseProtocolError
from harness_lab.states import ReleaseOutcome, SseState


def session():
    s = ChatSseSession(lambda: 0.0)
    s.open("s1", "r1")
    return s


def test_metadata_opens_the_session_and_done_makes_it_terminal():
    s = session()
    assert s.state is SseState.OPEN
    s.status("ROUTING")
    s.content("s1", "r1", {"x": 1})
    s.done(ReleaseOutcome.SUCCESS)
    assert s.state is SseState.TERMINAL
    assert [e.kind.value for e in s.events] == ["metadata", "status", "content", "done"]


def test_a_second_content_is_refused():
    s = session()
    assert s.content("s1", "r1", {})
    assert not s.content("s1", "r1", {})
    assert [e.kind.value for e in s.events].count("content") == 1


def test_a_session_built_with_the_second_content_defect_sends_a_second_content():
    s = ChatSseSession(lambda: 0.0, allow_second_content=True)
    s.open("s1", "r1")
    assert s.content("s1", "r1", {}) and s.content("s1", "r1", {})
    assert [e.kind.value for e in s.events] == ["metadata", "content", "content"]


def test_a_result_whose_identity_differs_from_the_metadata_raises():
    with pytest.raises(SseProtocolError):
        session().content("s1", "other-run", {})


def test_late_content_after_a_disconnect_is_refused():
    s = session()
    s.disconnect()
    assert s.state is SseState.DISCONNECTED
    assert not s.content("s1", "r1", {})
    assert [k.value for k in s.refused] == ["content"]


def test_cancelled_is_never_a_public_done():
    s = session()
    s.failure("s1", "r1", {})
    with pytest.raises(SseProtocolError):
        s.done(ReleaseOutcome.CANCELLED)


def test_a_client_that_leaves_before_metadata_goes_from_new_to_disconnected():
    s = ChatSseSession(lambda: 0.0)
    s.disconnect()
    assert s.state is SseState.DISCONNECTED


def test_nothing_is_sent_after_done_and_the_attempts_are_refused():
    s = session()
    s.content("s1", "r1", {})
    s.done(ReleaseOutcome.SUCCESS)
    assert not s.status("ROUTING")
    assert not s.failure("s1", "r1", {})
    assert not s.done(ReleaseOutcome.FAILED)
    s.close()
    assert s.state is SseState.TERMINAL
    assert [k.value for k in s.refused] == ["status", "failure", "done"]


def test_a_session_opens_once():
    s = session()
    assert not s.open("s1", "r1")
    assert [e.kind.value for e in s.events] == ["metadata"]


def test_a_done_whose_send_fails_leaves_the_session_disconnected_without_done():
    def fail_done(s, k, kind):
        if kind.value == "done":
            s.disconnect()

    s = ChatSseSession(lambda: 0.0, fail_done)
    s.open("s1", "r1")
    s.content("s1", "r1", {})
    assert not s.done(ReleaseOutcome.SUCCESS)
    assert s.state is SseState.DISCONNECTED
    assert [e.kind.value for e in s.events] == ["metadata", "content"]
    assert [k.value for k in s.refused] == ["done"]
