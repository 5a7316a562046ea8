"""English and mixed turns measured like Chinese ones: an English ellipsis by words,
not letters; a follow-up that uses a word of the focus' English name is not a topic
switch; novelty judges a Chinese passage by what a question can share with it."""

from __future__ import annotations

import json

from dialogue.classify import own_size
from dialogue.topic_shift import shares_name_word
from kg.aliases import AliasSnapshot
from kg.ontology import parse_ontology
from retrieval.models import Hit
from retrieval.novelty import TermStats, gain, new_terms, units

ONTOLOGY = [
    {"kind": "type", "name": "BankService", "attributes": [], "parent": None},
    {"kind": "entity", "id": "svc.fx", "name": "外币兑换", "type": "BankService",
     "aliases": ["换汇", "foreign currency exchange"], "description": "", "parent": None,
     "attributes": {}},
    {"kind": "entity", "id": "svc.safe", "name": "保管箱", "type": "BankService",
     "aliases": ["safe deposit box"], "description": "", "parent": None, "attributes": {}},
]


def snapshot() -> AliasSnapshot:
    ontology = parse_ontology([json.dumps(line, ensure_ascii=False) for line in ONTOLOGY])
    return AliasSnapshot.from_ontology("t", 1, ontology)


def hit(text: str, title: str = "") -> Hit:
    return Hit(chunk_id="c#0", doc_id="c", title=title, text=text, entity_ids=(), score=1.0)


def test_english_words_count_like_two_chinese_characters():
    # "the edition" is about as much of one's own as 版本 or 那个版: an ellipsis's size.
    assert own_size("the edition") == 4
    assert own_size("那个版") == 3
    # Letter by letter it would have been 10, more than any ellipsis may add.
    assert own_size("the edition") < len("theedition")
    assert own_size("do I need an appointment") == 10


def test_a_word_of_the_focus_english_name_keeps_the_topic():
    snap = snapshot()
    assert shares_name_word("Do I need an appointment to exchange 8,000 US dollars?", snap, ["svc.fx"])
    # Not a word of the focus' names: the similarity decides as before.
    assert not shares_name_word("How do I open a safe deposit box?", snap, ["svc.fx"])
    # Chinese words are left to the alias match and the similarity.
    assert not shares_name_word("兑换要预约吗", snap, ["svc.fx"])
    # Stop words are not words of the name.
    assert not shares_name_word("What is it?", snap, ["svc.fx"])


def test_numbers_are_new_words_of_a_follow_up():
    assert "2024" in units("What about the 2024 edition?")
    # Thousands separators do not split an amount into pieces.
    assert "8000" in units("exchange 8,000 US dollars") and "000" not in units("8,000")
    # A year written with what it counts is asked as the two together (2024版).
    assert new_terms("那2024版呢", "2025版月费多少") >= {"2024版"}


def test_a_chinese_passage_is_judged_by_what_an_english_question_can_share_with_it():
    stats = TermStats.from_texts(["5G套餐家庭版（2024版）月费219元", "5G套餐家庭版（2025版）月费199元",
                                  "Family plan 2025 edition: RMB 199 a month"])
    terms = new_terms("How many SIM cards can I add, 2024 edition?", "How much is the family plan?")
    # The Chinese 2024 passage holds the year, one of the two things it can share with the
    # question (the other: a count, which "how many" asks for and neither passage states).
    assert gain(terms, hit("5G套餐家庭版（2024版）月费219元"), stats) > 0.3
    assert gain(terms, hit("5G套餐家庭版（2025版）月费199元"), stats) == 0.0
    assert gain(terms, hit("5G套餐家庭版（2024版）可加2张副卡"), stats) == 1.0
    # A passage in English is still judged by the English words too.
    assert gain(terms, hit("Family plan 2025 edition: RMB 199 a month"), stats) < 0.5
