"""Where the running server's Python time goes under load, from py-spy samples.

    .venv/bin/python benchmarks/http_load.py --no-turns --clients 16 --profile PROFILE_DIR
    .venv/bin/python benchmarks/server_profile.py PROFILE_DIR/current-r0.16c0.txt \
        --record docs/benchmarks/profile.json

``http_load.py --profile`` samples the server 100 times a second, the thread holding the
interpreter lock only (py-spy ``--gil``, raw format: one line per distinct stack and its
count). Each sample goes to the first part below whose frames it contains, so a sample
inside a Milvus request made by the retrieval stage counts as the Milvus client's.
Samples are the lock's time: the share of the run's samples says how busy the one
interpreter was; what is left is time the process waited for a core, for Milvus or for
the disk with nobody else running Python.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.turn_profile import record  # noqa: E402

# (part, frame pattern), first match wins: the most specific parts first. A pattern
# starting with "$" is matched against the innermost frame only (what the thread was
# doing itself, not who called it: every event-loop stack starts in uvicorn); it comes
# after the turn's parts, whose own locks and context managers stay theirs.
PARTS: tuple[tuple[str, str], ...] = (
    ("session store: load", r"SessionStore\.load \("),
    ("session store: save", r"SessionStore\.save \("),
    ("session store: trace", r"SessionStore\.save_trace \("),
    ("Milvus client (pymilvus, gRPC)", r"\((pymilvus|grpc)/"),
    ("answer serialization", r"turn_response \("),
    ("retrieval: rerank, dedup, novelty, no-answer", r"TurnEngine\._retrieve \("),
    ("mentions and links", r"TurnEngine\._understand \("),
    ("policy, clarify and rewrite", r"TurnEngine\.(_decide|_rewrite|_ask) \("),
    ("rest of the turn (facts, state, trace)", r"TurnEngine\.handle \("),
    ("metrics and analytics", r"(observe_turn|observe \(|ClarificationRecorder)"),
    ("Neo4j in the background (key and snapshot checks, analytics)", r"\(neo4j/|neo4j_store"),
    ("event loop and worker hand-offs",
     r"$\((asyncio|anyio|concurrent)/|threading\.py|queue\.py|selectors\.py|contextlib\.py"),
    ("HTTP: uvicorn, middleware, routing, body, auth", r"\((uvicorn|starlette|fastapi|asgi_correlation_id)/|api/"),
)
OTHER = "other"


def shares(lines: list[str], rate: float, seconds: float) -> dict:
    """Samples per part of ``lines`` (py-spy raw), and the lock's busy share of the run."""
    counts: Counter[str] = Counter()
    for line in lines:
        stack, _, n = line.rstrip("\n").rpartition(" ")
        if not stack or not n.isdigit():
            continue
        innermost = stack.rsplit(";", 1)[-1]
        part = next((name for name, pattern in PARTS
                     if (re.search(pattern[1:], innermost) if pattern.startswith("$")
                         else re.search(pattern, stack))), OTHER)
        counts[part] += int(n)
    total = sum(counts.values())
    return {"samples": total, "busy": round(total / (rate * seconds), 3) if seconds else None,
            "parts": [{"part": part, "samples": n, "share": round(n / total, 3)}
                      for part, n in counts.most_common()] if total else []}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("samples", type=Path, help="py-spy raw output of http_load.py --profile")
    parser.add_argument("--rate", type=float, default=100.0, help="samples per second")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of the sampled run")
    parser.add_argument("--chunks", type=int, default=100_000, help="the kb the server served")
    parser.add_argument("--commit", default=None, help="the commit the sampled server ran")
    parser.add_argument("--load-average", type=float, default=None,
                        help="the 1-minute load average when the run started (http_load.py prints it)")
    parser.add_argument("--record", type=Path, default=None,
                        help="merge the shares into this JSON (docs/benchmarks/profile.json)")
    args = parser.parse_args(argv)
    found = shares(args.samples.read_text(encoding="utf-8", errors="replace").splitlines(),
                   args.rate, args.seconds)
    print(f"{found['samples']} samples holding the interpreter lock "
          f"({found['busy']:.0%} of the run)" if found["busy"] is not None else "")
    for p in found["parts"]:
        print(f"{p['share']:6.1%} {p['samples']:6d}  {p['part']}")
    if args.record is not None:
        record(args.record, "server_cpu", args.chunks,
               {**found, "seconds": args.seconds, "rate": args.rate, "commit": args.commit,
                "load_average": args.load_average})
    return 0


if __name__ == "__main__":
    sys.exit(main())
