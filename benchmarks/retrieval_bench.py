"""Retrieval latency, `not in` cost and ingest throughput on a synthetic Chinese corpus.

    .venv/bin/python benchmarks/retrieval_bench.py [--sizes 10000 100000] [--queries 200]
        [--not-in 0 50 200 500 1000 2000 5000] [--dense-size 10000]
        [--dense-passages model|random] [--out FILE]

For each corpus size, a fresh Milvus Lite file gets a generated corpus (fixed
seed: the same chunks on every run) of three-chunk documents, each chunk
tagged with one of ``size / 50`` entities. It prints and (``--out``) writes:

- ingest: chunks/s through ``MilvusIndex.upsert`` (size-bounded batches);
- latency p50/p95 of the same queries through
  * ``bare``: one ``MilvusClient.search`` BM25 call, no filter, limit 5 — the floor,
  * ``index``: ``MilvusIndex.search`` with the entity filter and 50 consumed chunks excluded,
  * ``retriever``: ``Retriever.search`` as a turn runs it (filter, 50 excluded, pool of 20,
    rerank, per-document cap, near-duplicates, no-answer);
- ``not in``: ``MilvusIndex.search`` with 0 … 5,000 excluded chunk ids and doc ids;
- with ``--dense-size N``: the same at N chunks with the bundled e5 model (hybrid BM25 +
  dense, RRF), embedding throughput included, and for the turn the share of its time
  spent embedding the query. ``--dense-passages random`` stores random unit vectors
  instead of embedding every passage (the model embeds about 16 passages/s here, so
  100,000 would take close to two hours): search latency does not depend on what the
  stored vectors mean, and the query is still embedded by the model on every turn.

Every latency has p50, p95 and p99; the table at the end puts the turn beside the bare
Milvus search (the baseline) of the same run.

Nothing here touches Neo4j or a real kb. Timings are wall-clock on this machine.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pymilvus import MilvusClient  # noqa: E402

from retrieval.milvus_index import MilvusIndex  # noqa: E402
from retrieval.models import DenseSpec  # noqa: E402
from retrieval.request import SearchRequest
from retrieval.search import Retriever  # noqa: E402
from benchmarks.synth import CORPUS_SEED, corpus, machine, pct, queries  # noqa: E402

SEED = CORPUS_SEED


def timed(fn, items, clock=None) -> dict[str, float]:
    """Latency of ``fn`` over ``items``; with ``clock`` (a :class:`TimedEmbedder`), also
    the share of each call spent embedding."""
    fn(items[0])  # warm
    times, shares = [], []
    for item in items:
        if clock is not None:
            clock.spent = 0.0
        start = time.perf_counter()
        fn(item)
        elapsed = time.perf_counter() - start
        times.append(elapsed * 1000)
        if clock is not None:
            shares.append(clock.spent / elapsed if elapsed else 0.0)
    out = {"p50_ms": round(pct(times, 50), 2), "p95_ms": round(pct(times, 95), 2),
           "p99_ms": round(pct(times, 99), 2), "mean_ms": round(statistics.fmean(times), 2)}
    if clock is not None:
        out["embedding_share_median"] = round(statistics.median(shares), 3)
        out["embedding_share_of_total"] = round(clock.total / (sum(times) / 1000), 3) \
            if times else 0.0
    return out


class TimedEmbedder:
    """Wraps an embedder and adds up the time its query embeddings take."""

    def __init__(self, inner) -> None:
        self._inner = inner
        self.spent = 0.0
        self.total = 0.0

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed_passages(self, texts):
        return self._inner.embed_passages(texts)

    def embed_query(self, text):
        return self._timed(self._inner.embed_query, text)

    def embed_queries(self, texts):
        return self._timed(self._inner.embed_queries, texts)

    def _timed(self, call, arg):
        start = time.perf_counter()
        try:
            return call(arg)
        finally:
            took = time.perf_counter() - start
            self.spent += took
            self.total += took


def random_vectors(n: int, dim: int, seed: int) -> list[tuple[float, ...]]:
    """Unit vectors for latency runs that do not embed every passage."""
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        v = [rnd.gauss(0, 1) for _ in range(dim)]
        norm = sum(x * x for x in v) ** 0.5 or 1.0
        out.append(tuple(x / norm for x in v))
    return out


def run_size(size: int, n_queries: int, not_in: list[int], workdir: Path, embedder=None,
             passages: str = "model") -> dict:
    uri = str(workdir / f"bench-{size}{'-dense' if embedder else ''}.db")
    index = MilvusIndex(uri, timeout=120)
    kb = "bench"
    index.drop(kb)
    chunks = corpus(size)
    dense = DenseSpec(embedder.name, embedder.dim) if embedder else None
    index.ensure_collection(kb, dense)
    result: dict = {"chunks": size, "embedder": dense.embedder if dense else None}

    vectors = None
    if embedder is not None and passages == "random":
        vectors = random_vectors(size, embedder.dim, SEED + 3)
        result["passages"] = "random unit vectors (latency only)"
    elif embedder is not None:
        result["passages"] = "embedded by the model"
        start = time.perf_counter()
        vectors = embedder.embed_passages([f"{c.title}\n{c.text}" for c in chunks])
        seconds = time.perf_counter() - start
        result["embed"] = {"seconds": round(seconds, 1), "chunks_per_s": round(size / seconds, 1)}
    start = time.perf_counter()
    index.upsert(kb, chunks, vectors=vectors)
    seconds = time.perf_counter() - start
    result["ingest"] = {"seconds": round(seconds, 1), "chunks_per_s": round(size / seconds)}
    print(f"[{size}] stored in {seconds:.1f} s ({size / seconds:.0f} chunks/s)", file=sys.stderr)

    qs = queries(n_queries, size)
    rnd = random.Random(SEED + 2)
    all_ids = [c.chunk_id for c in chunks]
    consumed = rnd.sample(all_ids, 50)
    client = MilvusClient(uri)
    collection = "referent_" + kb
    clock = TimedEmbedder(embedder) if embedder is not None else None
    retriever = Retriever(index, embedder=clock)

    def bare(q):
        client.search(collection, data=[q[0]], anns_field="sparse", limit=5,
                      output_fields=["chunk_id"], search_params={"metric_type": "BM25"})

    def filtered(q):
        index.search(kb, q[0], limit=20, entity_ids=[q[1]], exclude_chunk_ids=consumed,
                     group_by_doc=False)

    def turn(q):
        retriever.search(kb, SearchRequest([q[0]], k=5, entity_ids=[q[1]], exclude_chunk_ids=consumed))

    result["latency"] = {"bare_milvus_bm25": timed(bare, qs), "index_filtered": timed(filtered, qs),
                         "retriever_turn": timed(turn, qs, clock)}
    if embedder is not None:
        vector = embedder.embed_query(qs[0][0])

        def bare_dense(q):
            client.search(collection, data=[list(vector)], anns_field="dense", limit=5,
                          output_fields=["chunk_id"], search_params={"metric_type": "COSINE"})

        result["latency"]["bare_milvus_dense"] = timed(bare_dense, qs)
        result["latency"]["embed_query"] = timed(lambda q: embedder.embed_query(q[0]), qs)
    print(f"[{size}] latency {json.dumps(result['latency'])}", file=sys.stderr)

    if not_in:
        doc_ids = sorted({c.doc_id for c in chunks})
        sweep = {}
        for n in not_in:
            ex_chunks = rnd.sample(all_ids, min(n, len(all_ids)))
            ex_docs = rnd.sample(doc_ids, min(n, len(doc_ids)))
            sweep[n] = {
                "chunk_ids": timed(lambda q: index.search(kb, q[0], limit=20, exclude_chunk_ids=ex_chunks,
                                                          group_by_doc=False), qs),
                "doc_ids": timed(lambda q: index.search(kb, q[0], limit=20, exclude_doc_ids=ex_docs,
                                                        group_by_doc=False), qs),
            }
            print(f"[{size}] not in {n}: {json.dumps(sweep[n])}", file=sys.stderr)
        result["not_in"] = sweep
    client.close()
    index.drop(kb)
    index.close()
    return result


def print_table(report: dict) -> None:
    """One line per run: the turn beside the bare search of the same run (to stderr)."""
    m = report["machine"]
    print(f"\nmachine: {m}", file=sys.stderr)
    print(f"{'corpus':<50} {'bare BM25 p50/p99':>18} {'turn p50/p95/p99 ms':>22} "
          f"{'embed share':>12}", file=sys.stderr)
    for run in report["runs"]:
        lat = run["latency"]
        bare, turn = lat["bare_milvus_bm25"], lat["retriever_turn"]
        what = f"{run['chunks']:,} chunks, " + ("BM25" if not run["embedder"] else
                                                 f"BM25 + {run['embedder']}")
        share = turn.get("embedding_share_median")
        print(f"{what:<50} {bare['p50_ms']:>8.2f} / {bare['p99_ms']:<7.2f} "
              f"{turn['p50_ms']:>7.2f} / {turn['p95_ms']:.2f} / {turn['p99_ms']:<7.2f} "
              f"{'' if share is None else f'{share:.0%}':>8}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--not-in", type=int, nargs="*", default=[0, 50, 200, 500, 1000, 2000, 5000],
                        help="exclusion list sizes, swept at the largest corpus size")
    parser.add_argument("--dense-size", type=int, default=0,
                        help="also run hybrid search with the bundled e5 model at this size")
    parser.add_argument("--dense-passages", choices=["model", "random"], default="model",
                        help="embed the hybrid corpus with the model, or store random unit "
                             "vectors (latency only; the query is embedded by the model)")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="referent-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    report = {"machine": machine(), "seed": SEED, "queries": args.queries, "runs": []}
    biggest = max(args.sizes)
    for size in args.sizes:
        report["runs"].append(run_size(size, args.queries, args.not_in if size == biggest else [],
                                       workdir))
    if args.dense_size:
        from retrieval.embedders import LocalE5Embedder

        report["runs"].append(run_size(args.dense_size, args.queries, [], workdir,
                                       embedder=LocalE5Embedder(), passages=args.dense_passages))
    print(json.dumps(report, ensure_ascii=False, indent=2))
    print_table(report)
    if args.out:
        args.out.write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
