"""Mention detection + linking speed and the alias snapshot's cost, by table size.

Generates a synthetic ontology (fixed seed) of Chinese entity names of 3-8
characters with confusable variants (个人版/企业版 editions sharing an alias,
near-identical names), builds the alias snapshot from it in this process (no
Neo4j: this measures the in-memory part every API process holds), and times
detect + link over realistic utterances.

    python benchmarks/linking_bench.py --sizes 10000 100000 1000000 --runs 3

Prints, per size: snapshot build seconds, resident memory added (MB), fuzzy
index build seconds and memory (when on for that size), and p50/p99 per
utterance in milliseconds (median of the runs, min-max in brackets).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.synth import pct, rss_mb, synthetic_ontology, utterances  # noqa: E402
from kg.aliases import AliasSnapshot  # noqa: E402
from understanding.linker import EntityLinker  # noqa: E402
from understanding.mentions import detect_mentions  # noqa: E402


def time_turns(snapshot: AliasSnapshot, texts: list[str]) -> list[float]:
    linker = EntityLinker()
    focus = [next(iter(snapshot.entities))]
    out = []
    for text in texts:
        started = time.perf_counter()
        linker.link(detect_mentions(text, snapshot), snapshot, focus=focus)
        out.append((time.perf_counter() - started) * 1000)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", type=int, default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--utterances", type=int, default=2000)
    args = parser.parse_args()
    print(f"{'aliases':>9} {'build s':>8} {'mem MB':>8} {'fuzzy s':>8} {'fuzzy MB':>9} "
          f"{'p50 ms':>16} {'p99 ms':>16}")
    for size in args.sizes:
        ontology, names = synthetic_ontology(size)
        gc.collect()
        before = rss_mb()
        started = time.perf_counter()
        snapshot = AliasSnapshot.from_ontology("bench", 1, ontology, fuzzy_max_aliases=10**9)
        build = time.perf_counter() - started
        memory = rss_mb() - before
        started = time.perf_counter()
        snapshot.fuzzy_index()
        fuzzy_build = time.perf_counter() - started
        fuzzy_memory = rss_mb() - before - memory
        texts = utterances(names, args.utterances)
        time_turns(snapshot, texts[:200])  # warm the pipeline and the fit model
        p50s, p99s = [], []
        for _ in range(args.runs):
            times = time_turns(snapshot, texts)
            p50s.append(statistics.median(times))
            p99s.append(pct(times, 99))

        def cell(values: list[float]) -> str:
            return f"{statistics.median(values):.3f} [{min(values):.3f}-{max(values):.3f}]"

        print(f"{len(snapshot.by_norm):>9} {build:8.1f} {memory:8.0f} {fuzzy_build:8.1f} "
              f"{fuzzy_memory:9.0f} {cell(p50s):>16} {cell(p99s):>16}", flush=True)
        del snapshot, ontology
        gc.collect()
    return 0


if __name__ == "__main__":
    sys.exit(main())
