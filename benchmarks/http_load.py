"""The running server alone: cold start, then turns/s and client p50/p99 at 1 and 16
clients, on the generated kb of one size (the ``run_all.py`` server section, without
its ingest: the kb's Milvus Lite file from ``turn_profile.py --workdir`` is reused).

    .venv/bin/python benchmarks/http_load.py --chunks 100000 --workdir var/bench/profile
    .venv/bin/python benchmarks/http_load.py --chunks 10000 --clients 1 4 16 --seconds 20

Beside each load level it prints the in-process turn and the bare BM25 search of the
same run (``turn_profile.side_by_side``), so the HTTP figures can be read against them,
the CPU each process spent per answered turn (the API process, its Milvus Lite child and
the load generator, which shares the cores), and the load average before and after.
``--uvicorn`` passes further options to uvicorn (``--http h11 --loop asyncio``: the
pure-Python protocol and loop, for comparison).

``--processes 1 2`` runs the same load, in the same run, on one process (the command
above, unchanged) and on two API processes sharing one Milvus Lite server and one session
store (``benchmarks/server_cluster.py``; the SQLite file, or Redis with ``--redis-url``,
which puts every configuration's sessions there, the single process's too),
the configurations taking turns run by run; the load generator sends each request to the
next process in turn, standing in for a round-robin balancer.

``--against DIR`` runs the same load, in the same run, on a server started from another
source tree (an exported older commit: ``git archive COMMIT | tar -x -C DIR``), the two
servers taking turns run by run; ``--profile DIR`` samples each server with py-spy during
its last load level (``DIR/<tree>.<clients>c<run>.txt``, py-spy's raw format).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks import run_all  # noqa: E402
from benchmarks.server_cluster import sessions_backend  # noqa: E402
from benchmarks.turn_profile import prepare, record, side_by_side  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000, help="corpus size")
    parser.add_argument("--sessions", type=int, default=60, help="scripted four-turn sessions")
    parser.add_argument("--workdir", type=Path, default=REPO / "var" / "bench" / "profile",
                        help="Milvus Lite file (kept), server data")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--seconds", type=float, default=10.0, help="length of one load run")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--no-turns", action="store_true",
                        help="skip the in-process turns (and their collection load)")
    parser.add_argument("--uvicorn", default="", metavar="OPTIONS",
                        help="further uvicorn options, one string (--uvicorn='--http h11')")
    parser.add_argument("--against", type=Path, default=None, metavar="DIR",
                        help="another source tree to serve the same load from, side by side")
    parser.add_argument("--profile", type=Path, default=None, metavar="DIR",
                        help="py-spy samples of each server under its last load level")
    parser.add_argument("--processes", type=int, nargs="+", default=[1],
                        help="API processes per configuration (1: one process with its own "
                             "Milvus Lite; more: one shared Milvus Lite server)")
    parser.add_argument("--balance", choices=["round-robin", "least"], default="round-robin",
                        help="with several processes: each request to the next process in turn, "
                             "or to the one with the fewest requests in flight (nginx least_conn)")
    parser.add_argument("--redis-url", default=None,
                        help="every server's sessions in this Redis instead of the SQLite file")
    parser.add_argument("--record", type=Path, default=None,
                        help="merge the figures into this JSON (docs/benchmarks/profile.json)")
    args = parser.parse_args(argv)
    if min(args.processes) < 1:
        parser.error("--processes takes counts of 1 or more")
    if args.processes != [1] and (args.against or args.profile):
        parser.error("--processes compares process counts on the current tree: "
                     "leave out --against and --profile")

    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.redis_url:  # read by every server this process starts
        os.environ.update(REFERENT_SESSIONS__BACKEND="redis", REFERENT_SESSIONS__REDIS_URL=args.redis_url)
    before = list(os.getloadavg())
    print(f"load average before: {before}")
    services = run_all.Services()
    try:
        kb, data, index, uri = prepare(services, args.chunks, args.workdir, args.sessions,
                                       load=not args.no_turns)
        if not args.no_turns:
            engine, sessions, _ = run_all._engine(services, index,
                                                  args.workdir / f"sessions-{kb}.sqlite3")
            side_by_side(engine, kb, uri, data.sessions)
            sessions.close()
        index.close()
        run_all._release_lite(uri)
        if args.processes != [1]:
            setups = serve_process_counts(args, kb, Path(uri), data.sessions)
        else:
            trees = {"current": run_all.REPO} | ({"against": args.against} if args.against else {})
            servers = serve_side_by_side(args, trees, kb, uri, data.sessions)
    finally:
        services.close()
    if args.processes != [1]:
        for count, server in setups.items():
            print(f"== {count} API process{'es' if count > 1 else ''}: {server['command']}")
            report(server)
        print(f"load average after: {os.getloadavg()}")
        if args.record is not None:
            record(args.record, "http_processes", args.chunks,
                   {"processes": {str(c): s for c, s in setups.items()},
                    "balancer": f"client-side, {args.balance} per request",
                    "sessions": sessions_backend(),
                    "load_average": before, "load_average_after": list(os.getloadavg())})
        return 0
    for name, server in servers.items():
        print(f"== {name} tree ({server['commit'] or trees[name]})")
        report(server)
    print(f"load average after: {os.getloadavg()}")
    if args.record is not None:
        current = servers["current"]
        if "against" in servers:
            current = {**current, "against": servers["against"]}
        record(args.record, "http", args.chunks,
               {**current, "load_average": before, "load_average_after": list(os.getloadavg())})
    return 0


def serve_side_by_side(args, trees: dict[str, Path], kb: str, uri: str,
                       scripts: list[list[str]]) -> dict[str, dict]:
    """Each run of the load on a server from each tree in turn (so a change of the
    machine's load falls on both); the runs of each tree merged."""
    one_run = {"clients": args.clients, "runs": 1, "load_seconds": args.seconds,
               "load_max_requests": 100_000}
    done: dict[str, list[dict]] = {name: [] for name in trees}
    for run in range(args.runs):
        for name, tree in trees.items():
            profile = args.profile / f"{name}-r{run}" if args.profile else None
            if profile is not None:
                args.profile.mkdir(parents=True, exist_ok=True)
            done[name].append(run_all.bench_server(
                kb, uri, scripts, one_run, args.workdir / "server", args.chunks,
                tuple(shlex.split(args.uvicorn)), tree=tree, profile=profile))
    return {name: {**run_all.merge_server_runs(runs), "commit": _tree_commit(trees[name])}
            for name, runs in done.items()}


def serve_process_counts(args, kb: str, lite_file: Path, scripts: list[list[str]]) -> dict[int, dict]:
    """Each run of the load on each process count in turn (so a change of the machine's load
    falls on all); one process is the single-process benchmark itself, more share one
    Milvus Lite server for ``lite_file``. The runs of each count merged."""
    from benchmarks.server_cluster import bench_cluster

    one_run = {"clients": args.clients, "runs": 1, "load_seconds": args.seconds,
               "load_max_requests": 100_000, "balance": args.balance}
    extra = tuple(shlex.split(args.uvicorn))
    data_dir = args.workdir / "server"
    done: dict[int, list[dict]] = {count: [] for count in args.processes}
    for _ in range(args.runs):
        for count in args.processes:
            if count == 1:
                done[count].append(run_all.bench_server(kb, str(lite_file), scripts, one_run,
                                                        data_dir, args.chunks, extra))
            else:
                done[count].append(bench_cluster(kb, lite_file, scripts, one_run, data_dir,
                                                 args.chunks, count, extra=extra))
    return {count: {**run_all.merge_server_runs(runs), "commit": run_all._git_commit()}
            for count, runs in done.items()}


def _tree_commit(tree: Path) -> str | None:
    """The commit of a git checkout, or of an exported tree (its ``COMMIT`` file), if known."""
    marker = tree / "COMMIT"
    if marker.exists():
        return marker.read_text(encoding="utf-8").strip() or None
    return run_all._git_commit() if tree == run_all.REPO else None


def report(server: dict) -> None:
    print(f"ready after {server['ready_s']} s, first turn {server['first_turn_ms']} ms")
    for level in server["throughput"]:
        print(f"{level['clients']:>3} clients: {level['turns_per_s']['median']:7.1f} turns/s, "
              f"p50 {level['p50_ms']['median']:8.2f} ms, p99 {level['p99_ms']['median']:8.2f} ms, "
              f"{level['requests']} requests, {level['errors']} errors {level['error_kinds'] or ''}")
        cpu = {part: figure["median"] for part, figure in level["cpu_ms_per_turn"].items()}
        each = [f"{cpu[p]:.2f}" for p in cpu if p.startswith("api_")]
        print(f"     CPU ms per turn: API {cpu['api']:.2f}"
              + (f" (each process, per turn it answered: {', '.join(each)})" if each else "")
              + f", Milvus Lite {cpu['milvus_lite']:.2f}, load generator {cpu['client']:.2f}")
    print(f"memory idle {server['memory_idle']}, after load {server['memory_after_load']}")


if __name__ == "__main__":
    sys.exit(main())
