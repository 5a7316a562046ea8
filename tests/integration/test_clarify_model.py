"""The clarify-or-resolve decision against the real services: its features come from
the kb in Neo4j (type attributes, relations, confusable pairs) and the chunks in
Milvus Lite; its verdict decides whether the turn asks; every verdict is in the
trace; a kb recalibrated from its recorded answers uses its own threshold."""

from __future__ import annotations

import json
import math
import uuid

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.runtime import Runtime, open_clarifier, open_session_store
from dialogue.policy.clarify_calibrate import KbEvidence
from dialogue.policy.clarify_model import (FEATURES, ClarifyParams, DecisionInput,
                                           decision_features, feature_value, label_uses_e5)
from dialogue.engine import EngineConfig, TurnEngine
from kg.aliases import SnapshotCache
from kg.clarification_log import ClarificationLog
from retrieval.models import Chunk
from retrieval.search import Retriever
from tests.conftest import ADMIN, QUERY

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

ONTOLOGY = [
    {"kind": "type", "name": "Card", "attributes": ["annual fee", "credit limit"]},
    {"kind": "type", "name": "Branch", "attributes": ["opening hours"]},
    {"kind": "type", "name": "Company"},
    {"kind": "entity", "id": "card.gold", "name": "Gold Card", "type": "Card",
     "aliases": ["Gold"], "description": "A personal credit card with airport lounge access."},
    {"kind": "entity", "id": "card.gold.biz", "name": "Gold Business Card", "type": "Card",
     "aliases": ["Gold"], "description": "A corporate credit card for company expenses."},
    {"kind": "entity", "id": "branch.gold", "name": "Gold Street Branch", "type": "Branch",
     "aliases": ["Gold"], "description": "The bank's branch on Gold Street in the old town."},
    {"kind": "entity", "id": "org.acme", "name": "Acme Corp", "type": "Company"},
    {"kind": "relation", "from": "card.gold.biz", "type": "ISSUED_TO", "to": "org.acme"},
    {"kind": "confusable", "a": "card.gold", "b": "card.gold.biz"},
]
CHUNKS = [
    Chunk("gold:1", "gold", "Gold Card", "The Gold Card annual fee is 100 yuan, waived after "
          "six purchases a year.", entity_ids=("card.gold",)),
    Chunk("biz:1", "biz", "Gold Business Card", "Companies get a credit limit of up to 500,000 "
          "yuan on the Gold Business Card.", entity_ids=("card.gold.biz",)),
    Chunk("branch:1", "branch", "Gold Street Branch", "Gold Street Branch opening hours are "
          "9:00 to 17:00 on weekdays.", entity_ids=("branch.gold",)),
]
CARDS = ("card.gold", "card.gold.biz")
ALL = ("branch.gold", "card.gold", "card.gold.biz")


@pytest.fixture
def bank(kb, neo4j_store, milvus_index):
    neo4j_store.import_ontology(kb, [json.dumps(line) for line in ONTOLOGY])
    milvus_index.ensure_collection(kb)
    milvus_index.upsert(kb, CHUNKS)
    return kb


def build(settings, neo4j_store, milvus_index, threshold: float | None = None) -> Runtime:
    """A runtime whose engine decides with the clarify model (threshold as given)."""
    settings = settings.model_copy(update={"clarify": settings.clarify.model_copy(
        update={"threshold": threshold, "priors_ttl_seconds": 0.0, "semantic": "auto"})})
    sessions = open_session_store(settings)
    snapshots = SnapshotCache(neo4j_store, check_interval=0.0)
    retriever = Retriever(milvus_index)
    evidence = KbEvidence(ClarificationLog(neo4j_store), ttl=0.0)
    clarifier = open_clarifier(settings, None, milvus_index, evidence)
    engine = TurnEngine(snapshots, retriever, sessions, EngineConfig(), clarifier=clarifier)
    return Runtime(settings, neo4j_store, snapshots, milvus_index, sessions, retriever, engine,
                   evidence)


@pytest.fixture
def make_runtime(settings, neo4j_store, milvus_index):
    built: list[Runtime] = []

    def make(threshold: float | None = None) -> Runtime:
        built.append(build(settings, neo4j_store, milvus_index, threshold))
        return built[-1]

    yield make
    for r in built:
        r.clarifications.close()
        r.retagger.close()
        r.sessions.close()


def session() -> str:
    return f"s-{uuid.uuid4().hex[:10]}"


def decision(result) -> dict:
    """The clarify model's verdict on the turn's one ambiguous link, as the trace shows it."""
    [judged] = result.trace["clarify_decisions"]
    return judged["features"]


def test_features_come_from_the_kb_and_its_chunks(bank, make_runtime):
    runtime = make_runtime(threshold=0.001)  # always asks: the features are what is tested here
    result = runtime.engine.handle(bank, session(), "What is the annual fee of Gold?")
    verdict = decision(result)
    per = verdict["candidates"]
    assert set(per) == set(ALL)
    # The type's attributes: both cards have an annual fee, the branch does not.
    assert per["card.gold"]["attribute_fit"] == per["card.gold.biz"]["attribute_fit"] == 1.0
    assert per["branch.gold"]["attribute_fit"] == 0.0
    # The chunks tagged with each: only the Gold Card's speaks of the annual fee.
    assert per["card.gold"]["chunk_attribute"] == 1.0
    assert per["card.gold.biz"]["chunk_attribute"] == per["branch.gold"]["chunk_attribute"] == 0.0
    assert per["card.gold"]["chunk_fit"] > per["card.gold.biz"]["chunk_fit"]
    # The bundled e5 compared the question with each profile.
    assert label_uses_e5(verdict["params"])
    assert all(-1.0 <= p["semantic_profile"] <= 1.0 and p["semantic_profile"] != 0.0
               for p in per.values())
    # The set: a declared confusable pair among them, three candidates, an attribute asked.
    f = verdict["features"]
    assert set(FEATURES) <= set(f)  # the model's features, and the e5 levels for the trace
    assert f["confusable"] == 1.0 and f["n_candidates"] == 3.0 and f["attributes_asked"] == 1.0
    assert f["same_type"] == 0.0 and f["gap_attribute_fit"] == 1.0
    # It asked, with every candidate offered, and said why in the trace.
    assert result.action == "clarify"
    assert sorted(o.id for o in result.clarification.options) == list(ALL)
    assert verdict["clarify"] is True and verdict["score"] >= verdict["threshold"]


def test_relations_and_the_dialogue_shape_the_candidates(bank, make_runtime, neo4j_store):
    runtime = make_runtime(threshold=0.001)
    snapshot = runtime.snapshots.get(bank)
    extractor = runtime.engine._policy.gate.base.model.extractor
    asked = DecisionInput(question="Which Gold does Acme Corp use?", mention="Gold", kind="alias",
                          candidates=ALL)
    per, _, _, _ = extractor.extract(asked, snapshot)
    # Only the business card is ISSUED_TO Acme Corp in the ontology.
    assert per["card.gold.biz"]["relation_fit"] > 0.0
    assert per["card.gold"]["relation_fit"] == per["branch.gold"]["relation_fit"] == 0.0
    # In a turn, the related name said with the shared one settles it before the gate
    # (a resolver of dialogue/resolvers/ reads the relation): nothing is asked.
    result = runtime.engine.handle(bank, session(), "Which Gold does Acme Corp use?")
    assert result.action == "retrieve" and "card.gold.biz" in result.entities
    assert "clarify_decisions" not in result.trace

    item = DecisionInput(question="and its annual fee?", mention="", kind="implicit",
                         attributes=("annual fee",),
                         candidates=CARDS, focus=("card.gold",),
                         recent=(("card.gold.biz",), ("card.gold",)), negated=("card.gold.biz",))
    per, sets, notes, _ = extractor.extract(item, snapshot)
    assert per["card.gold"]["focus"] == 1.0 and per["card.gold.biz"]["focus"] == 0.0
    assert per["card.gold"]["recency"] == 1.0 and per["card.gold.biz"]["recency"] == 1 / 3
    assert per["card.gold.biz"]["corrected_away"] == 1.0 and per["card.gold"]["corrected_away"] == 0.0
    assert sets["implicit"] == 1.0 and sets["same_type"] == 1.0 and sets["confusable"] == 1.0
    assert notes == []


def test_the_facets_tell_whether_what_is_asked_applies_to_each(bank, make_runtime):
    """semantic_facet: the question against each candidate's facets read from Neo4j (its
    type, the type's attributes, its relation types, its attribute names and values)."""
    runtime = make_runtime(threshold=0.001)
    snapshot = runtime.snapshots.get(bank)
    extractor = runtime.engine._policy.gate.base.model.extractor
    cache = extractor._cache(snapshot)
    assert "opening hours" in cache.facets("branch.gold")
    assert "annual fee" in cache.facets("card.gold") and "opening hours" not in cache.facets("card.gold")
    assert "issued to" in cache.facets("card.gold.biz")  # the relation in Neo4j
    assert "issued to" not in cache.facets("card.gold")
    item = DecisionInput(question="When is Gold open, what are the opening hours?",
                         mention="Gold", kind="alias", candidates=ALL)
    per, _, notes, semantic = extractor.extract(item, snapshot)
    assert semantic and notes == []
    # Only the branch has opening hours: the question fits its facets best.
    assert per["branch.gold"]["semantic_facet"] > max(per[c]["semantic_facet"] for c in CARDS)
    # The candidates' vectors were kept: the next decision embeds only its question.
    kept = len(cache.facet_vectors)
    calls = []
    real = extractor.embedder.embed_passages
    extractor.embedder.embed_passages = lambda texts: calls.append(list(texts)) or real(texts)
    try:
        extractor.extract(DecisionInput(question="What is the annual fee of Gold?", mention="Gold",
                                        kind="alias", candidates=ALL), snapshot)
    finally:
        extractor.embedder.embed_passages = real
    assert calls == [] and len(cache.facet_vectors) == kept


def test_shared_and_own_facets_say_whether_what_is_asked_applies_to_both(bank, make_runtime):
    """semantic_shared / semantic_own and words_shared / words_own: the question against
    what every candidate has, and against what only one has (facets read from Neo4j)."""
    runtime = make_runtime(threshold=0.001)
    snapshot = runtime.snapshots.get(bank)
    extractor = runtime.engine._policy.gate.base.model.extractor
    cache = extractor._cache(snapshot)
    # Both cards' type has an annual fee; only the branch's has opening hours.
    fee = DecisionInput(question="What is the annual fee of Gold?", mention="Gold",
                        kind="alias", candidates=CARDS)
    per, sets, notes, semantic = extractor.extract(fee, snapshot)
    assert semantic and notes == []
    assert "annual" in cache.facet_tokens("card.gold")
    assert "annual" not in cache.facet_tokens("branch.gold")
    # Asked of the two cards, the fee is shared: the words fall among the shared ones.
    assert sets["words_shared"] > 0.0
    assert per["card.gold"]["words_own"] == per["card.gold.biz"]["words_own"] == 0.0
    assert 0.0 < sets["semantic_shared"] <= 1.0
    # The business card has a facet the personal one lacks (issued to), so its own best
    # facet is measured; neither falls below what they share by construction.
    assert per["card.gold.biz"]["semantic_own"] != 0.0
    # The facet that fits best (the annual fee of their type) is one they share: no margin.
    f = decision_features(per, sets)
    assert f["shared_margin"] == pytest.approx(0.0)
    hours = DecisionInput(question="What are the opening hours of Gold?", mention="Gold",
                          kind="alias", candidates=ALL)
    per, sets, _, _ = extractor.extract(hours, snapshot)
    # Opening hours belong to the branch alone: its own words and its own facets fit.
    assert per["branch.gold"]["words_own"] > 0.0
    assert per["card.gold"]["words_own"] == per["card.gold.biz"]["words_own"] == 0.0
    assert sets["words_shared"] == 0.0
    assert per["branch.gold"]["semantic_own"] > max(per[c]["semantic_own"] for c in CARDS)
    # The best fitting facet is the branch's own: what all share fits less, what one has more.
    f = decision_features(per, sets)
    assert f["shared_margin"] < 0.0 < f["own_margin"]
    # How much the kb holds about each: facets (the business card has a relation more)
    # and description words.
    assert per["card.gold.biz"]["known_facets"] > per["card.gold"]["known_facets"] > 0.0
    assert all(p["known_text"] > 0.0 for p in per.values())


def test_the_candidate_the_dialogue_is_about_is_compared_with_the_others(bank, make_runtime):
    """lead_<f>: the most salient candidate's value minus the best other's (focus, then
    recency), and salience_tie when none is more salient than the rest."""
    runtime = make_runtime(threshold=0.001)
    snapshot = runtime.snapshots.get(bank)
    extractor = runtime.engine._policy.gate.base.model.extractor
    # The dialogue was about the branch; the question asks what only the cards have.
    item = DecisionInput(question="and its annual fee?", mention="", kind="implicit",
                         attributes=("annual fee",),
                         candidates=ALL, focus=("branch.gold", "card.gold"),
                         recent=(("card.gold.biz",), ("card.gold",), ("branch.gold",)))
    per, sets, _, _ = extractor.extract(item, snapshot)
    f = decision_features(per, sets)
    assert f["salience_tie"] == 0.0
    assert f["lead_attribute_fit"] == -1.0  # the branch has no annual fee, both cards have
    assert f["lead_semantic_own"] == pytest.approx(
        per["branch.gold"]["semantic_own"] - max(per[c]["semantic_own"] for c in CARDS))
    assert f["lead_known_facets"] == pytest.approx(
        per["branch.gold"]["known_facets"] - max(per[c]["known_facets"] for c in CARDS))
    # The dialogue was about the personal card: it leads, and the fee fits it as well as
    # the other card (same type): no lead on the attribute.
    item = DecisionInput(question="and its annual fee?", mention="", kind="implicit",
                         attributes=("annual fee",),
                         candidates=CARDS, focus=("card.gold",), recent=(("card.gold.biz",),))
    per, sets, _, _ = extractor.extract(item, snapshot)
    f = decision_features(per, sets)
    assert f["salience_tie"] == 0.0 and f["lead_attribute_fit"] == 0.0
    assert f["lead_known_facets"] < 0.0  # the business card has a relation more
    # Nothing said yet: no candidate leads.
    item = DecisionInput(question="What is the annual fee of Gold?", mention="Gold",
                         kind="alias", candidates=CARDS)
    f = decision_features(*extractor.extract(item, snapshot)[:2])
    assert f["salience_tie"] == 1.0
    assert all(f[name] == 0.0 for name in f if name.startswith("lead_"))


def test_a_candidate_without_description_and_the_tie_products_reach_the_score(
        bank, make_runtime, neo4j_store):
    """undescribed: a candidate the kb in Neo4j has no description of; and the shipped
    semantic set reads the e5 gaps times salience_tie, which move this decision's score."""
    coin = {"kind": "entity", "id": "coin.gold", "name": "Gold Coin", "type": "Company",
            "aliases": ["Gold"]}
    neo4j_store.import_ontology(bank, [json.dumps(line) for line in [*ONTOLOGY, coin]])
    runtime = make_runtime()
    snapshot = runtime.snapshots.get(bank)
    extractor = runtime.engine._policy.gate.base.model.extractor
    bare = DecisionInput(question="Who issues Gold?", mention="Gold", kind="alias",
                         candidates=("card.gold", "coin.gold"))
    per, sets, _, _ = extractor.extract(bare, snapshot)
    assert per["coin.gold"]["known_text"] == 0.0 < per["card.gold"]["known_text"]
    assert decision_features(per, sets)["undescribed"] == 1.0
    described = DecisionInput(question="Who issues Gold?", mention="Gold", kind="alias",
                              candidates=CARDS)
    assert decision_features(*extractor.extract(described, snapshot)[:2])["undescribed"] == 0.0

    verdict = decision(runtime.engine.handle(bank, session(), "What is the annual fee of Gold?"))
    f = verdict["features"]
    # The Gold Card has no attribute or relation of its own: the set fitted without
    # shared_facets scores (it reads the tie products too).
    key, semantic, unknown = ClarifyParams.load().coefficients(True, not f["own_facets_unknown"])
    assert key == "semantic_without_own_facets" and not unknown
    products = [i for i, n in enumerate(semantic.features) if "*" in n]
    assert products
    assert f["salience_tie"] == 1.0 and "undescribed" in f
    assert verdict["score"] == pytest.approx(1 / (1 + math.exp(-semantic.logit(f))), abs=1e-3)
    # The products' share of the logit on this decision (a name met out of the blue).
    share = sum(semantic.coef[i] * (feature_value(f, semantic.features[i]) - semantic.mean[i])
                / semantic.scale[i] for i in products)
    assert abs(share) > 0.01


def test_without_e5_the_lexical_set_decides_and_the_trace_says_so(bank, settings, neo4j_store,
                                                                    milvus_index):
    off = settings.model_copy(update={"clarify": settings.clarify.model_copy(
        update={"semantic": "off", "priors_ttl_seconds": 0.0})})
    model = open_clarifier(off, None, milvus_index, KbEvidence(ClarificationLog(neo4j_store), ttl=0.0))
    snapshot = SnapshotCache(neo4j_store, check_interval=0.0).get(bank)
    verdict = model.decide(DecisionInput(question="What is the annual fee of Gold?", mention="Gold",
                                         kind="alias", candidates=ALL), snapshot)
    # (The Gold Card has no facet of its own: the lexical set fitted without shared_facets.)
    assert verdict.params == "shipped:lexical:without_own_facets"
    assert verdict.threshold == ClarifyParams.load().threshold_for(semantic=False,
                                                                   facets_known=False)
    assert any("no e5 configured" in n for n in verdict.notes)
    assert all(c["semantic_facet"] == 0.0 for c in verdict.candidates.values())
    assert "notes" in verdict.as_trace()


def test_the_threshold_decides_between_asking_and_resolving(bank, make_runtime):
    # The shipped weights are all but certain here (three candidates, a declared
    # confusable pair); with zero weights every score is 0.5, so the threshold alone decides.
    low, high = make_runtime(threshold=0.4), make_runtime(threshold=0.6)
    for runtime in (low, high):
        runtime.engine._policy.gate.base.model.params = ClarifyParams.neutral()
    asks = low.engine.handle(bank, session(), "What is the annual fee of Gold?")
    resolves = high.engine.handle(bank, session(), "What is the annual fee of Gold?")
    asked, resolved = decision(asks), decision(resolves)
    assert asked["score"] == 0.5
    # The same evidence and score either way; only the operating point differs.
    assert asked["features"] == resolved["features"]
    assert asked["score"] == resolved["score"]
    assert resolves.action in ("retrieve", "no_answer") and resolves.clarification is None
    assert resolved["clarify"] is False
    # Resolved to the most supported candidate, which the linking trace and the entities show.
    assert resolves.entities == [resolved["options"][0]]
    [link] = [link for link in resolves.trace["links"] if link["mention"] == "Gold"]
    assert link["resolved"] == [resolved["options"][0]]
    assert "clarify model resolved it" in link["reason"]
    assert "clarify_gate" not in resolves.trace
    # The shipped threshold: the verdict follows the score.
    shipped = make_runtime().engine.handle(bank, session(), "What is the annual fee of Gold?")
    verdict = decision(shipped)
    assert verdict["threshold"] == ClarifyParams.load().threshold_for(
        semantic=True, facets_known=not verdict["features"]["own_facets_unknown"])
    assert verdict["clarify"] == (verdict["score"] >= verdict["threshold"])
    assert (shipped.action == "clarify") == verdict["clarify"]


def turn(client, kb, sid, text):
    resp = client.post(f"/v1/kbs/{kb}/sessions/{sid}/turns", json={"text": text}, headers=QUERY)
    assert resp.status_code == 200, resp.text
    return resp.json()


def test_a_kb_is_recalibrated_from_its_recorded_answers(bank, make_runtime, keyring):
    runtime = make_runtime(threshold=0.001)
    # Without the prior from the answers being recorded, each question keeps its score.
    runtime.engine._policy.gate.base.model.extractor.priors = None
    names = {"card.gold": "Gold Card", "card.gold.biz": "Gold Business Card",
             "branch.gold": "Gold Street Branch"}
    questions = ["What is the annual fee of Gold?", "Tell me about Gold",
                 "Is Gold good for travel?", "Gold credit limit for companies"]
    with TestClient(create_app(runtime=runtime, keyring=keyring)) as client:
        scores = {q: decision(runtime.engine.handle(bank, session(), q)) for q in questions}
        ranked = sorted(questions, key=lambda q: scores[q]["score"])
        low = ranked[0]
        # The least likely question: users always chose the most supported option (asking
        # was not needed); the others: users chose another option (asking was needed).
        for q in questions:
            for _ in range(3):
                sid = session()
                assert turn(client, bank, sid, q)["action"] == "clarify"
                top = scores[q]["options"][0]
                pick = top if q == low else next(o for o in scores[q]["options"] if o != top)
                answered = turn(client, bank, sid, names[pick])
                assert answered["action"] in ("retrieve", "no_answer")
        assert runtime.clarifications.flush(10)

        before = client.get(f"/v1/kbs/{bank}/admin/clarify", headers=ADMIN).json()
        assert before["source"] == "shipped" and before["threshold"] == 0.001
        denied = client.post(f"/v1/kbs/{bank}/admin/clarify/recalibrate", headers=QUERY)
        assert denied.status_code in (401, 403)
        too_few = client.post(f"/v1/kbs/{bank}/admin/clarify/recalibrate",
                              params={"min_records": 500}, headers=ADMIN)
        assert too_few.status_code == 422 and "at least 500" in too_few.text

        resp = client.post(f"/v1/kbs/{bank}/admin/clarify/recalibrate",
                           params={"min_records": 6}, headers=ADMIN)
        assert resp.status_code == 200, resp.text
        report = resp.json()
        assert report["records"] == report["usable"] == 12 and report["needed"] == 9
        assert report["before"]["threshold"] == 0.001
        assert report["before"]["asked"] == 12 and report["before"]["precision"] == 0.75
        assert report["changed"] is True
        # Just above the low question's score (the trace rounds it to 4 places).
        assert abs(report["after"]["threshold"] - scores[low]["score"]) < 1e-4
        assert report["after"]["asked"] == 9 and report["after"]["precision"] == 1.0
        assert report["after"]["f1"] > report["before"]["f1"]

        after = client.get(f"/v1/kbs/{bank}/admin/clarify", headers=ADMIN).json()
        assert after["source"] == "kb" and after["threshold"] == report["after"]["threshold"]
        # The kb's own threshold now decides: the low question resolves, the others still ask.
        resolved = runtime.engine.handle(bank, session(), low)
        assert decision(resolved)["params"].startswith("kb:")
        assert resolved.action != "clarify"
        asked = runtime.engine.handle(bank, session(), ranked[-1])
        assert asked.action == "clarify"

        reset = client.delete(f"/v1/kbs/{bank}/admin/clarify", headers=ADMIN).json()
        assert reset["removed"] is True
        assert client.get(f"/v1/kbs/{bank}/admin/clarify", headers=ADMIN).json()["source"] == "shipped"


def test_shared_facets_say_how_much_of_what_the_kb_holds_applies_to_every_candidate(
        bank, make_runtime, neo4j_store):
    """shared_facets: of the candidate with the fewest own facets (attribute names and
    value items, relation types, read from Neo4j), the share every candidate has; it goes
    into the verdict the trace shows."""
    extra = [
        {"kind": "entity", "id": "plat.card", "name": "Platinum Card", "type": "Card",
         "aliases": ["Platinum"], "description": "A premium personal credit card.",
         "attributes": {"network": "Visa, Mastercard", "currency": "CNY"}},
        {"kind": "entity", "id": "plat.biz", "name": "Platinum Business Card", "type": "Card",
         "aliases": ["Platinum"], "description": "A premium corporate credit card.",
         "attributes": {"network": "Visa", "currency": "CNY", "billing": "monthly"}},
        {"kind": "entity", "id": "plat.branch", "name": "Platinum Tower Branch",
         "type": "Branch", "aliases": ["Platinum"], "description": "A branch in a tower.",
         "attributes": {"district": "harbour"}},
    ]
    neo4j_store.import_ontology(bank, [json.dumps(line) for line in [*ONTOLOGY, *extra]])
    runtime = make_runtime(threshold=0.001)
    snapshot = runtime.snapshots.get(bank)
    extractor = runtime.engine._policy.gate.base.model.extractor
    cache = extractor._cache(snapshot)
    # Own facets only: the type and its attributes are what same_type already reads.
    assert cache.own_facets("plat.card") == {"network", "visa", "mastercard", "currency", "cny"}
    assert "card" not in cache.own_facets("plat.biz")
    assert cache.own_facets("card.gold.biz") == {"issued to"}  # the relation in Neo4j

    def shared(*candidates: str) -> float:
        item = DecisionInput(question="What is the network of Platinum?", mention="Platinum",
                             kind="alias", candidates=candidates)
        return extractor.extract(item, snapshot)[1]["shared_facets"]

    # Four of the personal card's five own facets (network, visa, currency, cny) hold for
    # the business card too; a card and the branch have none in common.
    assert shared("plat.card", "plat.biz") == pytest.approx(4 / 5)
    assert shared("plat.card", "plat.branch") == 0.0
    assert shared("plat.card", "plat.biz", "plat.branch") == 0.0
    # A candidate the kb holds nothing of its own about: what they have in common is
    # unknown (0, flagged), not "nothing".
    assert shared("card.gold", "card.gold.biz") == 0.0
    verdict = decision(runtime.engine.handle(bank, session(), "What is the network of Platinum?"))
    expected = shared(*verdict["candidates"])
    assert verdict["features"]["shared_facets"] == pytest.approx(expected, abs=1e-4)
    assert verdict["features"]["own_facets_unknown"] == 0.0
    assert verdict["params"] == "shipped:semantic"


def test_a_candidate_without_own_facets_is_scored_by_the_set_that_does_not_need_them(
        bank, make_runtime, neo4j_store):
    """A kb whose entities carry no attribute or relation of their own (their facets all
    come from the type): shared_facets would read 0, "nothing in common", a value the
    training kbs never had, and the model would lean to resolving. The decision is flagged
    and scored by the set fitted without it; the trace says so."""
    plain = [  # two cards the kb knows only by type, name and description
        {"kind": "entity", "id": "silver.card", "name": "Silver Card", "type": "Card",
         "aliases": ["Silver"], "description": "A personal credit card for everyday spending."},
        {"kind": "entity", "id": "silver.biz", "name": "Silver Business Card", "type": "Card",
         "aliases": ["Silver"], "description": "A corporate credit card for small firms."},
    ]
    neo4j_store.import_ontology(bank, [json.dumps(line) for line in [*ONTOLOGY, *plain]])
    runtime = make_runtime()
    params = ClarifyParams.load()
    result = runtime.engine.handle(bank, session(), "What is the annual fee of Silver?")
    [judged] = result.trace["clarify_decisions"]
    verdict = judged["features"]
    f = verdict["features"]
    assert set(verdict["candidates"]) == {"silver.card", "silver.biz"}
    assert f["own_facets_unknown"] == 1.0 and f["shared_facets"] == 0.0
    assert verdict["params"] == "shipped:semantic:without_own_facets"
    assert any("no facet of its own" in n for n in verdict["notes"])
    bare = params.semantic_without_own_facets
    assert bare is not None and "shared_facets" not in bare.features
    assert verdict["threshold"] == bare.threshold
    assert verdict["score"] == pytest.approx(1 / (1 + math.exp(-bare.logit(f))), abs=1e-3)
    assert (result.action == "clarify") == (verdict["score"] >= verdict["threshold"])
    # Read as "nothing in common" by the set that needs it, the same evidence scores lower:
    # the lean toward resolving this flag removes.
    assert params.semantic.logit(f) < params.semantic.logit(f, frozenset({"shared_facets"}))
