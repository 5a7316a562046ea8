"""Redis session store: shared by every API instance, idle expiry by PEXPIRE.

Each session is one hash ``{prefix}{kb}:{session_id}`` with fields ``version``
and ``state``. A save is one Lua script, so checking the version and writing
the new state are atomic across all API processes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import redis

from common.errors import DependencyError, RetryableDependencyError
from dialogue.session_store import TRACES_KEPT, session_conflict
from dialogue.state import SessionState

# KEYS[1] = session key; ARGV = expected version, new version, state JSON, ttl ms.
# A missing key counts as version 0 (never saved, or expired).
_SAVE = """
local current = redis.call('HGET', KEYS[1], 'version')
if (current == false and ARGV[1] == '0') or current == ARGV[1] then
  redis.call('HSET', KEYS[1], 'version', ARGV[2], 'state', ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  return 1
end
return 0
"""


@contextmanager
def _translated(action: str) -> Iterator[None]:
    try:
        yield
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        raise RetryableDependencyError(
            f"Redis is unreachable while trying to {action} ({exc}); check "
            "REFERENT_SESSIONS__REDIS_URL and that redis-server runs", service="redis") from exc
    except redis.RedisError as exc:
        raise DependencyError(f"Redis failed to {action}: {exc}", service="redis") from exc


class RedisSessionStore:
    """Sessions in Redis with TTL and optimistic concurrency."""

    def __init__(self, url: str, *, ttl_seconds: int, prefix: str = "referent:session:",
                 timeout: float = 2.0) -> None:
        self._client = redis.Redis.from_url(url, socket_timeout=timeout,
                                            socket_connect_timeout=timeout, decode_responses=True)
        self._ttl_ms = ttl_seconds * 1000
        self._prefix = prefix
        self._save = self._client.register_script(_SAVE)

    def _key(self, kb: str, session_id: str) -> str:
        return f"{self._prefix}{kb}:{session_id}"

    def ping(self) -> None:
        with _translated("connect"):
            self._client.ping()

    def load(self, kb: str, session_id: str) -> SessionState:
        with _translated(f"read session {session_id!r}"):
            payload = self._client.hget(self._key(kb, session_id), "state")
        if payload is None:
            return SessionState(kb=kb, session_id=session_id)
        return SessionState.model_validate_json(payload)

    def save(self, state: SessionState) -> SessionState:
        new = state.model_copy(update={"version": state.version + 1})
        with _translated(f"save session {state.session_id!r}"):
            ok = self._save(keys=[self._key(state.kb, state.session_id)],
                            args=[state.version, new.version, new.model_dump_json(), self._ttl_ms])
        if ok != 1:
            raise session_conflict(state.session_id)
        return new

    def delete(self, kb: str, session_id: str) -> bool:
        key = self._key(kb, session_id)
        with _translated(f"delete session {session_id!r}"):
            existed = self._client.delete(key) == 1
            self._client.delete(key + ":traces")
        return existed

    def save_trace(self, kb: str, session_id: str, turn: int, trace: dict[str, Any]) -> None:
        key = self._key(kb, session_id) + ":traces"
        with _translated(f"save the trace of turn {turn}"):
            pipe = self._client.pipeline()
            pipe.hset(key, str(turn), json.dumps(trace, ensure_ascii=False, default=str))
            old = turn - TRACES_KEPT
            if old > 0:
                pipe.hdel(key, *(str(n) for n in range(max(1, old - TRACES_KEPT), old + 1)))
            pipe.pexpire(key, self._ttl_ms)
            pipe.execute()

    def load_trace(self, kb: str, session_id: str, turn: int) -> dict[str, Any] | None:
        with _translated(f"read the trace of turn {turn}"):
            payload = self._client.hget(self._key(kb, session_id) + ":traces", str(turn))
        return json.loads(payload) if payload is not None else None

    def close(self) -> None:
        self._client.close()
