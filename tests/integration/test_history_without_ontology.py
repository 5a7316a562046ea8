"""A kb without an ontology: a turn that links nothing leans on the turn before it as much
as it needs to (retrieval/history.py), end to end on real Milvus Lite and the session
store. A follow-up ("那价格呢") finds what its history points to; a new question of its
own is not pulled back to the old topic; evidence shown before comes back, marked, when
it answers the new turn."""

from __future__ import annotations

import json
import uuid

import pytest

from retrieval.ingest import ingest_corpus
from retrieval.request import SearchRequest

pytestmark = [pytest.mark.milvus]

PASSAGES = [
    ("bb-speed", "千兆宽带网速", "千兆宽带下行速率最高1000兆，上行100兆，需使用千兆光猫。"),
    ("bb-price", "千兆宽带资费", "千兆宽带资费：价格每月199元，包年1999元，含光猫租用。"),
    ("bb-open", "千兆宽带开通", "千兆宽带开通：线上开通千兆宽带，开通后千兆宽带网速可达1000兆。"),
    ("card-price", "星河卡价格说明", "星河卡工本费价格10元，年费价格300元，价格以网点公告为准。"),
    ("phone-price", "旗舰手机价格", "旗舰手机价格5999元，分期价格每月500元，以旗舰店价格为准。"),
    ("card-grace", "星河卡免息期", "星河卡免息期最长56天，全额还款不收利息。"),
    ("loan", "随心贷利率", "随心贷年化利率最低3.6%，最长可借5年。"),
    ("roam", "出境漫游", "出境前可到营业厅开通国际漫游，24小时内生效。"),
    ("roam-fee", "漫游资费", "国际漫游日包每天30元，按自然日计费。"),
]


@pytest.fixture
def bare_kb(kb, milvus_index):
    """The passages with no ontology at all and no entity tags."""
    from kg.aliases import AliasSnapshot
    from kg.ontology import Ontology

    lines = [json.dumps({"doc_id": doc, "chunk_id": f"{doc}#0", "title": title, "text": text},
                        ensure_ascii=False) for doc, title, text in PASSAGES]
    ingest_corpus(kb, lines, index=milvus_index,
                  snapshot=AliasSnapshot.from_ontology(kb, 0, Ontology()))
    return kb


def sid() -> str:
    return f"s-{uuid.uuid4().hex[:10]}"


def ids(result) -> list[str]:
    return [e.chunk_id for e in result.evidence]


def test_an_ellipsis_on_turn_two_finds_the_passage_its_history_points_to(runtime, bare_kb):
    # Precondition: searched alone, "那价格呢" prefers the passages that say 价格 most.
    alone = runtime.retriever.search(bare_kb, SearchRequest(["那价格呢"], k=5, abstain=False))
    assert [f.hit.chunk_id for f in alone.found][0] != "bb-price#0"

    s = sid()
    first = runtime.engine.handle(bare_kb, s, "千兆宽带网速多少")
    assert first.entities == [] and ids(first)[0] == "bb-speed#0"
    # The price passage was already shown, further down, for the speed question.
    assert "bb-price#0" in ids(first)[1:]

    second = runtime.engine.handle(bare_kb, s, "那价格呢")

    assert second.action == "retrieve"
    assert ids(second)[0] == "bb-price#0"
    # Offered below the first turn's answer (not read, dialogue/topics.py) and holding
    # what this turn newly asks: it competes as an unseen passage.
    assert second.evidence[0].seen_in_turn is None
    # The speed passage, the first turn's answer, answers nothing of 价格: it stays out;
    # so does the opening passage, offered too but holding nothing of 价格.
    assert "bb-speed#0" not in ids(second)
    assert "bb-open#0" not in ids(second)
    history = second.trace["retrieval"]["history"]
    # Searched after the topic the first turn named, not after its whole question.
    assert history["follow_up"] is True and history["query"] == "千兆宽带网速 那价格呢"


def test_a_new_question_of_its_own_is_not_pulled_back_to_the_old_topic(runtime, bare_kb):
    # Precondition: searched after the earlier turn's words at full weight (as a plain
    # concatenation would), the broadband passage that also says 开通 comes first.
    concatenated = runtime.retriever.search(bare_kb, SearchRequest(["千兆宽带网速多少 国际漫游怎么开通"], k=5,
                                            abstain=False))
    assert concatenated.found[0].hit.chunk_id == "bb-open#0"

    s = sid()
    runtime.engine.handle(bare_kb, s, "千兆宽带网速多少")

    second = runtime.engine.handle(bare_kb, s, "国际漫游怎么开通")

    # Both roaming passages come before any broadband one.
    assert set(ids(second)[:2]) == {"roam#0", "roam-fee#0"}, ids(second)
    history = second.trace["retrieval"]["history"]
    assert history["follow_up"] is False and history["refers_back"] is False
    assert history["weight"] == runtime.retriever.config.carry.self_contained


def test_an_explicit_topic_switch_carries_nothing(runtime, bare_kb):
    s = sid()
    runtime.engine.handle(bare_kb, s, "千兆宽带网速多少")

    second = runtime.engine.handle(bare_kb, s, "换个话题，那价格呢")

    assert "history" not in second.trace["retrieval"]
    assert "bb-price#0" not in ids(second)[:1]
