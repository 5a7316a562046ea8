"""Synthetic data for every benchmark, generated from fixed seeds (the same data on every run).

- :func:`synthetic_ontology`: Chinese product names of 3-8 characters with confusable
  variants (one entity in ten has a personal and an enterprise edition sharing its bare
  name, so a bare mention is ambiguous), about three aliases per entity;
- :func:`utterances`: realistic turns over those names (questions, ellipsis, pronouns,
  ordinals, negations, versions, topic switches);
- :func:`import_lines`: an ontology file of distinct random names (import benchmarks);
- :func:`corpus` / :func:`queries`: generated Chinese business text for retrieval alone;
- :func:`turn_kb`: an ontology, a corpus whose chunks talk about its entities, and
  scripted multi-turn sessions, for end-to-end turn and server benchmarks.

Helpers shared by the scripts: :func:`pct`, :func:`rss_mb`, :func:`machine`.
"""

from __future__ import annotations

import json
import os
import platform
import random
from dataclasses import dataclass

from kg.ontology import EntityDef, Ontology, TypeDef, dump_ontology
from retrieval.models import Chunk

# -- entity names -------------------------------------------------------------------------

NAME_CHARS = ("华东南西北中安康泰和平信达通汇融科技云智数联创星海天宇金银盛世嘉业恒远新源"
              "博雅兴隆瑞祥宏图鼎力昌明广顺德润丰实美佳乐思维远景众合同心诚益万方")
NAME_SUFFIXES = ["保险", "医疗险", "意外险", "云盘", "平台", "系统", "产品", "服务", "计划", "套餐"]
ATTRIBUTES = ("价格", "申请流程", "保障范围", "理赔流程")
TEMPLATES = ["{a}怎么申请", "{a}的价格是多少", "那{a}呢", "{a}和{b}有什么区别", "它的保障范围是什么",
             "{a}不能退了吗", "2024版{a}的条款", "换个话题，{a}的理赔流程", "第一个", "{a}企业版多少钱"]


@dataclass(frozen=True)
class NamedEntity:
    """One generated entity and the bare name users call it by (shared by editions)."""

    id: str
    name: str
    bare: str
    edition: str | None = None


def _named_entities(n_aliases: int, seed: int) -> tuple[list[EntityDef], list[NamedEntity]]:
    rng = random.Random(seed)
    entities: list[EntityDef] = []
    named: list[NamedEntity] = []
    seen: set[str] = set()
    i = aliases = 0
    while aliases < n_aliases:
        core = "".join(rng.choice(NAME_CHARS) for _ in range(rng.randint(2, 4)))
        name = core + rng.choice(NAME_SUFFIXES)
        if name in seen:
            continue
        seen.add(name)
        if i % 10 == 0:
            for edition, suffix in (("personal", "个人版"), ("enterprise", "企业版")):
                entities.append(EntityDef(id=f"e{i}.{edition}", name=f"{name}（{suffix}）",
                                          type="Product", aliases=(name, name + suffix)))
                named.append(NamedEntity(f"e{i}.{edition}", f"{name}（{suffix}）", name, suffix))
                aliases += 3
        else:
            entities.append(EntityDef(id=f"e{i}", name=name, type="Product",
                                      aliases=(core, name + "方案")))
            named.append(NamedEntity(f"e{i}", name, name))
            aliases += 3
        i += 1
    return entities, named


def synthetic_ontology(n_aliases: int, seed: int = 7) -> tuple[Ontology, list[str]]:
    """About three aliases per entity; one entity in ten has a personal and an
    enterprise edition sharing its bare name. Returns the ontology and the bare names."""
    entities, named = _named_entities(n_aliases, seed)
    types = (TypeDef("Product", ATTRIBUTES),)
    names = list(dict.fromkeys(n.bare for n in named))
    return Ontology(types=types, entities=tuple(entities)), names


def utterances(names: list[str], n: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(TEMPLATES).format(a=rng.choice(names), b=rng.choice(names)) for _ in range(n)]


# -- ontology files for import ------------------------------------------------------------

IMPORT_CHARS = ("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子"
                "说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机"
                "当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心"
                "反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程"
                "展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期"
                "根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志")


def import_lines(entities: int, aliases_per_entity: int, *, seed: int, start: int = 0,
                 used: set[str] | None = None) -> list[str]:
    """An ontology file: one type, then ``entities`` entities with distinct aliases."""
    rng = random.Random(seed)
    used = used if used is not None else set()

    def name() -> str:
        while True:
            text = "".join(rng.choice(IMPORT_CHARS) for _ in range(rng.randint(3, 8)))
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


# -- corpus text ---------------------------------------------------------------------------

CORPUS_SEED = 20261129
WORDS = (
    "华东区 华南区 华北区 西南区 东北区 销售额 利润 毛利率 产品 系列 产品线 个人版 企业版 意外险 "
    "综合意外险 医疗险 重疾险 条款 理赔 住院 门诊 津贴 等待期 保费 保额 门店 渠道 客户 会员 增长 "
    "下降 持平 季度 年度 预算 成本 库存 退货 运费 工资 病假 年假 婚假 产假 合同 续保 免赔额 上海 "
    "杭州 深圳 广州 北京 成都 武汉 南京 目标 完成率 同比 环比 报告 说明 申请 流程 审批 材料 发票 "
    "价格 折扣 功能 部署 单点登录 审计 日志 权限 空间 席位 版本 升级 培训 服务 热线 投诉 满意度"
).split()
MONTHS = [f"{m}月" for m in range(1, 13)]
_PUNCT = "，，，。"


def sentence(rnd: random.Random) -> str:
    parts = [rnd.choice(WORDS) for _ in range(rnd.randint(6, 14))]
    if rnd.random() < 0.5:
        parts.insert(rnd.randrange(len(parts)), rnd.choice(MONTHS))
    if rnd.random() < 0.4:
        parts.append(f"{rnd.randint(1, 999)}亿元")
    return "".join(p + (rnd.choice(_PUNCT) if rnd.random() < 0.2 else "") for p in parts) + "。"


def corpus(size: int, seed: int = CORPUS_SEED) -> list[Chunk]:
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


def queries(n: int, size: int, seed: int = CORPUS_SEED + 1) -> list[tuple[str, str]]:
    rnd = random.Random(seed)
    entities = max(1, size // 50)
    return [("".join(rnd.choice(WORDS) for _ in range(rnd.randint(2, 4))) + rnd.choice(["", "是多少", "怎么申请"]),
             f"e{rnd.randrange(entities)}") for _ in range(n)]


# -- a whole kb for turn benchmarks ---------------------------------------------------------

@dataclass(frozen=True)
class TurnKb:
    """A generated kb: ontology and corpus files (docs/formats.md §1, §2) and sessions of turns."""

    ontology_lines: list[str]
    corpus_lines: list[str]
    sessions: list[list[str]]
    entities: int
    chunks: int


def turn_kb(chunks: int, *, sessions: int = 60, seed: int = 29) -> TurnKb:
    """``chunks`` chunks about ``chunks // 10`` entities (at least 20): for every entity
    one document per attribute (价格, 申请流程, 保障范围, 理赔流程), two or three chunks
    each, naming the entity and the attribute in generated business text, tagged with
    the entity id. Sessions of four turns mix a named question, a pronoun, an ellipsis
    swap to a confusable name, a comparison and, for an edition pair, a clarification
    answered by an ordinal."""
    rnd = random.Random(seed)
    n_entities = max(20, chunks // 10)
    entity_defs, named = _named_entities(n_entities * 3 + 6, seed)
    cut = n_entities - (1 if named[n_entities - 1].edition == "个人版" else 0)  # keep pairs whole
    entity_defs, named = entity_defs[:cut], named[:cut]
    n_entities = cut
    ontology = Ontology(types=(TypeDef("Product", ATTRIBUTES),), entities=tuple(entity_defs))
    ontology_lines = list(dump_ontology(ontology))

    lines: list[str] = []
    made = 0
    per_entity = [chunks // n_entities + (1 if i < chunks % n_entities else 0) for i in range(n_entities)]
    for entity, count in zip(named, per_entity):
        for j in range(count):
            attribute = ATTRIBUTES[j % len(ATTRIBUTES)]
            part = j // len(ATTRIBUTES)
            doc_id = f"{entity.id}-{j % len(ATTRIBUTES)}"
            text = (f"{entity.name}的{attribute}：" + "".join(sentence(rnd) for _ in range(rnd.randint(2, 4))))
            lines.append(json.dumps({"doc_id": doc_id, "chunk_id": f"{doc_id}#{part}",
                                     "title": f"{entity.name}{attribute}说明", "text": text,
                                     "entity_ids": [entity.id]}, ensure_ascii=False))
            made += 1
    plain = [n for n in named if n.edition is None]
    editions = [n for n in named if n.edition == "个人版"]
    scripted: list[list[str]] = []
    for s in range(sessions):
        a, b = rnd.sample(plain, 2)
        attr = rnd.choice(ATTRIBUTES)
        if s % 4 == 3 and editions:
            e = rnd.choice(editions)
            scripted.append([f"{e.bare}的{attr}是什么", rnd.choice(["第一个", "第二个", "个人版", "企业版"]),
                             "它的价格是多少", f"那{a.name}呢"])
        else:
            scripted.append([f"{a.name}的{attr}是什么", "它的价格是多少", f"那{b.name}呢",
                             rnd.choice([f"{b.name}和{a.name}有什么区别", f"{b.name}不能申请了吗",
                                         f"2024版{b.name}的理赔流程", "换个话题，它怎么理赔"])])
    return TurnKb(ontology_lines, lines, scripted, n_entities, made)


# -- measuring helpers ----------------------------------------------------------------------

def pct(values: list[float], p: float) -> float:
    """The p-th percentile, linearly interpolated."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    pos = (len(ordered) - 1) * p / 100
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def rss_mb(pid: int | str = "self") -> float:
    """Resident memory of a process in MB (10^6 bytes)."""
    with open(f"/proc/{pid}/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def machine() -> dict:
    """Cores, memory, CPU model, Python and load average of this machine."""
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
    return {"cpus": os.cpu_count(), "memory_gb": mem, "cpu": cpu, "python": platform.python_version(),
            "platform": platform.platform(), "load_average": [round(x, 2) for x in os.getloadavg()]}
