"""Load and soak run against a real API server on loopback; prints figures and
exits non-zero when any turn got a 5xx (or no answer at all).

    .venv/bin/python benchmarks/load_soak.py                        # 50 sessions x 20 turns
    .venv/bin/python benchmarks/load_soak.py --soak-seconds 600     # 10-minute soak, memory sampled

By default it starts everything it targets, from the settings (REFERENT_*):
the demo ontology and corpus go into ``--kb`` in the configured Neo4j; unless
REFERENT_MILVUS__URI is set, a Milvus Lite server on a free port serves
``<data-dir>/milvus.db``; then one ``uvicorn api.app:create_app`` process is
started with keys made for the run. ``--url``/``--key``/``--pid`` target a
server that runs already instead (the kb must be loaded there).

Load: ``--sessions`` conversations at once, each sending ``--turns`` turns one
after the other (closed loop, no think time) taken from the demo suite's
scripted sessions, one script after another. Reports latency p50/p95/p99/max
as the client saw it, turns per second, and the answers by status and action.

Soak (``--soak-seconds N``): the same sessions run new conversations until N
seconds have passed, while the server's resident memory (and its child
processes', e.g. an embedded Milvus Lite) is sampled every ``--sample-every``
seconds. Reports the least-squares slope of the server's RSS after
``--warmup-seconds`` and the growth it implies over that window; with more
growth than ``--max-growth-mb`` the exit code is 2.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import secrets
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
DEMO = REPO / "ontology" / "demo"


@dataclass
class Tally:
    latencies_ms: list[float] = field(default_factory=list)
    server_ms: list[float] = field(default_factory=list)  # the turn's own time, without queueing
    statuses: Counter = field(default_factory=Counter)
    actions: Counter = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)  # 5xx bodies and transport errors, first few
    conversations: int = 0

    @property
    def server_errors(self) -> int:
        return sum(n for status, n in self.statuses.items() if status == "error" or status >= 500)


def scripted_turns() -> list[list[str]]:
    """The demo suite's sessions, as lists of user turns."""
    return [[t["user"] for t in json.loads(line)["turns"]]
            for line in (DEMO / "suite.jsonl").read_text(encoding="utf-8").splitlines()]


def conversation(scripts: list[list[str]], start: int, turns: int) -> list[str]:
    """``turns`` user turns: scripted sessions one after another, from script ``start``."""
    out: list[str] = []
    i = start
    while len(out) < turns:
        out.extend(scripts[i % len(scripts)])
        i += 1
    return out[:turns]


async def talk(client: httpx.AsyncClient, kb: str, texts: list[str], tally: Tally) -> None:
    session = f"load-{uuid.uuid4().hex[:12]}"
    for text in texts:
        started = time.perf_counter()
        try:
            resp = await client.post(f"/v1/kbs/{kb}/sessions/{session}/turns", json={"text": text})
        except httpx.HTTPError as exc:
            tally.statuses["error"] += 1
            if len(tally.failures) < 5:
                tally.failures.append(f"{type(exc).__name__}: {exc}")
            continue
        tally.latencies_ms.append((time.perf_counter() - started) * 1000)
        tally.statuses[resp.status_code] += 1
        if resp.status_code == 200:
            body = resp.json()
            tally.actions[body["action"]] += 1
            if body.get("latency_ms") is not None:
                tally.server_ms.append(body["latency_ms"])
        elif resp.status_code >= 500 and len(tally.failures) < 5:
            tally.failures.append(f"{resp.status_code}: {resp.text[:300]}")
    tally.conversations += 1


async def run(url: str, key: str, kb: str, sessions: int, turns: int, soak_seconds: float,
              sample, sample_every: float) -> tuple[Tally, float, list[tuple[float, float, float]]]:
    scripts = scripted_turns()
    tally = Tally()
    samples: list[tuple[float, float, float]] = []
    limits = httpx.Limits(max_connections=sessions, max_keepalive_connections=sessions)
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {key}"},
                                 timeout=120, limits=limits) as client:
        started = time.monotonic()
        deadline = started + soak_seconds

        async def worker(n: int) -> None:
            round_ = 0
            while True:
                await talk(client, kb, conversation(scripts, n + round_ * sessions, turns), tally)
                round_ += 1
                if time.monotonic() >= deadline:
                    return

        async def sampler() -> None:
            while True:
                rss, total = sample()
                samples.append((time.monotonic() - started, rss, total))
                await asyncio.sleep(sample_every)

        sampling = asyncio.create_task(sampler()) if sample is not None else None
        await asyncio.gather(*(worker(n) for n in range(sessions)))
        wall = time.monotonic() - started
        if sampling is not None:
            sampling.cancel()
            samples.append((wall, *sample()))
    return tally, wall, samples


# -- the server under test ------------------------------------------------------------------

def rss_mb(pid: int) -> float:
    """Resident memory of one process (Linux /proc), MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def with_children(pid: int) -> list[int]:
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        for task in Path(f"/proc/{p}/task").iterdir():
            children = (task / "children").read_text().split()
            todo.extend(int(c) for c in children)
    return pids


def sampler_for(pid: int):
    def sample() -> tuple[float, float]:
        try:
            return rss_mb(pid), sum(rss_mb(p) for p in with_children(pid))
        except (FileNotFoundError, ProcessLookupError):
            return 0.0, 0.0
    return sample


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class OwnServer:
    """The demo kb loaded, a Milvus Lite server when none is configured, one uvicorn."""

    def __init__(self, kb: str, data_dir: Path) -> None:
        from api.auth import hash_key
        from api.runtime import open_ontology_store
        from api.settings import Settings

        self.kb = kb
        self.data_dir = data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        # The run measures the server's throughput from one key, so the per-key rate limit
        # is off unless the caller's environment sets one.
        env = {"REFERENT_RATE_LIMIT__PER_KEY_PER_SECOND": "0", **os.environ,
               "REFERENT_DATA_DIR": str(data_dir)}
        self.milvus = None
        if not os.environ.get("REFERENT_MILVUS__URI"):
            from devservices.local_milvus import LocalMilvus

            self.milvus = LocalMilvus(data_dir / "milvus.db", free_port())
            self.milvus.start()
            env["REFERENT_MILVUS__URI"] = self.milvus.uri
        self.key = "rk_load_" + secrets.token_urlsafe(24)
        env["REFERENT_AUTH__KEYS"] = json.dumps([
            {"name": "load-admin", "role": "admin", "hash": hash_key("rk_load_admin_" + secrets.token_urlsafe(24))},
            {"name": "load-query", "role": "query", "hash": hash_key(self.key)}])
        self.settings = Settings(data_dir=data_dir, milvus={"uri": env["REFERENT_MILVUS__URI"]})
        self.store = open_ontology_store(self.settings)
        self.proc = None
        try:
            self._load()
            port = free_port()
            self.url = f"http://127.0.0.1:{port}"
            self.log = open(data_dir / "server.log", "w")
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "uvicorn", "--factory", "api.app:create_app", "--host",
                 "127.0.0.1", "--port", str(port), "--log-level", "warning"],
                cwd=REPO, env=env, stdout=self.log, stderr=subprocess.STDOUT)
            self._wait()
        except BaseException:
            self.close(drop=False)
            raise

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _load(self) -> None:
        from api.runtime import open_index
        from kg.aliases import SnapshotCache
        from retrieval.ingest import ingest_corpus

        self.store.import_ontology(self.kb, (DEMO / "ontology.jsonl").read_text(encoding="utf-8").splitlines())
        index = open_index(self.settings)
        try:
            ingest_corpus(self.kb, (DEMO / "corpus.jsonl").read_text(encoding="utf-8").splitlines(),
                          index=index, snapshot=SnapshotCache(self.store).get(self.kb))
        finally:
            index.close()

    def _wait(self) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited: {(self.data_dir / 'server.log').read_text()}")
            try:
                # Ready, not only alive: until its kbs are loaded a server refuses their turns.
                if httpx.get(f"{self.url}/readyz", timeout=5).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise RuntimeError("the server was not ready (/readyz) within 120 s")

    def close(self, drop: bool) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if drop:
            self.store.delete_kb(self.kb)
            if self.milvus is not None:
                from api.runtime import open_index

                index = open_index(self.settings)
                index.drop(self.kb)
                index.close()
        self.store.close()
        if self.milvus is not None:
            self.milvus.stop()


# -- report ---------------------------------------------------------------------------------

def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def slope_per_minute(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, MB) points, in MB per minute."""
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    var = sum((x - mx) ** 2 for x, _ in points)
    if var == 0:
        return 0.0
    return 60 * sum((x - mx) * (y - my) for x, y in points) / var


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=50, help="conversations at once")
    parser.add_argument("--turns", type=int, default=20, help="turns per conversation")
    parser.add_argument("--soak-seconds", type=float, default=0.0,
                        help="keep starting conversations this long and sample memory (0: one round)")
    parser.add_argument("--sample-every", type=float, default=5.0, help="seconds between memory samples")
    parser.add_argument("--warmup-seconds", type=float, default=None,
                        help="samples before this are left out of the slope (default: 10%% of the soak)")
    parser.add_argument("--max-growth-mb", type=float, default=50.0,
                        help="soak: more server RSS growth than this over the measured window fails (exit 2)")
    parser.add_argument("--kb", default="loadtest", help="kb the demo is loaded into (when starting a server)")
    parser.add_argument("--data-dir", type=Path, default=REPO / "var" / "bench" / "load")
    parser.add_argument("--drop", action="store_true", help="delete the kb afterwards")
    parser.add_argument("--url", help="target this running server instead of starting one")
    parser.add_argument("--key", help="a query key of that server")
    parser.add_argument("--pid", type=int, help="that server's pid, to sample its memory")
    args = parser.parse_args()
    if args.url and not args.key:
        parser.error("--url needs --key")

    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} at start (shared machine: other work "
          "runs beside this)")
    server = None
    if args.url:
        url, key, pid = args.url, args.key, args.pid
    else:
        started = time.monotonic()
        server = OwnServer(args.kb, args.data_dir)
        url, key, pid = server.url, server.key, server.pid
        backend = os.environ.get("REFERENT_SESSIONS__BACKEND", "sqlite")
        print(f"server: uvicorn pid {pid} at {url}, kb {args.kb!r} (demo ontology and corpus), "
              f"sessions in {backend}, Milvus at "
              f"{os.environ.get('REFERENT_MILVUS__URI') or server.milvus.uri + ' (Milvus Lite server)'}; "
              f"ready in {time.monotonic() - started:.1f} s")
    sample = sampler_for(pid) if pid else None
    try:
        tally, wall, samples = asyncio.run(run(url, key, args.kb, args.sessions, args.turns,
                                               args.soak_seconds, sample, args.sample_every))
    finally:
        if server is not None:
            server.close(drop=args.drop)

    n = len(tally.latencies_ms)
    mode = (f"soak {args.soak_seconds:.0f} s" if args.soak_seconds
            else f"{args.sessions} sessions x {args.turns} turns")
    print(f"run: {mode}, {args.sessions} at once, {tally.conversations} conversations, "
          f"{n} answers in {wall:.1f} s = {n / wall:.1f} turns/s")
    print("latency ms: " + "  ".join(f"p{p} {percentile(tally.latencies_ms, p):.0f}"
                                     for p in (50, 95, 99)) +
          f"  max {max(tally.latencies_ms, default=float('nan')):.0f}  (client side: queueing "
          "included)")
    if tally.server_ms:
        print("turn time in the server ms: " + "  ".join(
            f"p{p} {percentile(tally.server_ms, p):.0f}" for p in (50, 95, 99)))
    print("answers: " + ", ".join(f"{k}: {v}" for k, v in sorted(tally.statuses.items(), key=str)) +
          f"; actions: " + ", ".join(f"{k}: {v}" for k, v in sorted(tally.actions.items())))
    print(f"5xx: {tally.server_errors}")
    for failure in tally.failures:
        print(f"  {failure}")
    code = 1 if tally.server_errors else 0

    if samples:
        warm = args.warmup_seconds if args.warmup_seconds is not None else 0.1 * wall
        window = [(t, rss) for t, rss, _ in samples if t >= warm]
        slope = slope_per_minute(window)
        growth = slope * (window[-1][0] - window[0][0]) / 60 if len(window) > 1 else 0.0
        rss = [r for _, r, _ in samples]
        print(f"memory (server RSS, {len(samples)} samples every {args.sample_every:g} s): "
              f"first {rss[0]:.0f} MB, after warm-up ({warm:.0f} s) {window[0][1]:.0f} MB, "
              f"last {rss[-1]:.0f} MB, max {max(rss):.0f} MB; with children last "
              f"{samples[-1][2]:.0f} MB")
        if args.soak_seconds:
            flat = abs(growth) <= args.max_growth_mb
            print(f"memory slope after warm-up: {slope:+.2f} MB/min, {growth:+.1f} MB over "
                  f"{window[-1][0] - window[0][0]:.0f} s: {'flat' if flat else 'GROWING'} "
                  f"(limit {args.max_growth_mb:g} MB)")
            print("samples (s, server MB, with children MB): " +
                  " ".join(f"{t:.0f}:{r:.0f}/{c:.0f}" for t, r, c in samples))
            if not flat and code == 0:
                code = 2
    return code


if __name__ == "__main__":
    sys.exit(main())
