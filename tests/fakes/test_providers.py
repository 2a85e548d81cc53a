import pytest

from harness_lab.errors import ProviderError, ScriptExhausted
from harness_lab.fakes import (
    ScriptedRepair,
    ScriptedResponder,
    ScriptedRetriever,
    ScriptedRouter,
    ScriptedSemanticGuard,
    draft,
    empty_reply,
    provider_error,
    repaired,
)
from harness_lab.ports import (
    AnswerReply,
    AnswerRequest,
    GuardReply,
    GuardRequest,
    ModelReply,
    RepairRequest,
    RetrievalReply,
    RetrievalRequest,
    RouteReply,
    RouteRequest,
    TokenUsage,
)
from harness_lab.states import IntentType, SemanticVerdict

ROUTE = RouteRequest("is the disk full?", (), None)
ANSWER = AnswerRequest(IntentType.SYSTEM_CHAT, "hello", ())
RETRIEVE = RetrievalRequest("what is a run?")
GUARD = GuardRequest("r1", "why?", {"conclusion": "disk full"}, ())
REPAIR = RepairRequest("r1", "why?", {"conclusion": "disk full"}, ("unknown id inv-9",),
                       ("inv-1",))


def exhaustion(fn, request):
    with pytest.raises(ScriptExhausted) as caught:
        fn(request)
    return caught.value


# ScriptedRouter


def test_a_router_with_one_intent_routes_every_query_to_it():
    router = ScriptedRouter(IntentType.DIAGNOSIS)
    assert [router.route(ROUTE).intent for _ in range(3)] == [IntentType.DIAGNOSIS] * 3


def test_a_router_reads_an_intent_given_by_name():
    assert ScriptedRouter("KNOWLEDGE_QUERY").route(ROUTE) == RouteReply(
        IntentType.KNOWLEDGE_QUERY)


def test_a_router_refuses_a_name_that_is_no_intent():
    with pytest.raises(ValueError):
        ScriptedRouter("SMALL_TALK")


def test_a_router_with_a_sequence_routes_one_intent_per_call():
    router = ScriptedRouter(["SYSTEM_CHAT", IntentType.DIAGNOSIS])
    assert [router.route(ROUTE).intent for _ in range(2)] == [IntentType.SYSTEM_CHAT,
                                                              IntentType.DIAGNOSIS]


def test_a_router_that_runs_out_names_itself_and_the_step():
    router = ScriptedRouter(["DIAGNOSIS"])
    router.route(ROUTE)
    error = exhaustion(router.route, ROUTE)
    assert str(error) == "ScriptedRouter: script exhausted at step 2 (it holds 1 step(s))"
    assert (error.component, error.step) == ("ScriptedRouter", 2)


def test_a_router_raises_a_provider_error_in_its_script_with_its_latency():
    router = ScriptedRouter([provider_error("router down", latency_s=2.5), "DIAGNOSIS"])
    with pytest.raises(ProviderError) as caught:
        router.route(ROUTE)
    assert (str(caught.value), caught.value.latency_s) == ("router down", 2.5)
    assert router.route(ROUTE).intent is IntentType.DIAGNOSIS


def test_a_router_with_one_provider_error_fails_every_call():
    router = ScriptedRouter(provider_error())
    for _ in range(2):
        with pytest.raises(ProviderError):
            router.route(ROUTE)


def test_a_router_records_every_request_it_received():
    router = ScriptedRouter("DIAGNOSIS")
    other = RouteRequest("and the memory?", (), None)
    router.route(ROUTE)
    router.route(other)
    assert router.requests == [ROUTE, other]


def test_a_router_replies_carry_its_latency_and_usage():
    reply = ScriptedRouter("DIAGNOSIS", latency_s=0.3, usage=TokenUsage(20, 1)).route(ROUTE)
    assert reply == RouteReply(IntentType.DIAGNOSIS, TokenUsage(20, 1), 0.3)


def test_a_router_reply_in_the_script_keeps_its_own_latency_and_usage():
    own = RouteReply(IntentType.SYSTEM_CHAT, TokenUsage(1, 1), 0.1)
    router = ScriptedRouter([own], latency_s=0.3, usage=TokenUsage(20, 1))
    assert router.route(ROUTE) == own


def test_a_router_reply_by_default_carries_zero_usage_and_no_latency():
    reply = ScriptedRouter("DIAGNOSIS").route(ROUTE)
    assert (reply.usage, reply.latency_s) == (TokenUsage(0, 0), None)


# ScriptedResponder


def test_a_responder_by_default_gives_its_default_answer_every_time():
    responder = ScriptedResponder()
    assert [responder.answer(ANSWER).text for _ in range(2)] == ["A scripted answer."] * 2


def test_a_responder_with_one_text_answers_it_every_time():
    responder = ScriptedResponder("Hello!")
    assert [responder.answer(ANSWER).text for _ in range(2)] == ["Hello!", "Hello!"]


def test_a_responder_with_a_sequence_answers_one_text_per_call_then_runs_out():
    responder = ScriptedResponder(["one", "two"])
    assert [responder.answer(ANSWER).text for _ in range(2)] == ["one", "two"]
    error = exhaustion(responder.answer, ANSWER)
    assert str(error) == "ScriptedResponder: script exhausted at step 3 (it holds 2 step(s))"
    assert (error.component, error.step) == ("ScriptedResponder", 3)


def test_a_responder_raises_a_provider_error_in_its_script_with_its_latency():
    responder = ScriptedResponder([provider_error(latency_s=1.25)])
    with pytest.raises(ProviderError) as caught:
        responder.answer(ANSWER)
    assert caught.value.latency_s == 1.25


def test_a_responder_records_every_request_it_received():
    responder = ScriptedResponder()
    responder.answer(ANSWER)
    assert responder.requests == [ANSWER]


def test_a_responder_replies_carry_its_latency_and_usage():
    reply = ScriptedResponder("hi", latency_s=0.8, usage=TokenUsage(30, 12)).answer(ANSWER)
    assert reply == AnswerReply("hi", TokenUsage(30, 12), 0.8)


def test_a_responder_answer_reply_in_the_script_keeps_its_own_latency():
    responder = ScriptedResponder([AnswerReply("hi", latency_s=0.1)], latency_s=0.8)
    assert responder.answer(ANSWER).latency_s == 0.1


# ScriptedRetriever


def test_a_retriever_by_default_retrieves_its_default_passage():
    assert ScriptedRetriever().retrieve(RETRIEVE).passages == ("A scripted knowledge passage.",)


def test_a_retriever_with_passages_retrieves_them_every_time():
    retriever = ScriptedRetriever(["a", "b"])
    assert [retriever.retrieve(RETRIEVE).passages for _ in range(2)] == [("a", "b"), ("a", "b")]


def test_a_retriever_reads_a_single_string_as_one_passage():
    assert ScriptedRetriever("only").retrieve(RETRIEVE).passages == ("only",)


def test_a_retriever_with_empty_passages_retrieves_nothing():
    assert ScriptedRetriever(()).retrieve(RETRIEVE).passages == ()


def test_a_retriever_script_is_consumed_one_step_per_call_then_runs_out():
    retriever = ScriptedRetriever(script=[["a"], provider_error("index down", latency_s=0.4)])
    assert retriever.retrieve(RETRIEVE).passages == ("a",)
    with pytest.raises(ProviderError) as caught:
        retriever.retrieve(RETRIEVE)
    assert (str(caught.value), caught.value.latency_s) == ("index down", 0.4)
    error = exhaustion(retriever.retrieve, RETRIEVE)
    assert str(error) == "ScriptedRetriever: script exhausted at step 3 (it holds 2 step(s))"
    assert (error.component, error.step) == ("ScriptedRetriever", 3)


def test_a_retriever_refuses_both_passages_and_a_script():
    with pytest.raises(ValueError):
        ScriptedRetriever(["a"], script=[["b"]])


def test_a_retriever_records_every_request_it_received():
    retriever = ScriptedRetriever()
    retriever.retrieve(RETRIEVE)
    assert retriever.requests == [RETRIEVE]


def test_a_retriever_replies_carry_its_latency_and_usage():
    reply = ScriptedRetriever(["a"], latency_s=0.2, usage=TokenUsage(5, 0)).retrieve(RETRIEVE)
    assert reply == RetrievalReply(("a",), TokenUsage(5, 0), 0.2)


# ScriptedSemanticGuard


def test_a_guard_by_default_finds_every_conclusion_supported():
    guard = ScriptedSemanticGuard()
    assert [guard.judge(GUARD).supported for _ in range(2)] == [True, True]


def test_a_guard_reads_unsupported_by_name_and_gives_its_rationale():
    reply = ScriptedSemanticGuard("UNSUPPORTED", rationale="no cited disk metric").judge(GUARD)
    assert reply == GuardReply(False, "no cited disk metric")


def test_an_unavailable_guard_raises_a_provider_error_with_its_latency():
    guard = ScriptedSemanticGuard(SemanticVerdict.UNAVAILABLE, latency_s=3.0)
    with pytest.raises(ProviderError) as caught:
        guard.judge(GUARD)
    assert (str(caught.value), caught.value.latency_s) == ("semantic guard unavailable", 3.0)


def test_an_unavailable_guard_without_a_latency_leaves_it_to_the_latency_model():
    with pytest.raises(ProviderError) as caught:
        ScriptedSemanticGuard("UNAVAILABLE").judge(GUARD)
    assert caught.value.latency_s is None


def test_a_guard_with_a_sequence_plays_one_verdict_per_call_then_runs_out():
    guard = ScriptedSemanticGuard(["UNSUPPORTED", SemanticVerdict.SUPPORTED])
    assert [guard.judge(GUARD).supported for _ in range(2)] == [False, True]
    error = exhaustion(guard.judge, GUARD)
    assert str(error) == (
        "ScriptedSemanticGuard: script exhausted at step 3 (it holds 2 step(s))")
    assert (error.component, error.step) == ("ScriptedSemanticGuard", 3)


def test_a_guard_raises_a_provider_error_in_its_script_with_its_latency():
    guard = ScriptedSemanticGuard([provider_error(latency_s=0.7), "SUPPORTED"])
    with pytest.raises(ProviderError) as caught:
        guard.judge(GUARD)
    assert caught.value.latency_s == 0.7


def test_a_guard_refuses_a_name_that_is_no_verdict():
    with pytest.raises(ValueError):
        ScriptedSemanticGuard("PROBABLY")


def test_a_guard_records_every_request_it_received():
    guard = ScriptedSemanticGuard()
    guard.judge(GUARD)
    assert guard.requests == [GUARD]


def test_a_guard_replies_carry_its_latency_and_usage():
    reply = ScriptedSemanticGuard(latency_s=1.0, usage=TokenUsage(200, 8)).judge(GUARD)
    assert reply == GuardReply(True, "", TokenUsage(200, 8), 1.0)


def test_a_guard_reply_in_the_script_is_returned_with_its_own_fields():
    own = GuardReply(False, "contradicts inv-1", TokenUsage(2, 2), 0.1)
    assert ScriptedSemanticGuard([own], latency_s=1.0).judge(GUARD) == own


# ScriptedRepair


def test_a_repair_plays_its_steps_in_order():
    first, second = repaired("disk full"), empty_reply()
    repair = ScriptedRepair([first, second])
    assert (repair.repair(REPAIR), repair.repair(REPAIR)) == (first, second)


def test_a_repair_callable_step_is_called_with_the_repair_request():
    repair = ScriptedRepair([lambda req: repaired(req.draft["conclusion"],
                                                  [(req.citable[0], "disk at 100%")])])
    assert repair.repair(REPAIR).payload == {"draft": {
        "conclusion": "disk full",
        "evidence": [{"invocation_id": "inv-1", "claim": "disk at 100%"}],
    }}


def test_a_repair_raises_a_provider_error_step_with_its_latency():
    repair = ScriptedRepair([provider_error("repair model down", latency_s=2.0)])
    with pytest.raises(ProviderError) as caught:
        repair.repair(REPAIR)
    assert (str(caught.value), caught.value.latency_s) == ("repair model down", 2.0)


def test_a_repair_that_runs_out_names_itself_and_the_step():
    error = exhaustion(ScriptedRepair([]).repair, REPAIR)
    assert str(error) == "ScriptedRepair: script exhausted at step 1 (it holds 0 step(s))"
    assert (error.component, error.step) == ("ScriptedRepair", 1)


def test_a_repair_records_every_request_it_received():
    repair = ScriptedRepair([empty_reply()])
    repair.repair(REPAIR)
    assert repair.requests == [REPAIR]


def test_a_repair_fills_in_latency_and_usage_a_reply_does_not_carry():
    reply = ScriptedRepair([repaired("x")], latency_s=1.5, usage=TokenUsage(9, 9)).repair(REPAIR)
    assert (reply.latency_s, reply.usage) == (1.5, TokenUsage(9, 9))


def test_repaired_builds_the_same_reply_as_draft():
    assert repaired("disk full", [("inv-1", "disk at 100%")],
                    recommendations=["add disk"]) == draft(
        "disk full", evidence=[("inv-1", "disk at 100%")], recommendations=["add disk"])


def test_repaired_carries_the_latency_and_usage_it_is_given():
    reply = repaired("disk full", latency_s=0.9, usage=TokenUsage(1, 2))
    assert reply == ModelReply(payload={"draft": {"conclusion": "disk full"}},
                               usage=TokenUsage(1, 2), latency_s=0.9)


def test_provider_fakes_count_their_remaining_steps_and_none_when_one_step_repeats():
    router = ScriptedRouter(["DIAGNOSIS", "SYSTEM_CHAT"])
    router.route(ROUTE)
    assert (router.remaining, ScriptedResponder().remaining) == (1, None)


def test_a_rewound_router_routes_again_from_its_first_step_with_no_requests():
    router = ScriptedRouter([IntentType.DIAGNOSIS, IntentType.SYSTEM_CHAT])
    router.route(ROUTE)
    router.route(ROUTE)
    router.rewind()
    assert router.requests == []
    assert router.route(ROUTE).intent is IntentType.DIAGNOSIS


def test_a_repeating_scripted_error_raises_a_new_exception_on_every_call():
    scripted = ProviderError("router down", latency_s=2.0, status=503)
    router = ScriptedRouter(scripted)
    raised = []
    for _ in range(3):
        with pytest.raises(ProviderError) as caught:
            router.route(ROUTE)
        raised.append(caught.value)
    assert len({id(e) for e in raised}) == 3 and scripted not in raised
    assert {(str(e), e.latency_s, e.status) for e in raised} == {("router down", 2.0, 503)}
    assert scripted.__traceback__ is None
