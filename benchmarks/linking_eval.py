"""Clarification and linking quality on the dev suites, for several fit margins.

Plays dev suites through the turn engine and prints clarification precision /
recall / F1 (positive = clarify), action accuracy, entity precision and
recall, and the over-asking rate (clarify on turns that expected retrieve),
beside the always-clarify and never-clarify baselines: first for each fit
margin (fuzzy at its default), then for each fuzzy threshold (margin at its
default; 0 = fuzzy off).

Dev data: numbers here are for tuning, not held-out results.

    python benchmarks/linking_eval.py --data ../shared/data \
        --suites claqua-dev-single claqua-dev-multi kdconv-dev --margins 0 1 2 --fuzzy 0 75 80 90

Needs Neo4j (REFERENT_NEO4J__URI or the local one) and loads each suite's
ontology and corpus into a kb of its own when the kb is missing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from api.runtime import Runtime
from api.settings import Settings
from dialogue.engine import TurnEngine
from evaluation.suites import parse_suite, run_system, score
from kg.aliases import SnapshotCache
from kg.fuzzy import DEFAULT_THRESHOLD
from understanding.linker import DEFAULT_FIT_MARGIN, EntityLinker
from retrieval.ingest import ingest_corpus

SUITES = ["claqua-dev-single", "claqua-dev-multi"]


def ensure_loaded(runtime: Runtime, kb: str, folder: Path) -> None:
    if runtime.ontology.alias_version(kb) is None:
        runtime.ontology.import_ontology(kb, (folder / "ontology.jsonl").read_text(encoding="utf-8").splitlines())
    if not runtime.index.has_collection(kb):
        snapshot = runtime.snapshots.get(kb)
        ingest_corpus(kb, (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines(),
                      index=runtime.index, snapshot=snapshot)


def clarify_counts(suite, results):
    expected = {(s.session, i): t.expect for s in suite for i, t in enumerate(s.turns, 1)}
    tp = fp = fn = tn = 0
    for r in results:
        ex = expected[(r.session, r.turn)]
        if ex is None or ex.action is None:
            continue
        gold, pred = ex.action == "clarify", r.action == "clarify"
        tp += gold and pred
        fp += pred and not gold
        fn += gold and not pred
        tn += not gold and not pred
    return tp, fp, fn, tn


def prf(tp, fp, fn):
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--suites", nargs="*", default=SUITES)
    parser.add_argument("--margins", nargs="*", type=float, default=[0.0, 0.5, 1.0, 2.0, 3.0])
    parser.add_argument("--fuzzy", nargs="*", type=float, default=[])
    parser.add_argument("--json", type=Path, help="also write the table as JSON")
    args = parser.parse_args()

    runtime = Runtime.build(Settings())
    rows = []
    try:
        for name in args.suites:
            folder = args.data / name
            kb = name.replace("-", "_")
            ensure_loaded(runtime, kb, folder)
            suite = parse_suite((folder / "suite.jsonl").read_text(encoding="utf-8").splitlines())
            settings = [(f"margin {m:g}", m, DEFAULT_THRESHOLD) for m in args.margins]
            settings += [(f"fuzzy {f:g}", DEFAULT_FIT_MARGIN, f) for f in args.fuzzy]
            for label, margin, fuzzy in settings:
                snapshots = SnapshotCache(runtime.ontology, fuzzy_threshold=fuzzy)
                engine = TurnEngine(snapshots, runtime.retriever, runtime.sessions,
                                    linker=EntityLinker(fit_margin=margin))
                started = time.perf_counter()
                results = run_system(engine, kb, suite, k=5)
                seconds = time.perf_counter() - started
                tp, fp, fn, tn = clarify_counts(suite, results)
                p, r, f = prf(tp, fp, fn)
                overall = score(suite, results, k=5)["overall"]
                rows.append({"suite": name, "system": label, "precision": p,
                             "recall": r, "f1": f, "action_accuracy": overall["action_accuracy"],
                             "over_asking": fp / (fp + tn) if fp + tn else 0.0,
                             "entity_precision": overall["entity_precision"],
                             "entity_recall": overall["entity_recall"], "seconds": round(seconds, 1)})
            positives, total = tp + fn, tp + fp + fn + tn
            for label, always in (("always clarify", True), ("never clarify", False)):
                if not total:
                    break
                p, r, f = prf(positives if always else 0, total - positives if always else 0,
                              0 if always else positives)
                rows.append({"suite": name, "system": label, "precision": p, "recall": r, "f1": f,
                             "action_accuracy": (positives if always else total - positives) / total,
                             "over_asking": 1.0 if always else 0.0, "entity_precision": None,
                             "entity_recall": None, "seconds": None})
    finally:
        runtime.close()

    def fmt(value) -> str:
        return "—" if value is None else f"{value:.3f}"

    print(f"{'suite':20} {'system':16} {'P':>6} {'R':>6} {'F1':>6} {'acc':>6} {'over':>6} "
          f"{'ent_P':>6} {'ent_R':>6} {'sec':>6}")
    for row in rows:
        print(f"{row['suite']:20} {row['system']:16} {row['precision']:6.3f} {row['recall']:6.3f} "
              f"{row['f1']:6.3f} {fmt(row['action_accuracy']):>6} {row['over_asking']:6.3f} "
              f"{fmt(row['entity_precision']):>6} {fmt(row['entity_recall']):>6} "
              f"{row['seconds'] if row['seconds'] is not None else '—':>6}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
