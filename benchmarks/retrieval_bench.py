"""Retrieval latency, `not in` cost and ingest throughput on a synthetic Chinese corpus.

    .venv/bin/python benchmarks/retrieval_bench.py [--sizes 10000 100000] [--queries 200]
        [--not-in 0 50 200 500 1000 2000 5000] [--dense-size 10000] [--out FILE]

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
  dense, RRF), embedding throughput included.

Nothing here touches Neo4j or a real kb. Timings are wall-clock on this machine.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pymilvus import MilvusClient  # noqa: E402

from retrieval.milvus_index import MilvusIndex  # noqa: E402
from retrieval.models import Chunk, DenseSpec  # noqa: E402
from retrieval.search import Retriever  # noqa: E402

SEED = 20261129
WORDS = (
    "华东区 华南区 华北区 西南区 东北区 销售额 利润 毛利率 产品 系列 产品线 个人版 企业版 意外险 "
    "综合意外险 医疗险 重疾险 条款 理赔 住院 门诊 津贴 等待期 保费 保额 门店 渠道 客户 会员 增长 "
    "下降 持平 季度 年度 预算 成本 库存 退货 运费 工资 病假 年假 婚假 产假 合同 续保 免赔额 上海 "
    "杭州 深圳 广州 北京 成都 武汉 南京 目标 完成率 同比 环比 报告 说明 申请 流程 审批 材料 发票 "
    "价格 折扣 功能 部署 单点登录 审计 日志 权限 空间 席位 版本 升级 培训 服务 热线 投诉 满意度"
).split()
MONTHS = [f"{m}月" for m in range(1, 13)]
PUNCT = "，，，。"


def sentence(rnd: random.Random) -> str:
    parts = [rnd.choice(WORDS) for _ in range(rnd.randint(6, 14))]
    if rnd.random() < 0.5:
        parts.insert(rnd.randrange(len(parts)), rnd.choice(MONTHS))
    if rnd.random() < 0.4:
        parts.append(f"{rnd.randint(1, 999)}亿元")
    return "".join(p + (rnd.choice(PUNCT) if rnd.random() < 0.2 else "") for p in parts) + "。"


def corpus(size: int, seed: int = SEED) -> list[Chunk]:
    """``size`` chunks in documents of three, each tagged with one of ``size // 50`` entities."""
    rnd = random.Random(seed)
    entities = max(1, size // 50)
    chunks = []
    for i in range(size):
        doc = i // 3
        text = "".join(sentence(rnd) for _ in range(rnd.randint(2, 5)))
        chunks.append(Chunk(f"d{doc}#{i % 3}", f"d{doc}", f"{rnd.choice(WORDS)}{rnd.choice(WORDS)}报告",
                            text, (f"e{rnd.randrange(entities)}",)))
    return chunks


def queries(n: int, size: int, seed: int = SEED + 1) -> list[tuple[str, str]]:
    rnd = random.Random(seed)
    entities = max(1, size // 50)
    return [("".join(rnd.choice(WORDS) for _ in range(rnd.randint(2, 4))) + rnd.choice(["", "是多少", "怎么申请"]),
             f"e{rnd.randrange(entities)}") for _ in range(n)]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    pos = (len(ordered) - 1) * p / 100
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def timed(fn, items) -> dict[str, float]:
    fn(items[0])  # warm
    times = []
    for item in items:
        start = time.perf_counter()
        fn(item)
        times.append((time.perf_counter() - start) * 1000)
    return {"p50_ms": round(pct(times, 50), 2), "p95_ms": round(pct(times, 95), 2),
            "mean_ms": round(statistics.fmean(times), 2)}


def run_size(size: int, n_queries: int, not_in: list[int], workdir: Path, embedder=None) -> dict:
    uri = str(workdir / f"bench-{size}{'-dense' if embedder else ''}.db")
    index = MilvusIndex(uri, timeout=120)
    kb = "bench"
    index.drop(kb)
    chunks = corpus(size)
    dense = DenseSpec(embedder.name, embedder.dim) if embedder else None
    index.ensure_collection(kb, dense)
    result: dict = {"chunks": size, "embedder": dense.embedder if dense else None}

    vectors = None
    if embedder is not None:
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
    retriever = Retriever(index, embedder=embedder)

    def bare(q):
        client.search(collection, data=[q[0]], anns_field="sparse", limit=5,
                      output_fields=["chunk_id"], search_params={"metric_type": "BM25"})

    def filtered(q):
        index.search(kb, q[0], limit=20, entity_ids=[q[1]], exclude_chunk_ids=consumed,
                     group_by_doc=False)

    def turn(q):
        retriever.search(kb, [q[0]], k=5, entity_ids=[q[1]], exclude_chunk_ids=consumed)

    result["latency"] = {"bare_milvus_bm25": timed(bare, qs), "index_filtered": timed(filtered, qs),
                         "retriever_turn": timed(turn, qs)}
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


def machine() -> dict:
    import os

    mem = None
    try:
        with open("/proc/meminfo") as fh:
            mem = round(int(fh.readline().split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpus": os.cpu_count(), "memory_gb": mem, "cpu": cpu, "python": platform.python_version()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--not-in", type=int, nargs="*", default=[0, 50, 200, 500, 1000, 2000, 5000],
                        help="exclusion list sizes, swept at the largest corpus size")
    parser.add_argument("--dense-size", type=int, default=0,
                        help="also run hybrid search with the bundled e5 model at this size")
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
                                       embedder=LocalE5Embedder()))
    print(json.dumps(report, ensure_ascii=False, indent=2))
    if args.out:
        args.out.write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
