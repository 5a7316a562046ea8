"""English names an English FAQ gives things the Chinese documents describe, paired
with them by the figures both state (invented corpus)."""

import pytest

from kg.suggest import read_corpus, suggest
from kg.suggest.english import capitalised_names
from tests.unit.test_suggest import line

CORPUS = [
    line("family", "极光家庭套餐", "极光家庭套餐月费199元，共享流量150GB，共享通话1000分钟，可加2张副卡。"),
    line("solo", "极光个人套餐", "极光个人套餐月费129元，流量80GB，通话500分钟，免息期50天。"),
    line("lounge", "极光贵宾室（海角湾T2）",
         "极光贵宾室（海角湾T2）位于2层215登机口对面，开放时间6:00-23:00，无权益旅客可付费300元使用3小时。"),
    line("faq-en", "Aurora FAQ (English)",
         "Q: What does the Aurora Family Plan include? A: RMB 199 a month, 150 GB shared data, "
         "1,000 shared minutes and 2 secondary SIM cards."),
    line("faq-en-2", "Aurora FAQ (English)",
         "Q: How long is the interest-free period? A: 50 days on the Aurora Solo Plan and 56 days "
         "on the Aurora Gold Plan, 129 yuan and 500 minutes apart."),
    line("faq-en-3", "Aurora FAQ (English)",
         "The Aurora lounge at Haijiao Bay T2 (level 2, Zone B, opposite gate 215) opens 6:00–23:00. "
         "Passengers without access may pay 300 yuan for up to 3 hours."),
]


@pytest.fixture(scope="module")
def result():
    return suggest(read_corpus(CORPUS))


def test_an_english_name_joins_the_entity_whose_passages_state_the_same_figures(result):
    assert "Aurora Family Plan" in result.entities["极光家庭套餐"].aliases
    # Without its terminal code too, as users say it.
    lounge = result.entities["极光贵宾室（海角湾T2）"].aliases
    assert {"Haijiao Bay T2", "Haijiao Bay"} <= lounge.keys()


def test_a_passage_naming_two_things_gives_neither_a_name(result):
    # Its figures (129, 500) are the solo plan's, but which name they go with is unclear.
    assert not any(a.startswith("Aurora") for a in result.entities["极光个人套餐"].aliases)


def test_names_are_runs_of_capitalised_words_without_question_words_or_codes():
    assert capitalised_names("Q: What does the Aurora Family Plan include?") == ["Aurora Family Plan"]
    assert capitalised_names("level 2, Zone B, opposite gate 215") == []
