"""Novelty against the unseen rivals, on real Milvus Lite (retrieval/novelty.py ``admit``):
a shown chunk comes back only when no unseen chunk answers the new question as well or
better (a tie goes to the passage more specific to the turn's entities); a follow-up
whose only good match was shown before gets it back rather than ``no_answer``; places
left empty by the one-chunk-per-document cap are filled by further chunks."""

from __future__ import annotations

import pytest

from retrieval.novelty import Shown
from retrieval.request import SearchRequest
from retrieval.search import Retriever, RetrieverConfig
from tests.services import GALAXY, TWO_CARDS, TWO_CARD_PASSAGES, card_passages, found_ids, load_kb

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

ONTOLOGY = TWO_CARDS
# (doc, chunk, entities, title, text)
PASSAGES = [*TWO_CARD_PASSAGES,
    ("guide", 0, [GALAXY], "星河卡用卡指南", "星河卡可在手机银行绑定，支持云闪付。"),
    ("guide", 1, [GALAXY], "星河卡用卡指南", "星河卡挂失后补卡，工本费20元，新卡7天内寄出。"),
    ("guide", 2, [GALAXY], "星河卡用卡指南", "星河卡积分每消费1元积1分，积分两年有效。"),
]


@pytest.fixture
def cards_kb(kb, neo4j_store, milvus_index):
    return load_kb(kb, neo4j_store, milvus_index, ONTOLOGY, card_passages(PASSAGES))


def test_a_shown_passage_about_two_cards_stays_out_when_the_cards_own_passage_answers_as_well(
        runtime, cards_kb):
    # Turn 1 asked about the fee and showed the comparison; turn 2 asks about the grace
    # period, which the comparison also mentions, but so does the card's own passage.
    shown = [Shown("compare#0", "compare", 1, "星河卡年费多少")]

    outcome = runtime.retriever.search(cards_kb, SearchRequest(["星河卡免息期最长多少天"], k=5,
                                       entity_ids=[GALAXY], readmittable=shown))

    assert found_ids(outcome)[0] == "grace#0"
    assert "compare#0" not in found_ids(outcome)
    assert outcome.trace["novelty"]["left_out"] >= 1
    assert outcome.trace["novelty"]["returned"] == []


def test_a_shown_passage_comes_back_marked_when_no_unseen_one_answers_as_well(runtime, cards_kb):
    # The card's own grace-period passage was shown (for the fee question); now it is the
    # best answer, and the comparison (unseen, about two cards) is no better.
    shown = [Shown("grace#0", "grace", 1, "星河卡年费多少")]

    outcome = runtime.retriever.search(cards_kb, SearchRequest(["星河卡免息期最长多少天"], k=5,
                                       entity_ids=[GALAXY], readmittable=shown))

    assert found_ids(outcome)[0] == "grace#0"
    assert outcome.found[0].seen_in_turn == 1
    assert outcome.trace["novelty"]["returned"] == [{"chunk_id": "grace#0", "seen_in_turn": 1}]


def test_a_follow_up_whose_answer_was_shown_gets_it_back_instead_of_no_answer(
        runtime, milvus_index, cards_kb):
    # A strict novelty test (everything must hold all new words) and every passage of
    # the card shown before: nothing unseen is left to answer with.
    strict = Retriever(milvus_index, config=RetrieverConfig(novelty_min_gain=1.0))
    shown = [Shown(f"{doc}#{n}", doc, 1, "星河卡年费多少") for doc, n, *_ in PASSAGES]

    # (Not "多少钱": a price asked so is answered by any amount, which the passage holds.)
    outcome = strict.search(cards_kb, SearchRequest(["星河卡ATM取现手续费最低是几块"], k=5,
                            entity_ids=[GALAXY], readmittable=shown))

    assert not outcome.no_answer
    assert found_ids(outcome) == ["atm#0"]
    assert outcome.found[0].seen_in_turn == 1
    assert outcome.trace["novelty"]["returned_rather_than_abstain"] == "atm#0"

    # A question nothing shown holds anything of (a card version no passage has) still
    # gets no answer rather than a repeat.
    none = strict.search(cards_kb, SearchRequest(["星河卡钻石版年费多少"], k=5, entity_ids=[GALAXY],
                         readmittable=shown))
    assert none.no_answer and not none.found


def test_places_the_per_document_cap_leaves_empty_are_filled_by_further_chunks(runtime, cards_kb):
    # Only the guide's chunks hold these words: one chunk per document would answer
    # with one passage and leave the other places empty.
    outcome = runtime.retriever.search(cards_kb, SearchRequest(["云闪付 工本费 积分"], k=5))

    assert set(found_ids(outcome)) == {"guide#0", "guide#1", "guide#2"}


# Two passages of the card that answer the grace period equally well.
TWIN_PASSAGES = [*PASSAGES,
                 ("faq", 0, [GALAXY], "星河卡常见问题", "星河卡免息期最长56天，账单日后20天内还款。")]


@pytest.fixture
def twins_kb(kb, neo4j_store, milvus_index):
    return load_kb(kb, neo4j_store, milvus_index, ONTOLOGY, card_passages(TWIN_PASSAGES))


def test_of_two_shown_chunks_that_answer_as_well_only_one_comes_back(runtime, milvus_index,
                                                                     twins_kb):
    # Both were shown for the fee question; both answer the grace period. One repeat is
    # the answer; the second would repeat what the user has read and gives its place to
    # an unseen passage.
    shown = [Shown("grace#0", "grace", 1, "星河卡年费多少"), Shown("faq#0", "faq", 1, "星河卡年费多少")]

    outcome = runtime.retriever.search(twins_kb, SearchRequest(["星河卡免息期最长多少天"], k=5,
                                       entity_ids=[GALAXY], readmittable=shown))

    back = [f.hit.chunk_id for f in outcome.found if f.seen_in_turn is not None]
    assert len(back) == 1 and back[0] in {"grace#0", "faq#0"}
    assert found_ids(outcome)[0] == back[0]
    assert len(outcome.found) == 5

    # The limit is a setting: with two allowed (within the first five places), both come back.
    both = Retriever(milvus_index, config=RetrieverConfig(novelty_most=2, novelty_rank=5)).search(
        twins_kb, SearchRequest(["星河卡免息期最长多少天"], k=5, entity_ids=[GALAXY], readmittable=shown))
    assert {f.hit.chunk_id for f in both.found if f.seen_in_turn is not None} == {"grace#0", "faq#0"}


def test_a_variant_no_passage_names_brings_nothing_shown_back(runtime, milvus_index, cards_kb):
    # Every passage was shown for the grace-period question, and nothing unseen is left:
    # a follow-up on the fee gets the fee passage back rather than no answer, but a
    # follow-up on the fee of a 钻石版 no passage names gets nothing shown back.
    strict = Retriever(milvus_index, config=RetrieverConfig(novelty_min_gain=1.0))
    shown = [Shown(f"{doc}#{n}", doc, 1, "星河卡免息期最长多少天") for doc, n, *_ in PASSAGES]

    known = strict.search(cards_kb, SearchRequest(["星河卡年费多少"], k=5, entity_ids=[GALAXY],
                                                  readmittable=shown))
    unknown = strict.search(cards_kb, SearchRequest(["星河卡钻石版年费多少"], k=5,
                                                    entity_ids=[GALAXY], readmittable=shown))

    assert {"chunk_id": "fee#0", "seen_in_turn": 1} in known.trace["novelty"]["returned"]
    assert "returned_rather_than_abstain" not in unknown.trace["novelty"]
    assert unknown.trace["novelty"]["returned"] == []


def test_a_follow_up_naming_only_a_time_is_not_searched_alone_over_the_kb(runtime, milvus_index,
                                                                          cards_kb):
    # Every passage of the card was shown: the rewrite finds nothing unseen. The user's
    # own words (那7月的呢) name only a month; searched alone, without the card, they
    # would find any passage that names July. The turn answers nothing instead.
    from retrieval.dual_path import dual_search

    strict = Retriever(milvus_index, config=RetrieverConfig(novelty_min_gain=1.0))
    shown = [Shown(f"{doc}#{n}", doc, 1, "星河卡年费多少") for doc, n, *_ in PASSAGES]

    request = SearchRequest(["星河卡7月的年费多少"], k=5, entity_ids=[GALAXY], readmittable=shown)
    outcome = dual_search(strict, cards_kb, request, "那7月的呢", weak_below=0.3)
    words = dual_search(strict, cards_kb, request, "那7月的取现手续费呢", weak_below=0.3)

    assert outcome.no_answer and outcome.found == ()
    assert outcome.trace["dual_path"]["ran"] is False
    assert "only a time" in outcome.trace["dual_path"]["skipped"]
    assert words.trace["dual_path"]["ran"] is True
