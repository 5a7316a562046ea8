"""Whether a named thing has something the kb never writes of, asked in English: judged
in a kb written in English, never in a Chinese kb (whose passages write no English)."""

from retrieval.novelty import TermStats
from retrieval.unanswerable import unknown_things

ENGLISH = TermStats.from_texts([
    "Riverside Club, 12 Mill Street. Free parking for 2 hours. The sauna is at this club.",
    "Premium Membership costs 45 pounds a month, no joining fee, 4 guest passes a year.",
])
CHINESE = TermStats.from_texts([
    "城西营业厅地址：城西区文一路300号。营业时间：周一至周六8:30-17:00。",
    "电表过户需携带房产证、新户主身份证原件。",
])


def test_a_thing_an_english_kb_never_writes_of_is_unknown():
    assert ENGLISH.writes_latin and not CHINESE.writes_latin
    assert unknown_things("Does the Riverside Club have a swimming pool?", ENGLISH,
                          ["Riverside Club"]) == ["swimming pool"]


def test_what_an_english_kb_writes_of_is_answered():
    assert unknown_things("Does the Riverside Club have parking?", ENGLISH, ["Riverside Club"]) == []
    assert unknown_things("Does Premium have a joining fee?", ENGLISH, ["Premium"]) == []


def test_english_words_are_not_judged_in_a_chinese_kb():
    assert unknown_things("Does 城西营业厅 have a swimming pool?", CHINESE, ["城西营业厅"]) == []
