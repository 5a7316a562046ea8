"""How long the ontology suggestion takes as the corpus grows (target: 10,000 passages
in under a minute on 2 cores).

    .venv/bin/python benchmarks/suggest_speed.py [--sizes 1000 5000 10000] [--corpus FILE ...]

The generated corpus is Chinese product documentation: families of products
with variants (（个人版）), editions (（2024版）), FAQs, notices and an English FAQ,
about 150 characters a passage, so that every stage of the pipeline has work to
do. Files given with --corpus are timed too. Each size runs in a fresh process
so that the segmenter's dictionary load (once per process) is counted in full;
the load alone is printed as the baseline every run pays.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

_HEADS = ["套餐", "信用卡", "贷款", "保险", "会员卡", "宽带", "体检套餐", "云盘", "理财", "门诊"]
_LEADS = "青禾 安居 畅途 锦程 星河 云杉 明湖 北辰 嘉木 远航 晴川 松岩 白鹭 金穗 长风 海棠".split()
_MIDS = "尊享 优选 畅享 悦享 智选 安心 如意 安康 乐活 逸行".split()
_VARIANTS = ["个人版", "家庭版", "企业版", "标准版", "白金版"]
_FACTS = ["月费{n}元", "年费{n}元", "额度最高{n}万元", "保额{n}万元", "有效期{n}个月", "免赔额{n}元"]


def generate(passages: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    lines: list[str] = []
    n = 0
    while len(lines) < passages:
        name = rng.choice(_LEADS) + rng.choice(_MIDS) + rng.choice(_HEADS) + (str(n) if n >= 160 else "")
        n += 1
        variants = rng.sample(_VARIANTS, rng.randint(1, 3))
        for variant in variants:
            for year in rng.sample([2024, 2025], rng.randint(1, 2)):
                title = f"{name}（{variant}）产品说明（{year}版）"
                for part in range(rng.randint(2, 5)):
                    facts = "，".join(f.format(n=rng.randint(5, 900)) for f in rng.sample(_FACTS, 3))
                    text = (f"{name}（{variant}）{year}版：{facts}。自{year}年{rng.randint(1, 12)}月1日起执行。"
                            f"{name}{variant}可在手机银行办理，问：{name}怎么退订？答：在App“我的”页面退订。")
                    lines.append(json.dumps({"doc_id": f"d{n}-{variant}-{year}", "chunk_id": f"d{n}-{variant}-{year}:{part}",
                                             "title": title, "text": text}, ensure_ascii=False))
        lines.append(json.dumps({"doc_id": f"faq{n}", "title": f"{name}常见问题",
                                 "text": f"问：{name}和别的产品有什么区别？答：{name}（{variants[0]}）月费更低。"
                                         f"{name} (Product {n}) is sold online."}, ensure_ascii=False))
    return lines[:passages]


def _time_one(path: str) -> dict:
    code = (
        "import json, sys, time\n"
        "t0 = time.perf_counter()\n"
        "from kg.suggest import read_corpus, suggest, to_ontology\n"
        "from kg.suggest.segment import words_of\n"
        "words_of('预热')\n"
        "t1 = time.perf_counter()\n"
        "lines = open(sys.argv[1], encoding='utf-8').read().splitlines()\n"
        "s = suggest(read_corpus(lines))\n"
        "w = to_ontology(s)\n"
        "t2 = time.perf_counter()\n"
        "print(json.dumps({'load_s': t1 - t0, 'suggest_s': t2 - t1, 'passages': len(lines),"
        " 'entities': len(w.ontology.entities)}))\n")
    proc = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parent.parent, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 5000, 10000])
    parser.add_argument("--corpus", type=Path, nargs="*", default=[])
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cpus; python {sys.version.split()[0]}")
    print(f"{'corpus':<28} {'passages':>9} {'entities':>9} {'load s':>8} {'suggest s':>10} {'passages/s':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        runs = []
        for size in args.sizes:
            path = Path(tmp) / f"generated-{size}.jsonl"
            path.write_text("\n".join(generate(size)) + "\n", encoding="utf-8")
            runs.append((f"generated {size}", str(path)))
        runs += [(p.parent.name + "/" + p.name, str(p)) for p in args.corpus]
        for label, path in runs:
            r = _time_one(path)
            rate = r["passages"] / r["suggest_s"] if r["suggest_s"] else 0.0
            print(f"{label:<28} {r['passages']:>9} {r['entities']:>9} {r['load_s']:>8.1f} "
                  f"{r['suggest_s']:>10.1f} {rate:>11.0f}")
    print("target: 10,000 passages in under 60 s (load + suggest)")


if __name__ == "__main__":
    main()
