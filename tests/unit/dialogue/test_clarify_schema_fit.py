"""schema_fit: the question's words (names left out) against the names of what each
candidate has (types, attribute names, relation types, values' items). Two entities share
a name; the question asks a relation only one of them has, in English and in Chinese."""

from __future__ import annotations

import json

import pytest

from dialogue.policy.clarify_model import DecisionInput, FeatureExtractor, decision_features
from kg.aliases import AliasSnapshot
from kg.ontology import parse_ontology

ONTOLOGY = [
    {"kind": "type", "name": "people.person"},
    {"kind": "type", "name": "Venue", "attributes": []},
    {"kind": "entity", "id": "p.venn.1", "name": "Orla Venn", "type": "people.person",
     "aliases": ["venn"], "attributes": {"roles": "music.artist music.instrumentalist people.person"}},
    {"kind": "entity", "id": "p.venn.2", "name": "Orla Venn", "type": "people.person",
     "aliases": ["venn"], "attributes": {"roles": "film.director people.person"}},
    {"kind": "entity", "id": "v.lake.1", "name": "青澜湖", "type": "Venue",
     "attributes": {"早餐时段": "七点到十点"}},
    {"kind": "entity", "id": "v.lake.2", "name": "青澜湖", "type": "Venue",
     "attributes": {"门票价格": "二十元"}},
]
VENN = ("p.venn.1", "p.venn.2")
LAKE = ("v.lake.1", "v.lake.2")


@pytest.fixture(scope="module")
def snapshot() -> AliasSnapshot:
    return AliasSnapshot.from_ontology("t", 1, parse_ontology(
        [json.dumps(line, ensure_ascii=False) for line in ONTOLOGY]))


def fit(snapshot: AliasSnapshot, question: str, mention: str, candidates: tuple[str, ...]
        ) -> tuple[dict[str, float], dict[str, float]]:
    per, sets, _, _ = FeatureExtractor().extract(
        DecisionInput(question=question, mention=mention, kind="alias", candidates=candidates),
        snapshot)
    return {c: per[c]["schema_fit"] for c in candidates}, decision_features(per, sets)


@pytest.mark.parametrize("question, fits", [
    # "instruments" begins "instrumentalist": the stems meet although the words differ.
    ("Which instruments did Orla Venn play?", "p.venn.1"),
    ("Which films were directed by Orla Venn?", "p.venn.2"),
])
def test_the_candidate_with_the_relation_asked_fits_the_question_in_english(
        snapshot, question, fits):
    got, features = fit(snapshot, question, "Orla Venn", VENN)
    other = next(c for c in VENN if c != fits)
    assert got[fits] > 0.0 == got[other]
    assert features["gap_schema_fit"] == got[fits] and features["low_schema_fit"] == 0.0


def test_the_candidate_with_the_attribute_asked_fits_the_question_in_chinese(snapshot):
    got, _ = fit(snapshot, "青澜湖的早餐几点开始", "青澜湖", LAKE)
    assert got["v.lake.1"] > 0.0 == got["v.lake.2"]
    got, _ = fit(snapshot, "青澜湖门票多少钱", "青澜湖", LAKE)
    assert got["v.lake.2"] > 0.0 == got["v.lake.1"]


def test_short_words_and_the_names_meet_no_relation(snapshot):
    # "art" begins "artist" by chance only: below five letters a stem meets only itself;
    # the shared name itself is never evidence.
    got, features = fit(snapshot, "Is Orla Venn into art?", "Orla Venn", VENN)
    assert got == {"p.venn.1": 0.0, "p.venn.2": 0.0} and features["gap_schema_fit"] == 0.0
