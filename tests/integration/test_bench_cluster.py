"""The benchmark's several-process harness (``http_load.py --processes``) on real services:
N uvicorn processes on one Milvus Lite server and one session store, the load spread
over all of them, so that a figure labelled "2 processes" cannot come from one.

What each process answered is read from its own ``/metrics``, not from the harness."""

from __future__ import annotations

import json
import re
import uuid

import httpx
import pytest

from benchmarks import run_all
from benchmarks.server_cluster import ServerCluster
from tests.services import REGIONS_CORPUS, REGIONS_ONTOLOGY

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

SCRIPT = ["华东区7月的销售额是多少", "那华南区呢"]
BENCH = {"Authorization": f"Bearer {run_all.BENCH_KEY}"}


@pytest.fixture
def lite_kb(tmp_path, neo4j_store):
    """A kb imported into the suite's Neo4j and ingested into a Lite file of its own,
    closed again so that the harness's Milvus server can take it."""
    from kg.aliases import SnapshotCache
    from retrieval.ingest import ingest_corpus
    from retrieval.milvus_index import MilvusIndex

    kb = f"t_cluster_{uuid.uuid4().hex[:8]}"
    neo4j_store.import_ontology(kb, [json.dumps(x, ensure_ascii=False) for x in REGIONS_ONTOLOGY])
    lite_file = tmp_path / "milvus" / "bench.db"
    lite_file.parent.mkdir()
    index = MilvusIndex(str(lite_file))
    ingest_corpus(kb, [json.dumps(x, ensure_ascii=False) for x in REGIONS_CORPUS], index=index,
                  snapshot=SnapshotCache(neo4j_store).get(kb))
    index.close()
    run_all._release_lite(str(lite_file))
    yield kb, lite_file
    neo4j_store.delete_kb(kb)


def _turns_answered(base: str, kb: str) -> int:
    text = httpx.get(f"{base}/metrics", timeout=10).text
    return int(sum(float(m[1]) for m in re.finditer(
        rf'^referent_turns_total{{[^}}]*kb="{kb}"[^}}]*}} (\S+)$', text, re.MULTILINE)))


def test_the_load_is_spread_over_every_process_and_their_sessions_are_shared(tmp_path, lite_kb):
    kb, lite_file = lite_kb
    cluster = ServerCluster(kb, lite_file, tmp_path / "server", 2)
    cluster.start(SCRIPT[0])  # one timed first turn, on the first process
    try:
        assert len(set(cluster.ports)) == 2 and cluster.milvus.running()
        tag = f"t{uuid.uuid4().hex[:6]}"
        load = run_all._load(cluster.bases, kb, [SCRIPT], 4, 120, 24, f"{tag}x")
        assert (load["ok"], load["errors"]) == (24, 0), load["error_kinds"]
        assert load["ok_by_process"] == [12, 12]
        # Each process's own count: the harness's first turn went to the first one.
        assert [_turns_answered(b, kb) for b in cluster.bases] == [13, 12]

        # One client, one session: its two turns go to different processes, and each
        # process reads both from the one store (a store per process would have made
        # the second turn a turn 1).
        one = run_all._load(cluster.bases, kb, [SCRIPT], 1, 120, 2, tag)
        assert one["ok_by_process"] == [1, 1]
        for base in cluster.bases:
            trace = httpx.get(f"{base}/v1/kbs/{kb}/sessions/{tag}-0-0/turns/2/trace",
                              headers=BENCH, timeout=10)
            assert trace.status_code == 200, trace.text
            assert trace.json()["user"] == SCRIPT[1]

        cpu = cluster.cpu()
        assert set(cpu) == {"api", "milvus_lite", "api_1", "api_2"}
        assert cpu["api"] == pytest.approx(cpu["api_1"] + cpu["api_2"])
        # The Milvus part is the shared server, not a Lite child of an API process.
        assert cpu["milvus_lite"] > 0
        assert all(run_all._descendants(p.pid) == [p.pid] for p in cluster.procs)
    finally:
        cluster.stop()


def test_a_process_that_fails_to_start_is_named_with_its_log_and_nothing_is_left(tmp_path, lite_kb):
    kb, lite_file = lite_kb
    cluster = ServerCluster(kb, lite_file, tmp_path / "server", 2, extra=("--no-such-option",))
    with pytest.raises(RuntimeError) as failed:
        cluster.start(SCRIPT[0])
    message = str(failed.value)
    assert "API process 1 of 2" in message and "server-1-of-2.log" in message
    assert "No such option" in message  # the log's tail, in the error
    assert cluster.procs == [] and not cluster.milvus.running()

    # The Lite file was let go: another cluster serves it.
    again = ServerCluster(kb, lite_file, tmp_path / "server", 2)
    again.start(SCRIPT[0])
    again.stop()
