"""The dialogue keeps talking about its focus while it names what the focus is tied
to: end to end on real Neo4j, Milvus Lite and SQLite, in Chinese and English.

A film's description names its director; a turn that says who directed "this film"
still talks about the film, and the film stays among the turn's entities (and
in its standalone) beside the director. A name the knowledge base does not tie to
the focus replaces it as before, and so does a variant of the focus. Digits that
are part of a date are not a name made of digits.

Each behaviour of this family is a case of tests/unit/dialogue/cases/kept_focus.json,
run on the in-memory stores, in both languages where the behaviour exists in both. Here
run end to end: the director joining the film (the ties read from Neo4j), and two turns
of the demo kb.
"""

import pytest

from tests.services import load_kb, play

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

ONTOLOGY = [
    {"kind": "type", "name": "Work", "attributes": ["导演", "主演", "片长", "上映时间", "发行时间",
                                                   "出生日期", "director", "runtime"]},
    {"kind": "entity", "id": "film.fog", "name": "雾港", "type": "Work",
     "aliases": ["Harbor Fog"],
     "description": "雾港是2011年上映的剧情片，由林默执导，讲述一座港口小城的故事。"},
    {"kind": "entity", "id": "person.linmo", "name": "林默", "type": "Work", "aliases": ["Lin Mo"],
     "description": "林默，导演、编剧，1970年出生于青岛。"},
    {"kind": "entity", "id": "song.dawn", "name": "晨光", "type": "Work", "aliases": ["Morning Light"],
     "description": "晨光是一首2005年发行的流行歌曲。"},
    {"kind": "entity", "id": "album.21", "name": "21", "type": "Work",
     "description": "一张2011年发行的录音室专辑。"},
]

CORPUS = [
    {"doc_id": "film.fog.doc", "chunk_id": "fog-1", "title": "雾港", "entity_ids": ["film.fog"],
     "text": "雾港的片长：112分钟。"},
    {"doc_id": "film.fog.doc", "chunk_id": "fog-2", "title": "雾港",
     "entity_ids": ["film.fog", "person.linmo"], "text": "雾港的导演：林默。"},
    {"doc_id": "person.linmo.doc", "chunk_id": "linmo-1", "title": "林默",
     "entity_ids": ["person.linmo"], "text": "林默的出生日期：1970年3月2日。"},
    {"doc_id": "song.dawn.doc", "chunk_id": "dawn-1", "title": "晨光", "entity_ids": ["song.dawn"],
     "text": "晨光的发行时间：2005年6月21日。"},
    {"doc_id": "album.21.doc", "chunk_id": "album21-1", "title": "21", "entity_ids": ["album.21"],
     "text": "21的发行时间：2011年1月24日。"},
]


@pytest.fixture
def film_kb(kb, neo4j_store, milvus_index):
    return load_kb(kb, neo4j_store, milvus_index, ONTOLOGY, CORPUS)


def test_naming_the_films_director_keeps_the_film(runtime, film_kb):
    first, director, runtime_q = play(runtime, film_kb, "你看过雾港这部电影吗？",
                                      "这部电影是林默导演的，拍得很好。", "片长多久？")
    assert first.entities == ["film.fog"]
    # The director joins; the film the turn is about stays, and is written in the query.
    assert director.entities == ["person.linmo", "film.fog"]
    assert "雾港" in director.standalone and "林默" in director.standalone
    assert "the focus stays" in " ".join(l["reason"] for l in director.trace["links"])
    # A turn that names nothing goes on about both.
    assert "film.fog" in runtime_q.entities
    assert "雾港" in runtime_q.standalone


def test_a_variant_of_the_focus_still_replaces_it(runtime, demo_kb):
    # The editions of one product are tied to it; naming the other edition is a switch.
    _, sibling = play(runtime, demo_kb, "A产品个人版怎么申请", "那企业版的申请条件是什么")
    assert sibling.entities == ["prod.a.enterprise"]


def test_a_pronoun_inside_a_comparison_is_still_the_focus(runtime, demo_kb):
    _, compared = play(runtime, demo_kb, "员工手册2024版的年假有几天", "2025版比它多几天")
    assert "2024" in compared.standalone and "2025" in compared.standalone
