"""他 and 她 mean a person, 它 a thing: end to end on real Neo4j, Milvus Lite and
SQLite, in Chinese and English.

Films and people share one type here (as in knowledge bases built from
encyclopedia boxes), so a type cannot tell them apart; their passages can: the
people's state a birth date or an occupation, the film's and the song's do not.

- 他 said while a film is the focus means the person talked about before it;
- 它 said while a person is the focus means the film talked about before;
- a pronoun after a person and a film named side by side means the one of its kind
  (nothing to ask), while after two people it is still asked about;
- an entity the corpus says nothing about alone decides nothing.

Each behaviour of this family is a case of tests/unit/dialogue/cases/pronoun_kind.json,
run on the in-memory stores, in both languages where the behaviour exists in both. One
test runs here end to end: the kinds come from the entity facts read from Milvus.
"""

import pytest

from tests.services import load_kb, play

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

ONTOLOGY = [
    {"kind": "type", "name": "Work",
     "attributes": ["导演", "片长", "出生日期", "职业", "director", "runtime", "birthday",
                    "occupation"]},
    {"kind": "entity", "id": "film.fog", "name": "雾港", "type": "Work",
     "aliases": ["Harbor Fog"], "description": "一部关于港口小城的剧情片。"},
    {"kind": "entity", "id": "person.linmo", "name": "林默", "type": "Work", "aliases": ["Lin Mo"],
     "description": "出生于青岛。"},
    {"kind": "entity", "id": "person.shenqing", "name": "沈青", "type": "Work",
     "aliases": ["Shen Qing"], "description": "毕业于戏剧学院。"},
    {"kind": "entity", "id": "film.tide", "name": "潮汐", "type": "Work",
     "aliases": ["The Tide"], "description": "一部纪录片。"},
    {"kind": "entity", "id": "film.dusk", "name": "暮色", "type": "Work",
     "aliases": ["Dusk"], "description": "一部爱情片。"},
    {"kind": "entity", "id": "film.rain", "name": "雨季", "type": "Work",
     "aliases": ["Rain Season"], "description": "一部青春片。"},
    {"kind": "entity", "id": "film.coast", "name": "海岸线", "type": "Work",
     "aliases": ["The Coastline"], "description": "海岸线是周远执导的剧情片。"},
    {"kind": "entity", "id": "person.zhouyuan", "name": "周远", "type": "Work",
     "aliases": ["Zhou Yuan"], "description": "周远。"},
]

CORPUS = [
    {"doc_id": "fog", "chunk_id": "fog-1", "title": "雾港", "entity_ids": ["film.fog"],
     "text": "雾港的片长：112分钟。Harbor Fog runtime: 112 minutes."},
    {"doc_id": "fog", "chunk_id": "fog-2", "title": "雾港", "entity_ids": ["film.fog"],
     "text": "雾港获得过海滨电影节最佳影片奖。Harbor Fog won the best film award at the coast festival."},
    {"doc_id": "dusk", "chunk_id": "dusk-1", "title": "暮色", "entity_ids": ["film.dusk"],
     "text": "暮色的片长：95分钟。Dusk runtime: 95 minutes."},
    {"doc_id": "coast", "chunk_id": "coast-1", "title": "海岸线", "entity_ids": ["film.coast"],
     "text": "海岸线的片长：99分钟。The Coastline runtime: 99 minutes."},
    {"doc_id": "rain", "chunk_id": "rain-1", "title": "雨季", "entity_ids": ["film.rain"],
     "text": "雨季的片长：101分钟。Rain Season runtime: 101 minutes."},
    {"doc_id": "linmo", "chunk_id": "linmo-1", "title": "林默", "entity_ids": ["person.linmo"],
     "text": "林默的出生日期：1970年3月2日。Lin Mo birthday: 2 March 1970."},
    {"doc_id": "linmo", "chunk_id": "linmo-2", "title": "林默", "entity_ids": ["person.linmo"],
     "text": "林默的职业：导演、编剧，拍过三部长片。Lin Mo occupation: director, made three feature films."},
    {"doc_id": "shenqing", "chunk_id": "shenqing-1", "title": "沈青",
     "entity_ids": ["person.shenqing"],
     "text": "沈青的职业：演员，出生在海边小镇。Shen Qing occupation: actor, born in a seaside town."},
]


@pytest.fixture
def film_kb(kb, neo4j_store, milvus_index):
    return load_kb(kb, neo4j_store, milvus_index, ONTOLOGY, CORPUS)


def reasons(result) -> str:
    return " ".join(link["reason"] for link in result.trace["links"])


def test_he_while_a_film_is_the_focus_means_the_person_talked_about_before(runtime, film_kb):
    *_, film, he = play(runtime, film_kb, "你看过雾港这部电影吗？", "林默是这部电影的导演。",
                        "雾港拍得真好看。", "他还拍过别的电影吗？")
    assert film.entities == ["film.fog"]
    assert he.entities == ["person.linmo"]
    assert "林默" in he.standalone
    assert "means a person" in reasons(he)
    *_, film_en, he_en = play(runtime, film_kb, "Have you seen Harbor Fog?",
                              "Lin Mo is the director.", "Harbor Fog looks great.",
                              "Has he made other films?")
    assert film_en.entities == ["film.fog"]
    assert he_en.entities == ["person.linmo"]
