"""Cross-validated F1 of the clarify model, folds by session and folds by wording.

    python benchmarks/clarify_cv.py benchmarks/data/clarify_examples.jsonl \\
        --suite claqua-dev-multi=../shared/data/claqua-dev-multi/suite.jsonl ...

Folds by session (what ``referent clarify fit`` reports) let one wording of a
question be trained on in one session and tested in another: CLAQUA multi-turn
asks "What is the genre?" or "What was the name of the drivetrain?" in dozens of
sessions. Folds by wording keep every example of one question text (lowercased)
in one fold, so a model is scored only on wordings it never saw. Prints, per
suite, F1 of the clarify class at the threshold chosen on the out-of-fold
probabilities (best mean accuracy of the decision over the suites), for the boosted trees that score
and for the logistic model alone, for each coefficient set (the
``*_without_own_facets`` sets score a kb whose entities have no facet of their
own). Needs the ``fit`` extra.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dialogue.policy.clarify_model import (FEATURES, SET_KEYS, needs_own_facets,  # noqa: E402
                                           uses_embedder, with_interactions)
from evaluation.clarify_fit import (PARTITIONS, _fit_set, _prf, by_suite,  # noqa: E402
                                    choose_threshold, read_examples)
from evaluation.suites import parse_suite  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("examples", type=Path)
    ap.add_argument("--suite", action="append", default=[],
                    help="NAME=SUITE: the suite file whose turns the examples of NAME come from")
    ap.add_argument("--partitions", type=int, default=PARTITIONS,
                    help="partitions of the examples into folds whose out-of-fold scores are "
                         f"pooled (default {PARTITIONS}, as the fit; each fits every fold again)")
    args = ap.parse_args()
    if args.partitions < 1:
        ap.error("--partitions must be at least 1")
    wording: dict[tuple[str, str, int], str] = {}
    for spec in args.suite:
        name, _, file = spec.partition("=")
        path = Path(file)
        for s in parse_suite(path.read_text(encoding="utf-8").splitlines(), path=str(path)):
            for i, turn in enumerate(s.turns, 1):
                wording[(name, s.session, i)] = " ".join(turn.user.lower().split())
    examples = sorted(read_examples(args.examples), key=lambda e: (e.suite, e.session, e.turn))
    groupings = {"session": None,
                 "wording": lambda e: f"{e.suite}/" + wording.get((e.suite, e.session, e.turn),
                                                                 e.session)}
    for set_name in SET_KEYS:
        semantic = set_name.startswith("semantic")
        rows = [e for e in examples if e.semantic] if semantic else examples
        names = with_interactions([n for n in FEATURES if (semantic or not uses_embedder(n))
                                   and not (set_name.endswith("_without_own_facets")
                                            and needs_own_facets(n))])
        for grouping, group_of in groupings.items():
            _, trees, linear = _fit_set(rows, names, group_of, count=args.partitions)
            for model, oof in (("trees", trees), ("logistic", linear)):
                scored = by_suite(oof, rows)
                t = choose_threshold(scored)
                print(json.dumps({"set": set_name, "folds_by": grouping, "model": model,
                                  "threshold": t,
                                  **{s: _prf(pairs, t, len(oof))["f1"]
                                     for s, pairs in scored.items()}}))


if __name__ == "__main__":
    main()
