"""The "where a turn's time goes" section of docs/benchmarks.md and its two target rows,
from ``docs/benchmarks/profile.json`` (written by ``turn_profile.py --record`` and
``http_load.py --record``: the current tree's turn beside the bare search, and the
running server, measured side by side in one run per size)."""

from __future__ import annotations

import json
from pathlib import Path

# What each stage of a turn buys (the turn trace's ``timings_ms``), for the table.
BUYS = {
    "session_load": "the dialogue state (focus, what was shown, a pending clarification), so "
                    "any API process can answer the next turn",
    "detect": "the turn's mentions (aliases, pronouns, editions): the input of everything after",
    "link": "their canonical entities, with the focus as context",
    "rewrite": "the policy's decision and the standalone question, validated",
    "retrieve": "the Milvus search (entity filter, consumed chunks excluded, a pool of 4×k with "
                "text) and, in Python, the entity- and time-aware rerank, one chunk per "
                "document, near-duplicates, novelty and the no-answer check",
    "pack": "the context string for an LLM, within its token budget",
    "session_save": "the new state, written once (a WAL commit without an fsync)",
}


# Rows of the same table that are not trace stages: (figure key, row name, what it buys).
EXTRA_ROWS = (
    ("in_milvus_ms", "in Milvus (within retrieve)",
     "the turn's own requests: a filtered pool of 4×k chunks with text and tags, so the "
     "rerank, dedup and no-answer check need no second request"),
    ("in_gc_ms", "garbage collector (within the stages)",
     "cycle collection of what the turn allocated"),
)


def load(results: Path) -> dict:
    path = results.parent / "profile.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def target_rows(profile: dict) -> dict[str, tuple[str, str, str]]:
    """Rows replacing the full run's, keyed by target, where the profile measured them."""
    rows = {}
    turns = profile.get("turns", {}).get("100000")
    if turns is not None:
        ratio = turns["ratio_p50"]
        older = turns.get("against")
        beside = (f"; the older tree `{str(older.get('commit'))[:12]}` {older['ratio_p50']:.2f}× "
                  "in the same run" if older else "")
        rows["turn"] = ("turn p50 ≤ 2× the bare BM25 search at 100k chunks",
                        f"{ratio:.2f}× ({turns['turn_ms']['p50']:.2f} ms over "
                        f"{turns['bare_ms']['p50']:.2f} ms; `turn_profile.py`, load "
                        f"{turns['load_average'][0]:.0f}{beside})",
                        "met" if ratio <= 2 else "not met")
    http = profile.get("http", {}).get("100000")
    level = next((x for x in (http or {}).get("throughput", []) if x["clients"] == 16), None)
    if level is not None:
        tps, p99 = level["turns_per_s"]["median"], level["p99_ms"]["median"]
        ok = tps >= 100 and p99 <= 200 and level["errors"] == 0
        rows["http"] = ("HTTP ≥ 100 turns/s, p99 ≤ 200 ms, 0 errors with 16 clients at 100k chunks",
                        f"{tps:.0f} turns/s, p99 {p99:.0f} ms, {level['errors']} errors "
                        f"(`http_load.py`, load {http['load_average'][0]:.0f})",
                        "met" if ok else "not met")
    several = _best_process_count(profile.get("http_processes", {}).get("100000"))
    if several is not None:
        count, level, one = several
        tps, p99 = level["turns_per_s"]["median"], level["p99_ms"]["median"]
        ok = tps >= 100 and p99 <= 200 and level["errors"] == 0
        rows["http"] = ("HTTP ≥ 100 turns/s, p99 ≤ 200 ms, 0 errors with 16 clients at 100k chunks",
                        f"{count} API processes on one Milvus Lite server: {tps:.0f} turns/s, "
                        f"p99 {p99:.0f} ms, {level['errors']} errors; one process in the same "
                        f"run {one['turns_per_s']['median']:.0f} turns/s, p99 "
                        f"{one['p99_ms']['median']:.0f} ms (`http_load.py --processes`)",
                        "met" if ok else "not met")
    return rows


def _level(server: dict, clients: int) -> dict | None:
    return next((x for x in server["throughput"] if x["clients"] == clients), None)


def _best_process_count(section: dict | None) -> tuple[int, dict, dict] | None:
    """The process count above one with the most turns/s at 16 clients, its level, and the
    single process's level of the same run; None without both."""
    if not section or "1" not in section["processes"]:
        return None
    one = _level(section["processes"]["1"], 16)
    several = [(int(c), _level(s, 16)) for c, s in section["processes"].items() if c != "1"]
    several = [(c, x) for c, x in several if x is not None]
    if one is None or not several:
        return None
    count, level = max(several, key=lambda cx: cx[1]["turns_per_s"]["median"])
    return count, level, one


def render_requests(t: dict, size: int, w) -> None:
    """The Milvus requests of the generated kb's turns, and its search feature by feature."""
    requests, anatomy = t.get("requests"), t.get("anatomy_ms")
    if requests:
        w(f"Every Milvus request the turns made at {size:,} chunks (`turn_profile.py` wraps the "
          "index's client; *filtered*: by entity or by chunks kept out; *path* is the code "
          "that made the request, background refreshes counted in the turn they ran "
          "beside):\n")
        _request_table(requests, w)
    if anatomy:
        w("The turn's search rebuilt from the bare one, one feature at a time, on the "
          "standalone query and entities of every turn that linked some (same run, "
          "interleaved):\n")
        w("| request | p50 ms | mean ms | added to the p50 |")
        w("|---|---:|---:|---:|")
        before = None
        for label, spread in anatomy.items():
            added = "" if before is None else f"{spread['p50'] - before:+.2f}"
            w(f"| {label} | {spread['p50']:.2f} | {spread['mean']:.2f} | {added} |")
            before = spread["p50"]
        w("")
        _why_above_2x(t, anatomy, w)


def _why_above_2x(t: dict, anatomy: dict, w) -> None:
    """What keeps the turn above 2× the bare search, from the anatomy's figures."""
    bare, turn = t["bare_ms"]["p50"], t["turn_ms"]["p50"]
    request = next((s["p50"] for label, s in anatomy.items() if "turn's request" in label), None)
    cheaper = next((s["p50"] for label, s in anatomy.items() if "not built" in label), None)
    if request is None or not bare:
        return
    w(f"Why the turn stays above 2× the bare search: a turn of the generated kb that links "
      f"entities makes one search (the request table above; the development kbs below add "
      f"the unfiltered search when the filter starves), and that one request is the bare "
      f"search plus an entity filter, which Milvus Lite evaluates on every row (it has no "
      f"index on an array field), plus the passages' fields the rerank reads: "
      f"{request:.2f} ms, {request / bare:.1f}× the bare search by itself; the turn is "
      f"{turn / request:.1f}× that request. 2× the bare search is {2 * bare:.2f} ms, "
      + (f"{2 * bare - request:.2f} ms more than the request, for everything else the turn does "
         "(session, mentions, rewrite, rerank, novelty, no-answer check, save: *own* above)"
         if 2 * bare > request else "less than the request alone, before anything else the "
         "turn does (session, mentions, rewrite, rerank, novelty, no-answer check, save: *own* "
         "above)")
      + ": fewer requests cannot reach it, there is one. What would bring the request down "
      "is a cheaper entity filter. An unfiltered pool filtered here by the hits' tags is not "
      "one: it is the filtered ranking only when it holds at least a pool's worth (20) of "
      "tagged hits, and an entity of the generated kb tags 10 chunks (one of enterprise-dev "
      "about 5), so the filtered request would follow it on every such turn.")
    if cheaper is not None:
        w(f"Put behind the entities' chunk ids (`chunk_id in [...] and "
          f"array_contains_any(...)`: Milvus then checks only those rows by primary key), the "
          f"same request took {cheaper:.2f} ms ({cheaper / bare:.1f}× the bare search). It is "
          "not built: it needs an entity → chunk ids map that every serving process keeps "
          "exact across ingests and re-tagging, including those other processes make, or a "
          "stale map silently drops evidence. A Milvus server can index the array field "
          "instead (Lite 2.5.1 refuses an INVERTED index on it).")
    w("")


# What each request path of the tables buys.
PATHS = (
    ("`_query_pool > topped_up > search`", "a query's candidate pool: inside the entity "
     "filter first, over the whole kb as well when the filter leaves fewer than 3 "
     "documents; a turn that links nothing also searches the previous turn's query "
     "(retrieval/history.py), and `dual_search:98` is the user's own words, searched when "
     "the rewrite's evidence is weak"),
    ("`_read > get_chunks`", "in a kb without an ontology, the passages shown earlier, to "
     "tell which the user has read and which only came back (novelty)"),
    ("`_chunk_features > chunk_search`", "the clarify model's features: the passages of "
     "each candidate entity of an ambiguous mention"),
    ("`_read_incomplete`", "the ingest state, re-read in the background once a second per "
     "kb, so a turn says when the kb's last ingest did not finish"),
    ("`has_kb`", "whether a kb without an ontology exists, asked at most every 5 s"),
)


def render_suite_requests(kb: str, figures: dict, w) -> None:
    """The Milvus requests of a development suite's turns (``turn_requests.py``)."""
    w(f"The same count on the `{kb}` development kb ({figures['turns']} turns of "
      f"{figures['sessions']} sessions, load average {figures['load_average'][0]:.1f}, "
      f"commit `{(figures.get('commit') or '?')[:12]}`; `turn_requests.py`):\n")
    _request_table(figures["requests"], w)


def _request_table(rows: list[dict], w) -> None:
    w("| turns | request | per turn | mean limit | mean ms | ms per turn | path |")
    w("|---|---|---:|---:|---:|---:|---|")
    for r in rows:
        if r["per_turn"] is None or r["per_turn"] < 0.005:
            continue
        limit = "" if r["mean_limit"] is None else f"{r['mean_limit']:.1f}"
        w(f"| {r['turns']} | {r['request']} | {r['per_turn']:.2f} | {limit} | "
          f"{r['mean_ms']:.2f} | {r['ms_per_turn']:.2f} | `{r['path']}` |")
    w("")


def render(profile: dict, w) -> None:
    turns, http = profile.get("turns", {}), profile.get("http", {})
    if not turns and not http and not profile.get("server_cpu") and not profile.get("http_processes"):
        return
    w("## Where a turn's time goes (current tree)\n")
    w("From `docs/benchmarks/profile.json` (written by the two scripts below with `--record`; "
      "a later commit than the full run above, on the same generated kbs). "
      "`benchmarks/turn_profile.py` plays the generated kb's scripted sessions through "
      "`TurnEngine.handle` (BM25 only, SQLite sessions, no LLM), then the bare search (one "
      "unfiltered `MilvusClient.search`, limit 5, chunk ids only) of each turn's standalone "
      "query, in the same run; *in Milvus* is the turn's own requests (filtered, a pool of "
      "4×k with the passages' text, decoded by pymilvus), *own* the rest of the turn. It then "
      "plays them again under cProfile (`--sort`, `--pstats`). One run per size; the load "
      "average says how much of the two cores the other work on the machine took. An *old* "
      "row is the older tree named, run right after the *new* one by the same script on the "
      "same Milvus Lite server (`--milvus-uri`, `--as-older`).\n")
    w("| chunks | tree | turns | turn p50 ms | turn p99 ms | bare p50 ms | bare p99 ms "
      "| turn ÷ bare (p50) | in Milvus p50 ms | own p50 ms | load average | commit |")
    w("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for size, t in sorted(turns.items(), key=lambda kv: int(kv[0])):
        trees = [("new", t), ("old", t["against"])] if t.get("against") else [("", t)]
        for name, x in trees:
            w(f"| {int(size):,} | {name} | {x['turns']} | {x['turn_ms']['p50']:.2f} | "
              f"{x['turn_ms']['p99']:.2f} | {x['bare_ms']['p50']:.2f} | {x['bare_ms']['p99']:.2f} | "
              f"{x['ratio_p50']:.2f} | "
              f"{x.get('in_milvus_ms', {}).get('p50', float('nan')):.2f} | "
              f"{x.get('outside_milvus_ms', {}).get('p50', float('nan')):.2f} | "
              f"{x['load_average'][0]:.1f} | `{(x.get('commit') or '?')[:12]}` |")
    w("")
    w("Off the hot path: a turn's session save commits to SQLite's write-ahead log without "
      "waiting for the disk (`synchronous=NORMAL`: the file survives any crash, a power loss "
      "may undo the last commits), and its trace and the pruning of old ones are one commit; "
      "over HTTP the answer is serialized once by pydantic (FastAPI would dump it, validate "
      "the dump against the model and encode it again: about 4 ms of CPU a turn), the "
      "dependencies that only read the app's state run on the event loop instead of the "
      "thread pool, and uvicorn parses HTTP with httptools on uvloop. Alias snapshots, "
      "mention readings and the term statistics are cached per kb, and the normalized text "
      "of the last few thousand passages is remembered (the coverage and no-answer checks "
      "normalize every passage of the pool, and the same passages come back turn after "
      "turn: about 164,000 fewer Python calls over the 240 profiled turns at 100k chunks). "
      "That a kb has no ontology is remembered for the alias check's interval like a "
      "snapshot's version (each turn of such a kb started a check in a new thread and waited "
      "for Neo4j: 13 ms a turn in the cast22-dev hybrid profile); the once-a-second re-read "
      "of a kb's ingest state runs on one kept worker thread (starting a thread makes the "
      "turn wait until it runs: 9 ms at a load average of 11); a hybrid hit's vector is "
      "copied in one call, not float by float, and the near-duplicate check works out each "
      "passage's script once, not once per pair compared.\n")
    largest = max(turns, key=int) if turns else None
    if largest is not None:
        render_requests(turns[largest], int(largest), w)
    for kb, figures in sorted(profile.get("suite_requests", {}).items()):
        render_suite_requests(kb, figures, w)
    if profile.get("suite_requests") or (largest and turns[largest].get("requests")):
        w("What each request buys, by its path: " + "; ".join(f"{path}: {what}"
                                                               for path, what in PATHS) + ".\n")
    if largest is not None:
        stages = turns[largest]["stages_ms"]
        w(f"What each millisecond buys, at {int(largest):,} chunks (p50 and mean of each stage; "
          "the p50s do not add up to the turn's):\n")
        w("| stage | p50 ms | mean ms | what it buys |")
        w("|---|---:|---:|---|")
        for stage, what in BUYS.items():
            s = stages.get(stage)
            if s is not None:
                w(f"| {stage} | {s['p50']:.2f} | {s['mean']:.2f} | {what} |")
        for key, name, what in EXTRA_ROWS:
            s = turns[largest].get(key)
            if s is not None:
                w(f"| {name} | {s['p50']:.2f} | {s['mean']:.2f} | {what} |")
        w("")
        collector = turns[largest].get("in_gc_ms")
        if collector is not None:
            share = collector["total"] / (turns[largest]["turn_ms"]["mean"] * turns[largest]["turns"])
            runs = "/".join(map(str, collector["collections"]))
            w(f"The garbage collector ran {runs} collections of generations 0/1/2 during the "
              f"{turns[largest]['turns']} turns, {collector['total']:.0f} ms in all "
              f"({share:.1%} of the turns' time).\n")
        w("Not in the stages: the entity facts and the state transition (a deep copy of the "
          "state, so a failed turn leaves it untouched), and building the trace and the answer; "
          "the trace is stored with the state in `session_save`, one write a turn.\n")
    if http:
        render_http(http, w)
    for size, h in sorted(profile.get("http_processes", {}).items(), key=lambda kv: int(kv[0])):
        render_http_processes(int(size), h, w)
    for size, cpu in sorted(profile.get("server_cpu", {}).items(), key=lambda kv: int(kv[0])):
        render_server_cpu(int(size), cpu, w)
    suites, cpu = profile.get("suite_requests", {}), profile.get("server_cpu", {})
    processes = profile.get("http_processes", {})
    commands = sorted({x["command"] for section in (turns, http, suites, cpu, processes)
                       for x in section.values()})
    w("```bash")
    for command in commands:
        w(command.replace("python ", ".venv/bin/python ", 1))
    w("```\n")


def render_http(http: dict, w) -> None:
    """The running server, the current tree beside the older one served the same load in
    the same run (``http_load.py --against``), with each process's CPU per turn."""
    w("The running server (`benchmarks/http_load.py`: one uvicorn worker, started on the kept "
      "kb, the load generator in the benchmark process on the same two cores). A turn runs on "
      "one of a few worker threads (the cores plus one, `REFERENT_LIMITS__CONCURRENT_TURNS`); "
      "the other requests wait in arrival order, and a turn beyond "
      "`REFERENT_LIMITS__QUEUED_TURNS` waiting is answered 503 with `Retry-After` at once "
      "(api/turn_gate.py). Once its kbs are loaded the server collects and freezes its "
      "long-lived objects (api/heap.py: a full collection no longer walks them), and a "
      "turn's session and trace are one SQLite transaction. *CPU ms per turn* is what each process spent per answered turn "
      "during the load: the API process, its Milvus Lite server and the load generator; the "
      "API process is one Python interpreter, so its figure bounds the throughput (1,000 ms "
      "of one core divided by it) while Milvus Lite and the load generator share the other "
      "core. More throughput needs more processes: several uvicorn workers or API instances "
      "with a Milvus server (`REFERENT_MILVUS__URI`, one shared Milvus Lite server or a "
      "standalone one; a Lite file belongs to one process) and sessions in Redis or one "
      "SQLite file (docs/deployment.md). A *new* row and the *old* row below it are one run: "
      "the same load on a server of each commit named, the two servers taking turns "
      "(`--against`), so the machine's load falls on both.\n")
    w("| chunks | tree | ready after s | first turn ms | clients | turns/s | client p50 ms | "
      "client p99 ms | requests | errors | CPU ms per turn: API / Milvus Lite / load generator "
      "| load average | commit |")
    w("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|")
    for size, h in sorted(http.items(), key=lambda kv: int(kv[0])):
        trees = [("new", h), ("old", h["against"])] if h.get("against") else [("", h)]
        for name, server in trees:
            commit = server.get("commit") or "?"
            for x in server["throughput"]:
                cpu = x.get("cpu_ms_per_turn")
                shown = " / ".join(f"{cpu[p]['median']:.1f}" for p in ("api", "milvus_lite", "client")) \
                    if cpu else "–"
                w(f"| {int(size):,} | {name} | {server['ready_s']:.0f} | "
                  f"{server['first_turn_ms']:.0f} | {x['clients']} | "
                  f"{x['turns_per_s']['median']:.1f} | {x['p50_ms']['median']:.1f} | "
                  f"{x['p99_ms']['median']:.0f} | {x['requests']} | {x['errors']} | {shown} | "
                  f"{h['load_average'][0]:.1f} | `{commit[:12]}` |")
    w("")
    for size, h in sorted(http.items(), key=lambda kv: int(kv[0])):
        if h.get("against") and h.get("runs", 1) > 1:
            spread = "; ".join(
                f"{name} " + ", ".join(f"{x['clients']} clients {x['turns_per_s']['runs']}"
                                       for x in server["throughput"])
                for name, server in (("new", h), ("old", h["against"])))
            tails = "; ".join(
                f"{name} " + ", ".join(f"{x['clients']} clients {x['p99_ms']['runs']}"
                                       for x in server["throughput"] if "runs" in x["p99_ms"])
                for name, server in (("new", h), ("old", h["against"])))
            w(f"At {int(size):,} chunks each figure is the median of {h['runs']} runs per tree; "
              f"turns/s of each run: {spread}; client p99 ms of each run: {tails}. "
              "A difference between the trees smaller than "
              "the spread between runs of one tree is not a difference this machine "
              "resolves.\n")


def render_http_processes(size: int, h: dict, w) -> None:
    """One process beside several sharing one Milvus Lite server, the same load in one run
    (``http_load.py --processes``), with each process's CPU per turn and memory."""
    counts = sorted(h["processes"], key=int)
    w(f"Several API processes at {size:,} chunks (`http_load.py --processes "
      f"{' '.join(counts)}`): the single process above (its own Milvus Lite), and N uvicorn "
      "processes started with the same command, each on its own port, sharing one Milvus "
      "Lite server on the kb's file (`referent milvus serve`) and one session store "
      f"({'Redis, for the single process too' if h.get('sessions') == 'redis' else 'the same SQLite file as the single process'}). "
      "There is no balancer process: the load generator sends each request to the next "
      "process in turn (round robin per request, as a balancer without session affinity: "
      "a session's turns go to different processes), so it stands in for one without its "
      "cost. The configurations take turns run by run, so the machine's load falls on all. "
      "*API* is all API processes' CPU per answered turn together; *each* is each process's "
      "CPU per turn it answered.\n")
    w("| processes | clients | turns/s | client p50 ms | client p99 ms | requests | errors "
      "| CPU ms per turn: API (each) / Milvus Lite / load generator | ready after s |")
    w("|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for count in counts:
        server = h["processes"][count]
        for x in server["throughput"]:
            cpu = {part: figure["median"] for part, figure in x["cpu_ms_per_turn"].items()}
            each = [f"{v:.1f}" for part, v in cpu.items() if part.startswith("api_")]
            api = f"{cpu['api']:.1f}" + (f" ({', '.join(each)})" if each else "")
            w(f"| {count} | {x['clients']} | {x['turns_per_s']['median']:.1f} "
              f"[{x['turns_per_s']['min']:.1f}–{x['turns_per_s']['max']:.1f}] | "
              f"{x['p50_ms']['median']:.1f} | {x['p99_ms']['median']:.0f} "
              f"[{x['p99_ms']['min']:.0f}–{x['p99_ms']['max']:.0f}] | {x['requests']} | "
              f"{x['errors']} | {api} / {cpu['milvus_lite']:.1f} / {cpu['client']:.1f} | "
              f"{server['ready_s']:.0f} |")
    w("")
    w("Resident memory (MB) after the load runs: each API process, and Milvus Lite (the "
      "single process's Lite child, or the shared server):\n")
    w("| processes | API, each | Milvus Lite | total |")
    w("|---:|---|---:|---:|")
    for count in counts:
        m = h["processes"][count]["memory_after_load"]
        api = m["api_rss_mb"] if isinstance(m["api_rss_mb"], list) else [m["api_rss_mb"]]
        milvus = m.get("milvus_rss_mb", m.get("children_rss_mb"))
        w(f"| {count} | {', '.join(f'{a:.0f}' for a in api)} | {milvus:.0f} | "
          f"{m['total_rss_mb']:.0f} |")
    w("")
    runs = next(iter(h["processes"].values())).get("runs", 1)
    w(f"Each figure is the median of {runs} runs [min–max]; commit "
      f"`{(h.get('commit') or '?')[:12]}`, load average {h['load_average'][0]:.1f} at the start "
      f"and {h['load_average_after'][0]:.1f} at the end.\n")


def render_server_cpu(size: int, cpu: dict, w) -> None:
    """Where the server's Python time went under the 16-client load (``server_profile.py``)."""
    w(f"Where the server's Python time went under 16 clients at {size:,} chunks "
      "(`benchmarks/server_profile.py` over py-spy samples of the thread holding the "
      "interpreter lock, 100 a second, during the load run of `http_load.py --profile`; "
      f"commit `{(cpu.get('commit') or '?')[:12]}`"
      + (f", load average {cpu['load_average']:.1f}" if cpu.get("load_average") else "")
      + f"). The interpreter was busy "
      f"{cpu['busy']:.0%} of the run; the rest of the time the process waited for a core "
      "(other work on the machine), for Milvus Lite or for SQLite with no Python to run. "
      "Each sample counts for the first part it falls in, so the Milvus client's share is "
      "pymilvus and gRPC building requests and decoding answers, in whichever stage:\n")
    w("| part | share of the samples |")
    w("|---|---:|")
    for part in cpu["parts"]:
        w(f"| {part['part']} | {part['share']:.1%} |")
    w("")
