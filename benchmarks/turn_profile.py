"""Where a turn's time goes: the in-process benchmark turn under cProfile, beside the
bare BM25 search of the same standalone queries.

    .venv/bin/python benchmarks/turn_profile.py --chunks 100000 --workdir var/bench/profile
    .venv/bin/python benchmarks/turn_profile.py --chunks 10000 --top 40 --sort tottime

The kb is the one ``run_all.py`` generates for that size (same seed). With ``--workdir``
its Milvus Lite file is kept, and a later run at the same size reuses the ingested
collection (the ontology is imported again: seconds, not minutes). It prints:

- turn p50/p99 and the bare search's p50/p99 over the same turns, measured side by side
  in this run (unprofiled), and their ratio;
- the mean of each stage the turn's trace times;
- the profile of the same turns played again in new sessions: the top functions by
  ``--sort`` (cumulative or tottime), and with ``--pstats FILE`` the raw profile.

Neo4j is the one the settings name (started here when local and not running).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import shlex
import statistics
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.run_all import STAGES, Services, _engine, log  # noqa: E402
from benchmarks.synth import pct, turn_kb  # noqa: E402


def prepare(services: Services, size: int, workdir: Path, sessions: int, *, load: bool = True,
            uri: str | None = None):
    """The generated kb of ``size`` chunks: ontology imported, corpus ingested unless the
    kept Milvus file (or the Milvus at ``uri``) already holds it, its collection loaded
    (``load``: Milvus Lite loads 100k chunks in minutes). Returns (kb, data, index, uri)."""
    from kg.aliases import SnapshotCache
    from retrieval.ingest import ingest_corpus
    from retrieval.milvus_index import MilvusIndex

    kb = f"bench_c{size}"
    data = turn_kb(size, sessions=sessions)
    services.store.delete_kb(kb)
    services.store.import_ontology(kb, data.ontology_lines, path="synthetic")
    uri = uri or str(workdir / f"milvus-{size}.db")
    index = MilvusIndex(uri, timeout=300)
    if index.has_collection(kb) and index.count(kb) == data.chunks and index.incomplete(kb) is None:
        log(f"reusing the ingested collection of {data.chunks:,} chunks in {uri}")
    else:
        index.drop(kb)
        started = time.perf_counter()
        snapshot = SnapshotCache(services.store).get(kb)
        ingest_corpus(kb, data.corpus_lines, index=index, snapshot=snapshot, path="synthetic")
        log(f"ingested {data.chunks:,} chunks in {time.perf_counter() - started:.0f} s")
    if load:
        index.load(kb)
    return kb, data, index, uri


def tagged_chunks(corpus_lines: list[str]) -> dict[str, list[str]]:
    """Entity id -> the ids of the chunks the generated corpus tags with it."""
    tagged: dict[str, list[str]] = {}
    for line in corpus_lines:
        record = json.loads(line)
        for entity_id in record.get("entity_ids", ()):
            tagged.setdefault(entity_id, []).append(record["chunk_id"])
    return tagged


def play(engine, kb: str, scripts: list[list[str]], tag: str) -> list:
    """Every scripted session once, in new session ids; the turn results."""
    return [engine.handle(kb, f"{tag}-{i}", text)
            for i, script in enumerate(scripts) for text in script]


def bare_ms(uri: str, kb: str, queries: list[str]) -> list[float]:
    """One unfiltered BM25 ``MilvusClient.search`` per query (limit 5): the floor."""
    from pymilvus import MilvusClient

    client = MilvusClient(uri)
    times = []
    for q in queries:
        t0 = time.perf_counter()
        client.search("referent_" + kb, data=[q], anns_field="sparse", limit=5,
                      output_fields=["chunk_id"], search_params={"metric_type": "BM25"})
        times.append((time.perf_counter() - t0) * 1000)
    return times


# The turn's request rebuilt from the bare search one feature at a time: (label, limit,
# with the passages' fields, the filter: none, the turn's entity filter, or that filter
# behind the entities' chunk ids, which no turn uses: what a cheaper filter would cost).
# Measured on the standalone query of every turn that linked entities, interleaved, so
# the load weighs on all alike.
ANATOMY = (("bare: limit 5, chunk ids", 5, False, None),
           ("+ a pool of 4×k (limit 20)", 20, False, None),
           ("+ the passages' fields", 20, True, None),
           ("+ the entity filter (the turn's request)", 20, True, "entities"),
           ("the same behind its chunk ids (not built)", 20, True, "chunk ids"))


def anatomy(uri: str, kb: str, turns: list[tuple[str, list[str]]],
            tagged: dict[str, list[str]]) -> dict[str, dict]:
    """What each feature of the turn's Milvus request adds to the bare search (``ANATOMY``),
    over ``turns`` (standalone query, entity ids); ``tagged``: entity -> its chunk ids, from
    the generated corpus. Printed, and returned by label."""
    from pymilvus import MilvusClient

    from retrieval.milvus_index import OUTPUT_FIELDS, search_filter

    client = MilvusClient(uri)
    times: dict[str, list[float]] = {label: [] for label, *_ in ANATOMY}
    for query, entity_ids in turns:
        by_entity = search_filter(entity_ids, ())
        ids = json.dumps([c for e in entity_ids for c in tagged.get(e, ())], ensure_ascii=False)
        filters = {None: "", "entities": by_entity,
                   "chunk ids": f"chunk_id in {ids} and {by_entity}"}
        for label, limit, fields, filtered in ANATOMY:
            t0 = time.perf_counter()
            client.search("referent_" + kb, data=[query], anns_field="sparse", limit=limit,
                          output_fields=OUTPUT_FIELDS if fields else ["chunk_id"],
                          filter=filters[filtered], search_params={"metric_type": "BM25"})
            times[label].append((time.perf_counter() - t0) * 1000)
    print(f"  the turn's request, feature by feature ({len(turns)} turns with entities):")
    for label, values in times.items():
        print(f"    {label:<32} p50 {pct(values, 50):6.2f} ms  mean {statistics.fmean(values):6.2f} ms")
    return {label: _spread(values) for label, values in times.items()}


# The MilvusClient methods a turn may call, directly or in a background refresh.
_CLIENT_CALLS = ("search", "hybrid_search", "query", "query_iterator", "has_collection",
                 "describe_collection", "load_collection")
# Frames left out of a request's code path: plumbing that says nothing of why it was made.
_PLUMBING = frozenset({"handle", "_turn", "_played", "guarded", "<lambda>", "timed", "run",
                       "_search", "rankings"})
# Functions called from several places: their line says which call made the request.
_WITH_LINE = frozenset({"dual_search"})


class RequestLog:
    """Every Milvus request the turns make, each with the code path that made it (the
    project's functions on the stack) and its milliseconds, by wrapping the index's
    client. :meth:`label` says which kind of turn made the requests since a mark."""

    def __init__(self, index) -> None:
        # (kind of turn, request, code path, limit or None, ms)
        self.calls: list[tuple[str | None, str, str, int | None, float]] = []
        client = index._client
        for name in _CLIENT_CALLS:
            setattr(client, name, self._timed(name, getattr(client, name)))

    def _timed(self, name: str, call):
        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return call(*args, **kwargs)
            finally:
                ms = (time.perf_counter() - t0) * 1000
                self.calls.append((None, request_kind(name, kwargs), _code_path(),
                                   kwargs.get("limit"), ms))
        return timed

    def spent_since(self, start: int) -> float:
        """Milliseconds of the requests made since ``len(self.calls)`` was ``start``."""
        return sum(call[-1] for call in self.calls[start:])

    def label(self, start: int, turn: str) -> None:
        """Say which kind of turn made the requests since ``start``."""
        self.calls[start:] = [(turn, *rest) for _, *rest in self.calls[start:]]

    def summary(self, turns: dict[str, int]) -> list[dict]:
        """Per kind of turn (``turns``: kind -> turns played) and request: how many a turn
        makes on average, their mean limit, mean milliseconds and milliseconds per turn,
        most costly first."""
        rows: dict[tuple[str, str, str], list[tuple[int | None, float]]] = {}
        for turn, kind, path, limit, ms in self.calls:
            rows.setdefault((turn or "outside turns", kind, path), []).append((limit, ms))
        out = []
        for (turn, kind, path), calls in rows.items():
            played = turns.get(turn, 0)
            times = [ms for _, ms in calls]
            limits = [limit for limit, _ in calls if limit is not None]
            out.append({"turns": turn, "request": kind, "path": path, "count": len(calls),
                        "per_turn": round(len(calls) / played, 3) if played else None,
                        "mean_limit": round(statistics.fmean(limits), 1) if limits else None,
                        "mean_ms": round(statistics.fmean(times), 3),
                        "ms_per_turn": round(sum(times) / played, 3) if played else None})
        return sorted(out, key=lambda r: (r["turns"], -(r["ms_per_turn"] or 0)))


def request_kind(name: str, kwargs: dict) -> str:
    """The request and what shapes its cost besides the limit: filter and grouping."""
    if name != "search":
        return name
    shape = [word for word, on in (("filtered", kwargs.get("filter")),
                                   ("grouped", kwargs.get("group_by_field"))) if on]
    return f"search ({', '.join(shape)})" if shape else "search"


def _code_path() -> str:
    """The project's functions on the stack that say why a request was made, outermost
    first (plumbing left out; a function called from several places with its line)."""
    names = []
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if code.co_filename.startswith(str(REPO)) and "benchmarks" not in code.co_filename \
                and code.co_name not in _PLUMBING:
            where = f":{frame.f_lineno}" if code.co_name in _WITH_LINE else ""
            names.append(code.co_name + where)
        frame = frame.f_back
    return " > ".join(reversed(names)) or "?"


class GcClock:
    """Milliseconds the process spent in the garbage collector's cycle searches, and how
    many of each generation ran (``gc.callbacks``), while it is installed."""

    def __init__(self) -> None:
        self.spent = 0.0
        self.runs = [0, 0, 0]
        self._began = 0.0
        gc.callbacks.append(self._tick)

    def _tick(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._began = time.perf_counter()
        else:
            self.spent += (time.perf_counter() - self._began) * 1000
            self.runs[info["generation"]] += 1

    def close(self) -> None:
        gc.callbacks.remove(self._tick)


def turn_kind(result) -> str:
    """How a turn is counted in the request table: it asked, or linked entities or none."""
    if result.action == "clarify":
        return "clarify"
    return "with entities" if result.entities else "no entity"


def side_by_side(engine, kb: str, uri: str, scripts: list[list[str]],
                 clock: RequestLog | None = None,
                 tagged: dict[str, list[str]] | None = None) -> dict:
    """Turns, then the bare search of each searched turn's standalone query, printed; with
    ``clock``, the part of each turn spent in Milvus requests, and the requests; with
    ``tagged`` (entity -> chunk ids), the turn's request feature by feature."""
    tag = "t" + uuid.uuid4().hex[:6]
    results, in_milvus, in_gc = [], [], []
    collector = GcClock()
    for i, script in enumerate(scripts):
        for text in script:
            start, gc_before = (len(clock.calls) if clock else 0), collector.spent
            results.append(engine.handle(kb, f"{tag}-{i}", text))
            if clock is not None:
                in_milvus.append(clock.spent_since(start))
                clock.label(start, turn_kind(results[-1]))
            in_gc.append(collector.spent - gc_before)
    collector.close()
    turns = [r.latency_ms for r in results]
    bare = bare_ms(uri, kb, [r.standalone for r in results if r.action != "clarify"])
    figures = {"turns": len(turns), "load_average": list(os.getloadavg()),
               "turn_ms": _spread(turns), "bare_ms": _spread(bare),
               "ratio_p50": round(pct(turns, 50) / pct(bare, 50), 2), "stages_ms": {}}
    print(f"turns {len(turns)}: p50 {pct(turns, 50):.2f} ms, p99 {pct(turns, 99):.2f} ms; "
          f"bare BM25 p50 {pct(bare, 50):.2f} ms, p99 {pct(bare, 99):.2f} ms; "
          f"turn ÷ bare (p50) {figures['ratio_p50']:.2f}")
    for stage in STAGES:
        values = [r.trace.get("timings_ms", {}).get(stage, 0.0) for r in results]
        figures["stages_ms"][stage] = _spread(values)
        print(f"  {stage:<13} mean {statistics.fmean(values):7.2f} ms  p50 {pct(values, 50):7.2f} ms")
    figures["in_gc_ms"] = {**_spread(in_gc), "total": round(collector.spent, 1),
                           "collections": collector.runs}
    print(f"  in the garbage collector: {collector.spent:.1f} ms over the {len(turns)} turns "
          f"(collections of generation 0/1/2: {'/'.join(map(str, collector.runs))}), "
          f"p99 per turn {pct(in_gc, 99):.2f} ms")
    if clock is not None:
        outside = [t - m for t, m in zip(turns, in_milvus, strict=True)]
        figures["in_milvus_ms"], figures["outside_milvus_ms"] = _spread(in_milvus), _spread(outside)
        print(f"  in Milvus requests: p50 {pct(in_milvus, 50):.2f} ms, mean "
              f"{statistics.fmean(in_milvus):.2f} ms; the turn outside them: p50 "
              f"{pct(outside, 50):.2f} ms, mean {statistics.fmean(outside):.2f} ms")
        kinds: dict[str, int] = {}
        for r in results:
            kinds[turn_kind(r)] = kinds.get(turn_kind(r), 0) + 1
        figures["requests"] = clock.summary(kinds)
        print_requests(figures["requests"], kinds)
    linked = [(r.standalone, list(r.entities)) for r in results
              if r.action != "clarify" and r.entities]
    if linked and tagged is not None:
        figures["anatomy_ms"] = anatomy(uri, kb, linked, tagged)
    return figures


def print_requests(rows: list[dict], kinds: dict[str, int]) -> None:
    """The Milvus requests per kind of turn: how many a turn makes and what they cost."""
    print("  Milvus requests per turn (" + ", ".join(f"{k}: {n} turns" for k, n in kinds.items())
          + ")")
    for row in rows:
        per = "" if row["per_turn"] is None else f"{row['per_turn']:5.2f}/turn"
        spent = "" if row["ms_per_turn"] is None else f"{row['ms_per_turn']:6.2f} ms/turn"
        limit = "" if row["mean_limit"] is None else f"limit {row['mean_limit']:4.1f}"
        print(f"    {row['turns']:<14} {row['request']:<27} {per:>11} {limit:>10} mean "
              f"{row['mean_ms']:6.2f} ms {spent:>15}  {row['path']}")


def _spread(values: list[float]) -> dict[str, float]:
    return {"p50": round(pct(values, 50), 3), "p99": round(pct(values, 99), 3),
            "mean": round(statistics.fmean(values), 3)}


# Options whose value is a path on the measuring machine: shown as the default's.
_PATH_OPTIONS = {"--workdir": "var/bench/profile", "--record": "docs/benchmarks/profile.json",
                 "--pstats": "PROFILE", "--suite": "SUITE/suite.jsonl",
                 "--against": "OLDER_TREE", "--profile": "PROFILE_DIR"}


def shown_command(argv: list[str]) -> str:
    """The command as the report shows it: the script and its options, local paths
    replaced by the defaults."""
    words, args = ["python", "benchmarks/" + Path(argv[0]).name], argv[1:]
    for i, arg in enumerate(args):
        name = arg.split("=", 1)[0]
        if name in _PATH_OPTIONS and "=" in arg:
            arg = f"{name}={_PATH_OPTIONS[name]}"
        elif i and args[i - 1] in _PATH_OPTIONS:
            arg = _PATH_OPTIONS[args[i - 1]]
        elif arg.startswith("/"):  # a positional file: the samples server_profile.py reads
            arg = "PROFILE_DIR/" + Path(arg).name
        words.append(shlex.quote(arg))
    return " ".join(words)


def record(path: Path, section: str, size: int | str, figures: dict, *,
           against: bool = False) -> None:
    """Merge ``figures`` into ``path`` (JSON) under ``section`` and ``size`` (or a kb), with the
    machine, the commit and the command; what ``benchmarks/report.py`` renders. ``against``:
    an older tree's figures, measured after the current tree's and kept beside them (under
    ``against``); a run of the current tree replaces both."""
    from benchmarks.run_all import _git_commit
    from benchmarks.synth import machine

    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    entry = {**figures, "commit": figures.get("commit") or _git_commit(), "machine": machine(),
             "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
             "command": shown_command(sys.argv)}
    held = data.setdefault(section, {})
    if against:
        held.setdefault(str(size), {})["against"] = entry
    else:
        held[str(size)] = entry
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")


def profiled(engine, kb: str, scripts: list[list[str]], sort: str, top: int,
             dump: Path | None) -> None:
    profile = cProfile.Profile()
    profile.enable()
    play(engine, kb, scripts, "p" + uuid.uuid4().hex[:6])
    profile.disable()
    if dump is not None:
        profile.dump_stats(dump)
    out = io.StringIO()
    pstats.Stats(profile, stream=out).strip_dirs().sort_stats(sort).print_stats(top)
    print(out.getvalue())


def settle_heap() -> None:
    """Freeze the long-lived heap as the server does once its kbs are loaded
    (``api/heap.py``), so a turn here pays the collector what a served turn pays."""
    from api import heap

    heap.settle()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000, help="corpus size")
    parser.add_argument("--sessions", type=int, default=60, help="scripted four-turn sessions")
    parser.add_argument("--workdir", type=Path, default=REPO / "var" / "bench" / "profile",
                        help="Milvus Lite file and session store (kept for the next run)")
    parser.add_argument("--sort", choices=("cumulative", "tottime"), default="cumulative")
    parser.add_argument("--top", type=int, default=45, help="functions shown")
    parser.add_argument("--pstats", type=Path, default=None, help="also write the raw profile")
    parser.add_argument("--record", type=Path, default=None,
                        help="merge the figures into this JSON (docs/benchmarks/profile.json)")
    parser.add_argument("--milvus-uri", default=None,
                        help="a running Milvus holding the generated kb (`referent milvus serve "
                             "--db WORKDIR/milvus-SIZE.db`): runs of several trees then share "
                             "one loaded collection")
    parser.add_argument("--as-older", action="store_true",
                        help="with --record: these figures are an older tree's, measured "
                             "beside the current one's (kept under its size's 'against')")
    parser.add_argument("--commit", default=None,
                        help="the commit measured, for a tree without git history")
    args = parser.parse_args(argv)

    args.workdir.mkdir(parents=True, exist_ok=True)
    services = Services()
    try:
        kb, data, index, uri = prepare(services, args.chunks, args.workdir, args.sessions,
                                       uri=args.milvus_uri)
        engine, sessions, _ = _engine(services, index, args.workdir / f"sessions-{kb}.sqlite3")
        play(engine, kb, data.sessions[:5], "warm" + uuid.uuid4().hex[:6])
        settle_heap()
        figures = side_by_side(engine, kb, uri, data.sessions, RequestLog(index),
                               tagged=tagged_chunks(data.corpus_lines))
        if args.commit:
            figures["commit"] = args.commit
        if args.record is not None:
            record(args.record, "turns", args.chunks, figures, against=args.as_older)
        profiled(engine, kb, data.sessions, args.sort, args.top, args.pstats)
        sessions.close()
        index.close()
    finally:
        services.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
