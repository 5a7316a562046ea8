"""docs/benchmarks.md and its PNG plots, from the JSON that benchmarks/run_all.py wrote.

    .venv/bin/python benchmarks/report.py [--results docs/benchmarks/results.json]
                                          [--out docs/benchmarks.md]

The plots go to a folder named after the report (``docs/benchmarks/``). Every number in
the report comes from the results file; nothing is measured here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks import report_profile  # noqa: E402
DEFAULT_RESULTS = REPO / "docs" / "benchmarks" / "results.json"
DEFAULT_REPORT = REPO / "docs" / "benchmarks.md"

STAGES = ("session_load", "detect", "link", "rewrite", "retrieve", "pack", "session_save")
METRICS = ["turns", "hit_turns", "hit_at_k", "action_turns", "action_accuracy", "clarify_precision", "clarify_recall",
           "clarify_options_ok", "entity_precision", "entity_recall", "not_entities_ok",
           "must_contain_pass", "repeated_evidence_rate", "mean_context_tokens",
           "latency_p50_ms", "latency_p95_ms"]
SYSTEMS = ("referent", "raw", "concat")
ONE_DECIMAL = {"mean_context_tokens", "latency_p50_ms", "latency_p95_ms"}

# What a reader needs to read a suite's figures right (the measurements behind each note
# are in the doc it names).
SUITE_NOTES = {
    "kdconv-dev": "KdConv puts its gold evidence on the turn that *states* a fact (usually the answer), "
                  "while Referent usually finds the fact on the question before it and by design never "
                  "shows a chunk twice in a session (repeated-evidence rate 0): most of its misses on "
                  "turns 3+ were shown on an earlier turn (`benchmarks/evidence_timing.py`, "
                  "docs/retrieval.md). `raw` repeats evidence freely, `concat` more so.",
    "claqua-dev-single": "CLAQUA scores the decision to ask (clarify precision/recall, action accuracy); "
                         "its turns carry no evidence, so hit@k is empty (how the fit decides: "
                         "docs/linking.md).",
    "claqua-dev-multi": "CLAQUA scores the decision to ask on the last turn of each session; its turns "
                        "carry no evidence, so hit@k is empty (docs/linking.md explains why the lexical "
                        "fit barely separates its cases).",
}


def _num(v, digits: int = 2) -> str:
    if v is None:
        return "—"
    if isinstance(v, int) or (isinstance(v, float) and v >= 1000):
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def _cell(s: dict | None, digits: int = 2) -> str:
    """``median [min–max]`` of a run statistic."""
    if not s:
        return "—"
    if len(s.get("runs", [])) <= 1:
        return _num(s["median"], digits)
    return f"{_num(s['median'], digits)} [{_num(s['min'], digits)}–{_num(s['max'], digits)}]"


def _size(n: int) -> str:
    for unit, div in (("M", 1_000_000), ("k", 1_000)):
        if n >= div and n % (div // 10 or 1) == 0:
            value = n / div
            return f"{value:g}{unit}"
    return f"{n:,}"


# Why the size runs stop at Milvus Lite (the issue asks for a server beyond it).
MILVUS_SERVER_NOTE = """No Milvus server could be run on this machine: the compose file's \
`milvusdb/milvus` image comes from a container registry these machines cannot reach (and no \
container daemon runs here), and the only Milvus server on the package registries they reach \
(PyPI's `milvus`, an embedded Milvus 2.2–2.3) predates the BM25 function (Milvus 2.5) that every \
collection uses. Where a server runs, `run_all.py --milvus-uri http://HOST:19530` makes the same \
size runs against it (not exercised here)."""

# What bounds the ingest rate (ingest_speed.py's table measures it).
INGEST_NOTES = """What bounds the rate is Milvus Lite's own write: of ours remain reading and \
checking the file, folding traditional characters into `bm25_text` and building the rows, and \
a new collection's analyzer is chosen from 2,000 chunks spread over the file (reading every \
chunk costs about 20 s at 1M). On these two shared cores Lite 2.5.1 writes no faster with \
larger requests than 512 rows (it gets slower per row), with insert instead of upsert, with the \
BM25 index created after the load (it then indexes every sealed segment) or with two requests \
in flight (single runs at load average about 15)."""

# What each stage of a turn buys, beside what it costs (the stage tables above it).
STAGE_NOTES = """What each stage buys. `session_load` / `session_save`: the dialogue state (focus, \
what was shown, the pending clarification) read and written once per turn, so a turn can be \
answered by any API process; the save is a WAL commit, the largest fixed cost on a busy disk. \
`detect` + `link`: the mentions of the turn and their canonical entities, the input of \
everything after (a pronoun or an ellipsis needs them). `rewrite`: the standalone question \
(the rules, or the LLM when one is set) and its validation. `retrieve`: beyond the bare search, \
the entity filter and its relaxation when it starves, the consumed chunks kept out, the \
previous turn's query for a turn that links nothing, the pool of 4×k for the entity- and \
time-aware rerank, near-duplicate removal and the no-answer check; Milvus itself is most of it. \
`pack`: the context string for an LLM, within its token budget. Not in the stages: building \
the trace and the answer (tens of microseconds).
"""


# -- targets -----------------------------------------------------------------------------

def targets(r: dict) -> list[tuple[str, str, str]]:
    """(target, measured, verdict) rows, judged from the results as they are."""
    rows = []
    cpus = r["meta"]["machine"]["cpus"]
    linking = sorted(r.get("linking", []), key=lambda x: x["aliases"])
    big = [x for x in linking if x["aliases"] >= 1_000_000]
    if big:
        p99 = big[0]["p99_ms"]
        rows.append(("linking p99 ≤ 1 ms at 1M aliases",
                     f"p99 {_cell(p99, 3)} ms at {big[0]['aliases']:,} aliases",
                     "met" if p99["median"] <= 1.0 else "not met"))
    else:
        largest = f"{linking[-1]['aliases']:,} aliases" if linking else "nothing"
        rows.append(("linking p99 ≤ 1 ms at 1M aliases", f"not measured (largest: {largest})",
                     "not measured"))
    corpus = _turned(r)
    at100k = [c for c in corpus if c["chunks"] >= 100_000]
    if at100k:
        p50 = at100k[0]["turns"]["latency_ms"]["p50"]
        rows.append(("turn p50 ≤ 30 ms without an LLM at 100k chunks on 2 cores",
                     f"p50 {_cell(p50)} ms at {at100k[0]['chunks']:,} chunks on {cpus} cores",
                     "met" if p50["median"] <= 30 else "not met"))
    else:
        rows.append(("turn p50 ≤ 30 ms without an LLM at 100k chunks on 2 cores",
                     f"not measured (largest: {corpus[-1]['chunks']:,} chunks)" if corpus else "not measured",
                     "not measured"))
    if corpus:
        parts, ok = [], True
        for c in corpus:
            t = c["turns"]
            share = t["overhead_share_of_bare"]
            ok = ok and share <= 0.5
            parts.append(f"{_size(c['chunks'])}: {t['overhead_ms_p50']['median']:.1f} ms over a "
                         f"{t['bare_milvus_ms']['p50']['median']:.1f} ms bare search = {share:.0%}")
        rows.append(("Referent's own overhead ≤ 50 % of the bare Milvus search (p50)", "; ".join(parts),
                     "met" if ok else "not met"))
    at10k = [c for c in corpus if c["chunks"] == 10_000]
    if at10k and at10k[0].get("server"):
        levels = at10k[0]["server"]["throughput"]
        best = max(levels, key=lambda x: x["turns_per_s"]["median"])
        each = ", ".join("{}: {:.0f}".format(x["clients"], x["turns_per_s"]["median"]) for x in levels)
        rows.append(("≥ 100 turns/s on 2 cores at 10k chunks",
                     f"best {best['turns_per_s']['median']:.0f} turns/s with {best['clients']} clients "
                     f"(clients: turns/s {each}) on {cpus} cores",
                     "met" if best["turns_per_s"]["median"] >= 100 else "not met"))
    else:
        rows.append(("≥ 100 turns/s on 2 cores at 10k chunks", "not measured (no 10k-chunk server run)",
                     "not measured"))
    rows.extend(scale_targets(r, corpus))
    # Where the current tree's profile run measured a target, its figure replaces the
    # full run's (benchmarks/report_profile.py).
    current = report_profile.target_rows(r.get("profile", {}))
    for i, (target, _, _) in enumerate(rows):
        for key, row in current.items():
            if target == row[0]:
                rows[i] = row
    servers = [c["server"] for c in corpus if c.get("server")]
    if servers:
        requests = sum(x["requests"] for s in servers for x in s["throughput"])
        errors = sum(x["errors"] for s in servers for x in s["throughput"])
        rows.append(("zero errors under load", f"{errors} errors in {requests:,} requests",
                     "met" if errors == 0 else "not met"))
    return rows


def scale_targets(r: dict, corpus: list[dict]) -> list[tuple[str, str, str]]:
    """The serving-at-scale targets: first turn after a restart, turn and hybrid turn
    beside the bare search, HTTP at 16 clients, all at 100k chunks."""
    rows = []
    at = next((c for c in corpus if c["chunks"] == 100_000), None)
    server = (at or {}).get("server") or {}
    if "first_turn_ms" in server:
        first = server["first_turn_ms"]
        rows.append(("first turn after a restart < 1 s at 100k chunks",
                     f"{first:,.0f} ms (ready {server['ready_s']:.0f} s after start: /readyz 503 "
                     "until the collection is loaded)", "met" if first < 1000 else "not met"))
    else:
        rows.append(("first turn after a restart < 1 s at 100k chunks", "not measured", "not measured"))
    if at is not None:
        ratio = at["turns"]["ratio_to_bare_p50"]
        rows.append(("turn p50 ≤ 2× the bare BM25 search at 100k chunks",
                     f"{_cell(ratio, 1)}× ({at['turns']['latency_ms']['p50']['median']:.1f} ms over "
                     f"{at['turns']['bare_milvus_ms']['p50']['median']:.1f} ms)",
                     "met" if ratio["median"] <= 2 else "not met"))
    else:
        rows.append(("turn p50 ≤ 2× the bare BM25 search at 100k chunks", "not measured",
                     "not measured"))
    for suite, h in sorted(r.get("hybrid", {}).items()):
        ratio = h["hybrid_over_bare_p50"]
        older = h.get("against")
        beside = (f"; the older tree `{str(older.get('commit'))[:12]}` "
                  f"{older['hybrid_over_bare_p50']:.2f}× just before" if older else "")
        rows.append((f"hybrid turn p50 ≤ 1.3× a bare hybrid search ({suite})",
                     f"{ratio:.2f}× ({h['systems']['hybrid']['p50_ms']:.1f} ms over "
                     f"{h['systems']['bare hybrid']['p50_ms']:.1f} ms{beside})",
                     "met" if ratio <= 1.3 else "not met"))
    level = next((x for x in server.get("throughput", []) if x["clients"] == 16), None)
    if level is not None:
        tps, p99 = level["turns_per_s"]["median"], level["p99_ms"]["median"]
        ok = tps >= 100 and p99 <= 200 and level["errors"] == 0
        rows.append(("HTTP ≥ 100 turns/s, p99 ≤ 200 ms, 0 errors with 16 clients at 100k chunks",
                     f"{tps:.0f} turns/s, p99 {p99:.0f} ms, {level['errors']} errors",
                     "met" if ok else "not met"))
    else:
        rows.append(("HTTP ≥ 100 turns/s, p99 ≤ 200 ms, 0 errors with 16 clients at 100k chunks",
                     "not measured", "not measured"))
    return rows


# -- plots ----------------------------------------------------------------------------------

def plots(r: dict, folder: Path) -> dict[str, str]:
    """Write the PNGs; returns name → path relative to the report."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    made: dict[str, str] = {}

    def save(fig, name: str) -> None:
        fig.tight_layout()
        fig.savefig(folder / f"{name}.png", dpi=110)
        plt.close(fig)
        made[name] = f"{folder.name}/{name}.png"

    def errbars(stats: list[dict]):
        med = [s["median"] for s in stats]
        return med, [[m - s["min"] for m, s in zip(med, stats)], [s["max"] - m for m, s in zip(med, stats)]]

    corpus = _turned(r)
    if corpus:
        xs = [c["chunks"] for c in corpus]
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for key, label, style in (("p50", "turn p50", "o-"), ("p95", "turn p95", "s-"), ("p99", "turn p99", "^-")):
            med, err = errbars([c["turns"]["latency_ms"][key] for c in corpus])
            ax.errorbar(xs, med, yerr=err, fmt=style, capsize=3, label=label)
        med, err = errbars([c["turns"]["bare_milvus_ms"]["p50"] for c in corpus])
        ax.errorbar(xs, med, yerr=err, fmt="x--", capsize=3, label="bare Milvus BM25 p50")
        ax.axhline(30, color="grey", lw=0.8, ls=":", label="target p50 30 ms")
        ax.set_xscale("log")
        ax.set_xlabel("corpus size (chunks)")
        ax.set_ylabel("ms per turn")
        ax.set_title("Turn latency vs corpus size (no LLM)")
        ax.legend(fontsize=8)
        save(fig, "turn-latency-vs-size")

        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        bottom = [0.0] * len(corpus)
        labels = [_size(c["chunks"]) for c in corpus]
        for stage in STAGES:
            values = [c["turns"]["stages_ms_mean"][stage]["median"] for c in corpus]
            ax.bar(labels, values, bottom=bottom, label=stage)
            bottom = [b + v for b, v in zip(bottom, values)]
        ax.plot(labels, [c["turns"]["bare_milvus_ms"]["p50"]["median"] for c in corpus], "kx--",
                label="bare Milvus p50")
        ax.set_ylabel("mean ms per turn")
        ax.set_xlabel("corpus size (chunks)")
        ax.set_title("Where a turn's time goes (trace stage timings)")
        ax.legend(fontsize=7, ncol=2)
        save(fig, "turn-stages")

        servers = [c for c in corpus if c.get("server")]
        if servers:
            fig, ax = plt.subplots(figsize=(6.4, 4.2))
            for c in servers:
                levels = c["server"]["throughput"]
                med, err = errbars([x["turns_per_s"] for x in levels])
                ax.errorbar([x["clients"] for x in levels], med, yerr=err, fmt="o-", capsize=3,
                            label=f"{_size(c['chunks'])} chunks")
            ax.axhline(100, color="grey", lw=0.8, ls=":", label="target 100 turns/s")
            ax.set_xscale("log", base=2)
            ax.set_xlabel("concurrent clients")
            ax.set_ylabel("turns/s")
            ax.set_title("Server throughput on loopback")
            ax.legend(fontsize=8)
            save(fig, "throughput")

    sessions = r.get("sessions", [])
    if sessions:
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        xs = [x["sessions"] for x in sessions]
        for op, marker in (("load", "o"), ("save", "s")):
            for q, line in (("p50", "-"), ("p99", "--")):
                ax.plot(xs, [x[f"{op}_ms"][q] for x in sessions], marker=marker, linestyle=line,
                        label=f"{op} {q}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("sessions stored (SQLite)")
        ax.set_ylabel("ms per call")
        ax.set_title("Session load and save vs sessions stored")
        ax.legend(fontsize=8)
        save(fig, "sessions-vs-stored")

    linking = sorted(r.get("linking", []), key=lambda x: x["aliases"])
    if linking:
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        xs = [x["aliases"] for x in linking]
        for key, style in (("p50_ms", "o-"), ("p99_ms", "s-")):
            med, err = errbars([x[key] for x in linking])
            ax.errorbar(xs, med, yerr=err, fmt=style, capsize=3, label=key.replace("_ms", ""))
        ax.axhline(1.0, color="grey", lw=0.8, ls=":", label="target p99 1 ms")
        ax.set_xscale("log")
        ax.set_xlabel("aliases")
        ax.set_ylabel("ms per utterance")
        ax.set_title("Mention detection + linking vs alias count")
        ax.legend(fontsize=8)
        save(fig, "linking-vs-aliases")

    for name, q in r.get("quality", {}).items():
        if not q["systems"]["referent"]["overall"].get("hit_turns"):
            continue  # a suite without evidence expectations has no hit@k to plot
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        buckets = ("1", "2", "3+")
        width = 0.26
        for i, system in enumerate(SYSTEMS):
            values = [q["systems"][system]["by_turn"][b]["hit_at_k"] or 0 for b in buckets]
            ax.bar([j + (i - 1) * width for j in range(3)], values, width, label=system)
        ax.set_xticks(range(3), [f"turn {b}" for b in buckets])
        ax.set_ylim(0, 1.05)
        ax.set_ylabel(f"hit@{q['k']}")
        ax.set_title(f"hit@{q['k']} per turn index: {name} suite")
        ax.legend(fontsize=8)
        save(fig, f"hit-per-turn-{name}")
    return made


# -- the report -------------------------------------------------------------------------------

def render(r: dict, images: dict[str, str], results_path: str) -> str:
    meta = r["meta"]
    m, m_end = meta["machine"], meta.get("machine_end", meta["machine"])
    cfg = meta["config"]
    out: list[str] = []
    w = out.append
    w("# Benchmarks: speed, memory and quality, beside the baselines\n")
    w("Generated by `benchmarks/report.py` from "
      f"`{results_path}` (written by `benchmarks/run_all.py`); do not edit by hand. "
      "Every figure is the median of the runs with the minimum and maximum in brackets "
      "(`median [min–max]`). Quality figures are on the demo suite, which was written "
      "with the system, and on development splits: none is a held-out result.\n")
    w("## Machine and run\n")
    w(f"- {m['cpus']} cores ({m.get('cpu', '?')}), {m['memory_gb']} GB memory, "
      f"Python {m['python']}, {m.get('platform', '')}")
    w(f"- run: {meta['started']} → {meta.get('finished', '?')} ({meta['mode']} mode), commit "
      f"`{(meta.get('commit') or '?')[:12]}`")
    w(f"- load average (1, 5, 15 min) at the start {m.get('load_average')}, at the end "
      f"{m_end.get('load_average')}: above {m['cpus']} means other work shared the cores, "
      "so latencies are pessimistic and throughput low")
    w(f"- runs per figure: {cfg['runs']}; alias tables {', '.join(f'{a:,}' for a in cfg['aliases'])}; "
      f"corpora {', '.join(f'{c:,}' for c in cfg['chunks'])} chunks; clients {cfg['clients']}, "
      f"{cfg['load_seconds']:g} s per load run (at most {cfg['load_max_requests']:,} requests)\n")
    render_provenance(r, w)
    w("## Commands\n")
    w("```bash")
    w("scripts/setup.sh                                    # .venv with the bench extra (matplotlib)")
    w("export REFERENT_DATA_DIR=var/bench REFERENT_NEO4J__LOCAL_PORT=7717   # any free port")
    w(meta["command"].replace("python ", ".venv/bin/python ", 1) + "   # this run; starts/stops the local Neo4j")
    for c in r.get("corpus", []):
        command = (c.get("measured") or {}).get("command")
        if command and command != meta["command"]:
            w(f"REFERENT_NEO4J__LOCAL_HEAP=4g {command.replace('python ', '.venv/bin/python ', 1)} \\")
            w(f"    --record docs/benchmarks/results.json   # the {c['chunks']:,}-chunk size, resumable")
    if r.get("ingest_speed"):
        w(".venv/bin/" + r["ingest_speed"]["command"] + "   # where the ingest time goes")
    if r.get("hybrid"):
        w(".venv/bin/python benchmarks/hybrid_turns.py --suite SUITE/suite.jsonl --bm25-kb KB \\")
        w("    --hybrid-kb KB_E5 --record docs/benchmarks/results.json   # per suite: the hybrid section")
    w(".venv/bin/python benchmarks/report.py                 # this page and its plots from the JSON")
    w(".venv/bin/python benchmarks/run_all.py --quick --out var/bench/quick/results.json \\")
    w("    --report var/bench/quick/benchmarks.md            # the CI smoke run (tiny sizes)")
    w("```\n")
    w("## Targets\n")
    w("| target | measured | verdict |")
    w("|---|---|---|")
    for target, measured, verdict in targets(r):
        mark = {"met": "**met**", "not met": "**not met**"}.get(verdict, verdict)
        w(f"| {target} | {measured} | {mark} |")
    w("")

    linking = sorted(r.get("linking", []), key=lambda x: x["aliases"])
    if linking:
        w("## Mention detection + linking vs alias count\n")
        w("Generated Chinese product names (3–8 characters; one entity in ten has 个人版/企业版 "
          "editions sharing its bare name, so a bare mention is ambiguous), about three aliases per "
          "entity, fixed seed. The snapshot is built in this process from the ontology (what every API "
          "process holds); default settings, so the fuzzy index is skipped above 300,000 aliases. "
          f"Per utterance ({linking[0]['utterances']:,} generated turns per run): spaCy mention "
          "detection + linking with a focus entity.\n")
        w("| aliases | alias keys | entities | snapshot build | snapshot memory | fuzzy index | p50 ms | p99 ms |")
        w("|---:|---:|---:|---:|---:|---|---:|---:|")
        for x in linking:
            fuzzy = f"yes ({x['fuzzy_build_s']:.1f} s)" if x["fuzzy_index"] else "skipped"
            w(f"| {x['aliases']:,} | {x['alias_keys']:,} | {x['entities']:,} | {x['snapshot_build_s']:.1f} s | "
              f"{x['snapshot_memory_mb']:.0f} MB | {fuzzy} | {_cell(x['p50_ms'], 3)} | {_cell(x['p99_ms'], 3)} |")
        w("")
        if "linking-vs-aliases" in images:
            w(f"![linking latency vs alias count]({images['linking-vs-aliases']})\n")

    corpus = _turned(r)
    if corpus:
        w("## Turn latency vs corpus size\n")
        w("A generated kb per size: chunks/10 entities (at least 20) with the same kind of names, one "
          "document per entity and attribute (价格, 申请流程, 保障范围, 理赔流程), chunks naming the entity "
          "in generated business text, tagged with it. Scripted four-turn sessions (a named question, a "
          "pronoun follow-up, an ellipsis swap to another entity, a comparison, negation, version or "
          "topic switch; every fourth session a bare edition name that is clarified and answered) run "
          "through `TurnEngine.handle`, the HTTP route's path without HTTP: SQLite session store, BM25 "
          "only, no LLM, rule rewriter. *Bare* is one `MilvusClient.search` BM25 call (limit 5, no "
          "filter, nothing excluded) with the turn's standalone query, on the same collection.\n")
        w("| chunks | entities | turns/run | turn p50 ms | turn p95 ms | turn p99 ms | bare p50 ms | bare p95 ms "
          "| bare p99 ms | turn ÷ bare (p50) |")
        w("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for c in corpus:
            t = c["turns"]
            w(f"| {c['chunks']:,} | {c['entities']:,} | {t['turns_per_run']} | {_cell(t['latency_ms']['p50'])} | "
              f"{_cell(t['latency_ms']['p95'])} | {_cell(t['latency_ms']['p99'])} | "
              f"{_cell(t['bare_milvus_ms']['p50'])} | {_cell(t['bare_milvus_ms']['p95'])} | "
              f"{_cell(t['bare_milvus_ms']['p99'])} | {_cell(t['ratio_to_bare_p50'], 1)} |")
        w("")
        if "turn-latency-vs-size" in images:
            w(f"![turn latency vs corpus size]({images['turn-latency-vs-size']})\n")
        w("### By stage (the turn trace's `timings_ms`)\n")
        w("Median over runs of each stage's p50; the second table gives the means, which the plot "
          "stacks (p50s do not add up to the turn's p50). `rewrite` is "
          "classification, clarification or rewrite and validation; `retrieve` is every Milvus search "
          "of the turn (entity filter, consumed window excluded, relaxation when the filter starves) "
          "plus rerank and dedup; `session_load`/`session_save` are the session store.\n")
        w("| chunks | " + " | ".join(STAGES) + " | outside retrieve | overhead over bare (p50) |")
        w("|---:|" + "---:|" * (len(STAGES) + 2))
        for c in corpus:
            t = c["turns"]
            w(f"| {c['chunks']:,} | " + " | ".join(_cell(t["stages_ms_p50"][s]) for s in STAGES) +
              f" | {_cell(t['outside_retrieve_ms_p50'])} | {_cell(t['overhead_ms_p50'])} ms "
              f"({t['overhead_share_of_bare']:.0%} of bare) |")
        w("")
        w(STAGE_NOTES)
        w("| chunks | " + " | ".join(f"{s} (mean)" for s in STAGES) + " |")
        w("|---:|" + "---:|" * len(STAGES))
        for c in corpus:
            w(f"| {c['chunks']:,} | " + " | ".join(_cell(c["turns"]["stages_ms_mean"][s]) for s in STAGES) + " |")
        w("")
        if "turn-stages" in images:
            w(f"![stage breakdown]({images['turn-stages']})\n")

        w("## Ingest and import\n")
        w("Import: the generated ontology file into Neo4j, one transaction, into an emptied kb each run. "
          "Ingest: the corpus file (pre-chunked, tagged) through `ingest_corpus` into a fresh Milvus "
          "Lite collection each run (the `referent ingest` path).\n")
        w("| chunks | entities | aliases | import s | import entities/s | ingest s | ingest chunks/s "
          "| memory after ingest (MB) | Milvus Lite peak during ingest (MB) |")
        w("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for c in sorted(r.get("corpus", []), key=lambda x: x["chunks"]):
            memory = c["ingest"].get("memory")
            held = (f"{memory['total_rss_mb']:,.0f} ({memory['children_rss_mb']:,.0f} Milvus Lite)"
                    if memory else "–")
            peak = c["ingest"].get("lite_peak_rss_mb")
            w(f"| {c['chunks']:,} | {c['entities']:,} | {c['aliases']:,} | {_cell(c['import']['seconds'])} | "
              f"{_cell(c['import']['entities_per_s'], 0)} | {_cell(c['ingest']['seconds'])} | "
              f"{_cell(c['ingest']['chunks_per_s'], 0)} | {held} | {f'{peak:,.0f}' if peak else '–'} |")
        w("")
        render_size_notes(r, w)
        render_ingest_speed(r, w)

        servers = [c for c in corpus if c.get("server")]
        if servers:
            w("## The running server: throughput, errors, memory\n")
            w(f"`{servers[0]['server']['command']}` (one worker, "
              "access log off) on 127.0.0.1 with the kb above, SQLite sessions; the load generator runs "
              "in the benchmark process on the same cores (its threads take CPU from the server). Each "
              "client replays whole sessions in new session ids until the run's time or request budget "
              "is spent. Latency is what the client saw.\n")
            if any("ready_s" in c["server"] for c in servers):
                w("Cold start: the server is started on the kb (a restart: the collection is on disk, "
                  "not loaded). *Ready* is when `/readyz` first answers 200 (every kb's collection "
                  "loaded and warmed: `retrieval/preload.py`; until then turns get a 503 with "
                  "Retry-After instead of waiting); *first turn* is the next turn's latency.\n")
                w("| chunks | /healthz after s | ready after s | first turn ms |")
                w("|---:|---:|---:|---:|")
                for c in servers:
                    sv = c["server"]
                    if "ready_s" in sv:
                        w(f"| {c['chunks']:,} | {sv['start_s']:.1f} | {sv['ready_s']:.1f} | "
                          f"{sv['first_turn_ms']:,.0f} |")
                w("")
            w("| chunks | clients | turns/s | client p50 ms | client p99 ms | requests | errors |")
            w("|---:|---:|---:|---:|---:|---:|---:|")
            for c in servers:
                for x in c["server"]["throughput"]:
                    kinds = f" ({x['error_kinds']})" if x["errors"] else ""
                    w(f"| {c['chunks']:,} | {x['clients']} | {_cell(x['turns_per_s'], 1)} | {_cell(x['p50_ms'])} | "
                      f"{_cell(x['p99_ms'])} | {x['requests']:,} | {x['errors']}{kinds} |")
            w("")
            if "throughput" in images:
                w(f"![throughput]({images['throughput']})\n")
            w("Resident memory (MB) of the API process and of its Milvus Lite child process, after the "
              "warm-up turns and after the load runs; *peak* is the API process's high-water mark.\n")
            w("| chunks | API idle | Milvus Lite idle | total idle | API after load | API peak "
              "| Milvus Lite after load | total after load |")
            w("|---:|---:|---:|---:|---:|---:|---:|---:|")
            for c in servers:
                i, a = c["server"]["memory_idle"], c["server"]["memory_after_load"]
                w(f"| {c['chunks']:,} | {i['api_rss_mb']:.0f} | {i['children_rss_mb']:.0f} | "
                  f"{i['total_rss_mb']:.0f} | {a['api_rss_mb']:.0f} | {a['api_peak_mb']:.0f} | "
                  f"{a['children_rss_mb']:.0f} | {a['total_rss_mb']:.0f} |")
            w("")

    render_sessions(r, images, w)
    render_hybrid(r, w)
    report_profile.render(r.get("profile", {}), w)
    if r["meta"].get("quality_from"):
        w(f"The quality sections below come from the run of commit `{r['meta']['quality_from'][:12]}`; "
          "the per-turn results of the development suites are identical at this run's commit.\n")
    for name, q in r.get("quality", {}).items():
        w(f"## Quality: {name} suite, Referent beside the baselines\n")
        w(f"`{q['suite']}`: {q['sessions']} sessions, {q['turns']} turns, k = {q['k']}; development "
          "data (used while building the system), not a held-out result. "
          "`raw` searches the user's words alone, `concat` the last four user turns concatenated; "
          "both through the same index, no entity filter, nothing excluded (`referent eval "
          "--baseline raw --baseline concat`).\n")
        if name in SUITE_NOTES:
            w(SUITE_NOTES[name] + "\n")
        if f"hit-per-turn-{name}" in images:
            w(f"![hit@k per turn index]({images[f'hit-per-turn-{name}']})\n")
        w("| metric | " + " | ".join(f"{s} {b}" for s in SYSTEMS for b in ("all", "1", "2", "3+")) + " |")
        w("|---|" + "---:|" * (4 * len(SYSTEMS)))
        for metric in METRICS:
            cells = []
            for s in SYSTEMS:
                summary = q["systems"][s]
                digits = 1 if metric in ONE_DECIMAL else 3
                cells.append(_num(summary["overall"].get(metric), digits))
                cells.extend(_num(summary["by_turn"][b].get(metric), digits) for b in ("1", "2", "3+"))
            w(f"| {metric} | " + " | ".join(cells) + " |")
        w("")
        if q.get("failing_count"):
            w(f"Referent turns that miss at least one expectation: {q['failing_count']}"
              + (": " + ", ".join(f"{f['session']} turn {f['turn']} ({f['user']})"
                                  for f in q["turns_failing_an_expectation"][:30])
                 if q["failing_count"] <= 30 else "") + ".\n")
        else:
            w("Every Referent turn meets every expectation of its scripted turn.\n")
    return "\n".join(out).rstrip() + "\n"


def _turned(r: dict) -> list[dict]:
    """The corpus sizes that got as far as the turns (a size can stop after its ingest)."""
    return sorted((c for c in r.get("corpus", []) if "turns" in c), key=lambda x: x["chunks"])


LARGE_IMPORT_NOTE = """An ontology of 100,000 entities is imported in one transaction: it needs \
`REFERENT_NEO4J__LOCAL_HEAP=4g` (with the default 1g Neo4j runs out of transaction memory)."""


def render_size_notes(r: dict, w) -> None:
    """What the size runs need and where their figures come from, then where one stopped."""
    corpus = r.get("corpus", [])
    if any(c["entities"] >= 100_000 for c in corpus):
        w(LARGE_IMPORT_NOTE)
    for c in corpus:
        if c.get("measured", {}).get("ingest_measured"):
            w(f"The {c['chunks']:,}-chunk size's {c['measured']['ingest_measured']}.")
        load = c.get("collection_load")
        if load and load.get("finished") and r.get("stopped", {}).get("chunks") != c["chunks"]:
            w(f"A fresh Milvus Lite process loaded the kept collection of {c['chunks']:,} chunks in "
              f"{load['seconds']:,.0f} s.")
    w("")
    render_stopped(r, w)
    w(MILVUS_SERVER_NOTE + "\n")


def render_stopped(r: dict, w) -> None:
    """Where the size run stopped: how far it got, what Milvus Lite held, and why."""
    stop = r.get("stopped")
    if not stop:
        return
    w(f"**The run stopped at {stop['chunks']:,} chunks**: {stop['error'].rstrip('.')}.")
    if stop.get("stored") is not None:
        w(f"At its last record ({stop.get('at', '?').replace('T', ' ')[:16]} UTC) the ingest had stored "
          f"{stop['stored']:,} of {stop['chunks']:,} chunks, {stop['seconds']:,.0f} s after it started "
          f"(reading the file included), with Milvus Lite at {stop['lite_peak_rss_mb']:,.0f} MB resident "
          "at most.")
    if stop.get("note"):
        w(stop["note"])
    size = next((c for c in r.get("corpus", []) if c["chunks"] == stop["chunks"]), {})
    load = size.get("collection_load")
    if load:
        w(f"A Milvus Lite process that had not loaded it {'loaded' if load['finished'] else 'was still loading'} "
          f"the collection of {stop['chunks']:,} chunks {'in' if load['finished'] else 'after'} "
          f"{load['seconds']:,.0f} s (a restarted server is not ready before that).")
    w("")


def render_ingest_speed(r: dict, w) -> None:
    """Where an ingest's time goes (``benchmarks/ingest_speed.py``), trees side by side."""
    speed = r.get("ingest_speed")
    if not speed:
        return
    rows = speed["rows"]
    w(f"### Where the ingest time goes ({rows[0]['chunks']:,} chunks)\n")
    w("`benchmarks/ingest_speed.py`: the same generated corpus through `parse_corpus` alone, through "
      "`ingest_corpus` into a new collection, and straight into Milvus Lite with `MilvusClient.upsert` "
      "(512 rows a request) into a collection of the same schema, with and without its BM25 function; "
      "each in a fresh process, the trees taking turns in one run "
      f"(load average {speed['load_average'][0]:.1f} → {speed['load_average'][1]:.1f}).\n")
    new = next((row for row in rows if "lite_upsert" in row["seconds"]), None)
    if new is not None:
        sec = new["seconds"]
        w(f"In this run `ingest_corpus` took {sec['ingest'] / sec['lite_upsert']:.1f}× the bare Lite upsert "
          f"of the same rows, of which parsing the file was {sec['parse'] / sec['ingest']:.0%}; Lite "
          f"without the BM25 function took {sec['lite_no_bm25'] / sec['lite_upsert']:.0%} of its "
          "time with it.\n")
    w("| tree | parse s | ingest s | ingest chunks/s | Lite upsert s | Lite upsert without BM25 s |")
    w("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        sec = row["seconds"]
        cells = [f"{sec[k]:.1f}" if k in sec else "–" for k in ("parse", "ingest")]
        floor = [f"{sec[k]:.1f}" if k in sec else "–" for k in ("lite_upsert", "lite_no_bm25")]
        w(f"| `{row['commit']}` ({row['tree']}) | {cells[0]} | {cells[1]} | "
          f"{row['ingest_chunks_per_s']:,.0f} | {floor[0]} | {floor[1]} |")
    w("")
    w(INGEST_NOTES + "\n")


def render_provenance(r: dict, w) -> None:
    """Which commit each section measured, when, and under what load: the page mixes the
    full run with later, narrower runs, and says so rather than presenting one tree."""
    meta = r["meta"]
    rows = [("linking, turn latency vs size, ingest, server, sessions (`run_all.py`)",
             meta.get("commit"), meta["started"][:16], meta["machine"].get("load_average"))]
    for c in sorted(r.get("corpus", []), key=lambda x: x["chunks"]):
        measured = c.get("measured") or {}
        if measured.get("commit") and measured["commit"] != meta.get("commit"):
            rows.append((f"{c['chunks']:,} chunks (`run_all.py --keep`)", measured["commit"],
                         measured.get("at", "?")[:16], measured.get("load_average")))
    if r.get("ingest_speed"):
        speed = r["ingest_speed"]
        rows.append(("where the ingest time goes (`ingest_speed.py`)", speed["rows"][0]["commit"],
                     speed.get("at", "?")[:16], speed.get("load_average")))
    for suite, h in sorted(r.get("hybrid", {}).items()):
        rows.append((f"hybrid turns, {suite} (`hybrid_turns.py`)", h.get("commit"),
                     h.get("at", "?")[:16], h["machine"].get("load_average")))
    profile = r.get("profile", {})
    for section, script in (("turns", "turn_profile.py"), ("http", "http_load.py")):
        for size, x in sorted(profile.get(section, {}).items(), key=lambda kv: int(kv[0])):
            rows.append((f"{'turn profile' if section == 'turns' else 'running server'}, "
                         f"{int(size):,} chunks (`{script}`)", x.get("commit"),
                         x.get("at", "?")[:16], x.get("load_average")))
    for kb, x in sorted(profile.get("suite_requests", {}).items()):
        rows.append((f"Milvus requests per turn, {kb} (`turn_requests.py`)", x.get("commit"),
                     x.get("at", "?")[:16], x.get("load_average")))
    if meta.get("quality_from"):
        rows.append(("quality sections (`referent eval`)", meta["quality_from"], "?", None))
    w("## What was measured on which tree\n")
    w("Each section gives the figures of one run; they are not all of one commit. The full "
      "run (`run_all.py`: 10k, 100k and 1M chunks) takes hours on these two shared "
      "cores, so it is not repeated for every change: the narrower scripts measure what a "
      "change touches, on its commit, each turn beside its own baseline in the same run. "
      "Compare ratios within a row, not absolute times across rows: the load average says how "
      "much of the two cores other work took.\n")
    w("| section | commit | at (UTC) | load average (1 min) |")
    w("|---|---|---|---:|")
    for name, commit, at, load in rows:
        shown = f"{load[0]:.1f}" if load else "–"
        w(f"| {name} | `{(commit or '?')[:12]}` | {at.replace('T', ' ')} | {shown} |")
    w("")


def render_sessions(r: dict, images: dict[str, str], w) -> None:
    sessions = r.get("sessions", [])
    if not sessions:
        return
    w("## Session store vs sessions stored\n")
    w(f"SQLite (WAL), the embedded default, filled in bulk with copies of a real saved session "
      f"({sessions[0]['state_bytes']:,} bytes of state, from a corpus run), then 500 random stored "
      "sessions each loaded and saved through the store, as a turn does "
      "(`benchmarks/session_bench.py`). Saves on a shared machine wait for the disk: their p99 is "
      "what a WAL commit costs under the other engineers' I/O.\n")
    w("| sessions | file MB | fill s | load p50 ms | load p99 ms | save p50 ms | save p99 ms |")
    w("|---:|---:|---:|---:|---:|---:|---:|")
    for x in sessions:
        w(f"| {x['sessions']:,} | {x['file_mb']:,.0f} | {x['fill_s']:.1f} | {x['load_ms']['p50']:.3f} | "
          f"{x['load_ms']['p99']:.3f} | {x['save_ms']['p50']:.3f} | {x['save_ms']['p99']:.3f} |")
    w("")
    if "sessions-vs-stored" in images:
        w(f"![session load and save vs sessions stored]({images['sessions-vs-stored']})\n")


def render_hybrid(r: dict, w) -> None:
    hybrid = r.get("hybrid", {})
    if not hybrid:
        return
    w("## Hybrid turns beside a bare hybrid search\n")
    w("`benchmarks/hybrid_turns.py`: each development suite played through a BM25 engine and two "
      "hybrid ones (the bundled e5, wired as the server wires it: a query memo shared by retrieval "
      "and the topic-shift check), session by session in alternating order; beside each hybrid "
      "turn, a bare hybrid search of the user's words (embed them, one Milvus `hybrid_search`, top "
      "5). A turn embeds all its queries in one batch and never a text twice, and searches each "
      "query with one `hybrid_search` request (BM25 and dense, a pool of 4×k each, fused by "
      "Milvus's RRF ranker); *2 requests* is the same engine with the two rankings fetched apart "
      "and fused in process, in the same run. The rankings are still fetched apart when the "
      "entity filter starves (each is relaxed on its own) or a few documents fill the pool (a "
      "grouped search tops it up: Milvus Lite 2.5.1 ignores grouping inside `hybrid_search`).\n")
    w("An *old* row is the older tree named, playing the same suite with the same script "
      "just before the *new* one (`--against`).\n")
    w("| suite | tree | BM25 turn p50 ms | hybrid turn p50 ms | 2 requests p50 ms "
      "| bare hybrid p50 ms | hybrid ÷ bare | 2 requests ÷ bare "
      "| embedding share of hybrid turns | load average | commit |")
    w("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for suite, h in sorted(hybrid.items()):
        trees = [("new", h), ("old", h["against"])] if h.get("against") else [("", h)]
        for name, x in trees:
            _hybrid_row(suite, name, x, w)
    w("")
    close = [suite for suite, h in sorted(hybrid.items()) if "hybrid 2 req" in h["systems"]
             and abs(h["hybrid_over_bare_p50"] - h["two_requests_over_bare_p50"])
             <= 0.1 * h["two_requests_over_bare_p50"]]
    if close:
        w(f"On {', '.join(close)} one request and two are within 10 % of each other, a difference "
          "this load does not resolve: a turn's time goes to embedding (the share "
          "above) and to its own work, not to the second round trip. What keeps the hybrid "
          "turn above the bare search is the same as for BM25 (next section), plus the "
          "queries the turn embeds and searches besides the user's words: the standalone "
          "question and, for a turn that links no entity, the previous turn's query.\n")
    w("The query encoder runs on both cores (OpenMP, idle threads passive): one thread "
      "embedded cast22-dev's first questions in 263–350 ms p50 against 50–73 ms for two, "
      "with the same vectors (load average 16). A turn's texts are embedded once per process "
      "(a memo shared by retrieval and the topic-shift check), so a standalone equal to the "
      "user's words, or the previous turn's query searched again, costs no second embedding; "
      "shortening what is embedded would change the vectors, and so the evidence.\n")


def _hybrid_row(suite: str, tree: str, h: dict, w) -> None:
    sy = h["systems"]
    two = sy.get("hybrid 2 req")
    two_p50 = f"{two['p50_ms']:.1f}" if two else "–"
    two_ratio = f"{two['p50_ms'] / sy['bare hybrid']['p50_ms']:.2f}" if two else "–"
    w(f"| {suite} | {tree} | {sy['bm25']['p50_ms']:.1f} | {sy['hybrid']['p50_ms']:.1f} | "
      f"{two_p50} | {sy['bare hybrid']['p50_ms']:.1f} | "
      f"{h['hybrid_over_bare_p50']:.2f} | {two_ratio} | "
      f"{sy['hybrid']['embedding_share_median']:.0%} | "
      f"{h['machine']['load_average'][0]:.1f} | `{(h.get('commit') or '?')[:12]}` |")


def build(results: Path, report: Path) -> Path:
    r = json.loads(results.read_text(encoding="utf-8"))
    r["profile"] = report_profile.load(results)
    images = plots(r, report.parent / report.stem)
    try:
        shown = results.resolve().relative_to(REPO)
    except ValueError:
        shown = results
    report.write_text(render(r, images, str(shown)), encoding="utf-8")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    parser.add_argument("--out", type=Path, default=DEFAULT_REPORT)
    args = parser.parse_args(argv)
    print(f"wrote {build(args.results, args.out)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
