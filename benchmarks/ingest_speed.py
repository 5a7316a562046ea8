"""Where an ingest's time goes, and this tree's ingest beside another tree's in one run.

    .venv/bin/python benchmarks/ingest_speed.py --chunks 20000
    .venv/bin/python benchmarks/ingest_speed.py --chunks 20000 --against ../older-checkout --runs 2 \\
        --record docs/benchmarks/results.json

The corpus is ``run_all.py``'s generated kb of that size (same seed; its chunks carry
their entity ids, as a tagged corpus file does). Each figure comes from a fresh child
process and a fresh Milvus Lite file, the trees taking turns, so the machine's load falls
on both. Per run:

- ``parse``: ``parse_corpus`` alone (read, check every line, chunk, tag);
- ``ingest``: ``ingest_corpus`` into a new collection, what ``referent ingest`` does;
- ``lite upsert``: the same rows sent straight to ``MilvusClient.upsert`` (512 a request)
  into a collection of the same schema: Milvus Lite's own cost, the floor of an ingest;
- ``lite, no BM25``: the same rows into a collection without the BM25 function, so the
  difference is what the analyzer and the sparse index cost inside Lite.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PHASES = ("parse", "ingest", "lite_upsert", "lite_no_bm25")


def child(tree: Path, size: int, workdir: Path, floor: bool) -> dict:
    """The figures of one run, with ``tree``'s ingest code (the generator is this tree's)."""
    sys.path.insert(0, str(tree))
    from benchmarks.synth import turn_kb
    from kg.aliases import AliasSnapshot
    from kg.ontology import parse_ontology
    from retrieval.ingest import ingest_corpus, parse_corpus
    from retrieval.milvus_index import MilvusIndex

    data = turn_kb(size)
    snapshot = AliasSnapshot.from_ontology("speed", 1, parse_ontology(data.ontology_lines))
    out: dict = {}
    t0 = time.perf_counter()
    chunks = parse_corpus(data.corpus_lines, snapshot).chunks
    out["parse"] = time.perf_counter() - t0
    index = MilvusIndex(str(workdir / "ingest.db"), timeout=600)
    t0 = time.perf_counter()
    ingest_corpus("speed", data.corpus_lines, index=index, snapshot=snapshot)
    out["ingest"] = time.perf_counter() - t0
    index.close()
    if floor:
        out["lite_upsert"] = _bare_upsert(chunks, workdir / "bare.db", bm25=True)
        out["lite_no_bm25"] = _bare_upsert(chunks, workdir / "plain.db", bm25=False)
    return out


def _bare_upsert(chunks, path: Path, *, bm25: bool) -> float:
    """Seconds to upsert ``chunks``' rows, 512 a request, into a new collection of the
    index's schema (``bm25``) or of the same fields without the BM25 function."""
    from pymilvus import DataType, MilvusClient

    from retrieval.milvus_index import _row, _schema

    rows = [_row(c, True) for c in chunks]
    client = MilvusClient(str(path))
    params = client.prepare_index_params()
    if bm25:
        params.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
        schema = _schema(None, "chinese")
    else:
        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("chunk_id", DataType.VARCHAR, is_primary=True, max_length=256)
        for name in ("doc_id", "title", "text", "bm25_text"):
            schema.add_field(name, DataType.VARCHAR, max_length=65535)
        schema.add_field("entities", DataType.ARRAY, element_type=DataType.VARCHAR,
                         max_capacity=64, max_length=128)
        schema.add_field("auto_tagged", DataType.BOOL)
        schema.add_field("metadata", DataType.JSON)
        schema.add_field("v", DataType.FLOAT_VECTOR, dim=2)  # a collection needs one vector
        params.add_index(field_name="v", index_type="FLAT", metric_type="L2")
        rows = [dict(r, v=[0.0, 1.0]) for r in rows]
    client.create_collection("c", schema=schema, index_params=params, consistency_level="Strong")
    t0 = time.perf_counter()
    for start in range(0, len(rows), 512):
        client.upsert("c", rows[start:start + 512], timeout=600)
    seconds = time.perf_counter() - t0
    client.close()
    return seconds


def run_child(tree: Path, size: int, floor: bool) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="ingest-speed-"))
    try:
        done = subprocess.run([sys.executable, __file__, "--child", str(tree), "--chunks", str(size),
                               "--workdir", str(workdir)] + (["--floor"] if floor else []),
                              cwd=tree, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"the run of {tree} failed:\n{done.stderr[-2000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _commit(tree: Path) -> str:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tree, capture_output=True, text=True)
    return done.stdout.strip()[:12] or tree.name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--against", type=Path, default=None, help="another checkout to compare")
    parser.add_argument("--record", type=Path, default=None, help="results JSON to add this to")
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--workdir", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--floor", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(child(args.child, args.chunks, args.workdir, args.floor)))
        return 0

    trees = {"new": REPO} | ({"old": args.against.resolve()} if args.against else {})
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    load = [os.getloadavg()[0]]
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    for r in range(args.runs):
        for name, tree in trees.items():
            runs[name].append(run_child(tree, args.chunks, floor=name == "new"))
            print(f"run {r + 1} {name}: " + ", ".join(f"{k} {v:.1f} s" for k, v in runs[name][-1].items()),
                  file=sys.stderr, flush=True)
    load.append(os.getloadavg()[0])
    rows = []
    print(f"{args.chunks:,} chunks, {args.runs} run(s), load average {load[0]:.1f} → {load[1]:.1f}")
    print(f"{'tree':5} {'commit':12} " + " ".join(f"{p + ' s':>14}" for p in PHASES) + f" {'ingest chunks/s':>16}")
    for name, tree in trees.items():
        med = {p: statistics.median(x[p] for x in runs[name]) for p in PHASES if p in runs[name][0]}
        rows.append({"tree": name, "commit": _commit(tree), "chunks": args.chunks, "runs": args.runs,
                     "seconds": {p: round(v, 2) for p, v in med.items()},
                     "ingest_chunks_per_s": round(args.chunks / med["ingest"], 1)})
        print(f"{name:5} {rows[-1]['commit']:12} " + " ".join(
            f"{med[p]:14.2f}" if p in med else f"{'–':>14}" for p in PHASES)
            + f" {rows[-1]['ingest_chunks_per_s']:16,.0f}")
    if args.record:
        results = json.loads(args.record.read_text(encoding="utf-8")) if args.record.exists() else {}
        results["ingest_speed"] = {"rows": rows, "load_average": load, "at": started,
                                   "command": "python benchmarks/ingest_speed.py " + " ".join(
                                       "OLDER_TREE" if a.startswith("/") else a
                                       for a in (argv or sys.argv[1:]))}
        args.record.write_text(json.dumps(results, ensure_ascii=False, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
