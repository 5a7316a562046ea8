"""What the talk is about stays ahead of what a turn adds: end to end on real Neo4j,
Milvus Lite and SQLite, in Chinese and English.

A street lies inside a park. A turn that names the park while the street stays the
subject (the ticket is part of the park's ticket) keeps the street the most salient
entity, so a pronoun in the next turn means the street, not the park the turn named.
A turn that introduces a new name under a phrase about the old one (its neighbour X,
它边上的X) makes the new name the one a pronoun then means.

Each behaviour of this family is a case of tests/unit/dialogue/cases/salience.json, run
on the in-memory stores, in both languages where the behaviour exists in both. Here run
end to end: one turn of the default engine, and the turns the clarify model decides (its
vectors and the clarification log live in Milvus and Neo4j), which the cases do not
cover.
"""

import pytest

from tests.services import load_kb, play

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

ONTOLOGY = [
    {"kind": "type", "name": "Sight", "attributes": ["门票", "电话", "开放时间", "地址", "所在景区",
                                                    "ticket", "phone", "opening hours", "park", "address"]},
    {"kind": "entity", "id": "sight.street", "name": "苏州街", "type": "Sight",
     "aliases": ["Suzhou Street"],
     "description": "苏州街位于颐和园内，是一条仿江南水乡的买卖街，门票包含在颐和园门票内。"},
    {"kind": "entity", "id": "sight.park", "name": "颐和园", "type": "Sight",
     "aliases": ["Summer Palace"],
     "description": "颐和园是清代皇家园林，以昆明湖和万寿山为基址。"},
    {"kind": "entity", "id": "sight.campus", "name": "清华园", "type": "Sight",
     "aliases": ["Tsinghua Garden"],
     "description": "清华园是一座历史悠久的校园，校内古建筑众多。"},
]

CORPUS = [
    {"doc_id": "sight.street.doc", "chunk_id": "street-1", "title": "苏州街",
     "entity_ids": ["sight.street"], "text": "苏州街的电话：010-62881144。"},
    {"doc_id": "sight.street.doc", "chunk_id": "street-2", "title": "苏州街",
     "entity_ids": ["sight.street"], "text": "苏州街的开放时间：6:30-18:00。"},
    {"doc_id": "sight.street.doc", "chunk_id": "street-3", "title": "苏州街",
     "entity_ids": ["sight.street"],
     "text": "苏州街的地址：北京市海淀区颐和园内西侧。Suzhou Street address: inside the Summer "
             "Palace, west side."},
    {"doc_id": "sight.street.doc", "chunk_id": "street-4", "title": "苏州街",
     "entity_ids": ["sight.street"], "text": "苏州街的所在景区：颐和园景区。"},
    {"doc_id": "sight.park.doc", "chunk_id": "park-1", "title": "颐和园",
     "entity_ids": ["sight.park"], "text": "颐和园的电话：010-62881111。"},
    {"doc_id": "sight.park.doc", "chunk_id": "park-2", "title": "颐和园",
     "entity_ids": ["sight.park"], "text": "颐和园的开放时间：6:00-20:00。"},
    {"doc_id": "sight.campus.doc", "chunk_id": "campus-1", "title": "清华园",
     "entity_ids": ["sight.campus"], "text": "清华园的开放时间：8:00-17:00。"},
]


@pytest.fixture
def sights_kb(kb, neo4j_store, milvus_index):
    return load_kb(kb, neo4j_store, milvus_index, ONTOLOGY, CORPUS)


def test_the_sight_talked_about_stays_ahead_of_the_park_a_turn_names(runtime, sights_kb):
    first, park, phone = play(runtime, sights_kb, "知道苏州街吗？",
                              "门票包含在颐和园的门票里了，开放时间是几点？",
                              "它的电话是多少？")
    assert first.entities == ["sight.street"]
    # The park joins; the street, whose description names it, stays.
    assert set(park.entities) == {"sight.park", "sight.street"}
    # 它 means the street the talk is about, not the park the last turn named.
    assert phone.action == "retrieve"
    assert phone.entities == ["sight.street"]
    assert "苏州街" in phone.standalone and "颐和园" not in phone.standalone


@pytest.fixture
def asking_runtime(settings, neo4j_store, milvus_index):
    """An engine that leaves what the linker cannot settle to the clarify model, with a
    threshold of 0: every link the model is asked about becomes a question."""
    from api.runtime import Runtime, open_clarifier, open_session_store
    from dialogue.engine import EngineConfig, TurnEngine
    from kg.aliases import SnapshotCache
    from kg.clarification_log import ClarificationLog
    from retrieval.entity_facts import EntityFactsCache
    from retrieval.search import Retriever
    from dialogue.policy.clarify_calibrate import KbEvidence

    settings = settings.model_copy(update={"clarify": settings.clarify.model_copy(
        update={"threshold": 0.0, "priors_ttl_seconds": 0.0, "semantic": "auto"})})
    sessions = open_session_store(settings)
    snapshots = SnapshotCache(neo4j_store, check_interval=0.0)
    retriever = Retriever(milvus_index)
    evidence = KbEvidence(ClarificationLog(neo4j_store), ttl=0.0)
    clarifier = open_clarifier(settings, None, milvus_index, evidence)
    engine = TurnEngine(snapshots, retriever, sessions, EngineConfig(), clarifier=clarifier,
                        facts=EntityFactsCache(milvus_index))
    built = Runtime(settings, neo4j_store, snapshots, milvus_index, sessions, retriever, engine,
                    evidence)
    yield built
    built.clarifications.close()
    built.retagger.close()
    sessions.close()


def test_a_pronoun_after_two_sights_not_named_side_by_side_is_not_asked_about(
        asking_runtime, sights_kb):
    _, park, phone = play(asking_runtime, sights_kb, "知道苏州街吗？",
                          "门票包含在颐和园的门票里了，开放时间是几点？", "它的电话是多少？")
    assert set(park.entities) == {"sight.park", "sight.street"}
    assert phone.action == "retrieve"
    assert phone.entities == ["sight.street"]
    assert "not named beside it" in " ".join(l["reason"] for l in phone.trace["links"])
    _, _, phone_en = play(asking_runtime, sights_kb, "Have you been to Suzhou Street?",
                          "The ticket is included in the Summer Palace ticket, right?",
                          "What is its phone number?")
    assert phone_en.action != "clarify"
    assert phone_en.entities == ["sight.street"]


def test_a_pronoun_after_two_sights_named_side_by_side_is_still_for_the_model(
        asking_runtime, sights_kb):
    # 苏州街和颐和园: named side by side, which one 它 means is the clarify decision's
    # (here a threshold of 0: asked).
    _, phone = play(asking_runtime, sights_kb, "苏州街和颐和园哪个开放时间长？", "它的电话是多少？")
    assert phone.action == "clarify"
    assert {o.id for o in phone.clarification.options} == {"sight.street", "sight.park"}
    _, phone_en = play(asking_runtime, sights_kb,
                       "Which opens longer, Summer Palace or Suzhou Street?",
                       "What is its phone number?")
    assert phone_en.action == "clarify"


def test_names_the_rewrite_wrote_side_by_side_are_not_the_users(asking_runtime, sights_kb):
    # 开放时间是几点 names nothing: its standalone is written with both focus entities
    # in front (苏州街和颐和园…), but the user never named them side by side, so 它
    # in the next turn is not the clarify decision's.
    _, _, hours, phone = play(asking_runtime, sights_kb, "知道苏州街吗？",
                              "门票包含在颐和园的门票里了", "开放时间是几点？", "它的电话是多少？")
    assert set(hours.entities) == {"sight.street", "sight.park"}
    assert "苏州街和颐和园" in hours.standalone or "颐和园和苏州街" in hours.standalone
    assert phone.action == "retrieve"
    assert phone.entities == ["sight.street"]
    _, _, hours_en, phone_en = play(asking_runtime, sights_kb, "Have you been to Suzhou Street?",
                                    "The ticket is included in the Summer Palace ticket.",
                                    "And the opening hours?", "What is its phone number?")
    assert set(hours_en.entities) == {"sight.street", "sight.park"}
    assert phone_en.action != "clarify"
    assert phone_en.entities == ["sight.street"]


def test_names_the_user_said_side_by_side_stay_so_over_a_turn_without_names(
        asking_runtime, sights_kb):
    # 电话呢 names neither: what the user said before it still has both side by side.
    _, _, address = play(asking_runtime, sights_kb, "苏州街和颐和园哪个开放时间长？", "电话呢？",
                         "它的地址在哪？")
    assert address.action == "clarify"
    assert {o.id for o in address.clarification.options} == {"sight.street", "sight.park"}
    _, _, address_en = play(asking_runtime, sights_kb,
                            "Which opens longer, Summer Palace or Suzhou Street?",
                            "And the phone numbers?", "What is its address?")
    assert address_en.action == "clarify"


def test_a_question_left_unanswered_is_not_asked_again(asking_runtime, sights_kb):
    # The user goes on without saying which sight 它 meant: the same question is not
    # asked again; the one the model would have chosen stands, and the talk goes on
    # about it.
    _, asked, address, hours = play(asking_runtime, sights_kb, "苏州街和颐和园哪个开放时间长？",
                                    "它的电话是多少？", "它的地址在哪？", "开放时间呢？")
    assert asked.action == "clarify"
    assert address.action == "retrieve"
    assert len(address.entities) == 1 and address.entities[0] in {"sight.street", "sight.park"}
    assert "left unanswered" in " ".join(l["reason"] for l in address.trace["links"])
    assert hours.action != "clarify" and hours.entities == address.entities
    _, asked_en, address_en = play(asking_runtime, sights_kb,
                                   "Which opens longer, Summer Palace or Suzhou Street?",
                                   "What is its phone number?", "What is its address?")
    assert asked_en.action == "clarify"
    assert address_en.action == "retrieve" and len(address_en.entities) == 1
