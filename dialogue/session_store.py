"""The session store seam. Backends: SQLite (embedded default), Redis (shared)."""

from __future__ import annotations

from typing import Protocol

from dialogue.state import SessionState


class SessionStore(Protocol):
    """Loads and saves session state with optimistic concurrency.

    ``save`` succeeds only if the stored version still equals ``state.version``
    (the version that was loaded); it then stores ``version + 1``. Otherwise it
    raises :class:`common.errors.ConflictError` and the caller reloads and retries.
    Sessions idle longer than the TTL are gone: ``load`` returns a fresh state.
    """

    def load(self, kb: str, session_id: str) -> SessionState: ...

    def save(self, state: SessionState) -> SessionState: ...

    def delete(self, kb: str, session_id: str) -> bool: ...

    def close(self) -> None: ...
