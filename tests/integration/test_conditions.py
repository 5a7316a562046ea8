"""A condition said before the question keeps the subject: end to end on real Neo4j,
Milvus Lite and SQLite, in Chinese and English (dialogue/classify.py
``condition_spans``).

After a question about surrendering a policy, "要是已经理赔过一次呢，还退钱吗" asks about
the surrender *given* a claim: the claim is a circumstance of the question, not its new
subject. The focus stays on the surrender, the claim joins it, and the surrender's own
passage is found. A name outside any condition still starts a new topic.

Each behaviour of this family is a case of tests/unit/dialogue/cases/conditions.json,
run on the in-memory stores, in both languages where the behaviour exists in both. One
test runs here end to end: the condition's entity joins and the subject's passage is
found in Milvus.
"""

import pytest

from tests.services import load_kb, play

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

ONTOLOGY = [
    {"kind": "type", "name": "Service", "attributes": ["条件", "时效", "conditions"]},
    {"kind": "entity", "id": "svc.surrender", "name": "退保", "type": "Service",
     "aliases": ["surrender", "cancel the policy"], "description": "解除保险合同"},
    {"kind": "entity", "id": "svc.claim", "name": "理赔", "type": "Service",
     "aliases": ["claim"], "description": "申请保险金"},
]

CORPUS = [
    {"doc_id": "surrender", "chunk_id": "surrender-1", "title": "退保", "entity_ids": ["svc.surrender"],
     "text": "退保须知：犹豫期内退保全额退还保费。Surrender within the cooling-off period refunds "
             "the full premium."},
    {"doc_id": "surrender", "chunk_id": "surrender-2", "title": "退保", "entity_ids": ["svc.surrender"],
     "text": "犹豫期后退保退还现金价值；保单年度内已发生理赔的，不退还当年保费。After the cooling-off "
             "period, surrender refunds the cash value; after a claim in the policy year, that "
             "year's premium is not refunded."},
    {"doc_id": "claim", "chunk_id": "claim-1", "title": "理赔", "entity_ids": ["svc.claim"],
     "text": "理赔申请：出险后30天内提交病历和发票。A claim is filed within 30 days with the "
             "medical records and invoices."},
]


@pytest.fixture
def insurance_kb(kb, neo4j_store, milvus_index):
    return load_kb(kb, neo4j_store, milvus_index, ONTOLOGY, CORPUS)


def test_a_condition_keeps_the_subject_in_focus(runtime, insurance_kb):
    _, given = play(runtime, insurance_kb, "犹豫期过了还能退保吗", "要是已经理赔过一次呢，还退钱吗")
    assert given.entities[0] == "svc.surrender" and "svc.claim" in given.entities
    assert "退保" in given.standalone
    assert given.evidence[0].chunk_id == "surrender-2"

    # Without the condition, the claim is the new subject.
    _, new = play(runtime, insurance_kb, "犹豫期过了还能退保吗", "理赔要多久")
    assert new.entities == ["svc.claim"]
