"""A name said inside a value the turn gives for the focus entity's attribute (the
address names the park the gallery lies in) is part of that value: the turn stays on
the focus entity. End to end on real Neo4j, Milvus Lite and SQLite, in Chinese and
English.

Each behaviour of this family is a case of tests/unit/dialogue/cases/valued_focus.json,
run on the in-memory stores, in both languages where the behaviour exists in both. One
test runs here end to end: the value is matched against the focus's passages as Milvus
returns them.
"""

import pytest

from tests.services import load_kb, play

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

ONTOLOGY = [
    {"kind": "type", "name": "Sight", "attributes": ["地址", "电话", "导览", "address", "phone"]},
    {"kind": "entity", "id": "sight.gallery", "name": "湖畔美术馆", "type": "Sight",
     "aliases": ["Lakeside Gallery"], "description": "一座当代艺术美术馆。"},
    {"kind": "entity", "id": "sight.park", "name": "滨湖公园", "type": "Sight",
     "aliases": ["Lakeside Park"], "description": "城市湖滨公园。"},
]

CORPUS = [
    {"doc_id": "gallery", "chunk_id": "gallery-1", "title": "湖畔美术馆",
     "entity_ids": ["sight.gallery"],
     "text": "湖畔美术馆的地址：江城市滨湖区湖滨路8号滨湖公园东门。"
             "Lakeside Gallery address: 8 Shore Road by the east gate of Lakeside Park."},
    {"doc_id": "gallery", "chunk_id": "gallery-2", "title": "湖畔美术馆",
     "entity_ids": ["sight.gallery"],
     "text": "湖畔美术馆的电话：0571-6688123。Lakeside Gallery phone: 0571-6688123."},
    {"doc_id": "park", "chunk_id": "park-1", "title": "滨湖公园", "entity_ids": ["sight.park"],
     "text": "滨湖公园的地址：江城市滨湖区湖滨路1号。Lakeside Park address: 1 Shore Road."},
    {"doc_id": "park", "chunk_id": "park-2", "title": "滨湖公园", "entity_ids": ["sight.park"],
     "text": "滨湖公园的电话：0571-6600001。Lakeside Park phone: 0571-6600001."},
]


@pytest.fixture
def sights_kb(kb, neo4j_store, milvus_index):
    return load_kb(kb, neo4j_store, milvus_index, ONTOLOGY, CORPUS)


def test_a_name_inside_the_address_of_the_focus_keeps_the_turn_on_the_focus(runtime, sights_kb):
    _, phone = play(runtime, sights_kb, "湖畔美术馆怎么样？",
                    "地址在江城市滨湖区湖滨路8号滨湖公园东门，你有这个景点的电话吗？")
    assert phone.entities == ["sight.gallery"]
    assert "湖畔美术馆" in phone.standalone
    _, phone_en = play(runtime, sights_kb, "How is the Lakeside Gallery?",
                       "The address is 8 Shore Road by the east gate of Lakeside Park; "
                       "what is the phone number?")
    assert phone_en.entities == ["sight.gallery"]
