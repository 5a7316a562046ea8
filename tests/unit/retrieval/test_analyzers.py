"""The BM25 analyzer chosen by the corpus language, and the in-memory index following it."""

from __future__ import annotations

import pytest

from common.errors import ConfigurationError
from retrieval.analyzers import check_analyzer, detect_analyzer
from retrieval.memory_index import InMemoryIndex
from retrieval.models import Chunk


@pytest.mark.parametrize(("texts", "expected"), [
    (["A replacement card costs a fee of five euros."], "english"),
    (["补办借书证需要交五元工本费。"], "chinese"),
    # A Chinese corpus quoting English names stays Chinese, and the reverse.
    (["用 Wi-Fi 登录访客网络，密码是借书证号码的后六位。"], "chinese"),
    (["The 借书证 (library card) costs a fee of five euros at the front desk."], "english"),
    ([], "english"),
])
def test_the_analyzer_follows_the_corpus_script(texts, expected):
    assert detect_analyzer(texts) == expected


def test_an_unknown_analyzer_names_the_known_ones():
    with pytest.raises(ConfigurationError, match="chinese, english"):
        check_analyzer("french")


def chunk(doc: str, text: str) -> Chunk:
    return Chunk(chunk_id=doc, doc_id=doc, title="", text=text)


@pytest.mark.parametrize(("analyzer", "found"), [("english", ["fee"]), ("chinese", [])])
def test_the_in_memory_index_folds_case_and_inflection_only_for_english(analyzer, found):
    index = InMemoryIndex()
    index.ensure_collection("kb", analyzer=analyzer)
    index.upsert("kb", [chunk("fee", "A replacement card costs a fee of five euros."),
                        chunk("hours", "The reading room opens at nine.")])

    assert index.analyzer("kb") == analyzer
    assert [h.doc_id for h in index.search("kb", "Fees", limit=3)] == found


def test_an_in_memory_kb_keeps_its_analyzer():
    index = InMemoryIndex()
    index.ensure_collection("kb", analyzer="chinese")
    index.ensure_collection("kb")
    with pytest.raises(ConfigurationError, match="--recreate"):
        index.ensure_collection("kb", analyzer="english")


def test_the_in_memory_index_reads_a_number_and_the_chinese_after_it_apart():
    # As the segmenter does: a question that opens with a year still shares its words
    # with the passage (one word "2024年会员费…" would share none).
    index = InMemoryIndex()
    index.ensure_collection("kb", analyzer="chinese")
    index.upsert("kb", [chunk("fee", "会员年费：2025年为120元，2024年为100元。"),
                        chunk("hours", "门店营业时间为每天九点到晚上九点。")])

    assert [h.doc_id for h in index.search("kb", "2024年会员年费多少", limit=3)] == ["fee"]
