"""Every benchmark figure of docs/benchmarks.md, in one run, written as JSON.

    .venv/bin/python benchmarks/run_all.py            # full: 10k/100k/1M aliases, 1k/10k/100k chunks,
                                                      # then docs/benchmarks.md and its plots
    .venv/bin/python benchmarks/run_all.py --quick    # CI smoke: tiny sizes, short runs
    .venv/bin/python benchmarks/report.py             # docs/benchmarks.md again from the JSON
    .venv/bin/python benchmarks/run_all.py --chunks 1000000 --aliases --sessions-stored 0 \
        --no-quality --keep --workdir var/bench/keep --record docs/benchmarks/results.json
                                                      # one size, resumable: run it again after a
                                                      # stop and it goes on where it was

A size that fails or is stopped (SIGTERM) still gives what it measured, with where it stopped
(chunks stored, Milvus Lite's peak memory, the error). At 1M chunks (100,000 entities) the
ontology import needs a larger Neo4j heap than the local default: REFERENT_NEO4J__LOCAL_HEAP=4g.

What it measures (each figure over ``--runs`` runs: the median with min and max):

1. **linking**: mention detection + linking per utterance (p50, p99) against an alias
   snapshot of 10k, 100k and 1M aliases built in this process from a generated ontology
   (default settings: the fuzzy index is skipped above 300,000 aliases), with the
   snapshot's build time and memory;
2. per corpus size (1k, 10k, 100k chunks) of a generated kb (an ontology of chunks/10
   entities with confusable editions, a corpus whose chunks talk about them):
   - **import** of the ontology into Neo4j (entities/s) and **ingest** of the corpus
     into a fresh Milvus Lite collection (chunks/s);
   - **turn latency** p50/p95/p99 through ``TurnEngine.handle`` (the HTTP route's path,
     no LLM) over scripted four-turn sessions, broken down by the stages the turn's
     trace times (session_load, detect, link, rewrite, retrieve, pack, session_save), beside a
     bare Milvus BM25 search (``MilvusClient.search``, limit 5, no filter) of each
     turn's standalone query;
   - the **server** (uvicorn, one worker, on loopback): resident memory of the API
     process and its Milvus Lite child, idle and after load, and **throughput** with 1,
     4 and 16 concurrent clients, each run bounded in time and requests, with errors;
3. **quality**: ``referent eval`` of the demo suite, Referent beside the ``raw`` and
   ``concat`` baselines over the same index, overall and per turn index (and, with
   ``--dev-suite``, the development suites of ../shared/data).

Neo4j: the one the settings name (REFERENT_NEO4J__*); the local one is started when it
is not running and stopped again at the end. Milvus Lite files and the server's session
store live under ``--workdir``. Nothing leaves the machine: the server binds 127.0.0.1.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.synth import (machine, pct, rss_mb, synthetic_ontology, turn_kb,  # noqa: E402
                              utterances)

STAGES = ("session_load", "detect", "link", "rewrite", "retrieve", "pack", "session_save")
BENCH_KEY = "rk_bench_query_key_loopback_only_" + "0" * 8

FULL = {"aliases": [10_000, 100_000, 1_000_000], "chunks": [10_000, 100_000, 1_000_000],
        "clients": [1, 16], "runs": 3, "utterances": 2_000, "sessions": 60,
        "load_seconds": 10.0, "load_max_requests": 5_000,
        "sessions_stored": [1_000, 10_000, 100_000, 1_000_000]}
QUICK = {"aliases": [2_000], "chunks": [300], "clients": [1, 4, 16], "runs": 2, "utterances": 200,
         "sessions": 8, "load_seconds": 1.0, "load_max_requests": 200,
         "sessions_stored": [1_000, 5_000]}


def log(message: str) -> None:
    print(f"[{datetime.now(timezone.utc):%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def stat(values: list[float], digits: int = 3) -> dict:
    """Median with min and max over runs (and the runs themselves)."""
    return {"median": round(statistics.median(values), digits), "min": round(min(values), digits),
            "max": round(max(values), digits), "runs": [round(v, digits) for v in values]}


# -- 1. linking -----------------------------------------------------------------------------

def bench_linking(size: int, runs: int, n_utterances: int) -> dict:
    from benchmarks.linking_bench import time_turns
    from kg.aliases import AliasSnapshot

    ontology, names = synthetic_ontology(size)
    gc.collect()
    before = rss_mb()
    started = time.perf_counter()
    snapshot = AliasSnapshot.from_ontology("bench", 1, ontology)
    build = time.perf_counter() - started
    memory = rss_mb() - before
    started = time.perf_counter()
    fuzzy = snapshot.fuzzy_index() is not None
    fuzzy_build = time.perf_counter() - started
    texts = utterances(names, n_utterances)
    time_turns(snapshot, texts[:200])  # warm the pipeline and the fit model
    p50s, p99s = [], []
    for _ in range(runs):
        times = time_turns(snapshot, texts)
        p50s.append(pct(times, 50))
        p99s.append(pct(times, 99))
    result = {"aliases": sum(len(e.all_aliases) for e in ontology.entities),
              "alias_keys": len(snapshot.by_norm), "entities": len(snapshot.entities),
              "snapshot_build_s": round(build, 2), "snapshot_memory_mb": round(memory, 1),
              "fuzzy_index": fuzzy, "fuzzy_build_s": round(fuzzy_build, 2),
              "utterances": len(texts), "p50_ms": stat(p50s), "p99_ms": stat(p99s)}
    return result


# -- 2. corpus sizes --------------------------------------------------------------------------

class Services:
    """Neo4j from the settings (started here when local and not running)."""

    def __init__(self) -> None:
        from api.runtime import open_ontology_store
        from api.settings import Settings

        self.settings = Settings()
        self.started_local = False
        if self.settings.uses_local_neo4j:
            from api.cli import _local_neo4j

            local = _local_neo4j(self.settings)
            if not local.status().running:
                log("starting the local Neo4j")
                local.build(log=log)
                local.start(log=log)
                self.started_local = True
        self.store = open_ontology_store(self.settings)
        self.store.verify()

    def close(self) -> None:
        self.store.close()
        if self.started_local:
            from api.cli import _local_neo4j

            _local_neo4j(self.settings).stop()


def _engine(services: Services, index, sessions_path: Path):
    from api.runtime import engine_config, retriever_config
    from dialogue.engine import TurnEngine
    from dialogue.sqlite_store import SQLiteSessionStore
    from kg.aliases import SnapshotCache
    from retrieval.entity_facts import EntityFactsCache
    from retrieval.search import Retriever

    sessions = SQLiteSessionStore(sessions_path, ttl_seconds=3600)
    retriever = Retriever(index, config=retriever_config(services.settings))
    engine = TurnEngine(SnapshotCache(services.store), retriever, sessions,
                        engine_config(services.settings), facts=EntityFactsCache(index))
    return engine, sessions, retriever


def bench_corpus(services: Services, size: int, cfg: dict, workdir: Path, keep: bool = False,
                 result: dict | None = None) -> dict:
    """Every figure of one corpus size. ``keep``: what a previous run of this size left in
    ``workdir`` (the imported kb, the ingested collection, their figures) is reused, and an
    interrupted ingest resumes where it stopped instead of starting over. ``result``: filled
    as the figures come, so a size that fails part-way still gives what it measured."""
    from kg.aliases import SnapshotCache
    from pymilvus import MilvusClient
    from retrieval.milvus_index import MilvusIndex

    runs = cfg["runs"]
    kb = f"bench_c{size}"
    data = turn_kb(size, sessions=cfg["sessions"])
    result = {} if result is None else result
    result.update({"chunks": data.chunks, "entities": data.entities,
                   "aliases": sum(len(json.loads(line).get("aliases", [])) + 1
                                  for line in data.ontology_lines if '"entity"' in line),
                   "sessions": len(data.sessions),
                   "measured": {"commit": _git_commit(), "load_average": list(os.getloadavg()),
                                "at": datetime.now(timezone.utc).isoformat(timespec="seconds")}})

    kept = Checkpoint(workdir / f"kept-{size}.json") if keep else None
    result["import"] = _import(services, kb, data, runs, kept)
    snapshot = SnapshotCache(services.store).get(kb)
    uri = cfg.get("milvus_uri") or str(workdir / f"milvus-{size}.db")
    index = MilvusIndex(uri, timeout=3600)
    if kept is not None and kept.get("ingest") and index.has_collection(kb):
        result["ingest"] = kept.get("ingest")
        _cold_load(index, kb, result, size)
    result["ingest"] = _ingest(index, kb, data, snapshot, runs, kept, size)

    # turns through the engine, then the bare search of each standalone query
    engine, sessions, _ = _engine(services, index, workdir / f"sessions-{kb}.sqlite3")
    client = MilvusClient(uri)
    collection = "referent_" + kb
    tag = uuid.uuid4().hex[:6]
    for i, script in enumerate(data.sessions[:5]):  # warm-up
        for text in script:
            engine.handle(kb, f"warm-{tag}-{i}", text)
    per_run = {"p50": [], "p95": [], "p99": [], "bare_p50": [], "bare_p95": [], "bare_p99": [],
               "ratio_p50": [], "overhead_ms_p50": [], "outside_retrieve_ms_p50": []}
    stages: dict[str, list[float]] = {s: [] for s in STAGES}
    stage_means: dict[str, list[float]] = {s: [] for s in STAGES}
    actions: dict[str, int] = {}
    turns = 0
    for run in range(runs):
        latencies, bare, queries = [], [], []
        run_stages: dict[str, list[float]] = {s: [] for s in STAGES}
        outside = []
        for i, script in enumerate(data.sessions):
            sid = f"b{run}-{tag}-{i}"
            for text in script:
                r = engine.handle(kb, sid, text)
                latencies.append(r.latency_ms)
                timings = r.trace.get("timings_ms", {})
                for s in STAGES:
                    run_stages[s].append(timings.get(s, 0.0))
                outside.append(r.latency_ms - timings.get("retrieve", 0.0))
                if run == 0:
                    actions[r.action] = actions.get(r.action, 0) + 1
                if r.action != "clarify":
                    queries.append(r.standalone)
        turns = len(latencies)
        for q in queries:
            t0 = time.perf_counter()
            client.search(collection, data=[q], anns_field="sparse", limit=5, output_fields=["chunk_id"],
                          search_params={"metric_type": "BM25"})
            bare.append((time.perf_counter() - t0) * 1000)
        for p in (50, 95, 99):
            per_run[f"p{p}"].append(pct(latencies, p))
            per_run[f"bare_p{p}"].append(pct(bare, p))
        per_run["ratio_p50"].append(pct(latencies, 50) / pct(bare, 50))
        per_run["overhead_ms_p50"].append(pct(latencies, 50) - pct(bare, 50))
        per_run["outside_retrieve_ms_p50"].append(pct(outside, 50))
        for s in STAGES:
            stages[s].append(pct(run_stages[s], 50))
            stage_means[s].append(statistics.fmean(run_stages[s]))
    bare_p50 = statistics.median(per_run["bare_p50"])
    result["turns"] = {
        "turns_per_run": turns, "actions": actions,
        "latency_ms": {p: stat(per_run[p]) for p in ("p50", "p95", "p99")},
        "bare_milvus_ms": {p: stat(per_run[f"bare_{p}"]) for p in ("p50", "p95", "p99")},
        "ratio_to_bare_p50": stat(per_run["ratio_p50"], 2),
        "overhead_ms_p50": stat(per_run["overhead_ms_p50"]),
        "overhead_share_of_bare": round(statistics.median(per_run["overhead_ms_p50"]) / bare_p50, 2),
        "outside_retrieve_ms_p50": stat(per_run["outside_retrieve_ms_p50"]),
        "stages_ms_p50": {s: stat(stages[s]) for s in STAGES},
        "stages_ms_mean": {s: stat(stage_means[s]) for s in STAGES},
    }
    log(f"[{size}] turn p50 {statistics.median(per_run['p50']):.2f} ms, bare {bare_p50:.2f} ms")
    client.close()
    sessions.close()
    index.close()
    _release_lite(uri)
    del engine, snapshot
    gc.collect()

    result["server"] = bench_server(kb, uri, data.sessions, cfg, workdir / f"server-{size}", size)
    return result


class Checkpoint:
    """The figures a kept run of one size has measured so far, in a JSON file of the workdir,
    so that a run stopped by hand or by a failure resumes with them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}

    def get(self, key: str) -> dict | None:
        return self.data.get(key)

    def put(self, key: str, value: dict | None) -> None:
        if value is None:
            self.data.pop(key, None)
        else:
            self.data[key] = value
        self.path.write_text(json.dumps(self.data, ensure_ascii=False, indent=2), encoding="utf-8")


def _import(services: Services, kb: str, data, runs: int, kept: Checkpoint | None) -> dict:
    """Import figures (entities/s), each run into an emptied kb; a kept kb that holds the
    whole ontology is reused with the figures measured when it was imported."""
    from kg.aliases import SnapshotCache

    if kept is not None and kept.get("import") and \
            len(SnapshotCache(services.store).get(kb).entities) == data.entities:
        log(f"[{data.chunks}] reusing the imported ontology of {data.entities:,} entities")
        return kept.get("import")
    seconds = []
    for _ in range(runs):
        services.store.delete_kb(kb)
        t0 = time.perf_counter()
        services.store.import_ontology(kb, data.ontology_lines, path="synthetic")
        seconds.append(time.perf_counter() - t0)
    figures = {"seconds": stat(seconds), "entities_per_s": stat([data.entities / s for s in seconds], 1)}
    log(f"[{data.chunks}] import {data.entities} entities: {statistics.median(seconds):.2f} s")
    if kept is not None:
        kept.put("import", figures)
    return figures


def _ingest(index, kb: str, data, snapshot, runs: int, kept: Checkpoint | None, size: int) -> dict:
    """Ingest figures (chunks/s, memory), each run into a fresh collection. Kept: a complete
    collection is reused with its figures, an interrupted one is completed by ingesting
    the file again (only the chunks it lacks are written) and timed as a resumed run."""
    if kept is not None and kept.get("ingest") and index.has_collection(kb) \
            and index.incomplete(kb) is None and index.count(kb) == data.chunks:
        log(f"[{size}] reusing the ingested collection of {data.chunks:,} chunks")
        return kept.get("ingest")
    resumed = kept is not None and index.has_collection(kb) and index.incomplete(kb) is not None
    earlier = kept.get("stopped") if resumed else None
    seconds, watch = [], IngestWatch(size, data.chunks, kept, earlier)
    for _ in range(runs):
        if not resumed:
            index.drop(kb)
        seconds.append(watch.run(lambda: _ingest_once(index, kb, data, snapshot, watch.progress)))
    if earlier:  # one ingest in two runs: both runs' time (reading the file counts twice)
        seconds = [s + earlier["seconds"] for s in seconds]
    figures = {"seconds": stat(seconds, 2), "chunks_per_s": stat([data.chunks / s for s in seconds], 1),
               # this process and its Milvus Lite server, the kb just ingested
               "memory": _memory(os.getpid()),
               "lite_peak_rss_mb": watch.peak_mb}
    if resumed:
        figures["resumed"] = {"stored_before": watch.start_count, "earlier": earlier}
    log(f"[{size}] ingest {data.chunks} chunks: {statistics.median(seconds):.1f} s, "
        f"Milvus Lite peak {watch.peak_mb:,.0f} MB")
    if kept is not None:
        kept.put("ingest", figures)
        kept.put("stopped", None)
    return figures


def _cold_load(index, kb: str, result: dict, size: int) -> None:
    """Time loading a kept collection into a Milvus Lite process that has not loaded it
    (what a restarted server waits before it is ready); a load that is stopped says how
    long it had run."""
    t0 = time.perf_counter()
    result["collection_load"] = {"finished": False, "seconds": None}
    try:
        index.load(kb)
        result["collection_load"]["finished"] = True
    finally:
        result["collection_load"]["seconds"] = round(time.perf_counter() - t0, 1)
        log(f"[{size}] collection load in a fresh Milvus Lite: {result['collection_load']}")


def _ingest_once(index, kb: str, data, snapshot, progress) -> None:
    from retrieval.ingest import ingest_corpus

    report = ingest_corpus(kb, data.corpus_lines, index=index, snapshot=snapshot, path="synthetic",
                           progress=progress)
    assert report.chunks == data.chunks, report


class IngestWatch:
    """Progress of an ingest in the log (rate, Milvus Lite's resident memory), its peak
    memory, and where it stopped when it fails: written to the checkpoint as it goes, so a
    run killed by hand leaves the same record."""

    def __init__(self, size: int, chunks: int, kept: Checkpoint | None,
                 earlier: dict | None = None) -> None:
        self.size, self.chunks, self.kept = size, chunks, kept
        # a resumed ingest: the interrupted run's time and memory count too
        self._earlier_s = (earlier or {}).get("seconds", 0.0)
        self.peak_mb = (earlier or {}).get("lite_peak_rss_mb", 0.0)
        self.start_count: int | None = None
        self._t0 = time.perf_counter()
        self._last = self._sampled = 0.0
        self._writing_t0 = self._t0
        self._done = 0

    def run(self, ingest) -> float:
        self._t0, self._last, self._sampled, self._done = time.perf_counter(), 0.0, 0.0, 0
        try:
            ingest()
        except Exception as exc:
            self._record(f"{type(exc).__name__}: {exc}"[:500])
            raise
        return time.perf_counter() - self._t0

    def progress(self, done: int, total: int) -> None:
        if self.start_count is None:  # the first step written: reading the file is over
            self.start_count = self.chunks - total
            self._writing_t0 = time.perf_counter()
        self._done = done
        elapsed = time.perf_counter() - self._t0
        writing = time.perf_counter() - self._writing_t0
        if elapsed - self._sampled >= 5 or done == total:  # reading /proc costs milliseconds
            self._sampled = elapsed
            self.peak_mb = max(self.peak_mb, _memory(os.getpid())["children_rss_mb"])
        if elapsed - self._last >= 30 or done == total:
            self._last = elapsed
            log(f"[{self.size}] ingest {done:,}/{total:,} written ({done / max(writing, 1e-9):,.0f} chunks/s), "
                f"Milvus Lite {self.peak_mb:,.0f} MB at most")
            self._record(None)

    def _record(self, error: str | None) -> None:
        if self.kept is None:
            return
        self.kept.put("stopped", {
            "chunks": self.size, "stored": (self.start_count or 0) + self._done,
            "seconds": round(self._earlier_s + time.perf_counter() - self._t0, 1),
            "lite_peak_rss_mb": self.peak_mb,
            "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "error": error or "interrupted while ingesting (no error recorded: stopped from outside)"})


def _release_lite(uri: str) -> None:
    """Stop this process's Milvus Lite server for ``uri`` so another process can open the
    file (closing the client leaves it running); nothing for a Milvus server."""
    from milvus_lite.server_manager import server_manager_instance

    if "://" in uri:
        return

    server_manager_instance.release_server(uri)


# -- the running server ---------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def _memory(pid: int) -> dict:
    """Resident and peak resident MB of the server process and of its children (Milvus Lite)."""
    def status(p: int) -> tuple[float, float]:
        rss = hwm = 0.0
        try:
            with open(f"/proc/{p}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        rss = int(line.split()[1]) / 1000
                    elif line.startswith("VmHWM:"):
                        hwm = int(line.split()[1]) / 1000
        except OSError:
            pass
        return rss, hwm

    api_rss, api_hwm = status(pid)
    child = [status(p) for p in _descendants(pid) if p != pid]
    return {"api_rss_mb": round(api_rss, 1), "api_peak_mb": round(api_hwm, 1),
            "children_rss_mb": round(sum(c[0] for c in child), 1),
            "total_rss_mb": round(api_rss + sum(c[0] for c in child), 1)}


def _cpu_seconds(pid: int) -> tuple[float, float]:
    """CPU seconds (user + system) used so far by process ``pid`` and by its descendants."""
    tick = os.sysconf("SC_CLK_TCK")

    def used(p: int) -> float:
        try:
            with open(f"/proc/{p}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / tick

    return used(pid), sum(used(p) for p in _descendants(pid) if p != pid)


def _load(base: str | list[str], kb: str, scripts: list[list[str]], clients: int, seconds: float,
          max_requests: int, tag: str, balance: str = "round-robin") -> dict:
    """``clients`` threads, each replaying whole sessions until the time or the request
    budget runs out; returns turns/s, errors and client-side latency. Given several
    ``base`` URLs (API processes sharing one session store), each request goes to the
    next one in turn, whichever client sends it: round robin, as a balancer without
    session affinity does; ``balance="least"``: to the one with the fewest requests of
    this load in flight (nginx's ``least_conn``), ties in turn."""
    import httpx

    bases = [base] if isinstance(base, str) else list(base)
    lock = threading.Lock()
    counter = {"next": 0, "sent": 0}
    ok, errors, latencies, kinds = [0], [0], [], {}
    by_process, in_flight = [0] * len(bases), [0] * len(bases)

    def pick(sent: int) -> int:
        if balance != "least":
            return sent % len(bases)
        return min(range(len(bases)), key=lambda i: (in_flight[i], (i - sent) % len(bases)))
    # The clock starts once every client is built: on a loaded machine building 16
    # HTTP clients can take longer than a quick run's whole budget.
    ready = threading.Barrier(clients + 1)
    deadline = [float("inf")]

    def take() -> int | None:
        with lock:
            if counter["sent"] >= max_requests or time.perf_counter() >= deadline[0]:
                return None
            counter["sent"] += 1
            return counter["sent"]

    def worker(w: int) -> None:
        with httpx.Client(timeout=60, headers={"Authorization": f"Bearer {BENCH_KEY}"}) as http:
            ready.wait()
            while True:
                with lock:
                    n = counter["next"]
                    counter["next"] += 1
                script = scripts[n % len(scripts)]
                for text in script:
                    if (sent := take()) is None:
                        return
                    with lock:
                        k = pick(sent)
                        in_flight[k] += 1
                    url = f"{bases[k]}/v1/kbs/{kb}/sessions/{tag}-{w}-{n}/turns"
                    t0 = time.perf_counter()
                    try:
                        r = http.post(url, json={"text": text})
                        good = r.status_code == 200
                        kind = str(r.status_code)
                    except httpx.HTTPError as exc:
                        good, kind = False, type(exc).__name__
                    elapsed = (time.perf_counter() - t0) * 1000
                    with lock:
                        in_flight[k] -= 1
                        if good:
                            ok[0] += 1
                            by_process[k] += 1
                            latencies.append(elapsed)
                        else:
                            errors[0] += 1
                            kinds[kind] = kinds.get(kind, 0) + 1

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(clients)]
    for t in threads:
        t.start()
    ready.wait()
    started, cpu_started = time.perf_counter(), time.process_time()
    deadline[0] = started + seconds
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    # The load generator shares the cores with the server: its own CPU time says how much.
    client_cpu = time.process_time() - cpu_started
    return {"ok": ok[0], "errors": errors[0], "error_kinds": kinds, "seconds": elapsed,
            "client_cpu_s": client_cpu, "ok_by_process": by_process,
            "turns_per_s": ok[0] / elapsed if elapsed else 0.0,
            "p50_ms": pct(latencies, 50) if latencies else None,
            "p99_ms": pct(latencies, 99) if latencies else None}


def _measured_load(base: str | list[str], kb: str, scripts: list[list[str]], clients: int,
                   cfg: dict, pid: int, run: int, profile: Path | None = None, *,
                   cpu=None) -> dict:
    """One load run, with the CPU each process spent per answered turn: the API process,
    its children (the Milvus Lite server) and the load generator; with ``profile``, the
    server's stacks sampled meanwhile (py-spy, 100 per second, the thread holding the
    interpreter lock only: where the process's Python time goes) into that file.
    ``cpu``: what to read instead of ``pid`` and its children, a function returning the CPU
    seconds used so far by each named part (several API processes and a Milvus server); a
    part named ``api_K`` is the process at ``base[K - 1]`` and is divided by the turns that
    process answered, every other part by all the turns."""
    spy = None
    if profile is not None:
        spy = subprocess.Popen([_py_spy(), "record", "-p", str(pid), "-r", "100", "-f", "raw", "--gil",
                                "-d", str(max(1, int(cfg["load_seconds"]))), "--nonblocking",
                                "-o", str(profile.with_suffix(f".{clients}c{run}.txt"))],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cpu = cpu or (lambda: dict(zip(("api", "milvus_lite"), _cpu_seconds(pid))))
    before = cpu()
    result = _load(base, kb, scripts, clients, cfg["load_seconds"], cfg["load_max_requests"],
                   f"c{clients}r{run}{uuid.uuid4().hex[:6]}", cfg.get("balance", "round-robin"))
    after = cpu()
    if spy is not None:
        spy.wait(timeout=60)
    turns = max(result["ok"], 1)

    def answered(part: str) -> int:
        own = re.fullmatch(r"api_(\d+)", part)
        return max(result["ok_by_process"][int(own[1]) - 1], 1) if own else turns

    result["cpu_ms_per_turn"] = {part: (after[part] - before[part]) * 1000 / answered(part)
                                 for part in before}
    result["cpu_ms_per_turn"]["client"] = result["client_cpu_s"] * 1000 / turns
    return result


def _py_spy() -> str:
    found = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(found).exists():
        raise SystemExit("--profile needs py-spy: .venv/bin/pip install py-spy")
    return found


def server_command(port: int, extra: tuple[str, ...] = ()) -> list[str]:
    return [sys.executable, "-m", "uvicorn", "--factory", "api.app:create_app", "--host", "127.0.0.1",
            "--port", str(port), "--no-access-log", "--log-level", "warning", *extra]


def bench_server(kb: str, milvus_uri: str, scripts: list[list[str]], cfg: dict, data_dir: Path,
                 size: int, extra: tuple[str, ...] = (), *, tree: Path = REPO,
                 profile: Path | None = None) -> dict:
    """The server section for one kb; ``extra``: further uvicorn options; ``tree``: the
    source tree the server runs (another commit's checkout, for a side-by-side run);
    ``profile``: py-spy samples of the server during the last load level, written there."""
    from api.auth import hash_key

    data_dir.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    # Throughput from one key is what is measured: no per-key rate limit unless the
    # caller's environment sets one.
    env = dict({"REFERENT_RATE_LIMIT__PER_KEY_PER_SECOND": "0", **os.environ},
               REFERENT_MILVUS__URI=milvus_uri, REFERENT_DATA_DIR=str(data_dir),
               REFERENT_AUTH__KEYS=json.dumps([{"name": "bench", "role": "query",
                                                "hash": hash_key(BENCH_KEY)}]))
    warmed = _clarify_vectors(kb, data_dir)
    errlog = open(data_dir / "server.log", "w")
    proc = subprocess.Popen(server_command(port, extra), cwd=tree, env=env, stdout=errlog, stderr=errlog,
                            start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        t0 = time.perf_counter()
        _wait_for(base + "/healthz", proc, t0, 120, data_dir / "server.log")
        started_s = time.perf_counter() - t0
        ready_s, first_ms = _first_turn(base, kb, scripts[0][0], proc, t0)
        log(f"[{size}] ready {ready_s:.1f} s after start, first turn {first_ms:.0f} ms")
        warm = _load(base, kb, scripts, 1, 60, 40, f"warm{uuid.uuid4().hex[:6]}")
        if warm["errors"]:
            raise RuntimeError(f"warm-up turns failed: {warm['error_kinds']}; see {data_dir / 'server.log'}")
        idle = _memory(proc.pid)
        levels = load_levels(base, kb, scripts, cfg, proc.pid, size, profile)
        loaded = _memory(proc.pid)
        shown = ["python", *server_command(port, extra)[1:]]
        shown[shown.index("--port") + 1] = "PORT"
        return {"command": " ".join(shown), "start_s": round(started_s, 1), "clarify_vectors": warmed,
                "ready_s": round(ready_s, 1), "first_turn_ms": round(first_ms, 1),
                "memory_idle": idle, "memory_after_load": loaded, "throughput": levels}
    finally:
        _stop(proc)
        errlog.close()


def load_levels(base: str | list[str], kb: str, scripts: list[list[str]], cfg: dict, pid: int,
                size: int, profile: Path | None = None, *, cpu=None) -> list[dict]:
    """Every load level of ``cfg["clients"]``, ``cfg["runs"]`` runs each, on a warmed server
    (or several: ``base`` a list, ``cpu`` their parts' CPU, see :func:`_measured_load`)."""
    levels = []
    for clients in cfg["clients"]:
        spy = profile if clients == cfg["clients"][-1] else None
        runs = [_measured_load(base, kb, scripts, clients, cfg, pid, r, spy, cpu=cpu)
                for r in range(cfg["runs"])]
        levels.append({
            "clients": clients,
            "turns_per_s": stat([r["turns_per_s"] for r in runs], 1),
            "p50_ms": stat([r["p50_ms"] for r in runs if r["p50_ms"] is not None] or [0.0], 2),
            "p99_ms": stat([r["p99_ms"] for r in runs if r["p99_ms"] is not None] or [0.0], 2),
            "requests": sum(r["ok"] + r["errors"] for r in runs),
            "errors": sum(r["errors"] for r in runs),
            "error_kinds": {k: sum(r["error_kinds"].get(k, 0) for r in runs)
                            for k in {k for r in runs for k in r["error_kinds"]}},
            "seconds_per_run": cfg["load_seconds"],
            "cpu_ms_per_turn": {part: stat([r["cpu_ms_per_turn"][part] for r in runs], 2)
                                for part in runs[0]["cpu_ms_per_turn"]}})
        log(f"[{size}] server {clients} clients: {levels[-1]['turns_per_s']['median']:.1f} turns/s, "
            f"{levels[-1]['errors']} errors")
    return levels


def _clarify_vectors(kb: str, data_dir: Path) -> dict:
    """The clarify model's candidate vectors of ``kb``, embedded into the server's data dir
    before it starts (``referent clarify warm``): a server embeds the missing ones in the
    background, which on a freshly imported kb of 10,000 entities takes minutes of CPU and
    would fall into the load runs instead of being a one-off of the import."""
    done = subprocess.run([sys.executable, "-m", "api.cli", "clarify", "warm", "--kb", kb],
                          cwd=REPO, env={**os.environ, "REFERENT_DATA_DIR": str(data_dir)},
                          capture_output=True, text=True)
    if done.returncode != 0:
        log(f"clarify vectors of {kb} not precomputed: {done.stderr.strip()[-300:]}")
        return {"skipped": done.stderr.strip()[-300:]}
    got = json.loads(done.stdout)
    log(f"clarify vectors of {kb}: {got}")
    return got


def merge_server_runs(runs: list[dict]) -> dict:
    """Several :func:`bench_server` results of one tree (one load run each) as one: each
    figure over the runs (median, min, max), start-up figures the median run's."""
    def over(clients: int, figure: str, digits: int) -> dict:
        return stat([next(x for x in r["throughput"] if x["clients"] == clients)[figure]["median"]
                     for r in runs], digits)

    merged = dict(runs[len(runs) // 2])
    merged["ready_s"] = stat([r["ready_s"] for r in runs], 1)["median"]
    merged["first_turn_ms"] = stat([r["first_turn_ms"] for r in runs], 1)["median"]
    levels = []
    for level in runs[0]["throughput"]:
        c = level["clients"]
        same = [next(x for x in r["throughput"] if x["clients"] == c) for r in runs]
        levels.append({
            **level, "turns_per_s": over(c, "turns_per_s", 1),
            "p50_ms": over(c, "p50_ms", 2), "p99_ms": over(c, "p99_ms", 2),
            "requests": sum(x["requests"] for x in same), "errors": sum(x["errors"] for x in same),
            "error_kinds": {k: sum(x["error_kinds"].get(k, 0) for x in same)
                            for k in {k for x in same for k in x["error_kinds"]}},
            "cpu_ms_per_turn": {part: stat([x["cpu_ms_per_turn"][part]["median"] for x in same], 2)
                                for part in level["cpu_ms_per_turn"]}})
    merged["throughput"] = levels
    merged["runs"] = len(runs)
    return merged


def _wait_for(url: str, proc: subprocess.Popen, t0: float, limit: float, log_path: Path | None) -> None:
    """Poll ``url`` until it answers 200; raise when the server exits or ``limit`` seconds
    since ``t0`` pass."""
    import httpx

    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}; see {log_path or 'its log'}"
                               + log_tail(log_path))
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.perf_counter() - t0 > limit:
            raise RuntimeError(f"{url} did not answer 200 within {limit:g} s")
        time.sleep(0.2)


def log_tail(path: Path | None, lines: int = 15) -> str:
    """The last ``lines`` lines of a server's log, indented, to show under its error."""
    try:
        tail = path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
    except (OSError, AttributeError):
        return ""
    return "".join(f"\n    {line}" for line in tail)


def _first_turn(base: str, kb: str, text: str, proc: subprocess.Popen,
                t0: float) -> tuple[float, float]:
    """Seconds from the server's start until ``/readyz`` answers 200 (its kbs loaded), and
    the milliseconds of the first turn after that: what the first user of a restarted
    server waits."""
    import httpx

    _wait_for(base + "/readyz", proc, t0, 3600, None)
    ready_s = time.perf_counter() - t0
    started = time.perf_counter()
    r = httpx.post(f"{base}/v1/kbs/{kb}/sessions/first-{uuid.uuid4().hex[:8]}/turns",
                   json={"text": text}, headers={"Authorization": f"Bearer {BENCH_KEY}"},
                   timeout=120)
    r.raise_for_status()
    return ready_s, (time.perf_counter() - started) * 1000


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM the server's process group (uvicorn and its Milvus Lite child), then SIGKILL."""
    for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue


# -- 3. quality --------------------------------------------------------------------------------

def bench_quality(services: Services, name: str, directory: Path, workdir: Path, k: int = 5) -> dict:
    from evaluation.suites import parse_suite, run_baseline, run_system, score
    from kg.aliases import SnapshotCache
    from retrieval.ingest import ingest_corpus
    from retrieval.milvus_index import MilvusIndex

    kb = "bench_q_" + "".join(ch if ch.isalnum() else "_" for ch in name)
    services.store.delete_kb(kb)
    services.store.import_ontology(kb, (directory / "ontology.jsonl").read_text(encoding="utf-8").splitlines(),
                                   path=str(directory / "ontology.jsonl"))
    snapshot = SnapshotCache(services.store).get(kb)
    index = MilvusIndex(str(workdir / f"milvus-{kb}.db"), timeout=300)
    index.drop(kb)
    ingest_corpus(kb, (directory / "corpus.jsonl").read_text(encoding="utf-8").splitlines(), index=index,
                  snapshot=snapshot, chunk_chars=services.settings.retrieval.chunk_chars)
    scripts = parse_suite((directory / "suite.jsonl").read_text(encoding="utf-8").splitlines())
    engine, sessions, retriever = _engine(services, index, workdir / f"sessions-{kb}.sqlite3")
    try:
        results = run_system(engine, kb, scripts, k=k)
        systems = {"referent": score(scripts, results, k=k)}
        for baseline in ("raw", "concat"):
            systems[baseline] = score(scripts, run_baseline(retriever, kb, scripts, baseline, k=k), k=k)
    finally:
        sessions.close()
        index.drop(kb)
        index.close()
        _release_lite(str(workdir / f"milvus-{kb}.db"))
        services.store.delete_kb(kb)
    failed = [{"session": r.session, "turn": r.turn, "user": r.user} for r in results
              if not _passes(scripts, r, k)]
    log(f"[quality {name}] hit@{k} referent {systems['referent']['overall']['hit_at_k']}, "
        f"raw {systems['raw']['overall']['hit_at_k']}, concat {systems['concat']['overall']['hit_at_k']}")
    suite = directory / "suite.jsonl"
    shown = (suite.resolve().relative_to(REPO) if suite.resolve().is_relative_to(REPO)
             else Path(directory.name) / suite.name)
    return {"suite": str(shown), "sessions": len(scripts),
            "turns": sum(len(s.turns) for s in scripts), "k": k, "systems": systems,
            "turns_failing_an_expectation": failed[:200], "failing_count": len(failed)}


def _passes(scripts, r, k: int) -> bool:
    """Whether one referent turn meets every expectation of its scripted turn."""
    from evaluation.suites import score

    script = next(s for s in scripts if s.session == r.session)
    one = type(script)(session=script.session, turns=(script.turns[r.turn - 1],))
    m = score([one], [r.model_copy(update={"turn": 1})], k=k)["overall"]
    checks = [m["hit_at_k"], m["action_accuracy"], m["clarify_options_ok"], m["not_entities_ok"],
              m["must_contain_pass"], m["entity_recall"]]
    return all(c in (None, 1.0) for c in checks)


# -- main ----------------------------------------------------------------------------------------

def _a_saved_state(workdir: Path) -> str | None:
    """The largest session state the corpus runs saved (a real one, as a template)."""
    import sqlite3

    best = None
    for path in workdir.glob("sessions-bench_c*.sqlite3"):
        with sqlite3.connect(path) as conn:
            row = conn.execute("SELECT state FROM sessions ORDER BY length(state) DESC LIMIT 1").fetchone()
        if row and (best is None or len(row[0]) > len(best)):
            best = row[0]
    return best


SHOWN_PATHS = {"workdir": "var/bench/keep", "out": "var/bench/keep/results.json"}


class StoppedByHand(Exception):
    """SIGTERM during a size: raised in the main thread so that what the size measured so
    far is written, with where it stopped, before the run ends."""


def _stop_on_sigterm(signum, frame) -> None:
    raise StoppedByHand(f"stopped by hand (signal {signum}) at {datetime.now(timezone.utc):%H:%M} UTC")


def record_sizes(results: dict, path: Path) -> None:
    """Put ``results``' corpus sizes into the results JSON at ``path``: an entry of the same
    size is replaced, the others and every other section kept; ``stopped`` is this run's
    when it stopped, and dropped when this run completed the size the file said stopped."""
    recorded = json.loads(path.read_text(encoding="utf-8"))
    sizes = {c["chunks"] for c in results["corpus"]}
    run_sizes = set(results["meta"]["config"]["chunks"])
    kept = [c for c in recorded.get("corpus", []) if c["chunks"] not in sizes | run_sizes]
    # the command as others would type it: this machine's paths left out
    shown = re.sub(r" --record \S+", "", results["meta"]["command"])
    shown = re.sub(r"--(workdir|out) \S+", lambda m: f"--{m[1]} {SHOWN_PATHS[m[1]]}", shown)
    for entry in results["corpus"]:
        entry.setdefault("measured", {})["command"] = shown
    recorded["corpus"] = sorted(kept + results["corpus"], key=lambda c: c["chunks"])
    if results.get("stopped"):
        recorded["stopped"] = results["stopped"]
    elif recorded.get("stopped", {}).get("chunks") in run_sizes:
        del recorded["stopped"]
    path.write_text(json.dumps(recorded, ensure_ascii=False, indent=2), encoding="utf-8")


def _git_commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes and short runs (CI smoke)")
    parser.add_argument("--out", type=Path, default=None,
                        help="results JSON (default docs/benchmarks/results.json, quick: "
                             "var/bench/quick/results.json)")
    parser.add_argument("--report", type=Path, default=None,
                        help="report to generate from it (default docs/benchmarks.md, quick: "
                             "var/bench/quick/benchmarks.md)")
    parser.add_argument("--no-report", action="store_true", help="write the JSON only")
    parser.add_argument("--workdir", type=Path, default=None, help="Milvus Lite files, server data")
    parser.add_argument("--aliases", type=int, nargs="*", default=None, help="alias table sizes")
    parser.add_argument("--chunks", type=int, nargs="*", default=None, help="corpus sizes")
    parser.add_argument("--clients", type=int, nargs="*", default=None, help="concurrent clients")
    parser.add_argument("--sessions-stored", type=int, nargs="*", default=None,
                        help="session store sizes (0: skip)")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--load-seconds", type=float, default=None, help="length of one load run")
    parser.add_argument("--keep", action="store_true",
                        help="keep the workdir's kbs between runs: reuse what a size already "
                             "imported and ingested, resume an interrupted ingest (needs --workdir)")
    parser.add_argument("--milvus-uri", default=None,
                        help="run the corpus sizes against this Milvus server (http://host:19530) "
                             "instead of a Milvus Lite file per size")
    parser.add_argument("--record", type=Path, default=None,
                        help="also put this run's corpus sizes (and where it stopped) into that "
                             "results JSON, replacing the same sizes and keeping every other section")
    parser.add_argument("--no-quality", action="store_true", help="skip the demo suite evaluation")
    parser.add_argument("--dev-suite", type=Path, nargs="*", default=[],
                        help="also evaluate these suite directories (ontology, corpus, suite .jsonl)")
    args = parser.parse_args(argv)

    cfg = dict(QUICK if args.quick else FULL)
    for key in ("aliases", "chunks", "clients", "runs", "sessions_stored"):
        if getattr(args, key) is not None:
            cfg[key] = [n for n in getattr(args, key) if n] if key == "sessions_stored" \
                else getattr(args, key)
    if args.load_seconds is not None:
        cfg["load_seconds"] = args.load_seconds
    if args.milvus_uri:
        cfg["milvus_uri"] = args.milvus_uri
    quick_dir = REPO / "var" / "bench" / "quick"
    out = args.out or (quick_dir / "results.json" if args.quick else REPO / "docs" / "benchmarks" / "results.json")
    report = args.report or (quick_dir / "benchmarks.md" if args.quick else REPO / "docs" / "benchmarks.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.keep and args.workdir is None:
        parser.error("--keep needs --workdir: the directory whose kbs are kept between runs")
    temporary = args.workdir is None
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="referent-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    command = "python benchmarks/run_all.py " + " ".join(argv if argv is not None else sys.argv[1:])
    results: dict = {"meta": {"mode": "quick" if args.quick else "full", "command": command.strip(),
                              "config": cfg, "commit": _git_commit(), "machine": machine(),
                              "started": datetime.now(timezone.utc).isoformat(timespec="seconds")},
                     "linking": [], "corpus": [], "quality": {}}

    def save() -> None:
        results["meta"]["machine_end"] = machine()
        results["meta"]["finished"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        out.write_text(json.dumps(results, ensure_ascii=False, indent=2), encoding="utf-8")

    for size in cfg["aliases"]:
        log(f"linking at {size:,} aliases")
        results["linking"].append(bench_linking(size, cfg["runs"], cfg["utterances"]))
        gc.collect()
        log(f"  p50 {results['linking'][-1]['p50_ms']['median']} ms, "
            f"p99 {results['linking'][-1]['p99_ms']['median']} ms")
        save()
    services = Services()
    kbs = [f"bench_c{size}" for size in cfg["chunks"]]
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        if not args.no_quality:
            results["quality"]["demo"] = bench_quality(services, "demo", REPO / "ontology" / "demo", workdir)
            save()
        for size in cfg["chunks"]:
            log(f"corpus of {size:,} chunks")
            partial: dict = {}
            try:
                results["corpus"].append(bench_corpus(services, size, cfg, workdir, keep=args.keep,
                                                      result=partial))
            except Exception as exc:  # noqa: BLE001 - where a size stops is a result too
                log(f"[{size}] stopped: {type(exc).__name__}: {exc}")
                kept = Checkpoint(workdir / f"kept-{size}.json").get("stopped") if args.keep else None
                results["stopped"] = {**(kept or {}), "chunks": size,
                                      "after": [k for k in ("import", "ingest", "turns") if k in partial],
                                      "error": f"{type(exc).__name__}: {exc}"[:500]}
                if "ingest" in partial:
                    results["corpus"].append(partial)
                save()
                break
            save()
        if cfg["sessions_stored"]:
            from benchmarks.session_bench import bench_sessions

            log("session store sizes")
            results["sessions"] = bench_sessions(cfg["sessions_stored"], template=_a_saved_state(workdir),
                                                 workdir=workdir, log=log)
            save()
        for directory in args.dev_suite:
            results["quality"][directory.name] = bench_quality(services, directory.name, directory, workdir)
            save()
    finally:
        for kb in ([] if args.keep else kbs):
            services.store.delete_kb(kb)
        services.close()
        save()
        if temporary:
            shutil.rmtree(workdir, ignore_errors=True)
    log(f"wrote {out}")
    if args.record:
        record_sizes(results, args.record)
        log(f"recorded the corpus sizes {cfg['chunks']} in {args.record}")
    if not args.no_report:
        from benchmarks.report import build

        log(f"wrote {build(out, report)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
