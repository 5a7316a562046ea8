"""The ontology in a real Neo4j: import is idempotent and all-or-nothing,
export gives the same records back, and hostile text is stored literally."""

import json

import pytest

from common.errors import FormatError, NotFoundError
from kg.aliases import SnapshotCache
from kg.ontology import dump_ontology, parse_ontology
from tests.conftest import DEMO

pytestmark = pytest.mark.neo4j


def demo_lines():
    return (DEMO / "ontology.jsonl").read_text(encoding="utf-8").splitlines()


def test_import_then_reimport_changes_nothing(neo4j_store, kb):
    first = neo4j_store.import_ontology(kb, demo_lines())
    assert first.entities_added == len(parse_ontology(demo_lines()).entities)
    before = list(dump_ontology(neo4j_store.export_ontology(kb)))
    again = neo4j_store.import_ontology(kb, demo_lines())
    assert not again.changed
    assert again.version == first.version
    assert list(dump_ontology(neo4j_store.export_ontology(kb))) == before


def test_export_round_trips_the_file(neo4j_store, kb):
    neo4j_store.import_ontology(kb, demo_lines())
    exported = list(dump_ontology(neo4j_store.export_ontology(kb)))
    assert exported == list(dump_ontology(parse_ontology(demo_lines())))


def test_one_bad_line_imports_nothing(neo4j_store, kb):
    lines = demo_lines()
    bad = lines[:10] + ['{"kind": "entity", "id": "x y", "name": "坏", "type": "T"}'] + lines[10:]
    with pytest.raises(FormatError) as info:
        neo4j_store.import_ontology(kb, bad)
    assert info.value.line == 11 and info.value.field == "id"
    assert neo4j_store.alias_version(kb) is None
    with pytest.raises(NotFoundError, match="referent ontology import"):
        neo4j_store.export_ontology(kb)


def test_bad_line_after_a_good_import_leaves_the_stored_ontology_alone(neo4j_store, kb):
    neo4j_store.import_ontology(kb, demo_lines())
    before = list(dump_ontology(neo4j_store.export_ontology(kb)))
    change = json.dumps({"kind": "entity", "id": "region.east", "name": "华东大区", "type": "SalesRegion"},
                        ensure_ascii=False)
    dangling = json.dumps({"kind": "relation", "from": "region.east", "type": "IS_A", "to": "nowhere"})
    with pytest.raises(FormatError, match="unknown entity 'nowhere'"):
        neo4j_store.import_ontology(kb, [change, dangling])
    assert list(dump_ontology(neo4j_store.export_ontology(kb))) == before


def test_changed_aliases_replace_the_old_ones_and_bump_the_version(neo4j_store, kb):
    v1 = neo4j_store.import_ontology(kb, [
        '{"kind": "entity", "id": "e1", "name": "甲", "type": "T", "aliases": ["老别名"]}']).version
    report = neo4j_store.import_ontology(kb, [
        '{"kind": "entity", "id": "e1", "name": "甲", "type": "T", "aliases": ["新别名"]}'])
    assert report.entities_changed == 1 and report.version == v1 + 1
    snapshot = SnapshotCache(neo4j_store).get(kb)
    assert snapshot.by_norm.get("新别名") == ("e1",)
    assert "老别名" not in snapshot.by_norm


def test_cypher_and_filter_lookalikes_are_stored_literally(neo4j_store, kb):
    hostile = ["x' OR 1=1 //", "}) MATCH (n) DETACH DELETE n //", 'chunk_id in ["a"] or 1==1']
    line = json.dumps({"kind": "entity", "id": "e.hostile", "name": hostile[0], "type": "T",
                       "aliases": hostile[1:], "description": "$kb"}, ensure_ascii=False)
    neo4j_store.import_ontology(kb, [line])
    [entity] = neo4j_store.export_ontology(kb).entities
    assert entity.name == hostile[0] and set(entity.aliases) == set(hostile[1:])
    assert entity.description == "$kb"


def test_shared_alias_names_both_entities(neo4j_store, kb):
    neo4j_store.import_ontology(kb, demo_lines())
    snapshot = SnapshotCache(neo4j_store).get(kb)
    assert snapshot.by_norm["a产品"] == ("prod.a.enterprise", "prod.a.personal")


def test_an_alias_that_normalizes_to_nothing_round_trips(neo4j_store, kb):
    line = '{"kind": "entity", "id": "album.q", "name": "？（2011年专辑）", "type": "T", "aliases": ["？"]}'
    neo4j_store.import_ontology(kb, [line])
    assert not neo4j_store.import_ontology(kb, [line]).changed
    assert neo4j_store.export_ontology(kb).entities[0].aliases == ("？",)
