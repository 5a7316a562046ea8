"""Where a turn's time goes: the in-process benchmark turn under cProfile, beside the
bare BM25 search of the same standalone queries.

    .venv/bin/python benchmarks/turn_profile.py --chunks 100000 --workdir var/bench/profile
    .venv/bin/python benchmarks/turn_profile.py --chunks 10000 --top 40 --sort tottime

The kb is the one ``run_all.py`` generates for that size (same seed). With ``--workdir``
its Milvus Lite file is kept, and a later run at the same size reuses the ingested
collection (the ontology is imported again: seconds, not minutes). It prints:

- turn p50/p99 and the bare search's p50/p99 over the same turns, measured side by side
  in this run (unprofiled), and their ratio;
- the mean of each stage the turn's trace times;
- the profile of the same turns played again in new sessions: the top functions by
  ``--sort`` (cumulative or tottime), and with ``--pstats FILE`` the raw profile.

Neo4j is the one the settings name (started here when local and not running).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.run_all import STAGES, Services, _engine, log  # noqa: E402
from benchmarks.synth import pct, turn_kb  # noqa: E402


def prepare(services: Services, size: int, workdir: Path, sessions: int, *, load: bool = True):
    """The generated kb of ``size`` chunks: ontology imported, corpus ingested unless the
    kept Milvus file already holds it, its collection loaded (``load``: Milvus Lite loads
    100k chunks in minutes). Returns (kb, data, index, uri)."""
    from kg.aliases import SnapshotCache
    from retrieval.ingest import ingest_corpus
    from retrieval.milvus_index import MilvusIndex

    kb = f"bench_c{size}"
    data = turn_kb(size, sessions=sessions)
    services.store.delete_kb(kb)
    services.store.import_ontology(kb, data.ontology_lines, path="synthetic")
    uri = str(workdir / f"milvus-{size}.db")
    index = MilvusIndex(uri, timeout=300)
    if index.has_collection(kb) and index.count(kb) == data.chunks and index.incomplete(kb) is None:
        log(f"reusing the ingested collection of {data.chunks:,} chunks in {uri}")
    else:
        index.drop(kb)
        started = time.perf_counter()
        snapshot = SnapshotCache(services.store).get(kb)
        ingest_corpus(kb, data.corpus_lines, index=index, snapshot=snapshot, path="synthetic")
        log(f"ingested {data.chunks:,} chunks in {time.perf_counter() - started:.0f} s")
    if load:
        index.load(kb)
    return kb, data, index, uri


def play(engine, kb: str, scripts: list[list[str]], tag: str) -> list:
    """Every scripted session once, in new session ids; the turn results."""
    return [engine.handle(kb, f"{tag}-{i}", text)
            for i, script in enumerate(scripts) for text in script]


def bare_ms(uri: str, kb: str, queries: list[str]) -> list[float]:
    """One unfiltered BM25 ``MilvusClient.search`` per query (limit 5): the floor."""
    from pymilvus import MilvusClient

    client = MilvusClient(uri)
    times = []
    for q in queries:
        t0 = time.perf_counter()
        client.search("referent_" + kb, data=[q], anns_field="sparse", limit=5,
                      output_fields=["chunk_id"], search_params={"metric_type": "BM25"})
        times.append((time.perf_counter() - t0) * 1000)
    return times


def side_by_side(engine, kb: str, uri: str, scripts: list[list[str]]) -> None:
    """Turns, then the bare search of each searched turn's standalone query, printed."""
    results = play(engine, kb, scripts, "t" + uuid.uuid4().hex[:6])
    turns = [r.latency_ms for r in results]
    bare = bare_ms(uri, kb, [r.standalone for r in results if r.action != "clarify"])
    print(f"turns {len(turns)}: p50 {pct(turns, 50):.2f} ms, p99 {pct(turns, 99):.2f} ms; "
          f"bare BM25 p50 {pct(bare, 50):.2f} ms, p99 {pct(bare, 99):.2f} ms; "
          f"turn ÷ bare (p50) {pct(turns, 50) / pct(bare, 50):.2f}")
    for stage in STAGES:
        values = [r.trace.get("timings_ms", {}).get(stage, 0.0) for r in results]
        print(f"  {stage:<13} mean {statistics.fmean(values):7.2f} ms  p50 {pct(values, 50):7.2f} ms")


def profiled(engine, kb: str, scripts: list[list[str]], sort: str, top: int,
             dump: Path | None) -> None:
    profile = cProfile.Profile()
    profile.enable()
    play(engine, kb, scripts, "p" + uuid.uuid4().hex[:6])
    profile.disable()
    if dump is not None:
        profile.dump_stats(dump)
    out = io.StringIO()
    pstats.Stats(profile, stream=out).strip_dirs().sort_stats(sort).print_stats(top)
    print(out.getvalue())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000, help="corpus size")
    parser.add_argument("--sessions", type=int, default=60, help="scripted four-turn sessions")
    parser.add_argument("--workdir", type=Path, default=REPO / "var" / "bench" / "profile",
                        help="Milvus Lite file and session store (kept for the next run)")
    parser.add_argument("--sort", choices=("cumulative", "tottime"), default="cumulative")
    parser.add_argument("--top", type=int, default=45, help="functions shown")
    parser.add_argument("--pstats", type=Path, default=None, help="also write the raw profile")
    args = parser.parse_args(argv)

    args.workdir.mkdir(parents=True, exist_ok=True)
    services = Services()
    try:
        kb, data, index, uri = prepare(services, args.chunks, args.workdir, args.sessions)
        engine, sessions, _ = _engine(services, index, args.workdir / f"sessions-{kb}.sqlite3")
        play(engine, kb, data.sessions[:5], "warm" + uuid.uuid4().hex[:6])
        side_by_side(engine, kb, uri, data.sessions)
        profiled(engine, kb, data.sessions, args.sort, args.top, args.pstats)
        sessions.close()
        index.close()
    finally:
        services.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
