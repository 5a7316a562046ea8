"""Calibrate the no-answer threshold (REFERENT_RETRIEVAL__NO_ANSWER_THRESHOLD) on dev data.

    .venv/bin/python benchmarks/calibrate_no_answer.py --kb KB --results RESULTS \\
        [--negatives-kb OTHER --negatives SUITE]... [--max-loss 0.01] [--out FILE]

The threshold is on *coverage* (retrieval.search.coverage): the share of the
query's content bigrams that the best evidence contains, in [0, 1]. BM25 scores
cannot carry a threshold: they grow with query length and depend on the
corpus' statistics, so the same number means "strong" in one kb and "weak" in
another.

- Answerable: every turn of RESULTS (a `referent eval --out` file of KB) whose
  suite line has `evidence`, searched again with its standalone queries and
  entities (abstention off, nothing excluded). "hit" turns have gold in the top 5.
- Unanswerable: the user turns of each --negatives SUITE asked against KB
  (`--negatives-kb` names the kb the suite belongs to, only for the report):
  questions of another knowledge base, which KB cannot answer.

The chosen threshold is the largest that withholds at most ``--max-loss`` of
the hit turns (1% by default); the report says what share of the
unanswerable questions and of the missed answerable turns it turns into
no_answer at that and nearby thresholds.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from retrieval.request import SearchRequest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kb", required=True)
    parser.add_argument("--suite", type=Path, required=True, help="the suite RESULTS was run from")
    parser.add_argument("--results", type=Path, required=True)
    parser.add_argument("--negatives", type=Path, action="append", default=[])
    parser.add_argument("--max-loss", type=float, default=0.01)
    parser.add_argument("--limit", type=int, default=0, help="use only the first N answerable turns")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    from api.runtime import Runtime
    from api.settings import Settings
    from evaluation.suites import parse_suite

    suite = parse_suite(args.suite.read_text(encoding="utf-8").splitlines())
    gold = {(s.session, i): t.expect.evidence for s in suite for i, t in enumerate(s.turns, 1)
            if t.expect is not None and t.expect.evidence}
    runtime = Runtime.build(Settings())
    retriever = runtime.retriever
    hits, misses = [], []
    try:
        lines = args.results.read_text(encoding="utf-8").splitlines()
        for line in lines:
            r = json.loads(line)
            if r.get("system", "referent") != "referent":
                continue  # a baseline's line of the same run
            expected = gold.get((r["session"], r["turn"]))
            if not expected or not r["queries"]:
                continue
            outcome = retriever.search(args.kb, SearchRequest(r["queries"], k=5, entity_ids=r["entities"],
                                       abstain=False))
            found = {f.hit.chunk_id for f in outcome.found} | {f.hit.doc_id for f in outcome.found}
            (hits if any(g in found for g in expected) else misses).append(outcome.strength)
            if args.limit and len(hits) + len(misses) >= args.limit:
                break
        negatives = []
        for path in args.negatives:
            for script in parse_suite(path.read_text(encoding="utf-8").splitlines()):
                for turn in script.turns:
                    outcome = retriever.search(args.kb, SearchRequest([turn.user], k=5, abstain=False))
                    negatives.append(outcome.strength if outcome.found else 0.0)
    finally:
        runtime.close()

    def below(values: list[float], t: float) -> float:
        return round(sum(v < t for v in values) / len(values), 4) if values else 0.0

    grid = [round(x * 0.05, 2) for x in range(0, 21)]
    chosen = max(t for t in grid if below(hits, t) <= args.max_loss)
    table = [{"threshold": t, "hits_withheld": below(hits, t), "misses_withheld": below(misses, t),
              "unanswerable_withheld": below(negatives, t)} for t in grid]
    report = {"kb": args.kb, "answerable_hit_turns": len(hits), "answerable_miss_turns": len(misses),
              "unanswerable_questions": len(negatives), "max_loss": args.max_loss,
              "chosen_threshold": chosen, "grid": table}
    print(f"answerable turns: {len(hits)} hit, {len(misses)} missed; unanswerable: {len(negatives)}")
    print(f"{'threshold':>9}  {'hits lost':>9}  {'misses → no_answer':>18}  {'unanswerable → no_answer':>24}")
    for row in table:
        if row["threshold"] <= 0.6:
            mark = "  ← chosen" if row["threshold"] == chosen else ""
            print(f"{row['threshold']:>9.2f}  {row['hits_withheld']:>9.1%}  "
                  f"{row['misses_withheld']:>18.1%}  {row['unanswerable_withheld']:>24.1%}{mark}")
    if args.out:
        args.out.write_text(json.dumps(report, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
