"""Novelty instead of exclusion, "more", revisits, used evidence, a kb without an
ontology and an English question over Chinese passages: end to end on real Neo4j,
Milvus Lite and the session store (retrieval/novelty.py, docs/retrieval.md)."""

from __future__ import annotations

import json
import uuid

import pytest

from common.errors import InputError
from retrieval.ingest import ingest_corpus
from tests.services import GALAXY, GALAXY_CARD

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

CARD = GALAXY
ONTOLOGY = GALAXY_CARD
PASSAGES = [
    ("fee", "星河卡年费说明", "星河卡主卡年费300元；当年刷卡满6次，可免次年年费。"),
    ("points", "星河卡积分", "星河卡每消费1元积1分，积分可抵扣年费。"),
    ("lost", "星河卡挂失", "星河卡挂失补卡收取工本费20元，补卡后年费不变，卡号更换。"),
    ("grace", "星河卡免息期", "星河卡免息期最长56天，全额还款不收利息。"),
    ("limit", "星河卡额度", "星河卡初始额度1万至5万元，用卡满6个月可申请提额。"),
    ("atm", "星河卡取现", "星河卡在ATM取现，按取现金额的1%收取手续费，最低10元。"),
    ("travel", "星河卡境外消费", "星河卡境外消费免收货币转换费，可在境外机场贵宾厅使用。"),
]


def corpus_lines(*, tagged: bool) -> list[str]:
    return [json.dumps({"doc_id": doc, "chunk_id": f"{doc}#0", "title": title, "text": text,
                        **({"entity_ids": [CARD]} if tagged else {})}, ensure_ascii=False)
            for doc, title, text in PASSAGES]


@pytest.fixture
def card_kb(kb, neo4j_store, milvus_index):
    from kg.aliases import SnapshotCache

    neo4j_store.import_ontology(kb, [json.dumps(line, ensure_ascii=False) for line in ONTOLOGY])
    ingest_corpus(kb, corpus_lines(tagged=True), index=milvus_index,
                  snapshot=SnapshotCache(neo4j_store).get(kb))
    return kb


@pytest.fixture
def bare_kb(kb, milvus_index):
    """The same passages with no ontology at all and no entity tags."""
    from kg.aliases import AliasSnapshot
    from kg.ontology import Ontology

    ingest_corpus(kb, corpus_lines(tagged=False), index=milvus_index,
                  snapshot=AliasSnapshot.from_ontology(kb, 0, Ontology()))
    return kb


def sid() -> str:
    return f"s-{uuid.uuid4().hex[:10]}"


def chunk_ids(result) -> list[str]:
    return [e.chunk_id for e in result.evidence]


def test_a_chunk_shown_fourth_comes_back_marked_when_it_answers_the_next_question(runtime, card_kb):
    s = sid()
    first = runtime.engine.handle(card_kb, s, "星河卡年费多少")
    # Precondition: the passage on reporting a lost card came fourth, for the fee question.
    assert chunk_ids(first)[3] == "lost#0", chunk_ids(first)
    shown = set(chunk_ids(first))

    second = runtime.engine.handle(card_kb, s, "它挂失补卡要收多少钱")

    assert second.evidence[0].chunk_id == "lost#0"
    assert second.evidence[0].seen_in_turn == 1
    # The other passages of turn 1 answer nothing about a lost card: they stay out.
    assert not shown - {"lost#0"} & set(chunk_ids(second))
    assert all(e.seen_in_turn is None for e in second.evidence[1:])
    assert second.trace["retrieval"]["novelty"]["returned"] == [
        {"chunk_id": "lost#0", "seen_in_turn": 1}]
    # The results line (docs/formats.md §4) carries the mark too.
    assert second.results_line()["evidence"][0]["seen_in_turn"] == 1


def test_the_same_question_again_brings_nothing_shown_back(runtime, card_kb):
    s = sid()
    first = runtime.engine.handle(card_kb, s, "星河卡年费多少")
    again = runtime.engine.handle(card_kb, s, "星河卡年费多少")
    assert not set(chunk_ids(first)) & set(chunk_ids(again))


def test_more_leaves_out_everything_shown_and_a_revisit_brings_it_back(runtime, card_kb):
    s = sid()
    first = runtime.engine.handle(card_kb, s, "星河卡年费多少")
    shown = set(chunk_ids(first))
    more = runtime.engine.handle(card_kb, s, "还有呢")
    assert more.trace["consumed"]["intent"] == "more"
    assert more.evidence and not shown & set(chunk_ids(more))
    assert all(e.seen_in_turn is None for e in more.evidence)

    back = runtime.engine.handle(card_kb, s, "再给我看看刚才那个年费")

    assert back.trace["consumed"]["intent"] == "revisit"
    assert back.action == "retrieve"
    assert back.evidence[0].chunk_id == "fee#0" and back.evidence[0].seen_in_turn == 1


def test_used_evidence_is_consumed_and_unknown_ids_are_refused(runtime, card_kb):
    s = sid()
    first = runtime.engine.handle(card_kb, s, "星河卡年费多少")
    assert chunk_ids(first)[3] == "lost#0"
    with pytest.raises(InputError, match="not evidence this session was shown"):
        runtime.engine.handle(card_kb, s, "它挂失补卡要收多少钱", used=["travel#9"])

    second = runtime.engine.handle(card_kb, s, "它挂失补卡要收多少钱", used=["lost#0"])

    # Used, so consumed: it does not come back although it answers the question.
    assert "lost#0" not in chunk_ids(second)
    assert second.trace["consumed"]["excluded"] == 1


def test_used_ids_are_validated_by_the_http_route(runtime, card_kb, keyring):
    from fastapi.testclient import TestClient

    from api.app import create_app
    from tests.conftest import QUERY

    with TestClient(create_app(runtime=runtime, keyring=keyring), headers=QUERY) as client:
        url = f"/v1/kbs/{card_kb}/sessions/{sid()}/turns"
        ok = client.post(url, json={"text": "星河卡年费多少"})
        assert ok.status_code == 200
        bad = client.post(url, json={"text": "它挂失补卡要收多少钱", "used": ["nope#1"]})
        assert bad.status_code == 422 and "nope#1" in bad.text
        empty = client.post(url, json={"text": "它的免息期最长几天", "used": [""]})
        assert empty.status_code == 422
        used = client.post(url, json={"text": "它的免息期最长几天",
                                      "used": [ok.json()["evidence"][0]["chunk_id"]]})
        assert used.status_code == 200


def test_a_kb_without_an_ontology_answers_and_carries_the_topic_over(runtime, bare_kb):
    s = sid()
    first = runtime.engine.handle(bare_kb, s, "星河卡免息期最长多少天")
    assert first.action == "retrieve" and first.entities == []
    assert first.evidence[0].chunk_id == "grace#0"

    second = runtime.engine.handle(bare_kb, s, "ATM取现的手续费呢")

    assert second.action == "retrieve"
    assert "atm#0" in chunk_ids(second)[:2]
    # Nothing links: the turn was searched after the conversation's topic phrases too
    # (the earlier turn's words less its question words: dialogue/topics.py).
    history = second.trace["retrieval"]["history"]
    assert history["query"] == "星河卡免息期最长 ATM取现的手续费呢"
    assert history["weight"] > 0


def test_a_kb_with_neither_ontology_nor_corpus_is_not_found(runtime):
    from common.errors import NotFoundError

    with pytest.raises(NotFoundError, match="neither an ontology nor a corpus"):
        runtime.engine.handle(f"t_{uuid.uuid4().hex[:12]}", sid(), "星河卡年费多少")


def test_a_mixed_english_question_over_chinese_passages_finds_them(runtime, card_kb):
    s = sid()
    result = runtime.engine.handle(card_kb, s, "For the Galaxy Card, how long is the 免息期?")
    # Linked through its English alias; the keyword query names it in Chinese.
    assert result.entities == [CARD]
    assert "星河卡" in " ".join(result.queries)
    assert result.action == "retrieve", json.dumps(result.trace["retrieval"], ensure_ascii=False)[:1500]
    assert result.evidence[0].chunk_id == "grace#0"
