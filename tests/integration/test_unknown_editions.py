"""A question about an edition the kb never names (a version or a year written with its
kind: 8.0版, 2023年) answers ``no_answer``, on real Neo4j and Milvus Lite
(retrieval/novelty.py ``unknown_editions``): what the search finds is about the editions
the kb does hold. A number of another kind (3岁) and an edition the kb names are not
judged so.

Each behaviour of this family is a case of tests/unit/dialogue/cases/editions.json, run
on the in-memory stores, in both languages where the behaviour exists in both. The
search's judgement runs here on Milvus's term statistics.
"""

from __future__ import annotations

import pytest

from tests.services import GALAXY, GALAXY_CARD, card_passages, load_kb
from retrieval.request import SearchRequest

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

PASSAGES = [
    ("fee-2024", 0, [GALAXY], "收费标准（2024版）", "2024版收费标准：星河卡主卡年费300元。"),
    ("fee-2025", 0, [GALAXY], "收费标准（2025版）", "2025版收费标准：星河卡主卡年费200元，2025年1月1日起执行。"),
    ("kids", 0, [GALAXY], "星河卡附属卡", "星河卡附属卡：年满14岁的家人可以申请，附属卡免年费。"),
]


@pytest.fixture
def fees_kb(kb, neo4j_store, milvus_index):
    return load_kb(kb, neo4j_store, milvus_index, GALAXY_CARD, card_passages(PASSAGES))


def test_an_edition_the_kb_never_names_gets_no_answer(runtime, fees_kb):
    unknown = runtime.retriever.search(fees_kb, SearchRequest(["星河卡2023年的年费是多少"], k=5,
                                       entity_ids=[GALAXY]))
    known = runtime.retriever.search(fees_kb, SearchRequest(["星河卡2025版的年费是多少"], k=5,
                                     entity_ids=[GALAXY]))

    assert unknown.no_answer and unknown.found == ()
    assert unknown.trace["no_answer"]["unknown_editions"] == ["2023年"]
    assert unknown.trace["no_answer"]["withheld"]  # what was found is said in the trace
    assert not known.no_answer
    assert known.found[0].hit.chunk_id == "fee-2025#0"


def test_a_number_of_another_kind_is_not_an_edition(runtime, fees_kb):
    # 12岁 is in no passage either; it is a value the question gives.
    outcome = runtime.retriever.search(fees_kb, SearchRequest(["星河卡附属卡12岁的孩子能申请吗"], k=5,
                                       entity_ids=[GALAXY]))

    assert not outcome.no_answer
    assert "unknown_editions" not in outcome.trace["no_answer"]
