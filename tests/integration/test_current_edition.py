"""The edition in force, and an ellipsis that names a thing of another kind: end to end on
real Neo4j, Milvus Lite and SQLite, in Chinese and English.

A plan has two editions of its terms (2023 and 2024) that share the name 条款 and are a
confusable pair, and an add-on. "那现在用的条款呢" means the terms in force now: no
question which, and the deductible asked about the plan is asked of those terms. Without
a word for "current" the name stays ambiguous and Referent asks. "那门诊附加险呢" asks
the previous question of the add-on, beside the plan, instead of pasting the words.

Each behaviour of this family is a case of tests/unit/dialogue/cases/editions.json, run
on the in-memory stores, in both languages where the behaviour exists in both. One turn
runs here end to end: the edition in force, found in Milvus among editions imported into
Neo4j.
"""

import pytest

from tests.services import load_kb, play

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

ONTOLOGY = [
    {"kind": "type", "name": "Plan", "attributes": ["免赔额", "deductible"]},
    {"kind": "type", "name": "PolicyTerms", "attributes": ["免赔额", "deductible"]},
    {"kind": "type", "name": "Rider", "attributes": ["免赔额", "deductible"]},
    {"kind": "entity", "id": "plan.care", "name": "安心医疗险", "type": "Plan",
     "aliases": ["Anxin plan"], "description": "个人医疗保险"},
    {"kind": "entity", "id": "terms.2023", "name": "安心医疗险条款（2023版）", "type": "PolicyTerms",
     "aliases": ["条款", "2023版条款", "terms", "2023 terms"],
     "description": "2023年1月1日起使用，2024年2月29日停售"},
    {"kind": "entity", "id": "terms.2024", "name": "安心医疗险条款（2024版）", "type": "PolicyTerms",
     "aliases": ["条款", "2024版条款", "terms", "2024 terms"],
     "description": "2024年3月1日起使用的条款"},
    {"kind": "entity", "id": "rider.clinic", "name": "门诊医疗附加险", "type": "Rider",
     "aliases": ["门诊附加险", "clinic rider"], "description": "安心医疗险的门诊附加险"},
    {"kind": "relation", "from": "terms.2023", "type": "APPLIES_TO", "to": "plan.care"},
    {"kind": "relation", "from": "terms.2024", "type": "APPLIES_TO", "to": "plan.care"},
    {"kind": "relation", "from": "rider.clinic", "type": "ADDON_OF", "to": "plan.care"},
    {"kind": "confusable", "a": "terms.2023", "b": "terms.2024"},
]

CORPUS = [
    {"doc_id": "care", "chunk_id": "care-1", "title": "安心医疗险", "entity_ids": ["plan.care"],
     "text": "安心医疗险是个人医疗保险，免赔额以所用条款为准。"},
    {"doc_id": "terms-2023", "chunk_id": "terms-2023-1", "title": "安心医疗险条款（2023版）",
     "entity_ids": ["terms.2023"],
     "text": "安心医疗险条款（2023版）：免赔额1万元/年。The deductible is 10,000 yuan a year."},
    {"doc_id": "terms-2024", "chunk_id": "terms-2024-1", "title": "安心医疗险条款（2024版）",
     "entity_ids": ["terms.2024"],
     "text": "安心医疗险条款（2024版）：免赔额5,000元/年。The deductible is 5,000 yuan a year."},
    {"doc_id": "clinic", "chunk_id": "clinic-1", "title": "门诊医疗附加险",
     "entity_ids": ["rider.clinic"], "text": "门诊医疗附加险：免赔额500元/年，门诊费用报销。"},
]


@pytest.fixture
def terms_kb(kb, neo4j_store, milvus_index):
    return load_kb(kb, neo4j_store, milvus_index, ONTOLOGY, CORPUS)


def test_the_terms_in_use_now_are_the_latest_edition(runtime, terms_kb):
    _, now = play(runtime, terms_kb, "安心医疗险的免赔额是多少", "那现在用的条款呢")
    assert now.action == "retrieve"
    assert "terms.2024" in now.entities and "terms.2023" not in now.entities
    # The question asked of the plan is asked of its terms.
    assert "安心医疗险条款（2024版）" in now.standalone and "免赔额" in now.standalone
    assert now.evidence[0].chunk_id == "terms-2024-1"
