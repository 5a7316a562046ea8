"""One conversation end to end on real Neo4j, Milvus Lite and SQLite.

Each behaviour of this family is a case of tests/unit/dialogue/cases/demo_turns.json,
run on the in-memory stores. The dialogue's decisions (ellipsis, clarification answers,
correction, editions by ordinal, aliases) are proven there; the tests here are the ones
that need the real services: the HTTP endpoint, concurrency, stored state, evidence
across turns.
"""

import uuid

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from evaluation.suites import parse_suite, run_system
from tests.conftest import DEMO, QUERY

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]


def sid() -> str:
    return f"s-{uuid.uuid4().hex[:10]}"


def test_ellipsis_and_follow_up_keep_the_region_and_the_month(runtime, demo_kb):
    s = sid()
    first = runtime.engine.handle(demo_kb, s, "华东区7月的销售额是多少")
    assert first.entities == ["region.east"]
    assert "sales-2025-07-east" in [e.doc_id for e in first.evidence]
    assert all("region.east" in e.entity_ids for e in first.evidence)
    second = runtime.engine.handle(demo_kb, s, "那华南区呢")
    assert second.entities == ["region.south"]
    assert second.standalone == "华南区7月的销售额是多少"
    assert "sales-2025-07-south" in [e.doc_id for e in second.evidence]
    assert all("region.south" in e.entity_ids for e in second.evidence)
    third = runtime.engine.handle(demo_kb, s, "为什么涨这么多")
    assert third.entities == ["region.south"]
    assert "华南区" in third.standalone and "7月" in third.standalone


def test_clarification_round_trip_resumes_the_original_question(runtime, demo_kb):
    s = sid()
    ask = runtime.engine.handle(demo_kb, s, "A产品怎么申请")
    assert ask.action == "clarify"
    assert ask.evidence == [] and ask.queries == []
    assert [o.id for o in ask.clarification.options] == ["prod.a.enterprise", "prod.a.personal"]
    assert "个人" in ask.clarification.question and "企业" in ask.clarification.question
    answer = runtime.engine.handle(demo_kb, s, "个人版")
    assert answer.action == "retrieve"
    assert answer.entities == ["prod.a.personal"]
    assert answer.standalone == "A产品（个人版）怎么申请"
    assert "prod-a-personal-apply" in [e.doc_id for e in answer.evidence]
    assert all("prod.a.personal" in e.entity_ids for e in answer.evidence)
    assert answer.trace["clarification_answer"]["pending_question"] == "A产品怎么申请"


def test_no_chunk_is_returned_twice_in_one_session(runtime, demo_kb):
    s = sid()
    seen: list[str] = []
    for _ in range(6):
        result = runtime.engine.handle(demo_kb, s, "年假有几天，怎么申请")
        seen.extend(e.chunk_id for e in result.evidence)
    assert seen, "the questions should find evidence"
    assert len(seen) == len(set(seen))
    # Another session starts with nothing consumed.
    fresh = runtime.engine.handle(demo_kb, sid(), "年假有几天，怎么申请")
    assert fresh.evidence[0].chunk_id == seen[0]


def test_a_document_gives_a_second_chunk_only_when_documents_run_out(runtime, demo_kb):
    suite = parse_suite((DEMO / "suite.jsonl").read_text(encoding="utf-8").splitlines())
    results = run_system(runtime.engine, demo_kb, suite, k=10)
    assert sum(len(r.evidence) for r in results) > 100
    for r in results:
        docs = [e.doc_id for e in r.evidence]
        distinct = len(set(docs))
        # Every document's best chunk before any second chunk of a document, and a
        # second chunk only for places the documents could not fill.
        assert len(set(docs[:distinct])) == distinct, (r.session, r.turn, docs)
        assert len(docs) == distinct or distinct < 10, (r.session, r.turn, docs)


def test_http_endpoint_and_eval_give_the_same_results(runtime, demo_kb, keyring):
    suite = parse_suite((DEMO / "suite.jsonl").read_text(encoding="utf-8").splitlines())[:12]
    via_eval = run_system(runtime.engine, demo_kb, suite, k=5, run_id="eval")
    via_http = []
    with TestClient(create_app(runtime=runtime, keyring=keyring), headers=QUERY) as client:
        for script in suite:
            for turn in script.turns:
                resp = client.post(f"/v1/kbs/{demo_kb}/sessions/http-{script.session}/turns",
                                   json={"text": turn.user, "k": 5})
                assert resp.status_code == 200, resp.text
                via_http.append(resp.json())

    def comparable(line: dict) -> dict:
        return {key: value for key, value in line.items() if key not in ("latency_ms", "session")}

    assert len(via_http) == len(via_eval)
    for http, ev in zip(via_http, via_eval, strict=True):
        http_line = {key: http[key] for key in ev.results_line()}
        http_line["evidence"] = [{"chunk_id": e["chunk_id"], "doc_id": e["doc_id"],
                                  "score": round(e["score"], 4),
                                  **({"seen_in_turn": e["seen_in_turn"]}
                                     if e["seen_in_turn"] is not None else {})}
                                 for e in http["evidence"]]
        assert comparable(http_line) == comparable(ev.results_line())


def test_http_errors_share_one_problem_shape(runtime, demo_kb, keyring):
    with TestClient(create_app(runtime=runtime, keyring=keyring), headers=QUERY) as client:
        missing = client.post("/v1/kbs/no_such_kb/sessions/s1/turns", json={"text": "年假"})
        assert missing.status_code == 404
        assert missing.headers["content-type"].startswith("application/problem+json")
        assert "referent ontology import" in missing.json()["detail"]
        bad_sid = client.post(f"/v1/kbs/{demo_kb}/sessions/a%20b/turns", json={"text": "年假"})
        assert bad_sid.status_code == 422 and bad_sid.json()["status"] == 422
        empty = client.post(f"/v1/kbs/{demo_kb}/sessions/s1/turns", json={"text": ""})
        assert empty.status_code == 422 and empty.json()["field"] == "text"
        too_long = client.post(f"/v1/kbs/{demo_kb}/sessions/s1/turns", json={"text": "长" * 2001})
        assert too_long.status_code == 422


def test_hostile_text_is_searched_literally(runtime, demo_kb):
    for text in ['" or 1==1 or "', 'chunk_id not in ["x"] or doc_id != ""',
                 "MATCH (n) DETACH DELETE n", "年假\u0000\u202e有几天"]:
        result = runtime.engine.handle(demo_kb, sid(), text)
        assert result.action in ("retrieve", "no_answer")
    assert runtime.ontology.alias_version(demo_kb) is not None
    assert runtime.index.count(demo_kb) > 100


def test_deleted_session_starts_fresh(runtime, demo_kb, keyring):
    s = sid()
    first = runtime.engine.handle(demo_kb, s, "年假有几天")
    with TestClient(create_app(runtime=runtime, keyring=keyring), headers=QUERY) as client:
        assert client.delete(f"/v1/kbs/{demo_kb}/sessions/{s}").status_code == 204
    again = runtime.engine.handle(demo_kb, s, "年假有几天")
    assert again.turn == 1
    assert again.evidence[0].chunk_id == first.evidence[0].chunk_id


def test_pronoun_after_a_bare_name_asks_which_one_over_http(runtime, demo_kb, keyring):
    s = sid()
    with TestClient(create_app(runtime=runtime, keyring=keyring), headers=QUERY) as client:
        def say(text):
            resp = client.post(f"/v1/kbs/{demo_kb}/sessions/{s}/turns", json={"text": text})
            assert resp.status_code == 200, resp.text
            return resp.json()

        assert say("A产品个人版多少钱")["entities"] == ["prod.a.personal"]
        assert say("B云盘企业版")["entities"] == ["prod.b.enterprise"]
        ask = say("它怎么申请")
        assert ask["action"] == "clarify"
        assert [o["id"] for o in ask["clarification"]["options"]] == ["prod.b.enterprise",
                                                                       "prod.a.personal"]
        assert ask["clarification"]["question"].startswith("您说的“它”指的是哪一个？")
        answer = say("第二个")
        assert answer["action"] == "retrieve"
        assert answer["entities"] == ["prod.a.personal"]
        assert answer["standalone"] == "A产品（个人版）怎么申请"


def test_concurrent_turns_on_one_session_lose_nothing(runtime, demo_kb):
    import threading

    from common.errors import ConflictError

    s = sid()
    outcomes: list[str] = []
    barrier = threading.Barrier(6)

    def turn(text: str) -> None:
        barrier.wait()
        try:
            runtime.engine.handle(demo_kb, s, text)
            outcomes.append("ok")
        except ConflictError:
            outcomes.append("conflict")

    texts = ["年假有几天", "病假工资怎么算", "婚假几天", "产假多少天", "事假怎么请", "退货运费谁出"]
    threads = [threading.Thread(target=turn, args=(t,)) for t in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    state = runtime.sessions.load(demo_kb, s)
    assert state.turn_count == outcomes.count("ok") >= 1
    assert len(state.recent) == min(4, state.turn_count)
    assert len(state.consumed) == len(set(state.consumed))


def test_doc_granularity_never_returns_a_document_twice(runtime, demo_kb):
    from dialogue.engine import EngineConfig, TurnEngine

    engine = TurnEngine(runtime.snapshots, runtime.retriever, runtime.sessions,
                        EngineConfig(granularity_by_kb={demo_kb: "doc"}))
    s = sid()
    docs: list[str] = []
    chunks: list[str] = []
    for _ in range(4):
        result = engine.handle(demo_kb, s, "2025版员工手册里年假和病假怎么规定")
        assert result.trace["consumed"]["granularity"] == "doc"
        docs.extend(e.doc_id for e in result.evidence)
        chunks.extend(e.chunk_id for e in result.evidence)
    assert len(docs) == len(set(docs))
    # The chunk granularity (the default) may return another chunk of a document already seen.
    chunk_engine = runtime.engine
    s2 = sid()
    seen_docs: list[str] = []
    for _ in range(4):
        seen_docs.extend(e.doc_id for e in chunk_engine.handle(
            demo_kb, s2, "2025版员工手册里年假和病假怎么规定").evidence)
    assert len(seen_docs) > len(set(seen_docs))


def test_a_question_the_kb_cannot_answer_gets_no_answer(runtime, demo_kb):
    result = runtime.engine.handle(demo_kb, sid(), "火星基地的氧气供应系统用什么型号的电池")
    assert result.action == "no_answer"
    assert result.evidence == [] and result.context == "" and result.context_tokens == 0
    assert result.trace["retrieval"]["no_answer"]["abstained"]


def test_context_tokens_are_reported_and_within_budget(runtime, demo_kb):
    from retrieval.context import count_tokens

    result = runtime.engine.handle(demo_kb, sid(), "华东区7月的销售额是多少", k=10)
    assert 0 < result.context_tokens <= 2000
    assert result.context_tokens == count_tokens(result.context)
    assert f"[{result.evidence[0].chunk_id}]" in result.context


def test_trace_endpoint_explains_every_stage_of_a_turn(runtime, demo_kb, keyring):
    s = sid()
    with TestClient(create_app(runtime=runtime, keyring=keyring), headers=QUERY) as client:
        url = f"/v1/kbs/{demo_kb}/sessions/{s}"
        client.post(f"{url}/turns", json={"text": "华东区7月的销售额是多少"})
        client.post(f"{url}/turns", json={"text": "那华南区呢"})
        trace = client.get(f"{url}/turns/2/trace")
        assert trace.status_code == 200, trace.text
        body = trace.json()
        assert body["user"] == "那华南区呢" and body["result"]["standalone"] == "华南区7月的销售额是多少"
        stages = body["stages"]
        assert [m["text"] for m in stages["mentions"] if m["kind"] == "alias"] == ["华南区"]
        assert stages["links"][0]["candidates"][0]["id"] == "region.south"
        assert stages["classification"] == "continuation"
        assert stages["rewrite"]["tried"][0]["checks"]["time_kept"] is True
        assert stages["retrieval"]["queries"]
        assert client.get(f"{url}/turns/9/trace").status_code == 404
        assert client.get(f"{url}/turns/0/trace").status_code == 422
        assert client.delete(url).status_code == 204
        assert client.get(f"{url}/turns/1/trace").status_code == 404


def test_a_revisit_lifts_the_consumed_window(runtime, demo_kb):
    s = sid()
    first = runtime.engine.handle(demo_kb, s, "年假有几天")
    again = runtime.engine.handle(demo_kb, s, "年假有几天")
    assert first.evidence[0].chunk_id not in {e.chunk_id for e in again.evidence}
    revisit = runtime.engine.handle(demo_kb, s, "再给我看看刚才那个年假有几天")
    assert revisit.trace["classification"] == "revisit"
    assert revisit.trace["consumed"]["lifted"] is True
    assert revisit.trace["consumed"]["intent"] == "revisit"
    shown = {e.chunk_id for e in (*first.evidence, *again.evidence)}
    back = [e for e in revisit.evidence if e.chunk_id in shown]
    assert back  # earlier evidence comes back, marked with the turn that showed it
    assert all(e.seen_in_turn in (1, 2) for e in back)


def test_several_intents_are_searched_separately(runtime, demo_kb):
    result = runtime.engine.handle(demo_kb, sid(), "年假和病假分别怎么申请")
    assert result.queries == ["年假怎么申请", "病假怎么申请"]
    assert result.entities == ["hr.leave.annual", "hr.leave.sick"]
    assert result.rewrite.source == "rules" and result.rewrite.accepted
    found_by = {e.query for e in result.evidence}
    assert found_by == set(result.queries)


def test_slots_carry_the_turn_that_set_them_and_a_correction_overrides(runtime, demo_kb, keyring):
    s = sid()
    runtime.engine.handle(demo_kb, s, "华东区7月的销售额是多少")
    second = runtime.engine.handle(demo_kb, s, "负责人是谁")
    assert second.standalone == "华东区7月负责人是谁"
    assert second.trace["slots"]["time"] == {"values": ["7月"], "turn": 1, "how": "carried"}
    assert second.trace["slots"]["attribute"] == {"values": ["负责人"], "turn": 2, "how": "said"}
    third = runtime.engine.handle(demo_kb, s, "不对，我问的是华北区")
    assert third.standalone == "华北区7月负责人是谁"
    slots = third.trace["slots"]
    assert slots["focus"] == {"values": ["region.north"], "turn": 3, "how": "corrected"}
    assert slots["negated"] == {"values": ["region.east"], "turn": 3, "how": "corrected"}
    # The slots are part of the stored state and of the turn's trace over HTTP.
    assert runtime.sessions.load(demo_kb, s).slots.focus.values == ["region.north"]
    client = TestClient(create_app(runtime=runtime, keyring=keyring))
    with client:
        traced = client.get(f"/v1/kbs/{demo_kb}/sessions/{s}/turns/3/trace", headers=QUERY).json()
    assert traced["stages"]["slots"]["focus"]["how"] == "corrected"


def test_older_turns_are_summarized_and_a_revisit_still_reaches_them(runtime, demo_kb):
    s = sid()
    for text in ["A产品个人版怎么申请", "年假有几天", "病假工资怎么算", "婚假几天", "产假多少天"]:
        runtime.engine.handle(demo_kb, s, text)
    state = runtime.sessions.load(demo_kb, s)
    assert [r.index for r in state.recent] == [2, 3, 4, 5]
    assert state.summary[0].turn == 1 and state.summary[0].entities == ["prod.a.personal"]
    assert "A产品（个人版）" in state.summary[0].text
    back = runtime.engine.handle(demo_kb, s, "回到刚才那个产品，价格是多少")
    assert back.entities == ["prod.a.personal"]
    assert "prod-a-personal-price" in [e.doc_id for e in back.evidence]


def test_weak_rewrite_evidence_also_searches_the_users_words(runtime, demo_kb):
    s = sid()
    runtime.engine.handle(demo_kb, s, "华东区7月的销售额是多少")
    turn = runtime.engine.handle(demo_kb, s, "质量问题运费谁承担")
    dual = turn.trace["retrieval"]["dual_path"]
    assert dual["ran"] and dual["original"] == "质量问题运费谁承担"
    assert dual["rewrite_strength"] < dual["weak_below"] <= dual["original_strength"]
    assert turn.action == "retrieve"
    assert turn.queries == ["华东区7月质量问题运费谁承担", "质量问题运费谁承担"]
    assert "as-return" in [e.doc_id for e in turn.evidence]
    # Every item is labelled with the query that found it.
    assert {e.query for e in turn.evidence} <= set(turn.queries)
    assert any(e.query == "质量问题运费谁承担" for e in turn.evidence)


def test_when_both_paths_are_weak_the_turn_has_no_answer(runtime, demo_kb):
    s = sid()
    runtime.engine.handle(demo_kb, s, "退货运费谁出")
    turn = runtime.engine.handle(demo_kb, s, "火星上的天气怎么样")
    assert turn.action == "no_answer" and turn.evidence == []
    assert turn.trace["retrieval"]["dual_path"]["verdict"] == "both paths weak: no answer"


def test_a_dissimilar_turn_without_cues_is_a_switch_when_an_embedder_is_configured(runtime, demo_kb):
    from dialogue.engine import TurnEngine
    from dialogue.topic_shift import SimilarityShift
    from retrieval.embedders import LocalE5Embedder

    shift = SimilarityShift(LocalE5Embedder(), low=0.80, high=0.845)
    engine = TurnEngine(runtime.snapshots, runtime.retriever, runtime.sessions, shift=shift)
    s = sid()
    engine.handle(demo_kb, s, "华东区7月的销售额是多少")
    switched = engine.handle(demo_kb, s, "公司的报销流程是什么")
    assert switched.trace["classification"] == "switch"
    assert switched.trace["topic_shift"]["switch"] is True
    assert "华东区" not in switched.standalone and switched.entities == []
    assert runtime.sessions.load(demo_kb, s).focus == []
    # An attribute of the focus keeps the topic even in the gray zone; a pronoun always does.
    s2 = sid()
    engine.handle(demo_kb, s2, "华东区7月的销售额是多少")
    stays = engine.handle(demo_kb, s2, "负责人是谁")
    assert stays.trace["classification"] == "continuation"
    assert stays.trace["topic_shift"]["attribute_overlap"] is True
    assert stays.standalone == "华东区7月负责人是谁"
    pronoun = engine.handle(demo_kb, s2, "它的增长率呢")
    assert "topic_shift" not in pronoun.trace and pronoun.entities == ["region.east"]


def test_asking_for_more_of_the_same_is_never_a_switch_by_similarity(runtime, demo_kb):
    from dialogue.engine import TurnEngine
    from dialogue.topic_shift import SimilarityShift
    from retrieval.embedders import LocalE5Embedder

    # Thresholds no pair of turns reaches: every turn that does not refer back switches.
    shift = SimilarityShift(LocalE5Embedder(), low=0.999, high=1.0)
    engine = TurnEngine(runtime.snapshots, runtime.retriever, runtime.sessions, shift=shift)
    for more in ("还有呢", "what else is there"):
        s = sid()
        engine.handle(demo_kb, s, "华东区7月的销售额是多少")
        turn = engine.handle(demo_kb, s, more)
        assert turn.trace["classification"] != "switch", more
        assert "topic_shift" not in turn.trace, more
        assert runtime.sessions.load(demo_kb, s).focus == ["region.east"], more
    # A question of its own still switches under these thresholds.
    s = sid()
    engine.handle(demo_kb, s, "华东区7月的销售额是多少")
    other = engine.handle(demo_kb, s, "公司的报销流程是什么")
    assert other.trace["topic_shift"]["switch"] is True


def test_a_long_conversation_keeps_the_stored_state_bounded(runtime, demo_kb):
    from dialogue.slots import SUMMARY_CHARS, SUMMARY_LINES

    questions = ["华东区7月的销售额是多少", "那华南区呢", "为什么涨这么多", "年假有几天",
                 "病假工资怎么算", "A产品企业版怎么收费", "它支持哪些功能", "退货运费谁出"]
    s = sid()
    sizes = []
    for i in range(48):
        runtime.engine.handle(demo_kb, s, questions[i % len(questions)])
        state = runtime.sessions.load(demo_kb, s)
        # The answers kept for retries (at most answers_kept, without their traces) apart.
        sizes.append(len(state.model_copy(update={"played": []}).model_dump_json()))
        assert len(state.played) <= 20 and sum(p.answer is not None for p in state.played) <= 2
        assert sum(len(p.answer or "") for p in state.played) < 2 * 8_000
    assert state.turn_count == 48
    assert len(state.recent) == 4 and len(state.summary) == SUMMARY_LINES
    assert all(len(line.text) <= SUMMARY_CHARS for line in state.summary)
    assert [line.turn for line in state.summary] == list(range(37, 45))
    # Only the consumed window (at most 200 ids) may still grow; everything else is flat.
    assert len(state.consumed) <= 200
    assert max(sizes) < 16_000
