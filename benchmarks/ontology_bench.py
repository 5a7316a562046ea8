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
import random
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

_CHARS = ("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子"
          "说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机"
          "当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心"
          "反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程"
          "展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期"
          "根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志")


def synthetic_lines(entities: int, aliases_per_entity: int, *, seed: int, start: int = 0,
                    used: set[str] | None = None) -> list[str]:
    """An ontology file: one type, then ``entities`` entities with distinct aliases."""
    rng = random.Random(seed)
    used = used if used is not None else set()

    def name() -> str:
        while True:
            text = "".join(rng.choice(_CHARS) for _ in range(rng.randint(3, 8)))
            if text not in used:
                used.add(text)
                return text

    lines = [json.dumps({"kind": "type", "name": "Thing", "attributes": ["价格", "数量"]},
                        ensure_ascii=False)]
    for i in range(start, start + entities):
        lines.append(json.dumps({"kind": "entity", "id": f"e{i}", "name": name(), "type": "Thing",
                                 "aliases": [name() for _ in range(aliases_per_entity - 1)]},
                                ensure_ascii=False))
    return lines


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
