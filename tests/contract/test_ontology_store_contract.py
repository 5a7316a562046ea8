"""One contract for every ``OntologyStore``, run against the in-memory store and
a real Neo4j: import is idempotent and all-or-nothing, export gives the same
records back, hostile text is stored literally, and what the alias snapshot
is built from (versions, ``linking_data``, the alias table) fits the import."""

import json
import uuid

import pytest

from common.errors import FormatError, NotFoundError
from kg.aliases import SnapshotCache
from kg.memory_store import InMemoryOntologyStore
from kg.ontology import dump_ontology, parse_ontology
from tests.conftest import DEMO


def demo_lines():
    return (DEMO / "ontology.jsonl").read_text(encoding="utf-8").splitlines()


@pytest.fixture(params=["memory", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def store(request):
    if request.param == "memory":
        made = InMemoryOntologyStore()
        yield made
        made.close()
    else:
        yield request.getfixturevalue("neo4j_store")  # shared by the session: not closed here


@pytest.fixture
def kb(store):
    """A fresh, isolated knowledge base name, removed afterwards."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    yield name
    store.delete_kb(name)


class TestOntologyStoreContract:
    def test_import_then_reimport_changes_nothing(self, store, kb):
        first = store.import_ontology(kb, demo_lines())
        assert first.entities_added == len(parse_ontology(demo_lines()).entities)
        before = list(dump_ontology(store.export_ontology(kb)))
        again = store.import_ontology(kb, demo_lines())
        assert not again.changed
        assert again.version == first.version
        assert list(dump_ontology(store.export_ontology(kb))) == before

    def test_export_round_trips_the_file(self, store, kb):
        store.import_ontology(kb, demo_lines())
        exported = list(dump_ontology(store.export_ontology(kb)))
        assert exported == list(dump_ontology(parse_ontology(demo_lines())))

    def test_one_bad_line_imports_nothing(self, store, kb):
        lines = demo_lines()
        bad = lines[:10] + ['{"kind": "entity", "id": "x y", "name": "坏", "type": "T"}'] + lines[10:]
        with pytest.raises(FormatError) as info:
            store.import_ontology(kb, bad)
        assert info.value.line == 11 and info.value.field == "id"
        assert store.alias_version(kb) is None
        with pytest.raises(NotFoundError, match="referent ontology import"):
            store.export_ontology(kb)

    def test_bad_line_after_a_good_import_leaves_the_stored_ontology_alone(self, store, kb):
        store.import_ontology(kb, demo_lines())
        before = list(dump_ontology(store.export_ontology(kb)))
        change = json.dumps({"kind": "entity", "id": "region.east", "name": "华东大区", "type": "SalesRegion"},
                            ensure_ascii=False)
        dangling = json.dumps({"kind": "relation", "from": "region.east", "type": "IS_A", "to": "nowhere"})
        with pytest.raises(FormatError, match="unknown entity 'nowhere'"):
            store.import_ontology(kb, [change, dangling])
        assert list(dump_ontology(store.export_ontology(kb))) == before

    def test_changed_aliases_replace_the_old_ones_and_bump_the_version(self, store, kb):
        v1 = store.import_ontology(kb, [
            '{"kind": "entity", "id": "e1", "name": "甲", "type": "T", "aliases": ["老别名"]}']).version
        report = store.import_ontology(kb, [
            '{"kind": "entity", "id": "e1", "name": "甲", "type": "T", "aliases": ["新别名"]}'])
        assert report.entities_changed == 1 and report.version == v1 + 1
        snapshot = SnapshotCache(store).get(kb)
        assert snapshot.by_norm.get("新别名") == ("e1",)
        assert "老别名" not in snapshot.by_norm

    def test_cypher_and_filter_lookalikes_are_stored_literally(self, store, kb):
        hostile = ["x' OR 1=1 //", "}) MATCH (n) DETACH DELETE n //", 'chunk_id in ["a"] or 1==1']
        line = json.dumps({"kind": "entity", "id": "e.hostile", "name": hostile[0], "type": "T",
                           "aliases": hostile[1:], "description": "$kb"}, ensure_ascii=False)
        store.import_ontology(kb, [line])
        [entity] = store.export_ontology(kb).entities
        assert entity.name == hostile[0] and set(entity.aliases) == set(hostile[1:])
        assert entity.description == "$kb"

    def test_shared_alias_names_both_entities(self, store, kb):
        store.import_ontology(kb, demo_lines())
        snapshot = SnapshotCache(store).get(kb)
        assert snapshot.by_norm["a产品"] == ("prod.a.enterprise", "prod.a.personal")

    def test_an_alias_that_normalizes_to_nothing_round_trips(self, store, kb):
        line = '{"kind": "entity", "id": "album.q", "name": "？（2011年专辑）", "type": "T", "aliases": ["？"]}'
        store.import_ontology(kb, [line])
        assert not store.import_ontology(kb, [line]).changed
        assert store.export_ontology(kb).entities[0].aliases == ("？",)


    def test_an_unknown_kb_has_no_version_and_no_data(self, store, kb):
        assert store.alias_version(kb) is None and store.kb_state(kb) is None
        with pytest.raises(NotFoundError, match="referent ontology import"):
            store.linking_data(kb)
        assert store.export_ontology(kb, missing_ok=True).entities == ()

    def test_a_dry_run_reports_and_writes_nothing(self, store, kb):
        report = store.import_ontology(kb, demo_lines(), dry_run=True)
        assert report.entities_added == len(parse_ontology(demo_lines()).entities)
        assert store.alias_version(kb) is None

    def test_linking_data_is_the_imported_ontology_at_its_version(self, store, kb):
        version = store.import_ontology(kb, demo_lines()).version
        data = store.linking_data(kb)
        assert (data.version, data.uid) == (store.kb_state(kb).version, store.kb_state(kb).uid)
        assert data.version == version
        assert list(dump_ontology(data.ontology)) == list(dump_ontology(parse_ontology(demo_lines())))
        assert data.alias_norms["A产品"] == "a产品"
        rows = {(row.text, row.entity_id) for row in store.load_alias_rows(kb)}
        assert {("A产品", "prod.a.enterprise"), ("A产品", "prod.a.personal")} <= rows
        # Only an import wrote here, so a snapshot is reloaded whole, never patched.
        assert store.linking_delta(kb, version - 1, data.uid) is None

    def test_a_confusable_pair_is_one_pair_whichever_way_round(self, store, kb):
        entities = ['{"kind": "entity", "id": "a", "name": "甲", "type": "T"}',
                    '{"kind": "entity", "id": "b", "name": "乙", "type": "T"}']
        store.import_ontology(kb, [*entities, '{"kind": "confusable", "a": "a", "b": "b", "note": "x"}'])
        again = store.import_ontology(kb, ['{"kind": "confusable", "a": "b", "b": "a", "note": "x"}'])
        assert not again.changed
        renoted = store.import_ontology(kb, ['{"kind": "confusable", "a": "b", "b": "a", "note": "y"}'])
        assert renoted.confusables == 1
        [pair] = store.export_ontology(kb).confusables
        assert {pair.a, pair.b} == {"a", "b"} and pair.note == "y"
