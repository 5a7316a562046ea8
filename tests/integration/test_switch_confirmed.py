"""A topic switch by similarity alone must find its new topic (dialogue/engine.py
``_unswitched``), on real Neo4j, Milvus Lite and the bundled e5: similarity cannot tell a
subjectless follow-up from a new question, so when the switched reading finds nothing the
turn is read again as a continuation of the focus; a switch whose words find their topic
stays a switch, and a question the kb cannot answer either way stays ``no_answer``."""

from __future__ import annotations

import uuid

import pytest

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]


@pytest.fixture(scope="module")
def e5():
    from retrieval.embedders import LocalE5Embedder

    return LocalE5Embedder()


def engine_that_switches_every_continuation(runtime, e5):
    from dialogue.engine import TurnEngine
    from dialogue.topic_shift import SimilarityShift

    # Thresholds at 1.0: every continuation that does not refer back is taken for a new
    # topic by similarity, as the gray zone does for a subjectless follow-up.
    return TurnEngine(runtime.snapshots, runtime.retriever, runtime.sessions,
                      shift=SimilarityShift(e5, low=1.0, high=1.0))


def test_a_switch_that_finds_nothing_is_read_again_as_a_follow_up(runtime, demo_kb, e5):
    engine = engine_that_switches_every_continuation(runtime, e5)
    s = uuid.uuid4().hex
    engine.handle(demo_kb, s, "华东区7月的销售额是多少")

    turn = engine.handle(demo_kb, s, "比上个月多多少")

    assert turn.action == "retrieve"
    assert turn.trace["classification"] == "continuation"
    assert turn.trace["topic_shift"]["switch"] is False
    assert "found nothing" in turn.trace["topic_shift"]["undone"]
    assert turn.standalone.startswith("华东区7月")
    assert turn.evidence[0].doc_id == "sales-2025-07-east"
    assert runtime.sessions.load(demo_kb, s).focus == ["region.east"]


def test_a_switch_whose_words_find_their_topic_stays_a_switch(runtime, demo_kb, e5):
    engine = engine_that_switches_every_continuation(runtime, e5)
    s = uuid.uuid4().hex
    engine.handle(demo_kb, s, "华东区7月的销售额是多少")

    turn = engine.handle(demo_kb, s, "公司的报销流程是什么")

    assert turn.trace["classification"] == "switch"
    assert turn.trace["topic_shift"]["switch"] is True
    assert "undone" not in turn.trace["topic_shift"]
    assert "华东区" not in turn.standalone
    assert turn.evidence[0].doc_id == "faq-hr"


def test_a_question_the_kb_cannot_answer_either_way_stays_no_answer(runtime, demo_kb, e5):
    engine = engine_that_switches_every_continuation(runtime, e5)
    s = uuid.uuid4().hex
    engine.handle(demo_kb, s, "华东区7月的销售额是多少")

    turn = engine.handle(demo_kb, s, "火星上的天气怎么样")

    assert turn.action == "no_answer" and turn.evidence == []
    assert turn.trace["classification"] == "switch"
    assert "undone" not in turn.trace["topic_shift"]


LIBRARY_ONTOLOGY = [
    {"kind": "type", "name": "Library", "attributes": ["开放时间", "opening hours"]},
    {"kind": "type", "name": "Dorm", "attributes": ["住宿费", "rent"]},
    {"kind": "entity", "id": "lib.east", "name": "东区图书馆", "type": "Library",
     "aliases": ["East Library"], "description": "东区的图书馆"},
    {"kind": "entity", "id": "dorm.intl", "name": "国际公寓", "type": "Dorm",
     "aliases": ["International Residence"], "description": "留学生公寓"},
]
LIBRARY_CORPUS = [
    {"doc_id": "lib", "chunk_id": "lib-1", "title": "东区图书馆", "entity_ids": ["lib.east"],
     "text": "东区图书馆开放时间：周一至周六8:00–22:00，周日13:00–22:00。"},
    {"doc_id": "lib", "chunk_id": "lib-2", "title": "东区图书馆", "entity_ids": ["lib.east"],
     "text": "东区图书馆有3台自助打印机，黑白打印每页0.2元，彩色打印每页1元。"},
    {"doc_id": "dorm", "chunk_id": "dorm-1", "title": "International Residence",
     "entity_ids": ["dorm.intl"],
     "text": "How much is the rent? A single room is 1,800 a month, utilities included."},
    {"doc_id": "dorm", "chunk_id": "dorm-2", "title": "International Residence",
     "entity_ids": ["dorm.intl"],
     "text": "The front desk is open 24 hours; call it for anything that breaks in your room."},
]


def test_a_switch_whose_evidence_holds_less_of_the_words_than_the_focus_is_a_follow_up(
        runtime, kb, neo4j_store, milvus_index, e5):
    from tests.services import load_kb

    load_kb(kb, neo4j_store, milvus_index, LIBRARY_ONTOLOGY, LIBRARY_CORPUS)
    engine = engine_that_switches_every_continuation(runtime, e5)
    s = uuid.uuid4().hex
    engine.handle(kb, s, "When is the East Library open?")

    turn = engine.handle(kb, s, "how much is colour printing")

    # Read without the library, "how much" finds the residence's rent; the library's own
    # passage holds what is asked, the colour printing price.
    assert turn.trace["topic_shift"]["switch"] is False
    assert "holds more" in turn.trace["topic_shift"]["undone"]
    assert turn.entities == ["lib.east"]
    assert turn.evidence[0].chunk_id == "lib-2"
