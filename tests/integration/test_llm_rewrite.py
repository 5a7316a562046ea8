"""The optional LLM rewriter against a real local HTTP server speaking the OpenAI
chat-completions protocol: a good answer is used; malformed JSON, an invented
entity, a dropped negation or time, an error status and a timeout all fall
back to the rules rewrite, and the trace says why."""

import json
import time
import uuid

import pytest

from dialogue.engine import TurnEngine
from dialogue.llm_rewriter import LLMRewriter
from tests.http_fakes import serve

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

RULES = "综合意外险不保哪些情况"


def chat_reply(content: str):
    return 200, {"id": "c1", "object": "chat.completion", "created": 0, "model": "fake",
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": content}}],
                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def queries(*qs: str):
    return chat_reply(json.dumps({"queries": list(qs)}, ensure_ascii=False))


def play(runtime, kb, url, *, timeout=2.0):
    llm = LLMRewriter(base_url=f"{url}/v1", model="fake", timeout=timeout)
    engine = TurnEngine(runtime.snapshots, runtime.retriever, runtime.sessions, llm=llm)
    sid = f"llm-{uuid.uuid4().hex[:8]}"
    try:
        engine.handle(kb, sid, "意外险不保哪些情况")
        return engine.handle(kb, sid, "那综合意外险呢")
    finally:
        engine.close()


def test_a_good_answer_is_used_and_the_request_is_well_formed(runtime, demo_kb):
    with serve(lambda path, body: queries("综合意外险不保障哪些情况")) as fake:
        result = play(runtime, demo_kb, fake.url)
    assert result.rewrite.source == "llm" and result.rewrite.accepted
    assert result.standalone == "综合意外险不保障哪些情况"
    assert all(result.rewrite.checks.values())
    # Only the turn that refers back went to the LLM, at temperature 0, asking for JSON,
    # with the allowed entity names in the prompt.
    assert len(fake.requests) == 1
    path, body = fake.requests[0]
    assert path == "/v1/chat/completions"
    assert body["temperature"] == 0 and body["response_format"] == {"type": "json_object"}
    assert "综合意外险" in body["messages"][0]["content"]


@pytest.mark.parametrize("reply, failed", [
    (lambda: chat_reply("综合意外险不保哪些情况"), "not JSON"),
    (lambda: chat_reply('{"answer": "x"}'), "lacks"),
    (lambda: queries("交通意外险不保哪些情况"), "entities_known"),
    (lambda: queries("综合意外险保哪些情况"), "negation_kept"),
    (lambda: (500, {"error": {"message": "boom"}}), "answered 500"),
])
def test_bad_answers_fall_back_to_the_rules_rewrite(runtime, demo_kb, reply, failed):
    with serve(lambda path, body: reply()) as fake:
        result = play(runtime, demo_kb, fake.url)
    assert result.rewrite.source == "rules" and result.standalone == RULES
    [llm_try, rules_try] = result.trace["rewrite"]["tried"]
    assert llm_try["source"] == "llm"
    if "checks" in llm_try:
        assert llm_try["checks"][failed] is False
    else:
        assert failed in llm_try["error"]
    assert result.evidence  # the turn still retrieves


def test_a_dropped_time_falls_back(runtime, demo_kb):
    def reply(path, body):
        return queries("综合意外险等待期多少天")

    with serve(reply) as fake:
        engine = TurnEngine(runtime.snapshots, runtime.retriever, runtime.sessions,
                            llm=LLMRewriter(base_url=f"{fake.url}/v1", model="fake"))
        sid = f"llm-{uuid.uuid4().hex[:8]}"
        try:
            engine.handle(demo_kb, sid, "2025版综合意外险等待期多少天")
            result = engine.handle(demo_kb, sid, "2024版呢")
        finally:
            engine.close()
    assert result.rewrite.source == "rules"
    assert "2024" in result.standalone
    assert result.trace["rewrite"]["tried"][0]["checks"]["time_kept"] is False


def test_a_slow_llm_times_out_and_the_turn_goes_on(runtime, demo_kb):
    def slow(path, body):
        time.sleep(1.5)
        return queries(RULES)

    with serve(slow) as fake:
        started = time.perf_counter()
        result = play(runtime, demo_kb, fake.url, timeout=0.3)
        elapsed = time.perf_counter() - started
    assert result.rewrite.source == "rules" and result.standalone == RULES
    assert "timeout" in result.trace["rewrite"]["tried"][0]["error"]
    assert elapsed < 1.5  # the turn did not wait for the LLM


def test_answers_are_cached_per_session_turn_and_text(runtime, demo_kb):
    with serve(lambda path, body: queries("综合意外险不保障哪些情况")) as fake:
        llm = LLMRewriter(base_url=f"{fake.url}/v1", model="fake")
        args = dict(kb=demo_kb, session_id="s", turn=2, text="那综合意外险呢", history=["x"],
                    allowed_names=["综合意外险"], resolved_names=["综合意外险"])
        first = llm.rewrite(**args)
        assert llm.rewrite(**args) == first
        llm.rewrite(**{**args, "turn": 3})
        llm.close()
    assert len(fake.requests) == 2
