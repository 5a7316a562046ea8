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
import random
import resource
import statistics
import sys
import time

from kg.aliases import AliasSnapshot
from kg.linker import EntityLinker
from kg.mentions import detect_mentions
from kg.ontology import EntityDef, Ontology, TypeDef

_CHARS = ("华东南西北中安康泰和平信达通汇融科技云智数联创星海天宇金银盛世嘉业恒远新源"
          "博雅兴隆瑞祥宏图鼎力昌明广顺德润丰实美佳乐思维远景众合同心诚益万方")
_SUFFIX = ["保险", "医疗险", "意外险", "云盘", "平台", "系统", "产品", "服务", "计划", "套餐"]
_TEMPLATES = ["{a}怎么申请", "{a}的价格是多少", "那{a}呢", "{a}和{b}有什么区别", "它的保障范围是什么",
              "{a}不能退了吗", "2024版{a}的条款", "换个话题，{a}的理赔流程", "第一个", "{a}企业版多少钱"]


def synthetic_ontology(n_aliases: int, seed: int = 7) -> tuple[Ontology, list[str]]:
    """About three aliases per entity; one entity in ten has a personal and an
    enterprise edition sharing its bare name."""
    rng = random.Random(seed)
    entities, names, seen = [], [], set()
    i = aliases = 0
    while aliases < n_aliases:
        core = "".join(rng.choice(_CHARS) for _ in range(rng.randint(2, 4)))
        name = core + rng.choice(_SUFFIX)
        if name in seen:
            continue
        seen.add(name)
        if i % 10 == 0:
            for edition, suffix in (("personal", "个人版"), ("enterprise", "企业版")):
                entities.append(EntityDef(id=f"e{i}.{edition}", name=f"{name}（{suffix}）",
                                          type="Product", aliases=(name, name + suffix)))
                aliases += 3
        else:
            entities.append(EntityDef(id=f"e{i}", name=name, type="Product",
                                      aliases=(core, name + "方案")))
            aliases += 3
        names.append(name)
        i += 1
    types = (TypeDef("Product", ("价格", "申请流程", "保障范围", "理赔流程")),)
    return Ontology(types=types, entities=tuple(entities)), names


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize() / 1e6


def utterances(names: list[str], n: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(_TEMPLATES).format(a=rng.choice(names), b=rng.choice(names)) for _ in range(n)]


def time_turns(snapshot: AliasSnapshot, texts: list[str]) -> list[float]:
    linker = EntityLinker()
    focus = [next(iter(snapshot.entities))]
    out = []
    for text in texts:
        started = time.perf_counter()
        linker.link(detect_mentions(text, snapshot), snapshot, focus=focus)
        out.append((time.perf_counter() - started) * 1000)
    return out


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


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
