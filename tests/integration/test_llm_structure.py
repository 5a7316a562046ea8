"""The LLM rewriter is given the structure the rules rewriter builds from, and its
answer passes the same checks: an answer that names an entity the user corrected
away from, or drops the attribute asked about, is refused for the rules rewrite.
Against a real local HTTP server speaking the chat-completions protocol."""

import json
import uuid

import pytest

from dialogue.engine import TurnEngine
from dialogue.llm_rewriter import LLMRewriter
from tests.http_fakes import serve

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]


def chat(*qs: str):
    content = json.dumps({"queries": list(qs)}, ensure_ascii=False)
    return 200, {"id": "c1", "object": "chat.completion", "created": 0, "model": "fake",
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": content}}],
                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def play(runtime, kb, url, *turns):
    llm = LLMRewriter(base_url=f"{url}/v1", model="fake", timeout=2.0)
    engine = TurnEngine(runtime.snapshots, runtime.retriever, runtime.sessions, llm=llm)
    sid = f"llm-{uuid.uuid4().hex[:8]}"
    try:
        return [engine.handle(kb, sid, t) for t in turns]
    finally:
        engine.close()


def test_the_prompt_carries_the_resolved_structure(runtime, demo_kb):
    with serve(lambda path, body: chat("华北区7月的销售额是多少")) as fake:
        *_, fixed = play(runtime, demo_kb, fake.url, "华东区7月的销售额是多少", "不对，我问的是华北区")
    assert fixed.rewrite.source == "llm" and fixed.standalone == "华北区7月的销售额是多少"
    prompt = fake.requests[-1][1]["messages"][1]["content"]
    assert "entities: 华北区" in prompt
    assert "excluded (never name): 华东区" in prompt
    assert "times and versions: 7月" in prompt and "attribute: 销售额" in prompt
    assert "rules draft: 华北区7月的销售额是多少" in prompt
    assert "language: Chinese" in prompt


def test_an_answer_naming_the_corrected_entity_falls_back_to_the_rules(runtime, demo_kb):
    with serve(lambda path, body: chat("华北区和华东区7月的销售额是多少")) as fake:
        *_, fixed = play(runtime, demo_kb, fake.url, "华东区7月的销售额是多少", "不对，我问的是华北区")
    assert fixed.rewrite.source == "rules"
    assert "华东" not in fixed.standalone and fixed.entities == ["region.north"]
    tried = fixed.trace["rewrite"]["tried"]
    assert tried[0]["source"] == "llm" and tried[0]["checks"]["excluded_absent"] is False


def test_an_answer_dropping_the_attribute_falls_back_to_the_rules(runtime, demo_kb):
    with serve(lambda path, body: chat("华南区7月的情况")) as fake:
        *_, other = play(runtime, demo_kb, fake.url, "华东区7月的销售额是多少", "那华南区呢")
    assert other.rewrite.source == "rules"
    assert other.standalone == "华南区7月的销售额是多少"
    assert other.trace["rewrite"]["tried"][0]["checks"]["attribute_kept"] is False


def test_an_english_turn_is_marked_english_for_the_llm(runtime, demo_kb):
    with serve(lambda path, body: chat("How many days of 病假 (sick leave) do I get?")) as fake:
        *_, other = play(runtime, demo_kb, fake.url, "How many days of annual leave do I get?",
                         "What about sick leave?")
    assert "language: English" in fake.requests[-1][1]["messages"][1]["content"]
    assert other.entities == ["hr.leave.sick"] and "年假" not in other.standalone


def test_the_prompt_carries_the_follow_ups_rendered_frame(runtime, demo_kb):
    with serve(lambda path, body: chat("综合意外险不保哪些情况")) as fake:
        *_, other = play(runtime, demo_kb, fake.url, "意外险不保哪些情况", "那综合意外险呢")
    prompt = fake.requests[-1][1]["messages"][1]["content"]
    # The negation and the question word are the previous question's, kept by the render.
    assert "negations: 不" in prompt
    assert "rules draft: 综合意外险不保哪些情况" in prompt
    assert other.rewrite.source == "llm"


def test_a_refused_answer_is_explained_in_the_trace(runtime, demo_kb):
    with serve(lambda path, body: chat("华北区和华东区7月的销售额是多少")) as fake:
        *_, fixed = play(runtime, demo_kb, fake.url, "华东区7月的销售额是多少", "不对，我问的是华北区")
    note = fixed.trace["rewrite"]["note"]
    assert "excluded_absent" in note and "rules standalone searched" in note
    assert fixed.standalone == "华北区7月的销售额是多少"
