"""Markdown tables of `referent eval --summary` files, Referent beside its baselines.

    python -m evaluation.figures SUMMARY.json [SUMMARY.json ...] [--metric NAME ...]
                                 [--into PAGE.md]

Each summary becomes one table: a row per metric and turn index (all, then the
summary's own turn buckets: 1, 2, 3+), a column per system (Referent first, then the
baselines in the order `referent eval --baseline` ran them). A metric no system has a
value for is left out. Nothing is measured here: every figure is read from the file.
With ``--into`` the tables replace what stands between the page's ``<!-- figures -->``
and ``<!-- /figures -->`` lines (each a line of its own; docs/evaluation.md), and the
rest of the page stays.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from common.errors import FormatError

# The metrics a reader of the docs needs, in the order they are read; every metric of
# docs/formats.md §4 can be asked for with --metric.
DEFAULT_METRICS = ("hit_at_k", "action_accuracy", "must_contain_pass", "clarify_precision",
                   "clarify_recall", "entity_recall", "not_entities_ok",
                   "repeated_evidence_rate", "latency_p50_ms")
# A rate's denominator, where the summary keeps it: the rows say how many turns count.
DENOMINATORS = {"hit_at_k": "hit_turns", "action_accuracy": "action_turns"}
ONE_DECIMAL = {"mean_context_tokens", "latency_p50_ms", "latency_p95_ms"}
BEGIN, END = "<!-- figures -->", "<!-- /figures -->"


@dataclass(frozen=True)
class Summary:
    """One `referent eval --summary` file: the suite's name and each system's figures."""

    name: str
    k: int
    systems: dict[str, dict[str, Any]]

    @property
    def buckets(self) -> list[str]:
        """The turn indices the summary holds turns at, in its own order (e.g. 1, 2, 3+):
        a single-turn suite has no rows for turns 2 and 3+."""
        by_turn = next(iter(self.systems.values()))["by_turn"]
        return [b for b, figures in by_turn.items() if figures.get("turns", 1)]


def load(path: Path) -> Summary:
    """Read a summary file, naming the file and the key when it is not one.

    Raises:
        FormatError: not JSON, or without ``systems`` with ``overall`` and ``by_turn``.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FormatError(f"cannot read a summary: {exc}", path=str(path)) from exc
    systems = data.get("systems") if isinstance(data, dict) else None
    if not isinstance(systems, dict) or not systems:
        raise FormatError("no 'systems': write the file with `referent eval --summary`",
                          path=str(path))
    for name, figures in systems.items():
        if not isinstance(figures, dict) or not {"overall", "by_turn"} <= set(figures):
            raise FormatError(f"system {name!r} has no 'overall' and 'by_turn'", path=str(path))
    return Summary(name=_suite_name(data.get("suite"), path), k=int(data.get("k", 5)),
                   systems=systems)


def _suite_name(suite: Any, path: Path) -> str:
    # A suite is a folder's suite.jsonl: the folder names it. Never print the path itself.
    if isinstance(suite, str) and suite:
        p = Path(suite)
        return p.parent.name if p.stem == "suite" and p.parent.name else p.stem
    return path.name.removesuffix(".json").removesuffix(".summary")


def _number(value: Any, metric: str) -> str:
    if value is None:
        return "—"
    if isinstance(value, int):
        return str(value)
    return f"{value:.1f}" if metric in ONE_DECIMAL else f"{value:.3f}"


def _label(metric: str, k: int) -> str:
    return f"hit@{k}" if metric == "hit_at_k" else metric


def table(summary: Summary, metrics: Sequence[str] = DEFAULT_METRICS) -> str:
    """The markdown table of one summary: metric × turn index rows, one column per system.

    ``n`` is the number of turns a rate is over, where the summary keeps it (turns with
    gold evidence for hit@k, with an expected action for action accuracy); blank for
    the others, whose denominators the summary does not record.
    """
    systems = sorted(summary.systems, key=lambda s: s != "referent")  # stable: baselines keep order
    scopes = [("all", None)] + [(b, b) for b in summary.buckets]
    lines = ["| metric | turn | n | " + " | ".join(systems) + " |",
             "|---|---|---:|" + "---:|" * len(systems)]
    for metric in metrics:
        rows = [(scope, [_figures(summary.systems[s], b) for s in systems]) for scope, b in scopes]
        if all(f.get(metric) is None for _, figures in rows for f in figures):
            continue
        for i, (scope, figures) in enumerate(rows):
            n = figures[0].get(DENOMINATORS[metric]) if metric in DENOMINATORS else None
            lines.append(f"| {_label(metric, summary.k) if i == 0 else ''} | {scope} | "
                         f"{'' if n is None else n} | "
                         + " | ".join(_number(f.get(metric), metric) for f in figures) + " |")
    return "\n".join(lines) + "\n"


def _figures(system: dict[str, Any], bucket: str | None) -> dict[str, Any]:
    return system["overall"] if bucket is None else system["by_turn"].get(bucket, {})


def render(summaries: Sequence[Summary], metrics: Sequence[str] = DEFAULT_METRICS) -> str:
    """A section per suite: its name, its turns by index, and its table."""
    out = []
    for s in summaries:
        overall = s.systems[next(iter(s.systems))]
        counts = ", ".join(f"{b}: {overall['by_turn'][b].get('turns', '—')}" for b in s.buckets)
        out.append(f"#### {s.name}\n\n{overall['overall'].get('turns', '—')} turns "
                   f"({counts}); k = {s.k}.\n\n{table(s, metrics)}")
    return "\n".join(out)


def into(page: str, tables: str) -> str:
    """``page`` with ``tables`` between its figure markers.

    Raises:
        ValueError: the page lacks one of the markers, or has them out of order.
    """
    # The markers are lines of their own: the page's prose may name them.
    start = re.search(rf"^{re.escape(BEGIN)}$", page, re.M)
    end = re.search(rf"^{re.escape(END)}$", page, re.M)
    if start is None or end is None or end.start() < start.end():
        raise ValueError(f"no {BEGIN} … {END} lines to write the tables between")
    return (page[:start.end()] + "\n\n" + tables.rstrip("\n") + "\n\n"
            + page[end.start():])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evaluation.figures",
        description="Render `referent eval --summary` files as markdown tables by turn index.")
    parser.add_argument("summaries", nargs="+", type=Path, metavar="SUMMARY.json")
    parser.add_argument("--metric", action="append", dest="metrics", metavar="NAME",
                        help=f"a metric to show (repeatable; default: {', '.join(DEFAULT_METRICS)})")
    parser.add_argument("--into", type=Path, metavar="PAGE.md",
                        help=f"write the tables into this page, between its {BEGIN} and {END} lines")
    args = parser.parse_args(argv)
    try:
        summaries = [load(p) for p in args.summaries]
    except FormatError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    metrics = args.metrics or DEFAULT_METRICS
    known = {m for s in summaries for f in s.systems.values() for m in f["overall"]}
    unknown = [m for m in metrics if m not in known]
    if unknown:
        print(f"error: --metric {', '.join(unknown)}: not in the summaries; "
              f"known: {', '.join(sorted(known))}", file=sys.stderr)
        return 2
    tables = render(summaries, metrics)
    if args.into is None:
        sys.stdout.write(tables)
        return 0
    try:
        args.into.write_text(into(args.into.read_text(encoding="utf-8"), tables), encoding="utf-8")
    except (OSError, ValueError) as exc:
        print(f"error: {args.into}: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {len(summaries)} suites' tables into {args.into}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
