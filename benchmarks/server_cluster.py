"""Several API processes on one Milvus Lite server and one session store, measured under
the same load as the single process (``http_load.py --processes``).

The topology is the one docs/deployment.md describes for one machine: the kb's Lite file
served by one ``milvus`` process (what ``referent milvus serve`` runs,
:class:`devservices.local_milvus.LocalMilvus`), N uvicorn processes started with the
single-process benchmark's command, each on its own port with
``REFERENT_MILVUS__URI`` pointing at that server, and one session store for all of them,
the one the environment names, as for the single process: by default the SQLite file of
their one data dir, or Redis (``REFERENT_SESSIONS__BACKEND=redis``).

There is no balancer process: the load generator sends each request to the next process
in turn (:func:`benchmarks.run_all._load`), as a round-robin balancer without session
affinity does, so the turns of one session land on different processes and go through
the shared store. A real balancer would add a process of its own on the same cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import run_all


@dataclass
class ServerCluster:
    """One Milvus Lite server for ``lite_file`` and ``processes`` API processes sharing it.

    Args:
        kb: the kb every process serves (its first turn is timed).
        lite_file: the kb's Milvus Lite file; nobody else may have it open.
        data_dir: the processes' data dir, one for all (clarify vectors, the SQLite session
            file unless the environment says Redis, logs).
        processes: how many API processes.
        tree: the source tree the API processes run.
        extra: further uvicorn options.
    """

    kb: str
    lite_file: Path
    data_dir: Path
    processes: int
    tree: Path = run_all.REPO
    extra: tuple[str, ...] = ()
    ports: list[int] = field(default_factory=list)
    procs: list[subprocess.Popen] = field(default_factory=list)
    milvus: object | None = None

    @property
    def bases(self) -> list[str]:
        return [f"http://127.0.0.1:{port}" for port in self.ports]

    def log_path(self, k: int) -> Path:
        return self.data_dir / f"server-{k + 1}-of-{self.processes}.log"

    def start(self, first_text: str) -> dict:
        """Start the Milvus server, then every API process at once; return when each one's
        ``/readyz`` answers 200, with the start-up figures. On failure everything started
        is stopped and the error names the process and shows its log's tail."""
        from devservices.local_milvus import LocalMilvus, free_local_port

        self.data_dir.mkdir(parents=True, exist_ok=True)
        try:
            self.milvus = LocalMilvus(self.lite_file, free_local_port())
            self.milvus.start()
            t0 = time.perf_counter()
            for k in range(self.processes):
                self._spawn(k)
            ready = [self._wait_ready(k, t0) for k in range(self.processes)]
            ready_s = max(ready)
            first_ms = self._first_turn(first_text)
        except BaseException:
            self.stop()
            raise
        run_all.log(f"{self.processes} processes ready after {ready} s (Milvus at {self.milvus.uri}), "
                    f"first turn {first_ms:.0f} ms")
        return {"ready_s": round(ready_s, 1), "ready_each_s": [round(r, 1) for r in ready],
                "first_turn_ms": round(first_ms, 1)}

    def _spawn(self, k: int) -> None:
        from api.auth import hash_key

        port = run_all._free_port()
        env = dict({"REFERENT_RATE_LIMIT__PER_KEY_PER_SECOND": "0", **os.environ},
                   REFERENT_MILVUS__URI=self.milvus.uri, REFERENT_DATA_DIR=str(self.data_dir),
                   REFERENT_AUTH__KEYS=json.dumps([{"name": "bench", "role": "query",
                                                    "hash": hash_key(run_all.BENCH_KEY)}]))
        with open(self.log_path(k), "w") as log:
            self.procs.append(subprocess.Popen(
                run_all.server_command(port, self.extra), cwd=self.tree, env=env, stdout=log,
                stderr=log, start_new_session=True))
        self.ports.append(port)

    def _wait_ready(self, k: int, t0: float) -> float:
        try:
            run_all._wait_for(self.bases[k] + "/readyz", self.procs[k], t0, 3600, self.log_path(k))
        except RuntimeError as exc:
            raise RuntimeError(f"API process {k + 1} of {self.processes} (port {self.ports[k]}) "
                               f"did not become ready: {exc}") from None
        return time.perf_counter() - t0

    def _first_turn(self, text: str) -> float:
        import httpx

        started = time.perf_counter()
        r = httpx.post(f"{self.bases[0]}/v1/kbs/{self.kb}/sessions/first-{uuid.uuid4().hex[:8]}/turns",
                       json={"text": text}, headers={"Authorization": f"Bearer {run_all.BENCH_KEY}"},
                       timeout=120)
        r.raise_for_status()
        return (time.perf_counter() - started) * 1000

    def cpu(self) -> dict[str, float]:
        """CPU seconds used so far: all API processes (``api``), each (``api_K``) and the
        Milvus Lite server (``milvus_lite``); what :func:`run_all._measured_load` reads."""
        each = [sum(run_all._cpu_seconds(proc.pid)) for proc in self.procs]
        parts = {"api": sum(each), "milvus_lite": sum(run_all._cpu_seconds(self.milvus.pid))}
        return parts | {f"api_{k + 1}": seconds for k, seconds in enumerate(each)}

    def memory(self) -> dict:
        """Resident MB of each API process and of the Milvus Lite server."""
        api = [run_all._memory(proc.pid)["api_rss_mb"] for proc in self.procs]
        milvus = run_all._memory(self.milvus.pid)["total_rss_mb"]
        return {"api_rss_mb": api, "milvus_rss_mb": milvus, "total_rss_mb": round(sum(api) + milvus, 1)}

    def command(self) -> str:
        shown = ["python", *run_all.server_command(0, self.extra)[1:]]
        shown[shown.index("--port") + 1] = "PORT_K"
        sessions = ("REFERENT_SESSIONS__BACKEND=redis" if sessions_backend() == "redis"
                    else "REFERENT_DATA_DIR=<one dir: one sessions.sqlite3>")
        return (f"referent milvus serve --db {self.lite_file.name} --port MILVUS_PORT; "
                f"{self.processes} × REFERENT_MILVUS__URI=http://127.0.0.1:MILVUS_PORT {sessions} "
                + " ".join(shown))

    def stop(self) -> None:
        for proc in self.procs:
            run_all._stop(proc)
        self.procs = []
        if self.milvus is not None:
            self.milvus.stop()


def sessions_backend() -> str:
    """The session store the servers started from this environment use."""
    return os.environ.get("REFERENT_SESSIONS__BACKEND", "sqlite").lower()


def bench_cluster(kb: str, lite_file: Path, scripts: list[list[str]], cfg: dict, data_dir: Path,
                  size: int, processes: int, *, extra: tuple[str, ...] = ()) -> dict:
    """:func:`run_all.bench_server`'s figures for ``processes`` API processes on one Milvus
    Lite server: start-up, the same warm-up and load levels (requests spread round robin),
    CPU per turn of every process, and resident memory of each."""
    warmed = run_all._clarify_vectors(kb, data_dir)
    cluster = ServerCluster(kb, lite_file, data_dir, processes, extra=extra)
    started = cluster.start(scripts[0][0])
    try:
        warm = run_all._load(cluster.bases, kb, scripts, 1, 60, 20 * processes,
                             f"warm{uuid.uuid4().hex[:6]}")
        if warm["errors"]:
            raise RuntimeError(f"warm-up turns failed: {warm['error_kinds']}; see "
                               f"{cluster.log_path(0).parent}/server-*-of-{processes}.log")
        idle = cluster.memory()
        levels = run_all.load_levels(cluster.bases, kb, scripts, cfg, cluster.procs[0].pid, size,
                                     cpu=cluster.cpu)
        return {"processes": processes, "sessions": sessions_backend(),
                "command": cluster.command(), **started, "clarify_vectors": warmed,
                "memory_idle": idle, "memory_after_load": cluster.memory(), "throughput": levels}
    finally:
        cluster.stop()
