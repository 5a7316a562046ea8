"""Session store cost as sessions accumulate: load and save p50/p99 at 1k to 1M stored.

    .venv/bin/python benchmarks/session_bench.py --sizes 1000 10000 100000 1000000

The store is the embedded default (SQLite, WAL). It is filled in bulk, through its own
table, with copies of one real session (``--template``: a state saved by a played
turn; by default a four-turn session of the demo shape), then ``--samples`` random
stored sessions are each loaded and saved through the store's API, as a turn does.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.synth import pct  # noqa: E402

KB = "bench_sessions"
_FILL_BATCH = 20_000


def default_template() -> str:
    """A session after four turns, as the engine saves one (its size is what matters)."""
    from dialogue.state import SessionState

    state = SessionState(kb=KB, session_id="template", turn_count=4,
                         focus=["E1", "E2"], consumed=[f"doc{i}#0" for i in range(20)],
                         consumed_docs=[f"doc{i}" for i in range(20)])
    return state.model_dump_json()


def _fill(path: Path, template: str, start: int, stop: int, expires: float) -> None:
    """Rows ``start``..``stop`` (session ids ``s<n>``) written straight into the store's table."""
    base = json.loads(template)
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        for lo in range(start, stop, _FILL_BATCH):
            rows = []
            for n in range(lo, min(stop, lo + _FILL_BATCH)):
                base["session_id"] = f"s{n}"
                base["kb"] = KB
                base["version"] = 1
                rows.append((KB, f"s{n}", 1, expires, json.dumps(base, ensure_ascii=False)))
            conn.execute("BEGIN")
            conn.executemany("INSERT INTO sessions (kb, session_id, version, expires_at, state) "
                             "VALUES (?, ?, ?, ?, ?)", rows)
            conn.execute("COMMIT")
    finally:
        conn.close()


def bench_sessions(sizes: list[int], *, template: str | None = None, samples: int = 500,
                   workdir: Path | None = None, log=print) -> list[dict]:
    from dialogue.sqlite_store import SQLiteSessionStore

    template = template or default_template()
    directory = Path(workdir or tempfile.mkdtemp(prefix="referent-sessions-"))
    path = directory / "sessions-bench.sqlite3"
    path.unlink(missing_ok=True)
    store = SQLiteSessionStore(path, ttl_seconds=30 * 86400)
    results, filled = [], 0
    rng = random.Random(7)
    try:
        for size in sorted(sizes):
            t0 = time.perf_counter()
            _fill(path, template, filled, size, time.time() + 30 * 86400)
            fill_s = time.perf_counter() - t0
            filled = size
            loads, saves = [], []
            for n in rng.sample(range(size), min(samples, size)):
                t0 = time.perf_counter()
                state = store.load(KB, f"s{n}")
                loads.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                store.save(state)
                saves.append((time.perf_counter() - t0) * 1000)
            results.append({"sessions": size, "state_bytes": len(template.encode()),
                            "file_mb": round(sum(p.stat().st_size for p in directory.glob(
                                "sessions-bench.sqlite3*")) / 1e6, 1),
                            "fill_s": round(fill_s, 1),
                            "load_ms": {"p50": round(pct(loads, 50), 3), "p99": round(pct(loads, 99), 3)},
                            "save_ms": {"p50": round(pct(saves, 50), 3), "p99": round(pct(saves, 99), 3)}})
            log(f"[sessions {size:,}] load p99 {results[-1]['load_ms']['p99']} ms, "
                f"save p99 {results[-1]['save_ms']['p99']} ms")
    finally:
        store.close()
        path.unlink(missing_ok=True)
        for extra in directory.glob("sessions-bench.sqlite3-*"):
            extra.unlink(missing_ok=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000, 1_000_000])
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--template", type=Path, help="a saved session state (JSON)")
    args = parser.parse_args()
    template = args.template.read_text(encoding="utf-8") if args.template else None
    print(json.dumps(bench_sessions(args.sizes, template=template, samples=args.samples), indent=2))


if __name__ == "__main__":
    main()
