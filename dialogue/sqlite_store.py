"""SQLite session store: the embedded default, one file, safe across threads and processes."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from common.errors import DependencyError
from dialogue.session_store import (TRACES_KEPT, Erased, session_conflict, stored_state,
                                     trace_text)
from dialogue.state import SessionState

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    kb TEXT NOT NULL,
    session_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    expires_at REAL NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY (kb, session_id)
);
CREATE TABLE IF NOT EXISTS traces (
    kb TEXT NOT NULL,
    session_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    expires_at REAL NOT NULL,
    trace TEXT NOT NULL,
    PRIMARY KEY (kb, session_id, turn)
);
"""


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, taken at once (BEGIN IMMEDIATE: the write lock is waited
    for before any read, so it never has to be upgraded); rolled back on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if conn.in_transaction:  # SQLite has already rolled back after some errors
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class SQLiteSessionStore:
    """Sessions in one SQLite file (WAL mode), with TTL and optimistic concurrency."""

    def __init__(self, path: Path, *, ttl_seconds: int, traces_kept: int = TRACES_KEPT,
                 trace_ttl_seconds: int | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self._path = Path(path)
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._ttl = ttl_seconds
        self._traces_kept = traces_kept
        self._trace_ttl = min(trace_ttl_seconds or ttl_seconds, ttl_seconds)
        self._clock = clock
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        with self._connect() as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = sqlite3.connect(self._path, timeout=10.0, isolation_level=None,
                                       check_same_thread=False)
            except sqlite3.Error as exc:
                raise DependencyError(f"cannot open the session database {self._path}: {exc}; "
                                      "check REFERENT_SESSIONS__SQLITE_PATH", service="sqlite") from exc
            # WAL with synchronous=NORMAL: a commit is written to the log without waiting
            # for the disk (the log is synced at checkpoints). The file stays consistent
            # after any crash; a power loss can undo the last commits, never half of one.
            # FULL would put an fsync on every turn's save, the largest fixed cost of a
            # turn on a busy disk.
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
            with self._all_lock:
                self._all.append(conn)
        return conn

    def load(self, kb: str, session_id: str) -> SessionState:
        try:
            row = self._connect().execute(
                "SELECT version, expires_at, state FROM sessions WHERE kb = ? AND session_id = ?",
                (kb, session_id)).fetchone()
        except sqlite3.Error as exc:
            raise DependencyError(f"reading session {session_id!r} failed: {exc}",
                                  service="sqlite") from exc
        return stored_state(kb, session_id, row, self._clock())

    def save(self, state: SessionState, trace: dict[str, Any] | None = None) -> SessionState:
        """One transaction: the state, and the turn's ``trace`` with it when given."""
        new = state.model_copy(update={"version": state.version + 1})
        expires = self._clock() + self._ttl
        payload = new.model_dump_json()
        stored_trace = trace_text(trace, self._traces_kept)
        conn = self._connect()
        try:
            with _transaction(conn):
                if state.version == 0:
                    cur = conn.execute(
                        "INSERT INTO sessions (kb, session_id, version, expires_at, state) "
                        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (kb, session_id) DO NOTHING",
                        (state.kb, state.session_id, new.version, expires, payload))
                else:
                    cur = conn.execute(
                        "UPDATE sessions SET version = ?, expires_at = ?, state = ? "
                        "WHERE kb = ? AND session_id = ? AND version = ?",
                        (new.version, expires, payload, state.kb, state.session_id,
                         state.version))
                if cur.rowcount != 1:
                    raise session_conflict(state.session_id)
                if stored_trace is not None:
                    self._put_trace(conn, state.kb, state.session_id, trace["turn"], stored_trace)
        except sqlite3.Error as exc:
            raise DependencyError(f"saving session {state.session_id!r} failed: {exc}; the "
                                  "turn was not saved", service="sqlite") from exc
        return new

    def delete(self, kb: str, session_id: str) -> bool:
        try:
            conn = self._connect()
            cur = conn.execute(
                "DELETE FROM sessions WHERE kb = ? AND session_id = ?", (kb, session_id))
            conn.execute("DELETE FROM traces WHERE kb = ? AND session_id = ?", (kb, session_id))
        except sqlite3.Error as exc:
            raise DependencyError(f"deleting session {session_id!r} failed: {exc}",
                                  service="sqlite") from exc
        return cur.rowcount == 1

    def save_trace(self, kb: str, session_id: str, turn: int, trace: dict[str, Any]) -> None:
        text = trace_text(trace, self._traces_kept)
        if text is None:
            return
        try:
            conn = self._connect()
            with _transaction(conn):
                self._put_trace(conn, kb, session_id, turn, text)
        except sqlite3.Error as exc:
            raise DependencyError(f"saving the trace of turn {turn} failed: {exc}",
                                  service="sqlite") from exc

    def _put_trace(self, conn: sqlite3.Connection, kb: str, session_id: str, turn: int,
                   text: str) -> None:
        """The new trace, and the oldest one beyond ``traces_kept`` dropped (in the
        caller's transaction)."""
        conn.execute("INSERT OR REPLACE INTO traces (kb, session_id, turn, expires_at, "
                     "trace) VALUES (?, ?, ?, ?, ?)",
                     (kb, session_id, turn, self._clock() + self._trace_ttl, text))
        conn.execute("DELETE FROM traces WHERE kb = ? AND session_id = ? AND turn <= ?",
                     (kb, session_id, turn - self._traces_kept))

    def load_trace(self, kb: str, session_id: str, turn: int) -> dict[str, Any] | None:
        try:
            row = self._connect().execute(
                "SELECT trace, expires_at FROM traces WHERE kb = ? AND session_id = ? AND turn = ?",
                (kb, session_id, turn)).fetchone()
        except sqlite3.Error as exc:
            raise DependencyError(f"reading the trace of turn {turn} failed: {exc}",
                                  service="sqlite") from exc
        if row is None or row[1] <= self._clock():
            return None
        return json.loads(row[0])

    def erase_subject(self, kb: str, subject: str) -> Erased:
        """Delete the sessions and traces of ``kb`` whose owner's subject is ``subject``."""
        try:
            conn = self._connect()
            with _transaction(conn):
                sessions = conn.execute(
                    "DELETE FROM sessions WHERE kb = ? "
                    "AND json_extract(state, '$.owner.subject') = ?", (kb, subject)).rowcount
                traces = conn.execute(
                    "DELETE FROM traces WHERE kb = ? "
                    "AND json_extract(trace, '$.owner.subject') = ?", (kb, subject)).rowcount
        except sqlite3.Error as exc:
            raise DependencyError(f"erasing the sessions of a subject failed: {exc}",
                                  service="sqlite") from exc
        return Erased(sessions=sessions, traces=traces)

    def close(self) -> None:
        """Close every connection this store opened, from any thread."""
        with self._all_lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()
