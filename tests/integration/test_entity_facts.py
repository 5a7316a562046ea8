"""What the corpus states about each entity keeps the conversation on the entity a
question fits: end to end on real Neo4j, Milvus Lite and SQLite, in Chinese and
English.

Films and people share one type here (as in knowledge bases built from
encyclopedia boxes), so a type cannot tell them apart; their passages can. The
film's passages state its director and its lead actor, the director's state a
birthday:

- a question about a birthday asked with a pronoun that went to the film is about
  the director talked about just before (his passages state it, the film's do not);
- a question whose attribute a recent entity's passages state, asked beside a name
  whose passages do not, keeps that entity beside the name;
- what nothing in play states, or what the subject's own passages state, moves
  nothing.

Each turn-level behaviour of this family is a case of
tests/unit/dialogue/cases/entity_facts.json, run on the in-memory stores, in both
languages. Here run end to end: how the facts are read from Milvus (a later ingest, a
page titled with an entity's name, a page that makes no entity known), and one turn.
"""

import json

import pytest

from tests.services import load_kb, play

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

ONTOLOGY = [
    {"kind": "type", "name": "Work",
     "attributes": ["导演", "主演", "片长", "出生日期", "director", "lead actor", "runtime",
                    "birthday"]},
    {"kind": "entity", "id": "film.fog", "name": "雾港", "type": "Work",
     "aliases": ["Harbor Fog"], "description": "一部关于港口小城的剧情片。"},
    {"kind": "entity", "id": "person.linmo", "name": "林默", "type": "Work", "aliases": ["Lin Mo"],
     "description": "导演、编剧，出生于青岛。"},
    {"kind": "entity", "id": "person.shenqing", "name": "沈青", "type": "Work",
     "aliases": ["Shen Qing"], "description": "演员，毕业于戏剧学院。"},
    {"kind": "entity", "id": "song.dawn", "name": "晨光", "type": "Work",
     "aliases": ["Morning Light"], "description": "一首流行歌曲。"},
]

CORPUS = [
    {"doc_id": "fog", "chunk_id": "fog-1", "title": "雾港", "entity_ids": ["film.fog"],
     "text": "雾港的片长：112分钟。Harbor Fog runtime: 112 minutes."},
    {"doc_id": "fog", "chunk_id": "fog-2", "title": "雾港", "entity_ids": ["film.fog"],
     "text": "雾港的导演：林默。Harbor Fog director: Lin Mo."},
    {"doc_id": "fog", "chunk_id": "fog-3", "title": "雾港", "entity_ids": ["film.fog"],
     "text": "雾港的主演：沈青。Harbor Fog lead actor: Shen Qing."},
    {"doc_id": "linmo", "chunk_id": "linmo-1", "title": "林默", "entity_ids": ["person.linmo"],
     "text": "林默的出生日期：1970年3月2日。Lin Mo birthday: 2 March 1970."},
    {"doc_id": "shenqing", "chunk_id": "shenqing-1", "title": "沈青",
     "entity_ids": ["person.shenqing"], "text": "沈青的出生日期：1985年7月9日。"},
    {"doc_id": "dawn", "chunk_id": "dawn-1", "title": "晨光", "entity_ids": ["song.dawn"],
     "text": "晨光是一首流行歌曲，旋律轻快。"},
]


@pytest.fixture
def film_kb(kb, neo4j_store, milvus_index):
    return load_kb(kb, neo4j_store, milvus_index, ONTOLOGY, CORPUS)


def reasons(result) -> str:
    return " ".join(link["reason"] for link in result.trace["links"])


def test_the_facts_are_read_from_the_kbs_own_passages(film_kb, neo4j_store, milvus_index):
    from kg.aliases import SnapshotCache
    from retrieval.entity_facts import EntityFactsCache
    from retrieval.ingest import ingest_corpus

    snapshot = SnapshotCache(neo4j_store).get(film_kb)
    cache = EntityFactsCache(milvus_index)
    facts = cache.get(film_kb, snapshot)
    assert facts.states("film.fog", ["导演"]) is True
    assert facts.states("film.fog", ["birthday"]) is False
    assert facts.states("person.linmo", ["出生日期"]) is True
    # No passage about it alone: nothing can be said either way.
    assert facts.states("person.unknown", ["导演"]) is None
    # A later ingest that adds a passage is read (the chunk count changed), once trusted
    # facts are checked again.
    extra = {"doc_id": "dawn", "chunk_id": "dawn-2", "title": "晨光", "entity_ids": ["song.dawn"],
             "text": "晨光的导演：林默（MV）。"}
    ingest_corpus(film_kb, [json.dumps(x, ensure_ascii=False) for x in [*CORPUS, extra]],
                  index=milvus_index, snapshot=snapshot)
    fresh = EntityFactsCache(milvus_index).get(film_kb, snapshot)
    assert fresh.states("song.dawn", ["导演"]) is True


def test_a_pronoun_question_goes_to_the_entity_whose_passages_state_it(runtime, film_kb):
    _, film, born = play(runtime, film_kb, "林默是谁？", "雾港这部电影怎么样？",
                         "他的出生日期是哪天？")
    assert film.entities == ["film.fog"]
    # 他 went to the film, the focus; only the director's passages state a birthday.
    assert born.entities == ["person.linmo"]
    assert "林默" in born.standalone and "雾港" not in born.standalone
    assert "passages state 出生日期" in reasons(born)


# A film's own page names its director in a passage tagged with both (the linker tags
# every name it finds): the page's title says whose facts those are.
PAGED_ONTOLOGY = [
    {"kind": "type", "name": "Work",
     "attributes": ["导演", "片长", "出生日期", "职业", "director", "runtime", "birthday",
                    "occupation"]},
    {"kind": "entity", "id": "film.tide", "name": "潮汐", "type": "Work", "aliases": ["Tides"],
     "description": "一部剧情片。"},
    {"kind": "entity", "id": "person.gu", "name": "顾原", "type": "Work", "aliases": ["Gu Yuan"],
     "description": "出生于厦门。"},
    {"kind": "entity", "id": "org.bay", "name": "海湾影业", "type": "Work", "aliases": [],
     "description": "一家电影公司。"},
]

PAGED_CORPUS = [
    {"doc_id": "tide", "chunk_id": "tide-1", "title": "潮汐", "entity_ids": ["film.tide"],
     "text": "潮汐的片长：98分钟。Tides runtime: 98 minutes."},
    {"doc_id": "tide", "chunk_id": "tide-2", "title": "潮汐",
     "entity_ids": ["film.tide", "person.gu"],
     "text": "潮汐的导演：顾原。Tides director: Gu Yuan."},
    {"doc_id": "gu", "chunk_id": "gu-1", "title": "顾原", "entity_ids": ["person.gu"],
     "text": "顾原的职业：导演、编剧。出生日期：1975年。Gu Yuan occupation: director. "
             "birthday: 1975."},
    {"doc_id": "bay", "chunk_id": "bay-1", "title": "海湾影业", "entity_ids": ["org.bay", "film.tide"],
     "text": "海湾影业出品了潮汐，导演是顾原，片长98分钟。"},
]


@pytest.fixture
def paged_kb(kb, neo4j_store, milvus_index):
    return load_kb(kb, neo4j_store, milvus_index, PAGED_ONTOLOGY, PAGED_CORPUS)


def test_a_passage_titled_with_an_entitys_name_states_its_facts(paged_kb, neo4j_store,
                                                                milvus_index):
    from kg.aliases import SnapshotCache
    from retrieval.entity_facts import EntityFactsCache

    snapshot = SnapshotCache(neo4j_store).get(paged_kb)
    facts = EntityFactsCache(milvus_index).get(paged_kb, snapshot)
    # Tagged with the director too, but titled with the film: the film's director.
    assert facts.states("film.tide", ["导演"]) is True
    assert facts.states("film.tide", ["director"]) is True
    # Not the director's: his own page is another.
    assert facts.states("person.gu", ["片长"]) is False
    # What a person or a thing is still comes from passages about it alone.
    assert facts.is_person("person.gu") is True


def test_a_page_makes_no_entity_known_that_has_no_passage_of_its_own(paged_kb, neo4j_store,
                                                                     milvus_index):
    from kg.aliases import SnapshotCache
    from retrieval.entity_facts import EntityFactsCache

    snapshot = SnapshotCache(neo4j_store).get(paged_kb)
    facts = EntityFactsCache(milvus_index).get(paged_kb, snapshot)
    # The studio's only page names the film too: what it states is still unknown, so
    # a question about it never moves to an entity whose passages state more.
    assert facts.states("org.bay", ["导演"]) is None
    assert facts.states("org.bay", ["片长"]) is None
