"""An interrupted ingest leaves its kb marked incomplete, turns on it still work
and say so (a warning and the trace), and running the ingest again completes it;
real Neo4j and Milvus Lite."""

from __future__ import annotations

import json
import time
import uuid

import pytest

from kg.aliases import SnapshotCache
from retrieval import ingest as ingest_module
from retrieval.ingest import ingest_corpus
from tests.conftest import DEMO

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]


class Interrupted(Exception):
    """Stands for the process being stopped (Ctrl-C, a crash) in the middle."""


def _corpus(copies: int) -> list[str]:
    """The demo corpus, ``copies`` times under other doc ids (more than one write step)."""
    lines = []
    for line in (DEMO / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for n in range(copies):
            copy = {**record, "doc_id": f"{record['doc_id']}-{n}"}
            if "chunk_id" in record:
                copy["chunk_id"] = f"{record['chunk_id']}-{n}"
            lines.append(json.dumps(copy, ensure_ascii=False))
    return lines


@pytest.fixture
def demo_ontology_kb(neo4j_store, milvus_index):
    kb = f"t_ing_{uuid.uuid4().hex[:8]}"
    neo4j_store.import_ontology(kb, (DEMO / "ontology.jsonl").read_text(encoding="utf-8")
                                .splitlines())
    yield kb
    milvus_index.drop(kb)
    neo4j_store.delete_kb(kb)


def test_an_interrupted_ingest_is_marked_turns_say_so_and_a_rerun_completes_it(
        runtime, neo4j_store, milvus_index, demo_ontology_kb, monkeypatch):
    kb = demo_ontology_kb
    snapshot = SnapshotCache(neo4j_store).get(kb)
    lines = _corpus(3)
    monkeypatch.setattr(ingest_module, "STEP", 100)

    def stop_after_first_step(done: int, total: int) -> None:
        if done >= 100:
            raise Interrupted()

    with pytest.raises(Interrupted):
        ingest_corpus(kb, lines, index=milvus_index, snapshot=snapshot,
                      progress=stop_after_first_step, path="corpus.jsonl")
    total = len(ingest_module.parse_corpus(lines, snapshot)[0])
    stored = milvus_index.count(kb)
    assert 0 < stored < total
    record = milvus_index.incomplete(kb, max_age=0)
    assert record is not None and record["file"] == "corpus.jsonl" and record["started_at"]

    # A turn still works, and says the collection is incomplete.
    result = runtime.engine.handle(kb, f"s-{uuid.uuid4().hex[:8]}", "华东区7月的销售额是多少")
    assert result.action in ("retrieve", "no_answer")
    assert result.trace["collection_incomplete"]["file"] == "corpus.jsonl"
    assert any("incomplete" in w and f"referent ingest --kb {kb}" in w for w in result.warnings)

    # The same ingest again: everything stored, the mark gone, turns without the warning.
    report = ingest_corpus(kb, lines, index=milvus_index, snapshot=snapshot, path="corpus.jsonl")
    assert report.unchanged == stored and report.written == total - stored
    assert milvus_index.count(kb) == total
    assert milvus_index.incomplete(kb, max_age=0) is None
    runtime.index.incomplete(kb, max_age=0)  # the engine's cache reads it afresh
    again = runtime.engine.handle(kb, f"s-{uuid.uuid4().hex[:8]}", "华东区7月的销售额是多少")
    assert again.action == "retrieve" and again.warnings == []
    assert "collection_incomplete" not in again.trace


def test_a_finished_ingest_leaves_no_mark_and_dropping_a_kb_clears_one(
        milvus_index, neo4j_store, demo_ontology_kb):
    kb = demo_ontology_kb
    snapshot = SnapshotCache(neo4j_store).get(kb)
    ingest_corpus(kb, _corpus(1), index=milvus_index, snapshot=snapshot)
    assert milvus_index.incomplete(kb, max_age=0) is None
    milvus_index.mark_incomplete(kb, {"started_at": "2026-12-01T00:00:00+00:00", "file": None})
    assert milvus_index.incomplete(kb, max_age=0)["started_at"].startswith("2026-12-01")
    milvus_index.drop(kb)
    assert milvus_index.incomplete(kb, max_age=0) is None


def _count_requests(index) -> list[str]:
    """The names of the Milvus client calls ``index`` makes from now on."""
    made: list[str] = []
    client = index._client
    for name in ("has_collection", "query", "describe_collection", "list_collections"):
        call = getattr(client, name)

        def counted(*args, _name=name, _call=call, **kwargs):
            made.append(_name)
            return _call(*args, **kwargs)

        setattr(client, name, counted)
    return made


def _settled(index) -> None:
    """Wait until the background re-reads of ingest records queued so far are done."""
    deadline = time.monotonic() + 10
    while index._refreshing and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not index._refreshing


def test_reading_the_ingest_state_is_one_request_with_or_without_a_recorded_one(tmp_path):
    # Every serving process re-reads it once a second per kb, beside the turns: one
    # request, not a lookup of the state collection first.
    from retrieval.milvus_index import MilvusIndex

    index = MilvusIndex(str(tmp_path / "state.db"))
    try:
        made = _count_requests(index)
        assert index.incomplete("t_state", max_age=0) is None  # no state collection yet
        assert made == ["query"]
        index.mark_incomplete("t_state", {"started_at": "2026-12-01T00:00:00+00:00"})
        index.mark_incomplete("t_other", {"started_at": "2026-12-02T00:00:00+00:00"})
        index.mark_complete("t_other")
        made.clear()
        assert index.incomplete("t_state", max_age=0)["started_at"].startswith("2026-12-01")
        assert index.incomplete("t_other", max_age=0) is None
        _settled(index)  # both known: re-read in the background
        assert made == ["query", "query"]
    finally:
        index.close()


def test_the_background_reread_starts_no_thread_per_turn(tmp_path, monkeypatch):
    # A turn that finds the record older than a second hands its re-read to a kept
    # worker: starting a thread makes the caller wait until that thread runs.
    import threading

    from retrieval.milvus_index import MilvusIndex

    started: list[str] = []
    start = threading.Thread.start

    def counted(thread):
        started.append(thread.name)
        start(thread)

    index = MilvusIndex(str(tmp_path / "state.db"))
    try:
        index.mark_incomplete("t_state", {"started_at": "2026-12-01T00:00:00+00:00"})
        monkeypatch.setattr(threading.Thread, "start", counted)
        for _ in range(3):
            # Older than max_age: the known record comes back, and a re-read is queued.
            assert index.incomplete("t_state", max_age=0)["started_at"].startswith("2026-12-01")
            _settled(index)
        assert len(started) == 1
    finally:
        index.close()
