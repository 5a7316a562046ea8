"""What is new in *this* turn, on real Milvus Lite (retrieval/novelty.py): a shown chunk
does not come back for words the turn just before already asked (an intermediate turn's
additions are not news), and of several shown chunks that hold the new words, the one
about the asked card takes the place, not a passage that covers several cards."""

from __future__ import annotations

import pytest

from retrieval.history import Carried
from retrieval.novelty import Shown
from retrieval.request import SearchRequest
from tests.services import GALAXY, TWO_CARDS, TWO_CARD_PASSAGES, card_passages, found_ids, load_kb

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

ONTOLOGY = TWO_CARDS
# (doc, chunk, entities, title, text)
PASSAGES = [*TWO_CARD_PASSAGES,
    ("refund", 0, [GALAXY], "星河卡退款", "星河卡发卡后30天内销卡，可申请退还已收年费。"),
    ("guide", 0, [GALAXY], "星河卡用卡指南", "星河卡可在手机银行绑定，支持云闪付。"),
]


@pytest.fixture
def cards_kb(kb, neo4j_store, milvus_index):
    return load_kb(kb, neo4j_store, milvus_index, ONTOLOGY, card_passages(PASSAGES))


def test_words_the_turn_before_asked_do_not_bring_back_a_chunk_shown_earlier(runtime, cards_kb):
    # Turn 1 (the fee) showed the ATM passage 4th; turn 2 asked about the cash-withdrawal
    # fee; turn 3 asks whether that fee is refunded. Against turn 1 alone, 取现 and 手续费
    # look new and the ATM passage holds them; against turn 2 only 退 is new, and the
    # ATM passage does not hold it: it is not shown again.
    shown = [Shown("atm#0", "atm", 1, "星河卡年费多少")]
    asked = ["星河卡取现手续费能退吗"]
    before = "星河卡取现手续费多少"

    outcome = runtime.retriever.search(cards_kb, SearchRequest(
        asked, k=5, entity_ids=[GALAXY], readmittable=shown,
        context=Carried(("星河卡年费多少", before))))
    assert "atm#0" not in found_ids(outcome)
    assert found_ids(outcome)[0] == "refund#0"
    assert outcome.trace["novelty"]["returned"] == []

    # Without the turn before (a first follow-up of the fee question), the same words are
    # new and the ATM passage answers them: it comes back, marked.
    alone = runtime.retriever.search(cards_kb, SearchRequest(["星河卡取现手续费多少"], k=5,
                                     entity_ids=[GALAXY], readmittable=shown, known_words=()))
    assert found_ids(alone)[0] == "atm#0"
    assert alone.found[0].seen_in_turn == 1


def test_of_two_shown_chunks_with_the_new_words_the_asked_cards_own_takes_the_place(
        runtime, cards_kb):
    # Turn 1 (the fee) showed the comparison of two cards and the card's grace-period
    # passage; both hold 免息期, which turn 2 asks. The card's own passage answers it.
    shown = [Shown("compare#0", "compare", 1, "星河卡年费多少"),
             Shown("grace#0", "grace", 1, "星河卡年费多少")]

    outcome = runtime.retriever.search(cards_kb, SearchRequest(["星河卡免息期最长多少天"], k=5,
                                       entity_ids=[GALAXY], readmittable=shown))

    assert found_ids(outcome)[0] == "grace#0"
    assert outcome.found[0].seen_in_turn == 1
    assert "compare#0" not in found_ids(outcome)
    assert [r["chunk_id"] for r in outcome.trace["novelty"]["returned"]] == ["grace#0"]


def test_a_revisit_brings_back_the_asked_cards_own_passage_of_two_that_match_equally(
        runtime, cards_kb):
    # Both the comparison of two cards and the card's own fee passage were shown and both
    # hold everything "that fee passage again" names; the card's own one is what it asks.
    shown = [Shown("compare#0", "compare", 1, "星河卡年费多少"),
             Shown("fee#0", "fee", 1, "星河卡年费多少")]

    outcome = runtime.retriever.search(cards_kb, SearchRequest(["星河卡年费"], k=5, entity_ids=[GALAXY],
                                       readmittable=shown, readmit="all"))

    assert found_ids(outcome)[0] == "fee#0"
    assert outcome.found[0].seen_in_turn == 1
    assert [r["chunk_id"] for r in outcome.trace["novelty"]["returned"]] == ["fee#0"]
