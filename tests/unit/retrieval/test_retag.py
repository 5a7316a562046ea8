"""Re-tagging logic on an in-memory index: only alias-tagged chunks change, a
pass that goes stale starts over on the newer snapshot, errors are reported."""

from __future__ import annotations

from common.errors import DependencyError
from kg.aliases import AliasSnapshot
from kg.ontology import parse_ontology
from retrieval.models import Chunk
from retrieval.retag import BackgroundRetagger, retag_kb
from tests.unit.kg.conftest import ONTOLOGY

class MemoryIndex:
    def __init__(self, chunks):
        self.chunks = {c.chunk_id: c for c in chunks}
        self.upserts = 0
        self.fail = False

    def has_collection(self, kb):
        return True

    def iter_chunks(self, kb, batch=1000, *, auto_tagged_only=False):
        if self.fail:
            raise DependencyError("Milvus could not read chunks")
        return iter([c for c in self.chunks.values() if c.auto_tagged or not auto_tagged_only])

    def set_entity_tags(self, kb, chunks):
        self.upserts += 1
        self.chunks.update((c.chunk_id, c) for c in chunks)
        return len(chunks)

def snapshot(version: int, extra: str = "") -> AliasSnapshot:
    return AliasSnapshot.from_ontology("t", version, parse_ontology((ONTOLOGY + extra).splitlines()))

CHUNKS = [Chunk("a#0", "a", "", "东部大区的销售额", (), auto_tagged=True),
          Chunk("b#0", "b", "", "华南区的销售额", ("region.south",), auto_tagged=True),
          Chunk("c#0", "c", "", "东部大区与华南区", ("region.south",), auto_tagged=False)]
EAST_ALIAS = '{"kind": "entity", "id": "region.east2", "name": "东部大区", "type": "SalesRegion"}\n'

def test_only_alias_tagged_chunks_whose_tags_change_are_written():
    index = MemoryIndex(CHUNKS)
    report = retag_kb("t", index, snapshot(2, EAST_ALIAS))
    assert (report.scanned, report.changed, report.stale) == (2, 1, False)
    assert index.chunks["a#0"].entity_ids == ("region.east2",)
    assert index.chunks["c#0"] == CHUNKS[2]
    again = retag_kb("t", index, snapshot(2, EAST_ALIAS))
    assert again.changed == 0

def test_a_stale_pass_writes_nothing_and_the_worker_starts_over():
    index = MemoryIndex(CHUNKS)
    versions = iter([3, 3, 3, 3])
    current = {"v": 2}

    def snapshot_of(kb):
        return snapshot(current["v"], EAST_ALIAS)

    def version_of(kb):
        # The first pass (on version 2) finds the kb already at 3.
        value = current["v"] if current["v"] == 3 else next(versions)
        current["v"] = 3
        return value

    worker = BackgroundRetagger(index, snapshot_of, version_of)
    try:
        worker.request("t")
        assert worker.wait_idle(10)
        status = worker.status("t")
        assert status.state == "idle" and status.last.version == 3 and not status.last.stale
        assert index.upserts == 1
        assert index.chunks["a#0"].entity_ids == ("region.east2",)
    finally:
        worker.close()

def test_worker_reports_an_error_and_keeps_running():
    index = MemoryIndex(CHUNKS)
    index.fail = True
    worker = BackgroundRetagger(index, lambda kb: snapshot(1), lambda kb: 1)
    try:
        worker.request("t")
        assert worker.wait_idle(10)
        assert "Milvus could not read" in worker.status("t").last_error
        index.fail = False
        worker.request("t")
        assert worker.wait_idle(10)
        assert worker.status("t").last_error is None and worker.status("t").last.scanned == 2
    finally:
        worker.close()

FAMILY_ONTOLOGY = "\n".join([
    '{"kind": "entity", "id": "kettle.line", "name": "青石水壶", "type": "水壶"}',
    '{"kind": "entity", "id": "kettle.s", "name": "青石小壶", "type": "水壶"}',
    '{"kind": "entity", "id": "kettle.l", "name": "青石大壶", "type": "水壶"}',
])
FAMILY_CHUNKS = [Chunk("k#1", "k", "青石水壶说明", "青石小壶容量一升", (), auto_tagged=True),
                 Chunk("k#2", "k", "青石水壶说明", "青石大壶容量三升", (), auto_tagged=True),
                 Chunk("k#3", "k", "青石水壶说明", "保修两年，凭发票维修", (), auto_tagged=True)]

def test_retagging_tags_a_familys_general_passage_with_each_member():
    index = MemoryIndex(list(reversed(FAMILY_CHUNKS)))  # a document's chunks come in no set order
    snap = AliasSnapshot.from_ontology("t", 1, parse_ontology(FAMILY_ONTOLOGY.splitlines()))
    retag_kb("t", index, snap)
    assert set(index.chunks["k#3"].entity_ids) == {"kettle.line", "kettle.s", "kettle.l"}
    # Read in another order, the same document gets the same tags: nothing to rewrite.
    in_order = MemoryIndex(sorted(index.chunks.values(), key=lambda c: c.chunk_id))
    assert retag_kb("t", in_order, snap).changed == 0
    assert index.chunks["k#1"].entity_ids == ("kettle.line", "kettle.s")
