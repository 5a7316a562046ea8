"""Where the gold evidence of missed turns went: shown earlier in the session, or never.

    .venv/bin/python benchmarks/evidence_timing.py SUITE RESULTS [--k 5]

On a suite whose gold sits on the turn that *states* a fact (KdConv: the
answer turn, not the question before it), a system that never repeats itself
shows the fact on the question turn and cannot show it again on the answer
turn, where hit@k looks for it. This prints, per turn bucket (1, 2, 3+):

- hit@k as `referent eval` counts it;
- hit@k when a gold item shown on the previous turn of the session also counts;
- the share of misses whose gold item had been shown on any earlier turn.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suite", type=Path)
    parser.add_argument("results", type=Path)
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args()

    from evaluation.suites import parse_suite, turn_bucket

    suite = parse_suite(args.suite.read_text(encoding="utf-8").splitlines())
    gold = {(s.session, i): t.expect.evidence for s in suite for i, t in enumerate(s.turns, 1)
            if t.expect is not None and t.expect.evidence}
    shown: dict[str, list[set[str]]] = defaultdict(list)
    tally: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for line in args.results.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r.get("system", "referent") != "referent":
            continue  # a baseline's line of the same run
        ids = {e["chunk_id"] for e in r["evidence"][:args.k]} | {e["doc_id"] for e in r["evidence"][:args.k]}
        history = shown[r["session"]]
        expected = gold.get((r["session"], r["turn"]))
        if expected:
            previous = history[-1] if history else set()
            earlier = set().union(*history) if history else set()
            hit = any(g in ids for g in expected)
            for bucket in (turn_bucket(r["turn"]), "all"):
                t = tally[bucket]
                t["turns"] += 1
                t["hit"] += hit
                t["hit_or_previous"] += hit or any(g in previous for g in expected)
                if not hit:
                    t["misses"] += 1
                    t["miss_shown_earlier"] += any(g in earlier for g in expected)
        history.append(ids)
    print(f"{'turns':>6} {'n':>6} {'hit@k':>7} {'hit@k incl. previous turn':>26} "
          f"{'misses shown earlier':>21}")
    for bucket in ("1", "2", "3+", "all"):
        t = tally[bucket]
        if not t["turns"]:
            continue
        print(f"{bucket:>6} {t['turns']:>6} {t['hit'] / t['turns']:>7.3f} "
              f"{t['hit_or_previous'] / t['turns']:>26.3f} "
              f"{(t['miss_shown_earlier'] / t['misses']) if t['misses'] else 0:>21.1%}")


if __name__ == "__main__":
    main()
