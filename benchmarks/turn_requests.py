"""Every Milvus request the turns of a conversation suite make, with its code path and time.

    REFERENT_DATA_DIR=DIR .venv/bin/python benchmarks/turn_requests.py \\
        --kb KB --suite SUITE/suite.jsonl [--sessions 200]

The kb must be imported and ingested already (``referent ontology import``, ``referent
ingest``). The engine is the server's (``api.runtime.Runtime``, from the settings), its
index's client wrapped so that every request is counted. Each session of the suite is
played once in a new session id; the table gives, per kind of turn (it asked, it linked
entities, it linked none), how many requests of each kind and code path a turn makes
and what they cost. ``benchmarks/turn_profile.py`` prints the same table for the
generated 100k-chunk kb.
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.turn_profile import RequestLog, print_requests, record, turn_kind  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kb", required=True, help="an imported and ingested kb")
    parser.add_argument("--suite", type=Path, required=True, help="its suite.jsonl")
    parser.add_argument("--sessions", type=int, default=200, help="sessions played, at most")
    parser.add_argument("--record", type=Path, default=None,
                        help="merge the table into this JSON (docs/benchmarks/profile.json)")
    args = parser.parse_args(argv)

    from api.runtime import Runtime
    from api.settings import Settings
    from evaluation.suites import parse_suite

    scripts = parse_suite(args.suite.read_text(encoding="utf-8").splitlines(),
                          path=str(args.suite))[:args.sessions]
    runtime = Runtime.build(Settings())
    try:
        runtime.index.load(args.kb)
        # A first session outside the count: what a turn builds on first use.
        runtime.engine.handle(args.kb, "warm-" + uuid.uuid4().hex[:8], scripts[0].turns[0].user)
        log = RequestLog(runtime.index)
        kinds: dict[str, int] = {}
        tag = uuid.uuid4().hex[:8]
        for i, script in enumerate(scripts):
            for turn in script.turns:
                start = len(log.calls)
                result = runtime.engine.handle(args.kb, f"r{tag}-{i}", turn.user)
                kind = turn_kind(result)
                log.label(start, kind)
                kinds[kind] = kinds.get(kind, 0) + 1
        figures = {"turns": sum(kinds.values()), "sessions": len(scripts),
                   "load_average": list(os.getloadavg()), "requests": log.summary(kinds)}
        print(f"{args.kb}: {figures['turns']} turns of {len(scripts)} sessions, "
              f"load average {figures['load_average'][0]:.1f}")
        print_requests(figures["requests"], kinds)
        if args.record is not None:
            record(args.record, "suite_requests", args.kb, figures)
    finally:
        runtime.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
