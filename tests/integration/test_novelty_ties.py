"""Novelty between equal answers and across languages, on real Milvus Lite
(retrieval/novelty.py ``admit``): a shown chunk that answers the new question exactly as
well as an unseen one, and is as specific to the turn's entities, gives the place to
the unseen one unless the search clearly prefers it; an English passage shown before
does not come back over Chinese passages on the strength of English words they cannot
hold."""

from __future__ import annotations

import pytest

from retrieval.novelty import Shown
from retrieval.request import SearchRequest
from retrieval.search import Retriever, RetrieverConfig
from tests.services import GALAXY, GALAXY_CARD, TWO_CARDS, card_passages, found_ids, load_kb

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

# The card's own grace-period passage (short: the search ranks it first for the question)
# and a long FAQ passage that states the same period among other things (second).
TWINS = [("fee", 0, [GALAXY], "星河卡年费", "星河卡主卡年费300元；当年刷卡满6次，可免次年年费。"),
         ("grace", 0, [GALAXY], "星河卡免息期", "星河卡免息期最长56天，全额还款不收利息。"),
         ("atm", 0, [GALAXY], "星河卡取现", "星河卡在ATM取现，按取现金额的1%收取手续费，最低10元。"),
         ("faq", 0, [GALAXY], "星河卡常见问题",
          "星河卡常见问题：免息期最长56天，账单日后20天内还款；分期手续费按期收取，"
          "提前还款不退已收手续费；挂失补卡工本费20元；积分每消费1元积1分，两年有效。")]


@pytest.fixture
def twins_kb(kb, neo4j_store, milvus_index):
    return load_kb(kb, neo4j_store, milvus_index, TWO_CARDS, card_passages(TWINS))


def test_between_equal_answers_the_unseen_passage_takes_the_place(runtime, twins_kb):
    # The FAQ was shown for the fee question; the grace period is in it, and just as much
    # in the card's own unseen passage, which the search ranks higher.
    shown = [Shown("faq#0", "faq", 1, "星河卡年费多少")]

    outcome = runtime.retriever.search(twins_kb, SearchRequest(["星河卡免息期最长多少天"], k=5,
                                       entity_ids=[GALAXY], readmittable=shown))

    assert found_ids(outcome)[0] == "grace#0"
    assert "faq#0" not in found_ids(outcome)
    assert outcome.trace["novelty"]["returned"] == []
    assert outcome.trace["novelty"]["left_out"] >= 1


def test_between_equal_answers_a_shown_passage_the_search_clearly_prefers_comes_back(
        runtime, twins_kb):
    # The other way round: the card's own passage was shown, the FAQ is unseen. The search
    # clearly prefers the shown one, so it comes back, marked.
    shown = [Shown("grace#0", "grace", 1, "星河卡年费多少")]

    outcome = runtime.retriever.search(twins_kb, SearchRequest(["星河卡免息期最长多少天"], k=5,
                                       entity_ids=[GALAXY], readmittable=shown))

    assert found_ids(outcome)[0] == "grace#0"
    assert outcome.found[0].seen_in_turn == 1


# The card with an English alias, an English FAQ passage and Chinese passages.
BILINGUAL = [
    ("faq-en", 0, [GALAXY], "Galaxy Card FAQ",
     "Q: What is the annual fee of the Galaxy Card? A: RMB 300; the first year is free, "
     "and no interest is charged on the fee."),
    ("grace", 0, [GALAXY], "星河卡免息期", "星河卡免息期最长56天，全额还款不收利息。"),
    ("fee", 0, [GALAXY], "星河卡年费", "星河卡主卡年费300元；当年刷卡满6次，可免次年年费。"),
]


@pytest.fixture
def bilingual_kb(kb, neo4j_store, milvus_index):
    # A Chinese kb holding one English FAQ: in so small a corpus the FAQ's words would
    # outnumber the Chinese and choose the English analyzer, which a real kb would not.
    return load_kb(kb, neo4j_store, milvus_index, GALAXY_CARD, card_passages(BILINGUAL),
                   analyzer="chinese")


def test_an_english_passage_does_not_come_back_on_english_words_a_chinese_one_cannot_hold(
        runtime, milvus_index, bilingual_kb):
    # Turn 1 (English) showed the English FAQ. Turn 2 asks about the interest-free period:
    # the FAQ holds "interest" and "free" about the fee; the Chinese passages cannot
    # hold any English word, which says nothing about whether they answer. Judged on the
    # words both can hold, the FAQ answers nothing new, and stays out.
    wide = Retriever(milvus_index, config=RetrieverConfig(novelty_rank=5))
    shown = [Shown("faq-en#0", "faq-en", 1, "What is the annual fee of the Galaxy Card (星河卡)?")]

    outcome = wide.search(bilingual_kb, SearchRequest(["Which is longer, the interest-free period of the Galaxy Card (星河卡)?"],
                          k=5, entity_ids=[GALAXY], readmittable=shown))

    assert "faq-en#0" not in found_ids(outcome)
    assert outcome.trace["novelty"]["left_out"] == 1

    # Against English passages it is judged on the English words: when every other
    # passage was shown too, nothing unseen competes, and it comes back for them.
    alone = [*shown, Shown("grace#0", "grace", 1, "星河卡年费多少"),
             Shown("fee#0", "fee", 1, "星河卡年费多少")]
    back = wide.search(bilingual_kb, SearchRequest(["Which is longer, the interest-free period of the Galaxy Card (星河卡)?"],
                       k=5, entity_ids=[GALAXY], readmittable=alone))
    assert "faq-en#0" in found_ids(back)
