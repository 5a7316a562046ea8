"""Real API server processes for tests: `uvicorn api.app:create_app` on a free port,
with a data dir (Milvus Lite file, SQLite sessions) of its own and the suite's keys."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import REPO, auth_settings_json


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ingest(data_dir: Path, kb: str, records: Iterable[dict[str, Any]] | Path) -> None:
    """Ingest a corpus with `referent ingest` in a process of its own: Milvus Lite
    keeps a file open until the process that opened it exits."""
    if isinstance(records, Path):
        corpus = records
    else:
        corpus = data_dir / "corpus.jsonl"
        corpus.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records),
                          encoding="utf-8")
    subprocess.run([str(Path(sys.executable).parent / "referent"), "ingest", "--kb", kb, str(corpus)],
                   cwd=REPO, env={**os.environ, "REFERENT_DATA_DIR": str(data_dir)}, check=True,
                   capture_output=True, timeout=300)


class Server:
    """One `uvicorn api.app:create_app` process with a data dir of its own."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "REFERENT_DATA_DIR": str(data_dir),
               "REFERENT_AUTH__KEYS": auth_settings_json()}
        self.log = open(data_dir / "server.log", "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "--factory", "api.app:create_app",
             "--host", "127.0.0.1", "--port", str(self.port), "--log-level", "warning"],
            cwd=REPO, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        self.client = httpx.Client(base_url=self.url, timeout=30)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {(self.data_dir / 'server.log').read_text()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.2)
        raise RuntimeError("server did not start within 60 s")

    def stop(self) -> None:
        self.client.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
