"""Topic phrases by rule: what a turn is about, without the words about the talk."""

from __future__ import annotations

import pytest

from common.language.phrases import topic_phrases


@pytest.mark.parametrize(("text", "expected"), [
    ("Interesting. What are the effects of these changes?", ["effects", "changes"]),
    ("Okay, but how does it affect developing countries?", ["affect developing countries"]),
    ("What types of essential oils should I consider?", ["types of essential oils"]),
    ("So what happens at the Conference of Parties?", ["Conference of Parties"]),
    ("That's rather vague. Can you be more specific?", ["vague"]),
    ("Are they meeting them?", ["meeting"]),
    ("Wow, that's amazing! What are the coolest startups currently?", ["coolest startups"]),
    ("Tell me more about Trump’s decision.", ["Trump decision"]),
])
def test_english_phrases_are_the_runs_between_words_that_carry_no_topic(text, expected):
    assert topic_phrases(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    # Time and degree adverbs and conjunctions end a phrase.
    ("Did the museum ever reopen after the flood?", ["museum", "reopen", "flood"]),
    ("What happens if the glacier melts?", ["glacier melts"]),
    # Verdicts and interjections are about the talk.
    ("Incredible. Is the lighthouse safe to climb?", ["lighthouse", "climb"]),
    # Common verbs end a phrase; their -ing forms may be the topic.
    ("She loves sailing. Which knots should she learn first?", ["sailing", "knots", "first"]),
    ("Where do migratory birds stand in winter?", ["migratory birds", "winter"]),
])
def test_english_words_that_say_when_how_or_what_one_thinks_of_it_are_no_topic(text, expected):
    assert topic_phrases(text) == expected


def test_a_phrase_said_twice_is_kept_once_as_first_written():
    assert topic_phrases("Climate change, or climate change?") == ["Climate change"]


def test_an_overlong_run_keeps_its_last_words():
    assert topic_phrases("Lisbon harbour ferry terminal ticket office queue") == \
        ["ferry terminal ticket office queue"]


@pytest.mark.parametrize(("text", "expected"), [
    ("信用卡年费怎么免除？", ["信用卡年费", "免除"]),
    ("这个套餐的价格是多少", ["套餐", "价格"]),
    ("那它的有效期呢", ["有效期"]),
    ("有意思，再详细说说光伏发电的原理", ["光伏发电", "原理"]),
])
def test_chinese_phrases_are_the_runs_between_stop_words_pronouns_and_particles(text, expected):
    assert topic_phrases(text) == expected


def test_a_mixed_turn_gives_the_phrases_of_both_scripts():
    assert topic_phrases("iPhone 15的电池续航怎么样") == ["iPhone", "电池续航"]
