"""Ontology benchmarks: prints figures, asserts nothing (not a test).

    REFERENT_NEO4J__LOCAL_HEAP=4g .venv/bin/referent neo4j start
    .venv/bin/python benchmarks/ontology_bench.py [--skip-1m] [--keep]

Measures, against the Neo4j the settings point at (REFERENT_NEO4J__*):

1. import of 100,000 entities with 300,000 aliases (one file, one transaction);
2. alias snapshot load time and resident memory at 100,000 and 1,000,000
   aliases, each in a fresh process (the 1,000,000-alias kb is imported in
   ten files of 100,000 aliases: each file is one transaction);
3. admin write round trip including refresh: adding an alias (one write
   transaction with its audit entry), then the time until another snapshot
   cache, as a second API process holds, returns a snapshot that has it.

The data are synthetic Chinese names of 3-8 characters, made from a fixed
seed, so every run measures the same ontology. The kbs are deleted at the
end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.synth import import_lines as synthetic_lines  # noqa: E402

def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def open_store():
    from api.runtime import open_ontology_store
    from api.settings import Settings

    return open_ontology_store(Settings())


def load_in_this_process(kb: str) -> None:
    """Child mode: load one snapshot and print JSON figures."""
    from kg.aliases import SnapshotCache

    store = open_store()
    store.verify()
    base = rss_mb()
    started = time.perf_counter()
    snapshot = SnapshotCache(store).get(kb)
    seconds = time.perf_counter() - started
    print(json.dumps({"aliases": sum(len(v) for v in snapshot.by_norm.values()),
                      "keys": len(snapshot.by_norm), "entities": len(snapshot.entities),
                      "seconds": seconds, "rss_mb": rss_mb(), "rss_added_mb": rss_mb() - base,
                      "peak_rss_mb": peak_rss_mb()}))
    store.close()


def load_in_fresh_process(kb: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--load", kb], capture_output=True, text=True,
                         check=True, cwd=REPO)
    return json.loads(out.stdout.strip().splitlines()[-1])


def import_kb(store, kb: str, files: list[list[str]]) -> float:
    store.delete_kb(kb)
    started = time.perf_counter()
    for lines in files:
        store.import_ontology(kb, lines, path="synthetic")
    return time.perf_counter() - started


def round_trip(store, kb: str, rounds: int = 5) -> tuple[float, float]:
    """Median seconds of (admin write, refresh seen by another cache)."""
    from kg.aliases import SnapshotCache
    from kg.neo4j_admin import Neo4jOntologyAdmin
    from kg.store import Actor

    admin = Neo4jOntologyAdmin(store)
    other = SnapshotCache(store, check_interval=0.0)
    other.get(kb)
    writes, refreshes = [], []
    for i in range(rounds):
        alias = f"基准新别名{i}{time.time_ns() % 100000}"
        started = time.perf_counter()
        result = admin.add_alias(kb, "e0", alias, Actor("bench"))
        wrote = time.perf_counter()
        snapshot = other.get(kb)
        refreshed = time.perf_counter()
        assert snapshot.version == result.version and alias in snapshot.entities["e0"].aliases
        writes.append(wrote - started)
        refreshes.append(refreshed - wrote)
    return sorted(writes)[rounds // 2], sorted(refreshes)[rounds // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skip-1m", action="store_true", help="skip the 1,000,000-alias kb")
    parser.add_argument("--keep", action="store_true", help="keep the benchmark kbs")
    parser.add_argument("--load", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load:
        load_in_this_process(args.load)
        return

    store = open_store()
    store.verify()
    print(f"machine: {os.cpu_count()} cores, "
          f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GB RAM, "
          f"Python {platform.python_version()}, Neo4j at {store._driver.get_server_info().address}")
    kbs = ["bench_import", "bench_100k", "bench_1m"]
    try:
        lines = synthetic_lines(100_000, 3, seed=1)
        seconds = import_kb(store, "bench_import", [lines])
        print(f"import 100,000 entities / 300,000 aliases, one transaction: {seconds:.1f} s "
              f"({300_000 / seconds:,.0f} aliases/s)")
        again = time.perf_counter()
        report = store.import_ontology("bench_import", lines, path="synthetic")
        print(f"re-import of the same file (nothing changes): {time.perf_counter() - again:.1f} s, "
              f"changed={report.changed}")
        store.delete_kb("bench_import")

        sizes = [("bench_100k", 100_000)] + ([] if args.skip_1m else [("bench_1m", 1_000_000)])
        for kb, aliases in sizes:
            entities = aliases // 3 + (1 if aliases % 3 else 0)
            used: set[str] = set()
            per_file = 33_334
            files = [synthetic_lines(min(per_file, entities - s), 3, seed=2 + s, start=s, used=used)
                     for s in range(0, entities, per_file)]
            seconds = import_kb(store, kb, files)
            print(f"{kb}: imported {entities:,} entities / {entities * 3:,} aliases in "
                  f"{len(files)} file(s): {seconds:.1f} s")
            load = load_in_fresh_process(kb)
            print(f"{kb}: snapshot load {load['seconds']:.1f} s, {load['aliases']:,} aliases "
                  f"({load['keys']:,} keys), resident {load['rss_mb']:.0f} MB "
                  f"(+{load['rss_added_mb']:.0f} MB for the snapshot, peak {load['peak_rss_mb']:.0f} MB)")
            write, refresh = round_trip(store, kb)
            print(f"{kb}: admin write (add alias, audit, version) {write * 1000:.0f} ms; "
                  f"another process's refresh until it links with it {refresh * 1000:.0f} ms; "
                  f"round trip {(write + refresh) * 1000:.0f} ms (medians of 5)")
    finally:
        if not args.keep:
            for kb in kbs:
                store.delete_kb(kb)
        store.close()


if __name__ == "__main__":
    main()
