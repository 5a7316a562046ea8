"""The topic of a conversation in a kb without an ontology: carried, replaced, pointed at."""

from __future__ import annotations

import pytest

from dialogue.topics import TopicConfig, TopicPhrase, answers_read, next_topic, refers_to
from retrieval.novelty import Shown, TermStats

EN = TermStats.from_texts([
    "Climate change means long-term shifts in temperatures and weather patterns.",
    "Climate change hits developing countries hardest: droughts, floods, crop failures.",
    "Developed countries pledged climate finance to developing countries.",
    "Essential oils such as lavender give a lotion its scent.",
    "Mix the unscented lotion base with a few drops of essential oils.",
    "The effects of the changes are felt by farmers.",
    "Running after a long break: start slowly and build up.",
    "Strength exercises that go well with running.",
])
ZH = TermStats.from_texts([
    "信用卡年费：首年免年费，次年刷卡满六次免年费。",
    "信用卡积分可以兑换里程。",
    "光伏发电的原理是光生伏特效应。",
    "光伏电站的维护成本每年约为投资的百分之一。",
    "宽带套餐的价格每月一百元。",
])


def texts(topic):
    return [p.text for p in topic]


def test_a_turn_names_its_topic_and_a_follow_up_keeps_it():
    first = next_topic([], "How does climate change affect farming?", [], EN)
    assert texts(first)[0] == "climate change"
    follow = next_topic(first, "Can you be more specific?", [], EN)
    assert "climate change" in texts(follow)


def test_a_new_subject_replaces_the_old_one_within_a_few_turns():
    topic = next_topic([], "How does climate change affect farming?", [], EN)
    for _ in range(4):
        topic = next_topic(topic, "Which essential oils suit a lotion?", [], EN)
    assert texts(topic)[0] == "essential oils"
    assert "climate change" not in texts(topic)


def test_an_explicit_switch_replaces_the_topic_at_once():
    topic = next_topic([], "How does climate change affect farming?", [], EN)
    switched = next_topic(topic, "Which essential oils suit a lotion?", [], EN, switched=True)
    assert "climate change" not in texts(switched)


def test_what_the_conversation_comes_back_to_outweighs_what_it_mentioned_once():
    topic = next_topic([], "How does climate change hit developing countries?", [], EN)
    topic = next_topic(topic, "And what about climate change and floods?", [], EN)
    assert texts(topic)[0] == "climate change"


def test_words_about_the_talk_and_words_the_kb_lacks_are_no_topic():
    assert next_topic([], "Interesting. Tell me more, please!", [], EN) == []
    assert next_topic([], "What about quantum chromodynamics?", [], EN) == []


def test_the_shown_passage_adds_what_it_repeats_when_it_is_about_the_question():
    passage = ("COP26 was about climate change. Climate change is what the parties negotiate. "
               "The summit took place in Glasgow.")
    stats = TermStats.from_texts([*[passage] * 1, "Essential oils scent a lotion.",
                                  "Climate change hits developing countries.", "Running."])
    shown = next_topic([], "What was COP26 about?", [passage], stats)
    assert "climate change" in texts(shown)
    # A passage that shares nothing with what was asked says nothing of the topic.
    unrelated = next_topic([], "What about lotion?", [passage], stats)
    assert "climate change" not in texts(unrelated)


@pytest.mark.parametrize(("stats", "opening", "nothing_new"), [
    (EN, "How does climate change affect farming?", "Tell me more."),
    (EN, "How does climate change affect farming?", "Why?"),
    (ZH, "信用卡年费怎么免除？", "再详细说说"),
])
def test_turns_that_say_nothing_of_their_own_keep_the_topic_as_it_was(stats, opening,
                                                                     nothing_new):
    topic = next_topic([], opening, [], stats)
    later = topic
    for _ in range(5):
        later = next_topic(later, nothing_new, [], stats)
    assert [(p.text, round(p.weight, 6)) for p in later] == \
        [(p.text, round(p.weight, 6)) for p in topic]


def test_offered_passages_below_an_answer_may_answer_a_turn_that_asks_nothing_new():
    asked = "How does climate change affect farming?"
    shown = [Shown("a", "A", 1, asked), Shown("b", "B", 1, asked), Shown("c", "C", 1, asked)]
    texts = {"a": "Climate change hits farming.", "b": "Essential oils scent a lotion.",
             "c": "Climate change hits developing countries hardest."}
    # Only the answer of each turn counts as read.
    assert [s.chunk_id for s in answers_read(shown, "Tell me more.", texts, EN)] == ["a"]
    # A turn asking something new: an offered passage holding none of it stays shown.
    read = answers_read(shown, "What about developing countries?", texts, EN)
    assert [s.chunk_id for s in read] == ["a", "b"]
    assert answers_read([], "Tell me more.", {}, EN) == []


def test_a_pronoun_points_at_the_topics_first_phrase():
    topic = next_topic([], "Which essential oils suit a lotion?", [], EN)
    assert refers_to(topic) == "essential oils"
    assert refers_to([]) is None


def test_chinese_follow_up_keeps_the_topic_and_a_new_subject_replaces_it():
    first = next_topic([], "信用卡年费怎么免除？", [], ZH)
    assert texts(first)[0] == "信用卡年费"
    follow = next_topic(first, "那它的积分呢", [], ZH)
    assert "信用卡年费" in texts(follow)
    topic = follow
    for _ in range(4):
        topic = next_topic(topic, "光伏发电的原理是什么", [], ZH)
    assert texts(topic)[0] == "光伏发电"
    assert "信用卡年费" not in texts(topic)


@pytest.mark.parametrize("size", [1, 2])
def test_the_topic_keeps_at_most_size_phrases(size):
    topic = next_topic([TopicPhrase("essential oils", 3.0)],
                       "How do developed countries fund climate change adaptation?", [], EN,
                       TopicConfig(size=size))
    assert len(topic) == size
