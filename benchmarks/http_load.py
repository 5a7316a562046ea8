"""The running server alone: cold start, then turns/s and client p50/p99 at 1 and 16
clients, on the generated kb of one size (the ``run_all.py`` server section, without
its ingest: the kb's Milvus Lite file from ``turn_profile.py --workdir`` is reused).

    .venv/bin/python benchmarks/http_load.py --chunks 100000 --workdir var/bench/profile
    .venv/bin/python benchmarks/http_load.py --chunks 10000 --clients 1 4 16 --seconds 20

Beside each load level it prints the in-process turn and the bare BM25 search of the
same run (``turn_profile.side_by_side``), so the HTTP figures can be read against them,
and the load average before and after. ``--uvicorn`` passes further options to uvicorn
(``--http h11 --loop asyncio``: the pure-Python protocol and loop, for comparison).
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
    parser.add_argument("--record", type=Path, default=None,
                        help="merge the figures into this JSON (docs/benchmarks/profile.json)")
    args = parser.parse_args(argv)

    args.workdir.mkdir(parents=True, exist_ok=True)
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
        cfg = {"clients": args.clients, "runs": args.runs, "load_seconds": args.seconds,
               "load_max_requests": 100_000}
        server = run_all.bench_server(kb, uri, data.sessions, cfg, args.workdir / "server",
                                      args.chunks, tuple(shlex.split(args.uvicorn)))
    finally:
        services.close()
    print(f"ready after {server['ready_s']} s, first turn {server['first_turn_ms']} ms")
    for level in server["throughput"]:
        print(f"{level['clients']:>3} clients: {level['turns_per_s']['median']:7.1f} turns/s, "
              f"p50 {level['p50_ms']['median']:8.2f} ms, p99 {level['p99_ms']['median']:8.2f} ms, "
              f"{level['requests']} requests, {level['errors']} errors {level['error_kinds'] or ''}")
    print(f"memory idle {server['memory_idle']}, after load {server['memory_after_load']}")
    print(f"load average after: {os.getloadavg()}")
    if args.record is not None:
        record(args.record, "http", args.chunks,
               {**server, "load_average": before, "load_average_after": list(os.getloadavg())})
    return 0


if __name__ == "__main__":
    sys.exit(main())
