"""The session store seam. Backends: SQLite (embedded default), Redis (shared), and
an in-memory one for tests (``dialogue.memory_store``); one contract test suite
(``tests/contract/test_session_store_contract.py``) runs against all three."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from common.errors import ConflictError
from dialogue.state import SessionState


# Turn traces kept per session by default: enough to explain the recent answers, bounded
# (REFERENT_SESSIONS__TRACES_KEPT).
TRACES_KEPT = 20


@dataclass(frozen=True)
class Erased:
    """What erasing one end user's data removed."""

    sessions: int
    traces: int


class SessionStore(Protocol):
    """Loads and saves session state with optimistic concurrency.

    ``save`` succeeds only if the stored version still equals ``state.version``
    (the version that was loaded); it then stores ``version + 1``. Otherwise it
    raises :class:`common.errors.ConflictError` and the caller reloads and retries.
    Sessions idle longer than the TTL are gone: ``load`` returns a fresh state.

    ``save(state, trace)`` keeps the turn's trace (a dict with its ``turn``) with the
    state: SQLite and the in-memory store write both in one transaction, so a saved
    turn always has its trace and a failed save leaves neither. Redis writes the trace
    right after the state (another key, another round trip); if that write fails the
    turn stays saved and only the trace is missing (logged).
    """

    def load(self, kb: str, session_id: str) -> SessionState: ...

    def save(self, state: SessionState, trace: dict[str, Any] | None = None) -> SessionState: ...

    def delete(self, kb: str, session_id: str) -> bool:
        """Forget the session and its turn traces; False when there was none."""
        ...

    def save_trace(self, kb: str, session_id: str, turn: int, trace: dict[str, Any]) -> None:
        """Keep one turn's trace: the last ``traces_kept`` turns of a session, each for the
        trace TTL (at most the session TTL); none when ``traces_kept`` is 0."""
        ...

    def erase_subject(self, kb: str, subject: str) -> Erased:
        """Delete every session and trace of ``kb`` owned by the end user ``subject``
        (whichever key made them)."""
        ...

    def load_trace(self, kb: str, session_id: str, turn: int) -> dict[str, Any] | None: ...

    def close(self) -> None: ...


def stored_state(kb: str, session_id: str, row: tuple[int, float, str] | None,
                 now: float) -> SessionState:
    """The state a stored ``(version, expires_at, state JSON)`` row stands for at ``now``.

    No row: a new session. An expired row: a fresh state that keeps the stored
    version, so that saving it still detects a concurrent writer.
    """
    if row is None:
        return SessionState(kb=kb, session_id=session_id)
    version, expires_at, payload = row
    if expires_at <= now:
        return SessionState(kb=kb, session_id=session_id, version=version)
    return SessionState.model_validate_json(payload)


def session_conflict(session_id: str) -> ConflictError:
    """The error of a save that lost to another turn's save of the same session."""
    return ConflictError(f"session {session_id!r} was changed by another turn; "
                         "reload it and retry")


def trace_text(trace: dict[str, Any] | None, kept: int) -> str | None:
    """A turn's trace as a store keeps it (JSON); None when there is none or a store keeps
    ``kept`` = 0 traces."""
    if trace is None or kept == 0:
        return None
    return json.dumps(trace, ensure_ascii=False, default=str)
