"""Pointing at one of the entities in play, end to end on real Neo4j, Milvus Lite and
SQLite (understanding/linker.py ``_pointed``, ``_determiner``; dialogue/classify.py ``joint_spans``;
the place words of understanding/linker.py ``_link_place``).

- 学生那个 / 北湖那家: words right before a demonstrative that name a piece of exactly one
  entity in play (or of one sharing a name with it) mean that entity, not the focus.
- 那张学生年卡: a demonstrative right before a name only marks it; it means nothing else.
- 跟家庭卡可以同时办吗: what the subject goes with joins the focus; the subject stays.
- A place is also what has opening hours (a gallery, a library): 在那 / there means it.

Each behaviour of this family is a case of tests/unit/dialogue/cases/pointers.json, run
on the in-memory stores, in both languages where the behaviour exists in both. Two tests
run here end to end: a demonstrative's words naming an entity in play, and telling apart
two entities that share a name.
"""

import pytest

from tests.services import load_kb, play

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

ONTOLOGY = [
    {"kind": "type", "name": "Venue", "attributes": ["开放时间", "门票", "opening hours"]},
    {"kind": "type", "name": "Pass", "attributes": ["价格", "退卡", "适用人群", "price", "refund"]},
    {"kind": "type", "name": "Service", "attributes": ["费用", "fee"]},
    {"kind": "entity", "id": "venue.north", "name": "北湖美术馆", "type": "Venue",
     "aliases": ["美术馆", "North Lake Gallery"], "description": "城北的美术馆"},
    {"kind": "entity", "id": "venue.south", "name": "南湖美术馆", "type": "Venue",
     "aliases": ["美术馆", "South Lake Gallery"], "description": "城南的美术馆"},
    {"kind": "entity", "id": "pass.student", "name": "学生年卡（基础版）", "type": "Pass",
     "aliases": ["学生年卡", "学生卡", "Student Pass"], "description": "在校学生可办"},
    {"kind": "entity", "id": "pass.senior", "name": "长者年卡", "type": "Pass",
     "aliases": ["长者卡", "Senior Pass"], "description": "65岁以上可办"},
    {"kind": "entity", "id": "pass.family", "name": "家庭年卡", "type": "Pass",
     "aliases": ["家庭卡", "Family Pass"], "description": "两大一小"},
    {"kind": "entity", "id": "svc.audio", "name": "语音导览", "type": "Service",
     "aliases": ["导览器", "audio guide"], "description": "讲解器租借"},
]

CORPUS = [
    {"doc_id": "north", "chunk_id": "north-1", "title": "北湖美术馆", "entity_ids": ["venue.north"],
     "text": "北湖美术馆开放时间：周二至周日9:00-17:00，周一闭馆。门票免费。North Lake Gallery "
             "opening hours: 9:00-17:00, closed on Mondays."},
    {"doc_id": "north", "chunk_id": "north-2", "title": "北湖美术馆",
     "entity_ids": ["venue.north", "svc.audio"],
     "text": "北湖美术馆一楼服务台可租语音导览，每台20元。The North Lake Gallery rents audio guides "
             "at the front desk, RMB 20 each."},
    {"doc_id": "south", "chunk_id": "south-1", "title": "南湖美术馆", "entity_ids": ["venue.south"],
     "text": "南湖美术馆开放时间：每天10:00-18:00。门票50元。"},
    {"doc_id": "student", "chunk_id": "student-1", "title": "学生年卡", "entity_ids": ["pass.student"],
     "text": "学生年卡价格：每年100元，凭学生证办理。The Student Pass costs RMB 100 a year."},
    {"doc_id": "student", "chunk_id": "student-2", "title": "学生年卡", "entity_ids": ["pass.student"],
     "text": "学生年卡办理后30天内可退卡，退还全部费用。"},
    {"doc_id": "senior", "chunk_id": "senior-1", "title": "长者年卡", "entity_ids": ["pass.senior"],
     "text": "长者年卡价格：每年50元，凭身份证办理。长者年卡不可退卡。"},
    {"doc_id": "family", "chunk_id": "family-1", "title": "家庭年卡", "entity_ids": ["pass.family"],
     "text": "家庭年卡价格：每年300元，两名成人一名儿童。"},
    {"doc_id": "combo", "chunk_id": "combo-1", "title": "年卡兼办",
     "entity_ids": ["pass.senior", "pass.family"],
     "text": "长者年卡与家庭年卡可以同时办理，家庭年卡中的长者成员另享九折。"},
]


@pytest.fixture
def gallery_kb(kb, neo4j_store, milvus_index):
    return load_kb(kb, neo4j_store, milvus_index, ONTOLOGY, CORPUS)


def reasons(result) -> str:
    return " ".join(link["reason"] for link in result.trace["links"])


def test_words_before_a_demonstrative_point_at_the_entity_in_play_they_name(runtime, gallery_kb):
    _, senior, pointed = play(runtime, gallery_kb, "学生年卡多少钱", "长者年卡呢", "学生那个能退吗")
    assert senior.entities == ["pass.senior"]
    assert pointed.entities == ["pass.student"]
    assert pointed.standalone.startswith("学生年卡（基础版）")
    assert "学生那个" not in pointed.standalone
    assert "points at" in reasons(pointed)
    assert pointed.evidence[0].chunk_id == "student-2"


def test_words_before_a_demonstrative_tell_apart_entities_sharing_a_name(runtime, gallery_kb):
    # The focus has moved on to the audio guide: 北湖 is not a variant of the focus, but
    # of the gallery still in play.
    asked, answered, audio, other = play(runtime, gallery_kb, "美术馆周一开门吗", "南湖那个",
                                         "导览器怎么收费", "北湖那家能租导览器吗")
    assert asked.action == "clarify"
    assert answered.entities == ["venue.south"]
    assert audio.entities[0] == "svc.audio"
    assert "venue.north" in other.entities and "venue.south" not in other.entities
    assert "北湖美术馆" in other.standalone and "南湖" not in other.standalone
    assert other.evidence[0].chunk_id == "north-2"
