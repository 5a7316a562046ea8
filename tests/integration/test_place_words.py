"""那边, 在那, "there": a word that points at a place means the place in play, end to
end on real Neo4j, Milvus Lite and SQLite, in Chinese and English (understanding/linker.py
``_link_place``).

A place is an entity whose type has a place's attribute (地址, address). After a
question about a branch, "能在那租保管箱吗" asks about the safe-deposit box *at that
branch*: the branch stays among the turn's entities and is written into the
standalone question, and the branch's own passage about the boxes is found. A place
word with no place in play refers to nothing the kb knows and links nothing; 那里面
("in it") and "is there" are not place words.

Each behaviour of this family is a case of tests/unit/dialogue/cases/place_words.json,
run on the in-memory stores, in both languages where the behaviour exists in both. One
test runs here end to end: the branch's own passage is found in Milvus.
"""

import pytest

from tests.services import load_kb, play

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

ONTOLOGY = [
    {"kind": "type", "name": "Branch", "attributes": ["地址", "营业时间", "address", "opening hours"]},
    {"kind": "type", "name": "Service", "attributes": ["押金", "费用", "deposit", "fee"]},
    {"kind": "entity", "id": "branch.xh", "name": "星河路支行", "type": "Branch",
     "aliases": ["Xinghe Road branch"], "description": "星河路88号"},
    {"kind": "entity", "id": "branch.yg", "name": "月光路支行", "type": "Branch",
     "aliases": ["Yueguang Road branch"], "description": "月光路12号"},
    {"kind": "entity", "id": "svc.box", "name": "保管箱", "type": "Service",
     "aliases": ["safe deposit box"], "description": "保管箱租用"},
]

CORPUS = [
    {"doc_id": "xh", "chunk_id": "xh-1", "title": "星河路支行", "entity_ids": ["branch.xh"],
     "text": "星河路支行营业时间：周一至周六9:00-17:00。Xinghe Road branch opening hours: "
             "Monday to Saturday 9:00-17:00."},
    {"doc_id": "xh", "chunk_id": "xh-2", "title": "星河路支行", "entity_ids": ["branch.xh", "svc.box"],
     "text": "星河路支行提供保管箱租用，小号每年300元。Xinghe Road branch rents safe deposit boxes, "
             "small ones at RMB 300 a year."},
    {"doc_id": "yg", "chunk_id": "yg-1", "title": "月光路支行", "entity_ids": ["branch.yg"],
     "text": "月光路支行营业时间：周一至周五9:00-17:00。"},
    {"doc_id": "box", "chunk_id": "box-1", "title": "保管箱", "entity_ids": ["svc.box"],
     "text": "保管箱租用须本人持身份证办理，押金1000元。A safe deposit box needs your ID card and "
             "a deposit of RMB 1,000."},
]


@pytest.fixture
def branch_kb(kb, neo4j_store, milvus_index):
    return load_kb(kb, neo4j_store, milvus_index, ONTOLOGY, CORPUS)


def place_links(result) -> list[dict]:
    return [link for link in result.trace["links"] if "place word" in link["reason"]]


def test_a_place_word_means_the_place_in_play(runtime, branch_kb):
    _, there = play(runtime, branch_kb, "星河路支行周六营业吗", "能在那租保管箱吗")
    assert set(there.entities) == {"branch.xh", "svc.box"}
    assert "星河路支行" in there.standalone and "保管箱" in there.standalone
    assert [link["resolved"] for link in place_links(there)] == [["branch.xh"]]
    assert there.evidence[0].chunk_id == "xh-2"

    _, again = play(runtime, branch_kb, "月光路支行周六营业吗", "那边能租保管箱吗")
    assert set(again.entities) == {"branch.yg", "svc.box"} and "月光路支行" in again.standalone
