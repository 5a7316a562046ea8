"""The per-key rate limit under an open-loop flood: one key fires ``--rate`` requests per
second for ``--seconds`` at one or more API processes; prints how many were accepted
and how many got 429, second by second, and when the first 429 came.

    .venv/bin/python benchmarks/rate_limit.py                                # 70 req/s, 10 s, 1 process
    .venv/bin/python benchmarks/rate_limit.py --processes 2 --redis-url redis://127.0.0.1:6379/0

By default it starts its own ``uvicorn api.app:create_app`` processes (the configured
Neo4j, a fresh data dir, a key made for the run, the rate limit from the environment
or its defaults); with more than one process the limit is counted in ``--redis-url``
and requests go to the processes in turn. ``--url``/``--key`` target running servers.

The requests read a trace (``GET .../turns/1/trace``, 404 for a session that does not
exist): a cheap route, so what is measured is the limiter, not turn throughput. The
limit counts every ``/v1`` request the same.
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
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Servers:
    """``count`` API processes on fresh data dirs, sharing the limit through ``redis_url``."""

    def __init__(self, count: int, redis_url: str | None, root: Path) -> None:
        from api.auth import hash_key

        self.key = "rk_rate_" + secrets.token_urlsafe(24)
        env = {**os.environ, "REFERENT_AUTH__KEYS": json.dumps([
            {"name": "rate-admin", "role": "admin",
             "hash": hash_key("rk_rate_admin_" + secrets.token_urlsafe(24))},
            {"name": "rate-query", "role": "query", "hash": hash_key(self.key)}])}
        if redis_url:
            env["REFERENT_RATE_LIMIT__REDIS_URL"] = redis_url
        self.procs: list[subprocess.Popen] = []
        self.urls: list[str] = []
        self.logs = []
        for n in range(count):
            port = free_port()
            data = root / f"server{n}"
            data.mkdir(parents=True)
            log = open(data / "server.log", "w")
            self.logs.append(log)
            self.procs.append(subprocess.Popen(
                [sys.executable, "-m", "uvicorn", "--factory", "api.app:create_app", "--host",
                 "127.0.0.1", "--port", str(port), "--log-level", "warning"],
                cwd=REPO, env={**env, "REFERENT_DATA_DIR": str(data)}, stdout=log,
                stderr=subprocess.STDOUT))
            self.urls.append(f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + 120
        for proc, url in zip(self.procs, self.urls):
            while True:
                if proc.poll() is not None or time.monotonic() > deadline:
                    self.close()
                    raise RuntimeError(f"the server at {url} did not start; see {root}")
                try:
                    if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.2)

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        for log in self.logs:
            log.close()


async def flood(urls: list[str], key: str, rate: float, seconds: float, kb: str):
    """Open loop: request i leaves at i/rate seconds, whatever the answers before it."""
    results: list[tuple[float, int, str | None]] = []
    limits = httpx.Limits(max_connections=500, max_keepalive_connections=100)
    clients = [httpx.AsyncClient(base_url=u, headers={"Authorization": f"Bearer {key}"},
                                 timeout=120, limits=limits) for u in urls]
    path = f"/v1/kbs/{kb}/sessions/rate-probe/turns/1/trace"

    async def one(i: int, sent: float) -> None:
        try:
            resp = await clients[i % len(clients)].get(path)
            results.append((sent, resp.status_code, resp.headers.get("retry-after")))
        except httpx.TransportError as exc:
            results.append((sent, 0, type(exc).__name__))

    started = time.monotonic()
    tasks = []
    for i in range(int(rate * seconds)):
        due = started + i / rate
        delay = due - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(i, time.monotonic() - started)))
    await asyncio.gather(*tasks)
    wall = time.monotonic() - started
    for client in clients:
        await client.aclose()
    return results, wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=70.0, help="requests per second sent")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long")
    parser.add_argument("--processes", type=int, default=1, help="API processes to start")
    parser.add_argument("--redis-url", help="Redis that counts for every process (needed "
                                            "with --processes > 1)")
    parser.add_argument("--kb", default="demo", help="kb in the request path")
    parser.add_argument("--url", action="append", help="a running server (repeatable)")
    parser.add_argument("--key", help="a key of the running servers")
    args = parser.parse_args()
    if args.url and not args.key:
        parser.error("--url needs --key")
    if args.processes > 1 and not args.redis_url and not args.url:
        parser.error("--processes > 1 needs --redis-url: without it each process counts alone")

    servers = None
    if args.url:
        urls, key = args.url, args.key
    else:
        root = Path(tempfile.mkdtemp(prefix="referent-rate-"))
        servers = Servers(args.processes, args.redis_url, root)
        urls, key = servers.urls, servers.key
    try:
        results, wall = asyncio.run(flood(urls, key, args.rate, args.seconds, args.kb))
    finally:
        if servers is not None:
            servers.close()

    statuses = Counter(status for _, status, _ in results)
    limited = sorted(sent for sent, status, _ in results if status == 429)
    accepted = len(results) - statuses[429] - statuses[0] - sum(
        n for s, n in statuses.items() if s >= 500)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; {len(urls)} API process(es); limit: "
          f"{os.environ.get('REFERENT_RATE_LIMIT__PER_KEY_PER_SECOND', '30 (default)')}/s, burst "
          f"{os.environ.get('REFERENT_RATE_LIMIT__BURST', '60 (default)')}")
    print(f"sent {len(results)} requests in {wall:.1f} s ({len(results) / wall:.1f}/s) from one key")
    print(f"answers: {', '.join(f'{s}: {n}' for s, n in sorted(statuses.items()))}")
    print(f"accepted {accepted}, 429 {statuses[429]}; first 429 at "
          f"{limited[0]:.2f} s" if limited else f"accepted {accepted}, no 429")
    retry = Counter(r for _, status, r in results if status == 429)
    if retry:
        print("Retry-After: " + ", ".join(f"{v} s: {n}" for v, n in sorted(retry.items())))
    per_second: dict[int, Counter] = defaultdict(Counter)
    for sent, status, _ in results:
        per_second[int(sent)][("429" if status == 429 else "ok" if 0 < status < 500 else "err")] += 1
    print("second  sent  accepted  429")
    for second in sorted(per_second):
        c = per_second[second]
        print(f"{second:>6}  {sum(c.values()):>4}  {c['ok']:>8}  {c['429']:>4}")
    return 1 if statuses[0] or any(s >= 500 for s in statuses) else 0


if __name__ == "__main__":
    sys.exit(main())
