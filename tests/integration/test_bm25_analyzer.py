"""The BM25 analyzer follows the corpus language, on a real Milvus Lite: an English kb
matches across case and inflection, a Chinese kb keeps the Chinese analyzer, and a
collection keeps the analyzer it was created with."""

from __future__ import annotations

import json

import pytest

from common.errors import ConfigurationError
from kg.aliases import AliasSnapshot
from kg.ontology import Ontology
from retrieval.ingest import ANALYZER_SAMPLE, ingest_corpus
from retrieval.milvus_index import MilvusIndex

pytestmark = pytest.mark.milvus

ENGLISH = [
    ("fee", "Library card fee", "A replacement card costs a fee of five euros at the desk."),
    ("trail", "Trail running", "Trail runners train on hills before racing in the mountains."),
    ("hours", "Opening hours", "The reading room opens at nine and closes at eight."),
    ("wifi", "Wireless network", "Visitors connect to the guest network with their card number."),
]
CHINESE = [
    ("fee", "借书证", "补办借书证需要交五元工本费，在服务台办理。"),
    ("hours", "开放时间", "阅览室每天九点开门，晚上八点关门。"),
    ("wifi", "无线网络", "读者用借书证号码登录访客网络。"),
]


def lines(docs: list[tuple[str, str, str]]) -> list[str]:
    return [json.dumps({"doc_id": d, "chunk_id": d, "title": t, "text": x}, ensure_ascii=False)
            for d, t, x in docs]


def ingest(index: MilvusIndex, kb: str, docs: list[tuple[str, str, str]],
           analyzer: str | None = None):
    return ingest_corpus(kb, lines(docs), index=index, analyzer=analyzer,
                         snapshot=AliasSnapshot.from_ontology(kb, 0, Ontology()))


def first_doc(index: MilvusIndex, kb: str, query: str) -> str | None:
    hits = index.search(kb, query, limit=3)
    return hits[0].doc_id if hits else None


def recorded_analyzer(milvus_uri: str, kb: str) -> str:
    """The analyzer another process reads from the collection's record."""
    other = MilvusIndex(milvus_uri)
    try:
        return other.analyzer(kb)
    finally:
        other.close()


def test_an_english_corpus_is_matched_across_case_and_inflection(lite_uri, lite_index, lite_kb):
    report = ingest(lite_index, lite_kb, ENGLISH)

    assert report.analyzer == "english"
    assert first_doc(lite_index, lite_kb, "Fees") == "fee"
    assert first_doc(lite_index, lite_kb, "RUNNING trails") == "trail"
    assert first_doc(lite_index, lite_kb, "when does it open") == "hours"
    # Recorded with the collection: another process reads the same analyzer.
    assert recorded_analyzer(lite_uri, lite_kb) == "english"


def test_a_chinese_corpus_keeps_the_chinese_analyzer(lite_uri, lite_index, lite_kb):
    report = ingest(lite_index, lite_kb, CHINESE)

    assert report.analyzer == "chinese"
    assert first_doc(lite_index, lite_kb, "借书证工本费") == "fee"
    assert first_doc(lite_index, lite_kb, "几点关门") == "hours"
    assert recorded_analyzer(lite_uri, lite_kb) == "chinese"


def test_a_collection_keeps_its_analyzer_and_an_explicit_other_one_is_refused(lite_index, lite_kb):
    ingest(lite_index, lite_kb, CHINESE)
    # Detection never changes an existing collection: English lines go in as they are.
    assert ingest(lite_index, lite_kb, ENGLISH[:1]).analyzer == "chinese"
    count = lite_index.count(lite_kb)

    with pytest.raises(ConfigurationError, match="--recreate --analyzer english"):
        ingest(lite_index, lite_kb, ENGLISH, analyzer="english")
    assert lite_index.count(lite_kb) == count


def test_an_explicit_analyzer_overrides_the_detected_one(lite_index, lite_kb):
    report = ingest(lite_index, lite_kb, ENGLISH, analyzer="chinese")

    assert report.analyzer == "chinese"
    # The Chinese analyzer neither folds case nor stems English words.
    assert first_doc(lite_index, lite_kb, "Fees") is None


def test_an_unknown_analyzer_is_refused_before_anything_is_created(lite_index, lite_kb):
    with pytest.raises(ConfigurationError, match="chinese, english"):
        ingest(lite_index, lite_kb, ENGLISH, analyzer="french")
    assert not lite_index.has_collection(lite_kb)


def test_a_large_corpus_is_read_as_its_bulk_not_its_head(lite_index, lite_kb):
    # Beyond ANALYZER_SAMPLE chunks the language is judged on a sample: spread over the file,
    # an English head does not decide for a corpus that is Chinese after it.
    english = [(f"en{i}", "Opening hours", "The reading room opens at nine.") for i in range(ANALYZER_SAMPLE)]
    chinese = [(f"zh{i}", "开放时间", "阅览室每天九点开门，晚上八点关门。") for i in range(ANALYZER_SAMPLE)]

    report = ingest(lite_index, lite_kb, english + chinese)

    assert report.chunks == len(english) + len(chinese)
    assert report.analyzer == "chinese"
    assert first_doc(lite_index, lite_kb, "阅览室几点开门").startswith("zh")
