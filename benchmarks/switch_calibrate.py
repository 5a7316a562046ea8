"""Calibrate the similarity thresholds of topic-switch detection on KdConv dev labels.

KdConv dev's ``topic_switch.jsonl`` labels each grounded turn that follows another:
``switch`` when its head entities differ from the previous grounded turn's. For
every labelled turn this script embeds the turn and the turn before it (what the
engine compares: the turn with the previous query) and prints, per threshold,
how many switches fall below it and how many continuations would wrongly be
cut — the figures behind the defaults of ``REFERENT_EMBED__SWITCH_LOW/HIGH``.

    .venv/bin/python benchmarks/switch_calibrate.py ../shared/data/kdconv-dev [--limit N]

Dev data: tune on it, never report it as held-out.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from retrieval.embedders import LocalE5Embedder, cosine


def load(folder: Path, limit: int | None) -> list[tuple[str, str, bool]]:
    turns: dict[tuple[str, int], str] = {}
    with (folder / "suite.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            session = json.loads(line)
            for i, t in enumerate(session["turns"], start=1):
                turns[(session["session"], i)] = t["user"]
    pairs = []
    with (folder / "topic_switch.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            key = (row["session"], row["turn"])
            prev = (row["session"], row["turn"] - 1)
            if key in turns and prev in turns:
                pairs.append((turns[key], turns[prev], bool(row["switch"])))
    return pairs[:limit] if limit else pairs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, help="the kdconv-dev folder (suite.jsonl, topic_switch.jsonl)")
    ap.add_argument("--limit", type=int, default=None, help="only the first N labelled turns")
    args = ap.parse_args(argv)
    pairs = load(args.folder, args.limit)
    if not pairs:
        print("no labelled pairs found", file=sys.stderr)
        return 1
    embedder = LocalE5Embedder()
    started = time.perf_counter()
    cache: dict[str, list[float]] = {}

    def vec(text: str) -> list[float]:
        if text not in cache:
            cache[text] = list(embedder.embed_query(text))
        return cache[text]

    sims = [(cosine(vec(a), vec(b)), switch) for a, b, switch in pairs]
    took = time.perf_counter() - started
    switches = [s for s, w in sims if w]
    stays = [s for s, w in sims if not w]
    print(f"{len(sims)} labelled turns ({len(switches)} switches), {len(cache)} texts embedded "
          f"in {took:.1f} s with {embedder.name}")
    for name, values in (("switch", switches), ("continuation", stays)):
        q = statistics.quantiles(values, n=10)
        print(f"  {name:>12}: mean {statistics.fmean(values):.3f}  deciles "
              + " ".join(f"{v:.3f}" for v in q))
    # Ranking quality: the probability that a switch scores below a continuation.
    ordered = sorted(sims)
    below, auc_sum = 0, 0
    for s, w in ordered:
        if w:
            below += 1
        else:
            auc_sum += below
    auc = auc_sum / (len(switches) * len(stays))
    print(f"  AUC (switch below continuation): {auc:.3f}")
    print("threshold  switches below  continuations below  precision  recall")
    for t in [x / 100 for x in range(70, 96)]:
        sw = sum(s < t for s in switches)
        st = sum(s < t for s in stays)
        precision = sw / (sw + st) if sw + st else float("nan")
        print(f"  {t:.2f}   {sw:6d}          {st:6d}              {precision:.3f}     "
              f"{sw / len(switches):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
