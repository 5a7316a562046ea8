"""What the clarify-or-resolve decision adds to a turn.

    python benchmarks/clarify_bench.py --kb KB SUITE [--runs 3]

Replays the suite through the engine (with the configured services, the model
on) and reads the time each verdict in ``clarify_decisions`` took (features,
e5, chunk searches, scoring), 0 for a turn with nothing ambiguous.
One decision is made first so that loading the e5 model is not counted; with
``REFERENT_CLARIFY__PRECOMPUTE`` on (the default) the kb's candidate vectors are
then made ready (found in the vector store, or embedded) before measuring, and
the time that took is printed. Prints p50/p95 of the decision's time over all
turns and over the turns that decided, how many deciding turns had to embed a
candidate text, and the whole turn's p50.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from api.runtime import Runtime  # noqa: E402
from api.settings import Settings  # noqa: E402
from evaluation.suites import parse_suite, run_system  # noqa: E402


def _pct(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kb", required=True)
    ap.add_argument("suite", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    scripts = parse_suite(args.suite.read_text(encoding="utf-8").splitlines(), path=str(args.suite))
    runtime = Runtime.build(Settings())
    try:
        run_system(runtime.engine, args.kb, scripts[:3], k=5, run_id="clarify-bench-warm")
        snapshot = runtime.snapshots.get(args.kb)
        warming = (runtime.clarifier.extractor.warming(snapshot)
                   if runtime.clarifier is not None and snapshot is not None else None)
        started = time.perf_counter()
        if warming is not None:
            warming.join()
        print(json.dumps({"precompute": runtime.settings.clarify.precompute,
                          "waited_for_warm_up_s": round(time.perf_counter() - started, 1)}))
        rows = []
        for run in range(args.runs):
            results = run_system(runtime.engine, args.kb, scripts, k=5, run_id=f"clarify-bench-{run}")
            spent = [sum(d.get("features", {}).get("ms", 0.0)
                         for d in r.trace.get("clarify_decisions") or ()) for r in results]
            all_turns = spent
            decided = [ms for ms, r in zip(spent, results) if r.trace.get("clarify_decisions")]
            turn_ms = [r.latency_ms for r in results]
            embedding = sum(1 for r in results for d in r.trace.get("clarify_decisions") or ()
                            if any("embedded on the turn" in n
                                   for n in d.get("features", {}).get("notes", ())))
            rows.append({"run": run, "turns": len(results), "decided": len(decided),
                         "p50_all_ms": round(_pct(all_turns, 50), 3),
                         "p95_all_ms": round(_pct(all_turns, 95), 3),
                         "p50_decided_ms": round(_pct(decided, 50), 3),
                         "p95_decided_ms": round(_pct(decided, 95), 3),
                         "decided_embedding_candidates": embedding,
                         "turn_p50_ms": round(statistics.median(turn_ms), 3)})
            print(json.dumps(rows[-1]))
    finally:
        runtime.close()


if __name__ == "__main__":
    main()
