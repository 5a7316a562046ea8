"""Re-tagging on the real Neo4j and Milvus Lite: after an alias edit, chunks
tagged by alias matching get their new tags (in the background, and with
`referent retag`); chunks whose tags came from the corpus file keep them."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.app import create_app
from api.cli import app as cli_app
from kg.aliases import SnapshotCache
from kg.neo4j_admin import Neo4jOntologyAdmin
from kg.store import Actor
from retrieval.ingest import ingest_corpus
from tests.conftest import ADMIN, QUERY

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

ONTOLOGY = [json.dumps(x, ensure_ascii=False) for x in [
    {"kind": "entity", "id": "region.east", "name": "华东区", "type": "Region", "aliases": ["华东"]},
    {"kind": "entity", "id": "region.south", "name": "华南区", "type": "Region"},
]]
CORPUS = [json.dumps(x, ensure_ascii=False) for x in [
    {"doc_id": "d1", "chunk_id": "d1#0", "title": "东部大区月报", "text": "东部大区7月销售额增长12%"},
    {"doc_id": "d2", "chunk_id": "d2#0", "title": "华南区月报", "text": "华南区7月销售额持平"},
    {"doc_id": "d3", "chunk_id": "d3#0", "title": "对比", "text": "东部大区与华南区的对比",
     "entity_ids": ["region.south"]},
]]


def tags(index, kb):
    return {c.chunk_id: c.entity_ids for c in index.get_chunks(kb, ["d1#0", "d2#0", "d3#0"])}


def test_alias_edits_retag_alias_tagged_chunks_in_the_background(runtime, keyring, kb,
                                                                 neo4j_store, milvus_index):
    neo4j_store.import_ontology(kb, ONTOLOGY)
    ingest_corpus(kb, CORPUS, index=milvus_index, snapshot=SnapshotCache(neo4j_store).get(kb))
    assert tags(milvus_index, kb) == {"d1#0": (), "d2#0": ("region.south",),
                                      "d3#0": ("region.south",)}
    url = f"/v1/kbs/{kb}/admin"
    with TestClient(create_app(runtime=runtime, keyring=keyring), headers=ADMIN) as client:
        assert client.post(f"{url}/entities/region.east/aliases",
                           json={"alias": "东部大区"}).status_code == 201
        assert runtime.retagger.wait_idle(60)
        assert tags(milvus_index, kb) == {"d1#0": ("region.east",), "d2#0": ("region.south",),
                                          "d3#0": ("region.south",)}  # d3's tags are the file's
        status = client.get(f"{url}/retag").json()
        assert status["state"] == "idle" and status["error"] is None
        assert status["last"]["scanned"] == 2 and status["last"]["changed"] == 1
        # The new tag is what the entity filter finds.
        found = client.post(f"/v1/kbs/{kb}/sessions/r1/turns", json={"text": "东部大区7月销售额"},
                            headers=QUERY).json()
        assert found["entities"] == ["region.east"]
        assert [e["chunk_id"] for e in found["evidence"]][:1] == ["d1#0"]

        assert client.delete(f"{url}/entities/region.east/aliases",
                             params={"alias": "东部大区"}).status_code == 200
        assert runtime.retagger.wait_idle(60)
        assert tags(milvus_index, kb)["d1#0"] == ()
        queued = client.post(f"{url}/retag")
        assert queued.status_code == 202
        assert runtime.retagger.wait_idle(60)
        assert client.get(f"{url}/retag").json()["last"]["changed"] == 0


def test_retag_command_with_progress(monkeypatch, tmp_path, kb, neo4j_store):
    monkeypatch.setenv("REFERENT_DATA_DIR", str(tmp_path / "data"))
    neo4j_store.import_ontology(kb, ONTOLOGY)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(CORPUS), encoding="utf-8")
    runner = CliRunner()
    assert runner.invoke(cli_app, ["ingest", "--kb", kb, str(corpus)]).exit_code == 0
    Neo4jOntologyAdmin(neo4j_store).add_alias(kb, "region.east", "东部大区", Actor("cli"))
    result = runner.invoke(cli_app, ["retag", "--kb", kb])
    assert result.exit_code == 0, result.output
    assert "2 alias-tagged chunks checked, 1 changed" in result.output
    assert f"retag {kb}" in result.output  # the progress bar
    again = runner.invoke(cli_app, ["retag", "--kb", kb])
    assert "1 changed" not in again.output and "0 changed" in again.output
    missing = runner.invoke(cli_app, ["retag", "--kb", "no_such_kb_here"])
    assert missing.exit_code == 2 and "no ontology" in missing.output
    recreated = runner.invoke(cli_app, ["ingest", "--kb", kb, "--recreate", str(corpus)])
    assert recreated.exit_code == 0 and "3 chunks" in recreated.output


def test_retag_keeps_the_dense_vectors_of_a_hybrid_kb(kb, neo4j_store, milvus_index):
    """Milvus replaces whole rows: re-tagging must write the stored vectors back,
    without an embedder at hand."""
    from retrieval.models import Chunk, DenseSpec
    from retrieval.retag import retag_kb

    neo4j_store.import_ontology(kb, ONTOLOGY)
    milvus_index.ensure_collection(kb, DenseSpec("test:fixed", 4))
    chunks = [Chunk("d1#0", "d1", "东部大区月报", "东部大区7月销售额增长12%", (), auto_tagged=True),
              Chunk("d2#0", "d2", "华南区月报", "华南区7月销售额持平", ("region.south",), auto_tagged=True)]
    vectors = [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]
    milvus_index.upsert(kb, chunks, vectors=vectors)
    Neo4jOntologyAdmin(neo4j_store).add_alias(kb, "region.east", "东部大区", Actor("test"))
    report = retag_kb(kb, milvus_index, SnapshotCache(neo4j_store).get(kb))
    assert (report.scanned, report.changed) == (2, 1)
    assert tags(milvus_index, kb)["d1#0"] == ("region.east",)
    [hit] = milvus_index.dense_search(kb, vectors[0], limit=1)
    assert hit.chunk_id == "d1#0" and hit.score > 0.99
    assert hit.entity_ids == ("region.east",)
