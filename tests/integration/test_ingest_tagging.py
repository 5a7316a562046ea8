"""Ingest tagging of a family's documents, on real Milvus Lite: a corpus without
``entity_ids`` whose product-line document gives each member a passage of its own
and speaks of the whole line elsewhere. Its general passages must be found under
each member's entity filter, and nothing else may gain a tag."""

from __future__ import annotations

import json

import pytest

from kg.aliases import AliasSnapshot
from kg.ontology import parse_ontology
from retrieval.ingest import ingest_corpus

pytestmark = pytest.mark.milvus


def _lines(rows):
    return [json.dumps(r, ensure_ascii=False) for r in rows]


ONTOLOGY = _lines([
    {"kind": "type", "name": "光纤宽带"},
    {"kind": "type", "name": "Plan"},
    {"kind": "entity", "id": "fiber.line", "name": "星湾光纤宽带", "type": "光纤宽带", "aliases": ["星湾宽带"]},
    {"kind": "entity", "id": "fiber.300", "name": "300M光纤宽带", "type": "光纤宽带", "aliases": ["300M宽带"]},
    {"kind": "entity", "id": "fiber.2000", "name": "2000M光纤宽带", "type": "光纤宽带", "aliases": ["2000M宽带"]},
    {"kind": "entity", "id": "plan.line", "name": "Harbor Mobile", "type": "Plan"},
    {"kind": "entity", "id": "plan.lite", "name": "Harbor Lite", "type": "Plan"},
    {"kind": "entity", "id": "plan.max", "name": "Harbor Max", "type": "Plan"},
])


def _document(doc_id, title, *texts, **extra):
    """One corpus line per passage, numbered ``doc_id:1``, ``doc_id:2``…"""
    return [{"doc_id": doc_id, "chunk_id": f"{doc_id}:{n}", "title": title, "text": text, **extra}
            for n, text in enumerate(texts, 1)]


CORPUS = _lines([
    # A product line's document: two members with a passage each, two general passages.
    *_document("line", "星湾光纤宽带资费说明", "300M光纤宽带：月费59元，合约期12个月。",
               "2000M光纤宽带：月费159元，含一台路由器。",
               "上门安装：下单后两天内装机师傅上门，周末照常安装。",
               "故障报修：拨打客服热线，城区一天内修复。"),
    # A document about one member that mentions a sibling once: no family.
    *_document("one", "300M光纤宽带常见问题", "想要更快可改办2000M光纤宽带。",
               "上门安装需要本人在场并出示证件。"),
    # The same mechanism in English.
    *_document("plans", "Harbor Mobile plans", "Harbor Lite costs 19 dollars a month with 5 GB.",
               "Harbor Max costs 49 dollars a month with unlimited data.",
               "Roaming in Europe is included at no extra charge."),
    # Tags the file gives are kept as they are, in a family's document too.
    *_document("given", "星湾光纤宽带资费说明", "夜间装机另收费用。", entity_ids=["fiber.line"]),
])


@pytest.fixture
def ingested(lite_index, lite_kb):
    snapshot = AliasSnapshot.from_ontology(lite_kb, 1, parse_ontology(ONTOLOGY))
    ingest_corpus(lite_kb, CORPUS, index=lite_index, snapshot=snapshot)
    ids = [json.loads(line)["chunk_id"] for line in CORPUS]
    return {c.chunk_id: set(c.entity_ids) for c in lite_index.get_chunks(lite_kb, ids)}


def test_a_family_documents_general_passages_carry_every_member(ingested):
    assert ingested["line:3"] == {"fiber.line", "fiber.300", "fiber.2000"}
    assert ingested["line:4"] == {"fiber.line", "fiber.300", "fiber.2000"}
    assert ingested["plans:3"] == {"plan.line", "plan.lite", "plan.max"}


def test_a_members_own_passage_gets_no_sibling(ingested):
    assert ingested["line:1"] == {"fiber.line", "fiber.300"}
    assert ingested["line:2"] == {"fiber.line", "fiber.2000"}
    assert ingested["plans:1"] == {"plan.line", "plan.lite"}


def test_a_document_about_one_member_lends_no_sibling_its_passages(ingested):
    assert ingested["one:2"] == {"fiber.300"}


def test_given_tags_are_kept(ingested):
    assert ingested["given:1"] == {"fiber.line"}


def test_a_turn_filtered_by_one_member_finds_the_familys_general_passage(ingested, lite_index,
                                                                        lite_kb):
    hits = lite_index.search(lite_kb, "上门安装", limit=5, entity_ids=["fiber.2000"])
    assert "line:3" in [h.chunk_id for h in hits]
    hits = lite_index.search(lite_kb, "Roaming in Europe", limit=5, entity_ids=["plan.max"])
    assert [h.chunk_id for h in hits][:1] == ["plans:3"]
