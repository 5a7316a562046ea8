"""A follow-up about the same subjects whose answer was shown before, asked in other
words, on real Milvus Lite (retrieval/novelty.py ``repeat_reason``, the search's
"rather than no answer" step): novelty leaves the shown passage out, since it holds none
of the newly asked words; when nothing unseen answers, it comes back, marked, with the
reason in the trace, rather than ``no_answer``. Both languages; invented data."""

from __future__ import annotations

import pytest

from retrieval.novelty import Shown
from retrieval.request import SearchRequest
from tests.services import card_passages, found_ids, load_kb

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

ANNUAL, EVENING = "pass.annual", "pass.evening"


def ontology(annual: str, evening: str) -> list[dict]:
    return [{"kind": "type", "name": "Ticket", "attributes": [], "parent": None},
            *({"kind": "entity", "id": eid, "name": name, "type": "Ticket", "aliases": [],
               "description": "", "parent": None, "attributes": {}}
              for eid, name in ((ANNUAL, annual), (EVENING, evening)))]


ZH_PASSAGES = [
    ("annual", 0, [ANNUAL], "澄湖美术馆年卡",
     "澄湖美术馆年卡售价260元，一年内不限次入馆。持年卡者不可同时享受夜场票优惠。"),
    ("evening", 0, [EVENING], "澄湖美术馆夜场票", "夜场票每周五18:00至21:30开放，票价35元。"),
    ("shop", 0, [], "文创商店", "文创商店位于一层东侧，营业至闭馆前半小时，7月起延长至20:00。"),
    ("locker", 0, [], "寄存服务", "入口处设自助寄存柜，大件行李请交服务台保管。"),
]
EN_PASSAGES = [
    ("annual", 0, [ANNUAL], "Lakeside Gallery annual pass",
     "The annual pass costs $90 and admits its holder any day for a year. It cannot be "
     "combined with evening ticket discounts."),
    ("evening", 0, [EVENING], "Lakeside Gallery evening ticket",
     "Evening tickets are sold for Friday openings from 6 pm to 9:30 pm at $12."),
]
# (No untagged English passage: when the entity filter is relaxed, one fills the place
# instead, since coverage reads English by its character pairs, which any English text
# shares enough of; docs/retrieval.md, "Rather than no answer".)

NAMES = {"zh": {ANNUAL: ["澄湖美术馆年卡", "年卡"], EVENING: ["澄湖美术馆夜场票", "夜场票"]},
         "en": {ANNUAL: ["Lakeside Gallery annual pass", "annual pass"],
                EVENING: ["Lakeside Gallery evening ticket", "evening ticket"]}}
# What the turn before asked of both passes (it showed both passages), and the follow-up
# about both together that the annual pass's passage answers in other words (同时享受 for
# 一起用, combined for together).
ASKED = {"zh": ("澄湖美术馆年卡和澄湖美术馆夜场票各多少钱", "澄湖美术馆年卡能和澄湖美术馆夜场票一起用吗"),
         "en": ("How much are the Lakeside Gallery annual pass and the Lakeside Gallery evening "
                "ticket?",
                "can I use the Lakeside Gallery annual pass together with the Lakeside Gallery "
                "evening ticket?")}


@pytest.fixture(params=["zh", "en"])
def lang(request) -> str:
    return request.param


# A passage on using both passes together, which the follow-up has not been shown.
BOTH = {"zh": ("both", 0, [ANNUAL, EVENING], "澄湖美术馆年卡和夜场票",
               "年卡能和夜场票一起用吗？不能一起用，夜场票按原价购买。"),
        "en": ("both", 0, [ANNUAL, EVENING], "Annual pass with an evening ticket",
               "Can I use the annual pass together with an evening ticket? Not together: "
               "evening tickets are then at full price.")}


def load_gallery(kb, neo4j_store, milvus_index, lang: str, *extra) -> str:
    names = NAMES[lang]
    passages = [*(ZH_PASSAGES if lang == "zh" else EN_PASSAGES), *extra]
    return load_kb(kb, neo4j_store, milvus_index, ontology(names[ANNUAL][0], names[EVENING][0]),
                   card_passages(passages))


@pytest.fixture
def gallery_kb(kb, neo4j_store, milvus_index, lang):
    return load_gallery(kb, neo4j_store, milvus_index, lang)


@pytest.fixture
def gallery_with_answer_kb(kb, neo4j_store, milvus_index, lang):
    return load_gallery(kb, neo4j_store, milvus_index, lang, BOTH[lang])


def shown_before(lang: str) -> list[Shown]:
    first = ASKED[lang][0]
    return [Shown("annual#0", "annual", 1, first), Shown("evening#0", "evening", 1, first)]


def test_a_shown_passage_that_answers_in_other_words_comes_back_rather_than_no_answer(
        runtime, gallery_kb, lang):
    outcome = runtime.retriever.search(gallery_kb, SearchRequest(
        [ASKED[lang][1]], k=5, entity_ids=[ANNUAL, EVENING], names=NAMES[lang],
        readmittable=shown_before(lang)))

    assert not outcome.no_answer
    assert found_ids(outcome)[0] == "annual#0"
    assert outcome.found[0].seen_in_turn == 1
    novelty = outcome.trace["novelty"]
    assert novelty["returned_rather_than_abstain"] == "annual#0"
    (back,) = [r for r in novelty["returned"] if r["chunk_id"] == "annual#0"]
    assert "rather than no answer" in back["why"] and "turn's entities" in back["why"]


def test_a_passage_about_only_one_of_the_subjects_does_not_come_back(runtime, gallery_kb, lang):
    # The evening ticket's own passage says nothing of the annual pass: asked about both
    # together, and shown alone before, it is no answer.
    shown = [Shown("evening#0", "evening", 1, ASKED[lang][0])]
    others = [Shown("annual#0", "annual", 1, ASKED[lang][0])]

    outcome = runtime.retriever.search(gallery_kb, SearchRequest(
        [ASKED[lang][1]], k=5, entity_ids=[ANNUAL, EVENING], names=NAMES[lang],
        readmittable=shown, exclude_chunk_ids=[s.chunk_id for s in others]))

    assert "evening#0" not in found_ids(outcome)


# Asked of the annual pass alone, about what its passage does not state: how many guests
# it admits (a count) and whether July's price differs (a month it does not name).
NOT_STATED = {"zh": ["澄湖美术馆年卡能带几个人", "澄湖美术馆年卡7月有变化吗"],
              "en": ["how many guests can the Lakeside Gallery annual pass bring?",
                     "is the Lakeside Gallery annual pass different in July 2026?"]}


@pytest.mark.parametrize("which", [0, 1], ids=["a count", "a month"])
def test_what_the_shown_passage_does_not_state_does_not_bring_it_back(
        runtime, gallery_kb, lang, which):
    # About the pass, but not answering: the passage stays out.
    outcome = runtime.retriever.search(gallery_kb, SearchRequest(
        [NOT_STATED[lang][which]], k=5, entity_ids=[ANNUAL], names=NAMES[lang],
        readmittable=shown_before(lang)))

    assert "annual#0" not in found_ids(outcome)
    assert "returned_rather_than_abstain" not in outcome.trace["novelty"]


def test_an_unseen_passage_that_answers_is_shown_and_not_the_repeat(
        runtime, gallery_with_answer_kb, lang):
    outcome = runtime.retriever.search(gallery_with_answer_kb, SearchRequest(
        [ASKED[lang][1]], k=5, entity_ids=[ANNUAL, EVENING], names=NAMES[lang],
        readmittable=shown_before(lang)))

    assert found_ids(outcome)[0] == "both#0"
    assert "annual#0" not in found_ids(outcome)
    assert "returned_rather_than_abstain" not in outcome.trace["novelty"]
