"""这张专辑, 此片, 这位歌手: a demonstrative's own word says whether a person or a thing
is meant, and 他 / 她 whether a man or a woman, end to end on real Neo4j, Milvus Lite and SQLite, in Chinese and English.

Albums and people share one type here (as in knowledge bases built from encyclopedia
boxes); their passages tell them apart (the people's state a birth date or an
occupation, the albums' a release date). A turn that names nothing but says
"this album" while a person is the focus is about the album talked about before,
and "this singer" while an album is the focus about the singer; the words decide
it, not the focus, and nothing is asked. Likewise 她 after a woman and a man named side
by side means the woman (her passages say 她), and 他 while she is the focus means the man
talked about before.

Each behaviour of this family is a case of
tests/unit/dialogue/cases/reference_kind.json, run on the in-memory stores, in both
languages where the behaviour exists in both. Two tests run here end to end: a
demonstrative's word and a pronoun's sex, both read from the entity facts Milvus holds.
"""

import pytest

from tests.services import load_kb, play

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

ONTOLOGY = [
    {"kind": "type", "name": "Music",
     "attributes": ["发行时间", "制作人", "出生日期", "职业", "release date", "producer",
                    "birthday", "occupation"]},
    {"kind": "entity", "id": "album.dawn", "name": "晨光", "type": "Music", "aliases": ["Dawn"],
     "description": "一张流行音乐专辑。"},
    {"kind": "entity", "id": "album.sea", "name": "海风", "type": "Music",
     "aliases": ["Sea Breeze"], "description": "一张民谣专辑。"},
    {"kind": "entity", "id": "album.moon", "name": "月下", "type": "Music",
     "aliases": ["Moonlight"], "description": "一张爵士专辑。"},
    {"kind": "entity", "id": "person.suqing", "name": "苏晴", "type": "Music",
     "aliases": ["Su Qing"], "description": "出生于杭州。"},
    {"kind": "entity", "id": "person.linxia", "name": "林夏（歌手）", "type": "Music",
     "aliases": ["林夏"], "description": "一位流行歌手。"},
    {"kind": "entity", "id": "album.linxia", "name": "林夏（同名专辑）", "type": "Music",
     "aliases": ["林夏"], "description": "一张同名专辑。"},
    {"kind": "entity", "id": "person.hewen", "name": "何文", "type": "Music",
     "aliases": ["He Wen"], "description": "毕业于音乐学院。"},
]

CORPUS = [
    {"doc_id": "linxia", "chunk_id": "linxia-1", "title": "林夏（歌手）",
     "entity_ids": ["person.linxia"], "text": "林夏的出生日期：1990年。职业：歌手。"},
    {"doc_id": "linxia-album", "chunk_id": "linxia-album-1", "title": "林夏（同名专辑）",
     "entity_ids": ["album.linxia"], "text": "同名专辑林夏的发行时间：2016年。"},
    {"doc_id": "dawn", "chunk_id": "dawn-1", "title": "晨光", "entity_ids": ["album.dawn"],
     "text": "晨光的发行时间：2015年5月。Dawn release date: May 2015."},
    {"doc_id": "sea", "chunk_id": "sea-1", "title": "海风", "entity_ids": ["album.sea"],
     "text": "海风的发行时间：2018年。Sea Breeze release date: 2018."},
    {"doc_id": "moon", "chunk_id": "moon-1", "title": "月下", "entity_ids": ["album.moon"],
     "text": "月下的发行时间：2020年。Moonlight release date: 2020."},
    {"doc_id": "suqing", "chunk_id": "suqing-1", "title": "苏晴", "entity_ids": ["person.suqing"],
     "text": "苏晴的出生日期：1985年。职业：歌手。她出生在杭州。Su Qing birthday: 1985. "
             "occupation: singer. She was born in Hangzhou."},
    {"doc_id": "hewen", "chunk_id": "hewen-1", "title": "何文", "entity_ids": ["person.hewen"],
     "text": "何文的职业：制作人、作曲。他毕业于音乐学院。He Wen occupation: producer and "
             "composer. He studied at a conservatory."},
]


@pytest.fixture
def music_kb(kb, neo4j_store, milvus_index):
    return load_kb(kb, neo4j_store, milvus_index, ONTOLOGY, CORPUS)


def reasons(result) -> str:
    return " ".join(link["reason"] for link in result.trace["links"])


def test_this_album_while_a_person_is_the_focus_means_the_album_talked_about_before(
        runtime, music_kb):
    _, person, album = play(runtime, music_kb, "你听过晨光这张专辑吗？", "苏晴是谁？",
                            "这张专辑好听吗？")
    assert person.entities == ["person.suqing"]
    assert album.action != "clarify"
    assert album.entities == ["album.dawn"]
    assert "晨光" in album.standalone
    assert "by the words of the turn" in reasons(album)
    _, person_en, album_en = play(runtime, music_kb, "Have you heard the album Dawn?",
                                  "Who is Su Qing?", "Is this album any good?")
    assert person_en.entities == ["person.suqing"]
    assert album_en.action != "clarify"
    assert album_en.entities == ["album.dawn"]


def test_she_after_a_woman_and_a_man_side_by_side_means_the_woman(runtime, music_kb):
    _, she = play(runtime, music_kb, "苏晴和何文你都知道吗？", "她是哪年出生的？")
    assert she.action != "clarify"
    assert she.entities == ["person.suqing"]
    assert "means a woman" in reasons(she)
    _, she_en = play(runtime, music_kb, "Do you know Su Qing and He Wen?", "When was she born?")
    assert she_en.action != "clarify"
    assert she_en.entities == ["person.suqing"]
