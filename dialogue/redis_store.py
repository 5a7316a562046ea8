"""Redis session store: shared by every API instance, idle expiry by PEXPIRE.

Each session is one hash ``{prefix}{kb}:{session_id}`` with fields ``version``,
``state`` and ``write`` (the id of the save that wrote it); its recent traces are a
hash ``{prefix}{kb}/traces/{session_id}``, a name no session key can take ('/' is
not allowed in kb names or session ids, ':' is). A save is one Lua
script, so checking the version and writing the new state (with the turn's
answer, kept for retries) are atomic across all API processes.

A save is fenced in time. A Redis that is frozen (a stalled host, SIGSTOP) still
holds the request in its socket buffer: after the client gave up and answered
503, Redis would apply it when it wakes up, and the session would advance on a
turn its user was told had failed. So each save carries a deadline on Redis's own
clock (a lower bound of the offset to ours is measured on every load) shortly before the client's
read timeout, and the script refuses to write once it has passed. A save resent
by the client library after a broken connection carries the same write id, and
the script answers "done" if that write was already applied.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from common.errors import DependencyError, RetryableDependencyError
from dialogue.session_store import TRACES_KEPT, Erased, session_conflict
from dialogue.state import SessionState

logger = logging.getLogger(__name__)

# KEYS[1] = session key; ARGV = expected version, new version, state JSON, ttl ms,
# write id, deadline (ms on Redis's clock). A missing key counts as version 0 (never
# saved, or expired). Returns 1 written (or written before by this same write id),
# 0 the version moved on (another turn), -1 too late: nothing written.
_SAVE = """
local current = redis.call('HMGET', KEYS[1], 'version', 'write')
if current[2] == ARGV[5] then
  return 1
end
local now = redis.call('TIME')
if tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) > tonumber(ARGV[6]) then
  return -1
end
if (current[1] == false and ARGV[1] == '0') or current[1] == ARGV[1] then
  redis.call('HSET', KEYS[1], 'version', ARGV[2], 'state', ARGV[3], 'write', ARGV[5])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  return 1
end
return 0
"""

# How much of the read timeout a save may spend reaching Redis: the rest is left for
# the reply to come back before the client gives up on it.
_WRITE_WINDOW = 0.6


@contextmanager
def _translated(action: str, *, unknown: str = "") -> Iterator[None]:
    """Redis's errors as ours; ``unknown`` is added when the write may have landed."""
    try:
        yield
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        raise RetryableDependencyError(
            f"Redis is unreachable while trying to {action} ({exc}); check "
            f"REFERENT_SESSIONS__REDIS_URL and that redis-server runs{unknown}",
            service="redis") from exc
    except redis.RedisError as exc:
        raise DependencyError(f"Redis failed to {action}: {exc}", service="redis") from exc


class RedisSessionStore:
    """Sessions in Redis with TTL and optimistic concurrency."""

    def __init__(self, url: str, *, ttl_seconds: int, prefix: str = "referent:session:",
                 timeout: float = 2.0, traces_kept: int = TRACES_KEPT,
                 trace_ttl_seconds: int | None = None) -> None:
        # One quick resend after a broken connection (a pooled one that died with a Redis
        # restart); the library's default would resend 3 times with backoff, stretching a
        # stalled Redis into many seconds per call.
        self._client = redis.Redis.from_url(url, socket_timeout=timeout,
                                            socket_connect_timeout=timeout, decode_responses=True,
                                            retry=Retry(NoBackoff(), 1))
        self._ttl_ms = ttl_seconds * 1000
        self._traces_kept = traces_kept
        self._trace_ttl = min(trace_ttl_seconds or ttl_seconds, ttl_seconds)
        self._prefix = prefix
        self._timeout = timeout
        self._save = self._client.register_script(_SAVE)
        self._clock_offset_ms = 0.0  # Redis's clock minus ours, from the last load

    def _key(self, kb: str, session_id: str) -> str:
        return f"{self._prefix}{kb}:{session_id}"

    def _traces_key(self, kb: str, session_id: str) -> str:
        return f"{self._prefix}{kb}/traces/{session_id}"

    def ping(self) -> None:
        with _translated("connect"):
            self._client.ping()

    def load(self, kb: str, session_id: str) -> SessionState:
        with _translated(f"read session {session_id!r}"):
            pipe = self._client.pipeline(transaction=False)
            pipe.hget(self._key(kb, session_id), "state")
            pipe.time()
            payload, (seconds, micros) = pipe.execute()
            # Redis read its clock before we got the reply, so this offset is at most the
            # true one: deadlines computed with it are early, never late.
            self._clock_offset_ms = seconds * 1000 + micros / 1000 - time.time() * 1000
        if payload is None:
            return SessionState(kb=kb, session_id=session_id)
        return SessionState.model_validate_json(payload)

    def save(self, state: SessionState, trace: dict[str, Any] | None = None) -> SessionState:
        """The state (a script: version check and write in one step), then the turn's
        ``trace`` under its own key: a failed trace write is logged, the turn stays saved."""
        new = self._save_state(state)
        if trace is not None:
            try:
                self.save_trace(state.kb, state.session_id, trace["turn"], trace)
            except DependencyError as exc:
                logger.warning("could not keep the trace of turn %s: %s", trace["turn"], exc)
        return new

    def _save_state(self, state: SessionState) -> SessionState:
        new = state.model_copy(update={"version": state.version + 1})
        deadline = int(time.time() * 1000 + self._clock_offset_ms
                       + self._timeout * _WRITE_WINDOW * 1000)
        # A connection lost after Redis applied the save (a crash between its write
        # and its reply) cannot be told from one lost before: say so.
        with _translated(f"save session {state.session_id!r}", unknown=(
                "; the connection broke during the save, so it may have been applied: "
                "retry with the same Idempotency-Key")):
            ok = self._save(keys=[self._key(state.kb, state.session_id)],
                            args=[state.version, new.version, new.model_dump_json(), self._ttl_ms,
                                  uuid.uuid4().hex, deadline])
        if ok == -1:
            raise RetryableDependencyError(
                f"Redis answered too late to save session {state.session_id!r} (was it "
                "stalled?); the turn was not saved", service="redis")
        if ok != 1:
            raise session_conflict(state.session_id)
        return new

    def delete(self, kb: str, session_id: str) -> bool:
        key = self._key(kb, session_id)
        with _translated(f"delete session {session_id!r}"):
            existed = self._client.delete(key) == 1
            self._client.delete(self._traces_key(kb, session_id))
        return existed

    def save_trace(self, kb: str, session_id: str, turn: int, trace: dict[str, Any]) -> None:
        if self._traces_kept == 0:
            return
        key = self._traces_key(kb, session_id)
        kept = self._traces_kept
        # Stored as [saved at, trace]: the hash's expiry is reset by every trace, so the
        # age of each one is checked when it is read.
        payload = json.dumps([time.time(), trace], ensure_ascii=False, default=str)
        with _translated(f"save the trace of turn {turn}"):
            pipe = self._client.pipeline()
            pipe.hset(key, str(turn), payload)
            old = turn - kept
            if old > 0:
                pipe.hdel(key, *(str(n) for n in range(max(1, old - kept), old + 1)))
            pipe.pexpire(key, self._trace_ttl * 1000)
            pipe.execute()

    def load_trace(self, kb: str, session_id: str, turn: int) -> dict[str, Any] | None:
        with _translated(f"read the trace of turn {turn}"):
            payload = self._client.hget(self._traces_key(kb, session_id), str(turn))
        if payload is None:
            return None
        value = json.loads(payload)
        if isinstance(value, list):  # [saved at, trace]; a bare dict was saved before retention
            saved_at, value = value
            if time.time() - saved_at > self._trace_ttl:
                return None
        return value

    def erase_subject(self, kb: str, subject: str) -> Erased:
        """Delete the sessions and traces of ``kb`` whose owner's subject is ``subject``.

        Scans the kb's keys (SCAN, in batches): an erase is rare, and keeping an index
        of subjects would cost every turn a write.
        """
        sessions = traces = 0
        with _translated("erase the sessions of a subject"):
            for key in self._client.scan_iter(match=f"{self._prefix}{kb}:*", count=500):
                state = self._client.hget(key, "state")
                if state is not None:
                    owner = json.loads(state).get("owner") or {}
                    if owner.get("subject") == subject and self._client.delete(key):
                        sessions += 1
            for key in self._client.scan_iter(match=f"{self._prefix}{kb}/traces/*", count=500):
                values = self._client.hvals(key)
                owned = [v for v in values if _trace_subject(v) == subject]
                if owned and len(owned) == len(values) and self._client.delete(key):
                    traces += len(owned)
        return Erased(sessions=sessions, traces=traces)

    def close(self) -> None:
        self._client.close()


def _trace_subject(payload: str) -> str | None:
    try:
        value = json.loads(payload)
    except ValueError:
        return None
    if isinstance(value, list) and len(value) == 2:
        value = value[1]
    owner = value.get("owner") if isinstance(value, dict) else None
    return owner.get("subject") if isinstance(owner, dict) else None
