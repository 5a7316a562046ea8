"""A snapshot refreshed by patching the entities the writes touched is the
same as one loaded whole, after every kind of admin write."""

from __future__ import annotations

import json

import pytest

from kg.aliases import AliasSnapshot, SnapshotCache
from kg.neo4j_admin import Neo4jOntologyAdmin
from kg.ontology import ConfusableDef, EntityDef, RelationDef, TypeDef
from kg.store import Actor
from tests.conftest import DEMO

pytestmark = pytest.mark.neo4j

ME = Actor("test")


def comparable(s: AliasSnapshot) -> dict:
    return {"version": s.version, "uid": s.uid, "entities": dict(s.entities),
            "by_norm": dict(s.by_norm), "confusable": dict(s.confusable),
            "children": dict(s.children), "types": dict(s.type_attributes),
            "attributes": dict(s.attribute_by_norm),
            "matcher": s.alias_matcher._keys, "lengths": s.alias_matcher._lengths,
            "attribute_matcher": s.attribute_matcher._keys}


def fresh(load, kb) -> AliasSnapshot:
    return AliasSnapshot.from_linking_data(kb, load(kb))


def test_patched_snapshots_equal_full_loads(neo4j_store, kb):
    neo4j_store.import_ontology(kb, (DEMO / "ontology.jsonl").read_text(encoding="utf-8").splitlines())
    admin = Neo4jOntologyAdmin(neo4j_store)
    cache = SnapshotCache(neo4j_store, check_interval=0.0)
    cache.get(kb)
    patches = []
    original = neo4j_store.linking_data

    def counting_full_load(name):
        patches.append("full")
        return original(name)

    neo4j_store.linking_data = counting_full_load
    try:
        writes = [
            lambda: admin.add_alias(kb, "region.east", "东部大区", ME),
            lambda: admin.add_alias(kb, "region.south", "A产品", ME, ambiguous=True),
            lambda: admin.create_entity(kb, EntityDef("prod.a.team", "A产品（团队版）", "Product",
                                                      ("A产品",), parent="prod.a"), ME,
                                        ambiguous_aliases=["A产品"]),
            lambda: admin.update_entity(kb, "prod.a.team", ME, name="A团队版", parent=None,
                                        type="Insurance"),
            lambda: admin.add_confusable(kb, ConfusableDef("prod.a.team", "region.east", "测试"), ME),
            lambda: admin.add_relation(kb, RelationDef("prod.a.team", "SELLS_IN", "region.east"), ME),
            lambda: admin.remove_alias(kb, "region.south", "A产品", ME),
            lambda: admin.put_type(kb, TypeDef("Product", ("价格", "团购价")), ME),
            lambda: admin.remove_confusable(kb, "region.east", "prod.a.team", ME),
            lambda: admin.add_confusable(kb, ConfusableDef("prod.a.team", "region.east"), ME),
            lambda: admin.delete_entity(kb, "prod.a.team", ME, force=True),
            lambda: admin.update_entity(kb, "prod.a.personal", ME, parent=None),
        ]
        for i, write in enumerate(writes):
            assert write().changed, i
            patched = cache.get(kb)
            assert comparable(patched) == comparable(fresh(original, kb)), f"after write {i}"
        assert patches == [], "every refresh above should have been a patch"
        # Several writes at once are one patch too.
        admin.add_alias(kb, "region.east", "东区一", ME)
        admin.add_alias(kb, "region.east", "东区二", ME)
        assert comparable(cache.get(kb)) == comparable(fresh(original, kb))
        assert patches == []
        # A bulk import is reloaded whole.
        neo4j_store.import_ontology(kb, [json.dumps({"kind": "entity", "id": "x.1", "name": "某某",
                                                     "type": "T"}, ensure_ascii=False)])
        assert "x.1" in cache.get(kb).entities and patches == ["full"]
    finally:
        neo4j_store.linking_data = original


def test_no_delta_across_a_recreated_kb_or_a_gap(neo4j_store, kb):
    neo4j_store.import_ontology(kb, [json.dumps({"kind": "entity", "id": "a", "name": "甲",
                                                 "type": "T"}, ensure_ascii=False)])
    state = neo4j_store.kb_state(kb)
    admin = Neo4jOntologyAdmin(neo4j_store)
    admin.add_alias(kb, "a", "甲甲", ME)
    delta = neo4j_store.linking_delta(kb, state.version, state.uid)
    assert delta is not None and delta.entities["a"].aliases == ("甲甲",)
    assert neo4j_store.linking_delta(kb, state.version, "another-uid") is None
    assert neo4j_store.linking_delta(kb, state.version - 1, state.uid) is None  # the import: full
