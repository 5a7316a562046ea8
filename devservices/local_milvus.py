"""Milvus Lite as a server: one process that several API processes share over gRPC.

Milvus Lite is normally embedded: ``MilvusClient("var/milvus.db")`` starts a
private ``milvus`` process for the file and takes a file lock, so a second
process cannot open the same file. The ``milvus-lite`` package ships that same
``milvus`` binary, which also serves a TCP address; this module runs it on
``host:port`` so that every API process on the machine (and the CLI) uses
``REFERENT_MILVUS__URI=http://127.0.0.1:<port>``.

This is for development, tests and a single machine. Production uses Milvus
standalone or distributed (``docs/deployment.md``), which speaks the same API.

While the server runs, this process holds the file's Lite lock (the one the
embedded mode takes), so nobody opens the file embedded at the same time. It
also writes ``<file>.server.json`` beside the file (its URI and the pid of the
process that runs it): a CLI command using the same file finds the server
there (:func:`running_server`) and talks to it instead of failing on the lock.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

from common.errors import ConfigurationError, DependencyError

__all__ = ["LocalMilvus", "running_server", "record_path"]

_NAME = re.compile(r"^[A-Za-z0-9.\-_]{1,36}$")


def _lib_dir() -> Path:
    import milvus_lite

    return Path(milvus_lite.__file__).resolve().parent / "lib"


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _dies_with(parent: int):
    """What the child runs before exec on Linux: ask the kernel for SIGTERM when the
    parent goes, so a server killed with SIGKILL (no ``finally`` runs) leaves no
    ``milvus`` behind holding the port and the file. The signal comes when the
    *thread* that started the child ends, hence only for a start from the main
    thread (:func:`_tie_to_parent`)."""
    def child() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before the request took effect
            os.kill(os.getpid(), signal.SIGTERM)
    return child


def _tie_to_parent() -> bool:
    """Linux, and started from the main thread: the kernel's signal follows the thread
    that forked, so a server restarted from a worker thread (a supervisor, a fault
    test) would die when that thread returns."""
    return sys.platform.startswith("linux") and threading.current_thread() is threading.main_thread()


class LocalMilvus:
    """The ``milvus`` binary of milvus-lite serving ``db_file`` on ``host:port``.

    On Linux, when started from the main thread, the binary is stopped with the
    process that started it, even when that process is killed outright.

    Args:
        db_file: the Lite database file (created when missing); its name must be
            1-36 characters from letters, digits, ``.``, ``-``, ``_`` (Lite's rule).
        port: TCP port to serve on.
        host: bind address; keep the loopback default unless a firewall protects it
            (Milvus Lite has no authentication).
        log_level: the binary's log level (``ERROR``, ``WARNING``, ``INFO``, ``DEBUG``).
    """

    def __init__(self, db_file: Path, port: int, host: str = "127.0.0.1", *,
                 log_level: str = "ERROR") -> None:
        self.db_file = Path(db_file).absolute()
        if not _NAME.fullmatch(self.db_file.name):
            raise ConfigurationError(
                f"Milvus Lite file name {self.db_file.name!r} must be 1-36 characters from "
                "A-Z a-z 0-9 . - _")
        if not 1 <= int(port) <= 65535:
            raise ConfigurationError(f"Milvus port must be 1-65535, got {port}")
        self.host = host
        self.port = int(port)
        self.log_level = log_level
        self.proc: subprocess.Popen | None = None
        self._lock: IO | None = None
        self._log: IO | None = None

    @property
    def uri(self) -> str:
        """What to put in ``REFERENT_MILVUS__URI``."""
        return f"http://{self.host}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.db_file.parent / f"{self.db_file.name}.server.log"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout: float = 60.0) -> None:
        """Start the server and return once its port accepts connections.

        Raises:
            ConfigurationError: the file is open elsewhere, or the port is taken.
            DependencyError: the binary exited or did not listen within ``timeout``.
        """
        if self.running():
            return
        if _port_open(self.host, self.port):
            raise ConfigurationError(f"port {self.port} on {self.host} is already taken; "
                                     "choose another with --port")
        self.db_file.parent.mkdir(parents=True, exist_ok=True)
        self._lock = open(self.db_file.parent / f".{self.db_file.name}.lock", "a")
        try:
            fcntl.lockf(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            self._release()
            raise ConfigurationError(f"{self.db_file} is open in another process (embedded "
                                     "Milvus Lite or another server); stop it first") from exc
        lib = _lib_dir()
        env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
        env["LD_LIBRARY_PATH"] = f"{lib}:{os.environ.get('LD_LIBRARY_PATH', '')}"
        self._log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(
                [str(lib / "milvus"), str(self.db_file), f"{self.host}:{self.port}",
                 self.log_level], env=env, cwd=str(self.db_file.parent),
                stdout=self._log, stderr=subprocess.STDOUT,
                preexec_fn=_dies_with(os.getpid()) if _tie_to_parent() else None)
        except OSError as exc:
            self._release()
            raise DependencyError(f"could not run Milvus Lite's server binary: {exc}",
                                  service="milvus") from exc
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                code = self.proc.returncode
                self.proc = None
                self._release()
                raise DependencyError(f"the Milvus Lite server exited with {code}; see "
                                      f"{self.log_path}", service="milvus")
            if _port_open(self.host, self.port):
                record_path(self.db_file).write_text(json.dumps(
                    {"uri": self.uri, "pid": os.getpid(), "server_pid": self.proc.pid}))
                return
            time.sleep(0.1)
        self.stop()
        raise DependencyError(f"the Milvus Lite server did not listen on {self.port} within "
                              f"{timeout:.0f} s; see {self.log_path}", service="milvus")

    def stop(self, timeout: float = 20.0) -> bool:
        """Stop the server (SIGTERM, then SIGKILL); False when it was not running."""
        proc, self.proc = self.proc, None
        if proc is None:
            self._release()
            return False
        _clear_record(self.db_file, os.getpid())
        was_running = proc.poll() is None
        if was_running:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        self._release()
        return was_running

    def wait(self) -> int:
        """Block until the server exits (``referent milvus serve``); its exit code."""
        if self.proc is None:
            return 0
        try:
            return self.proc.wait()
        finally:
            self.stop()

    def _release(self) -> None:
        for handle in (self._lock, self._log):
            if handle is not None:
                handle.close()
        self._lock = self._log = None


def record_path(db_file: Path) -> Path:
    """Where a server of ``db_file`` records its URI while it runs."""
    db_file = Path(db_file).absolute()
    return db_file.parent / f"{db_file.name}.server.json"


def running_server(db_file: Path) -> str | None:
    """The URI of a Milvus Lite server serving ``db_file`` right now (started by
    `referent serve` or `referent milvus serve`), or None."""
    try:
        record = json.loads(record_path(db_file).read_text())
        uri, pid = str(record["uri"]), int(record["pid"])
        os.kill(pid, 0)  # its owner still runs
    except (OSError, ValueError, KeyError, TypeError):
        return None
    host, _, port = uri.removeprefix("http://").rpartition(":")
    return uri if port.isdigit() and _port_open(host, int(port)) else None


def _clear_record(db_file: Path, owner: int) -> None:
    path = record_path(db_file)
    try:
        if json.loads(path.read_text()).get("pid") == owner:
            path.unlink()
    except (OSError, ValueError, AttributeError):
        pass


def free_local_port() -> int:
    """A TCP port on the loopback that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False
