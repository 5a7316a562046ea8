"""Whole-turn latency, BM25 beside hybrid (BM25 + the bundled e5), in one run.

    .venv/bin/python benchmarks/hybrid_turns.py --suite SUITE --bm25-kb KB --hybrid-kb KB_E5
        [--rounds 1] [--out FILE]

Both kbs hold the same ontology and corpus, one ingested without an embedder and one
with ``REFERENT_EMBED__BACKEND=local``. Every session of SUITE is played through a
turn engine of each kind (linking, rewrite, search, session store: what a turn costs
through the API, minus HTTP), the two alternating session by session so that both see
the same load. For the hybrid engine the query embeddings are timed, and the report
gives each system's turn p50/p95/p99 and the share of the hybrid turns' time spent
embedding (the median of the per-turn shares, and the total). Beside each hybrid
turn, a bare hybrid search of the user's words is timed (embedding them, then one
Milvus ``hybrid_search``, top 5): the report gives the ratio of the p50s. A third
engine, ``hybrid 2 req``, is the same hybrid engine whose index fetches the BM25 and
dense rankings in two requests and fuses them in process (what every hybrid query did
before the index fused them in one request), so the two are compared in one run. Figures
depend on the machine and on what else runs on it: the report records the load average.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.retrieval_bench import TimedEmbedder  # noqa: E402
from benchmarks.synth import machine, pct  # noqa: E402


def summary(times: list[float]) -> dict[str, float]:
    return {"turns": len(times), "p50_ms": round(pct(times, 50), 1), "p95_ms": round(pct(times, 95), 1),
            "p99_ms": round(pct(times, 99), 1), "mean_ms": round(statistics.fmean(times), 1)}


class BareHybrid:
    """What a plain hybrid search of the user's words costs: embed them (no memo), then
    one Milvus ``hybrid_search`` of BM25 and dense, fused by RRF in Milvus, top 5."""

    def __init__(self, index, kb: str, e5) -> None:
        self._client = index._client  # the index's own connection: the same Milvus
        self._collection = "referent_" + kb
        self._e5 = e5

    def time(self, text: str) -> float:
        from pymilvus import AnnSearchRequest, RRFRanker

        start = time.perf_counter()
        vector = self._e5.embed_query(text)
        requests = [AnnSearchRequest(data=[text], anns_field="sparse", param={"metric_type": "BM25"},
                                     limit=5),
                    AnnSearchRequest(data=[list(vector)], anns_field="dense",
                                     param={"metric_type": "COSINE"}, limit=5)]
        self._client.hybrid_search(self._collection, requests, RRFRanker(60), limit=5,
                                   output_fields=["chunk_id"])
        return (time.perf_counter() - start) * 1000


class TwoRequests:
    """An index whose hybrid search is two requests (BM25, then dense) fused in process;
    everything else is the wrapped index's."""

    def __init__(self, index) -> None:
        self._index = index

    def __getattr__(self, name: str):
        return getattr(self._index, name)

    def hybrid_search(self, kb, query, vector, *, limit, rrf_k=60, with_vectors=False,
                      **filters):
        from retrieval.fusion import rrf_scores

        bm25 = self._index.search(kb, query, limit=limit, group_by_doc=False,
                                  with_vectors=with_vectors, **filters)
        dense = self._index.dense_search(kb, vector, limit=limit, with_vectors=with_vectors,
                                         **filters)
        return rrf_scores([bm25, dense], k=rrf_k)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", type=Path, required=True)
    parser.add_argument("--bm25-kb", required=True)
    parser.add_argument("--hybrid-kb", required=True)
    parser.add_argument("--rounds", type=int, default=1, help="times to play the suite")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--record", type=Path, default=None,
                        help="merge the figures into this JSON under hybrid/<suite> "
                             "(docs/benchmarks/results.json, what benchmarks/report.py renders)")
    parser.add_argument("--against", type=Path, default=None,
                        help="an older tree's --out of the same suite, run just before this "
                             "one: kept beside these figures (under 'against')")
    args = parser.parse_args()

    from api.runtime import Runtime, engine_config
    from api.settings import Settings
    from dialogue.engine import TurnEngine
    from dialogue.policy.vectors import QueryMemo
    from dialogue.topic_shift import SimilarityShift
    from evaluation.suites import parse_suite
    from retrieval.embedders import LocalE5Embedder
    from retrieval.search import Retriever

    scripts = parse_suite(args.suite.read_text(encoding="utf-8").splitlines(), path=str(args.suite))
    settings = Settings(embed={"backend": "none"})
    runtime = Runtime.build(settings)
    try:
        e5 = LocalE5Embedder()
        clock = TimedEmbedder(e5)
        e = settings.embed

        def hybrid_engine(index) -> TurnEngine:
            # As the server wires it: one memo of query vectors shared by retrieval and the
            # topic-shift check (api/runtime.py); one per engine, so that neither finds the
            # other's vectors.
            memo = QueryMemo(clock)
            return TurnEngine(runtime.snapshots,
                              Retriever(index, config=runtime.retriever.config, embedder=memo),
                              runtime.sessions, engine_config(settings),
                              shift=SimilarityShift(memo, low=e.switch_low, high=e.switch_high))

        bare = BareHybrid(runtime.index, args.hybrid_kb, e5)
        systems = {"bm25": (runtime.engine, args.bm25_kb),
                   "hybrid": (hybrid_engine(runtime.index), args.hybrid_kb),
                   "hybrid 2 req": (hybrid_engine(TwoRequests(runtime.index)), args.hybrid_kb)}
        times: dict[str, list[float]] = {name: [] for name in (*systems, "bare hybrid")}
        shares: list[float] = []
        embed_total = 0.0
        # Warm each: the first turn loads the alias tables and the model.
        for engine, kb in systems.values():
            engine.handle(kb, f"warm-{uuid.uuid4().hex[:8]}", scripts[0].turns[0].user)
        for _ in range(args.rounds):
            for n, script in enumerate(scripts):
                # Every other session the other way round, so no engine always plays second.
                order = list(systems.items())
                for name, (engine, kb) in (order if n % 2 == 0 else order[::-1]):
                    sid = f"bench-{uuid.uuid4().hex[:10]}"
                    for turn in script.turns:
                        clock.spent = 0.0
                        start = time.perf_counter()
                        engine.handle(kb, sid, turn.user)
                        took = time.perf_counter() - start
                        times[name].append(took * 1000)
                        if name == "hybrid":
                            shares.append(clock.spent / took if took else 0.0)
                            embed_total += clock.spent
                            times["bare hybrid"].append(bare.time(turn.user))
    finally:
        runtime.close()
    from benchmarks.run_all import _git_commit

    report = {"machine": machine(), "suite": f"{args.suite.parent.name}/{args.suite.name}",
              "commit": _git_commit(),
              "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "systems": {name: summary(t) for name, t in times.items()}}
    bare_p50 = report["systems"]["bare hybrid"]["p50_ms"]
    report["hybrid_over_bare_p50"] = round(report["systems"]["hybrid"]["p50_ms"] / bare_p50, 2)
    report["two_requests_over_bare_p50"] = round(
        report["systems"]["hybrid 2 req"]["p50_ms"] / bare_p50, 2)
    report["systems"]["hybrid"]["embedding_share_median"] = round(statistics.median(shares), 3)
    report["systems"]["hybrid"]["embedding_share_of_total"] = round(
        embed_total / (sum(times["hybrid"]) / 1000), 3)
    print(json.dumps(report, ensure_ascii=False, indent=2))
    print(f"\nmachine: {report['machine']}", file=sys.stderr)
    print(f"{'system':<12} {'turns':>6} {'p50':>8} {'p95':>8} {'p99':>8}  embedding share (median / total)",
          file=sys.stderr)
    for name, s in report["systems"].items():
        extra = (f"  {s['embedding_share_median']:.0%} / {s['embedding_share_of_total']:.0%}"
                 if name == "hybrid" else "")
        print(f"{name:<12} {s['turns']:>6} {s['p50_ms']:>8.1f} {s['p95_ms']:>8.1f} {s['p99_ms']:>8.1f}{extra}",
              file=sys.stderr)
    print(f"hybrid turn p50 / bare hybrid p50: {report['hybrid_over_bare_p50']} "
          f"(two requests: {report['two_requests_over_bare_p50']})", file=sys.stderr)
    if args.against:
        older = json.loads(args.against.read_text(encoding="utf-8"))
        report["against"] = {key: older[key] for key in
                             ("commit", "at", "machine", "systems", "hybrid_over_bare_p50")}
        print(f"older tree {str(older['commit'])[:12]}: hybrid turn p50 / bare hybrid p50 "
              f"{older['hybrid_over_bare_p50']}", file=sys.stderr)
    if args.out:
        args.out.write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    if args.record:
        recorded = json.loads(args.record.read_text(encoding="utf-8"))
        recorded.setdefault("hybrid", {})[args.suite.parent.name] = report
        args.record.write_text(json.dumps(recorded, ensure_ascii=False, indent=2),
                               encoding="utf-8")


if __name__ == "__main__":
    main()
