"""An in-memory ``SessionStore``, for tests: the turn engine without SQLite or Redis.

Nothing survives the object and nothing is shared between processes, so the
server never uses it (its stores are ``SQLiteSessionStore`` and
``RedisSessionStore``). It keeps the contract the others keep
(``tests/contract/test_session_store_contract.py``): optimistic concurrency
(a save must carry the version that was loaded), idle expiry after the TTL,
delete, and the last ``TRACES_KEPT`` turn traces of each session. States and
traces are stored serialised, so a caller changing a loaded state or a
saved trace afterwards changes nothing stored, as with the real stores.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from dialogue.session_store import (TRACES_KEPT, Erased, session_conflict, stored_state,
                                     trace_text)
from dialogue.state import SessionState


class InMemorySessionStore:
    """Sessions in a dict, with TTL and optimistic concurrency (tests only).

    Args:
        ttl_seconds: idle time after which a session is gone.
        clock: seconds, monotonic; a test may pass its own to expire sessions at once.
    """

    def __init__(self, *, ttl_seconds: int = 3600, traces_kept: int = TRACES_KEPT,
                 trace_ttl_seconds: int | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl_seconds
        self._traces_kept = traces_kept
        self._trace_ttl = min(trace_ttl_seconds or ttl_seconds, ttl_seconds)
        self._clock = clock
        self._lock = threading.Lock()
        # (kb, session id) → (version, expires at, state JSON)
        self._sessions: dict[tuple[str, str], tuple[int, float, str]] = {}
        # (kb, session id) → turn → (expires at, trace JSON)
        self._traces: dict[tuple[str, str], dict[int, tuple[float, str]]] = {}

    def load(self, kb: str, session_id: str) -> SessionState:
        with self._lock:
            found = self._sessions.get((kb, session_id))
        return stored_state(kb, session_id, found, self._clock())

    def save(self, state: SessionState, trace: dict[str, Any] | None = None) -> SessionState:
        """Store ``state`` as version + 1 if the stored version is still ``state.version``,
        with the turn's ``trace`` when given (both under one lock hold).

        Raises:
            ConflictError: another save came first; reload and retry.
        """
        new = state.model_copy(update={"version": state.version + 1})
        key = (state.kb, state.session_id)
        payload = new.model_dump_json()
        stored_trace = trace_text(trace, self._traces_kept)
        with self._lock:
            found = self._sessions.get(key)
            if (found[0] if found is not None else 0) != state.version:
                raise session_conflict(state.session_id)
            self._sessions[key] = (new.version, self._clock() + self._ttl, payload)
            if stored_trace is not None:
                self._put_trace(key, trace["turn"], stored_trace)
        return new

    def delete(self, kb: str, session_id: str) -> bool:
        with self._lock:
            self._traces.pop((kb, session_id), None)
            return self._sessions.pop((kb, session_id), None) is not None

    def save_trace(self, kb: str, session_id: str, turn: int, trace: dict[str, Any]) -> None:
        payload = trace_text(trace, self._traces_kept)
        if payload is None:
            return
        with self._lock:
            self._put_trace((kb, session_id), turn, payload)

    def _put_trace(self, key: tuple[str, str], turn: int, payload: str) -> None:
        """Keep one trace, drop those beyond ``traces_kept`` (the lock held)."""
        traces = self._traces.setdefault(key, {})
        traces[turn] = (self._clock() + self._trace_ttl, payload)
        for old in [n for n in traces if n <= turn - self._traces_kept]:
            del traces[old]

    def load_trace(self, kb: str, session_id: str, turn: int) -> dict[str, Any] | None:
        with self._lock:
            found = self._traces.get((kb, session_id), {}).get(turn)
        if found is None or found[0] <= self._clock():
            return None
        return json.loads(found[1])

    def erase_subject(self, kb: str, subject: str) -> Erased:
        """Delete the sessions and traces of ``kb`` whose owner's subject is ``subject``."""
        def owned(payload: str) -> bool:
            owner = json.loads(payload).get("owner") or {}
            return owner.get("subject") == subject

        sessions = traces = 0
        with self._lock:
            for key in [k for k, v in self._sessions.items() if k[0] == kb and owned(v[2])]:
                del self._sessions[key]
                sessions += 1
            for key, kept in list(self._traces.items()):
                if key[0] != kb:
                    continue
                for turn in [t for t, (_, payload) in kept.items() if owned(payload)]:
                    del kept[turn]
                    traces += 1
        return Erased(sessions=sessions, traces=traces)

    def close(self) -> None:
        with self._lock:
            self._sessions.clear()
            self._traces.clear()
