"""A question asked about a name and left unanswered: the talk goes on about the name,
and its options stay in play until the turns' words say which one is meant. End to end
on real Neo4j, Milvus Lite and SQLite, in Chinese and English.

"北岸" names a band and a song. Asked which, the user does not answer but goes on
(当然知道，那是一支很有名的摇滚乐队): the band it is, by the words. When the words of
the next turn fit neither, nothing is linked and nothing asked again, and a later turn
whose words or question fit one option settles it. A turn that names something else
leaves the options behind.

Each behaviour of this family is a case of
tests/unit/dialogue/cases/unanswered_question.json, run on the in-memory stores, in both
languages where the behaviour exists in both. One test runs here end to end, in both
languages.
"""

import pytest

from tests.services import load_kb, play

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

ONTOLOGY = [
    {"kind": "type", "name": "Music",
     "attributes": ["成立时间", "发行时间", "founded", "release date"]},
    {"kind": "entity", "id": "band.north", "name": "北岸（乐队）", "type": "Music",
     "aliases": ["北岸", "North Shore"],
     "description": "一支来自台湾的摇滚乐队，乐队成员有四人。A rock band from Taiwan with four members."},
    {"kind": "entity", "id": "song.north", "name": "北岸（歌曲）", "type": "Music",
     "aliases": ["北岸", "North Shore"],
     "description": "一首抒情慢歌，歌词写海边的离别。A slow ballad whose lyrics are about a farewell by the sea."},
    {"kind": "entity", "id": "album.sea", "name": "海风", "type": "Music", "aliases": ["Sea Breeze"],
     "description": "一张民谣专辑。A folk album."},
    {"kind": "confusable", "a": "band.north", "b": "song.north"},
]

CORPUS = [
    {"doc_id": "band", "chunk_id": "band-1", "title": "北岸（乐队）", "entity_ids": ["band.north"],
     "text": "北岸乐队的成立时间：1999年，是一支摇滚乐队。North Shore founded: 1999, a rock band."},
    {"doc_id": "song", "chunk_id": "song-1", "title": "北岸（歌曲）", "entity_ids": ["song.north"],
     "text": "北岸这首歌的发行时间：2012年，是一首抒情慢歌。North Shore release date: 2012, a ballad."},
    {"doc_id": "sea", "chunk_id": "sea-1", "title": "海风", "entity_ids": ["album.sea"],
     "text": "海风的发行时间：2018年。Sea Breeze release date: 2018."},
]


@pytest.fixture
def music_kb(kb, neo4j_store, milvus_index):
    return load_kb(kb, neo4j_store, milvus_index, ONTOLOGY, CORPUS)


def test_the_words_after_an_unanswered_question_say_which_option_is_meant(runtime, music_kb):
    asked, on = play(runtime, music_kb, "你知道北岸吗？", "当然知道，那是一支很有名的摇滚乐队。")
    assert asked.action == "clarify"
    assert on.action != "clarify"
    assert on.entities == ["band.north"]
    asked_en, on_en = play(runtime, music_kb, "Do you know North Shore?",
                           "Sure, it is a famous rock band from Taiwan.")
    assert asked_en.action == "clarify"
    assert on_en.action != "clarify"
    assert on_en.entities == ["band.north"]
