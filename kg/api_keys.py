"""API keys stored in Neo4j, scoped to knowledge bases, and each process's copy of them.

A stored key is one node, deployment-wide (not inside a kb)::

    (:ApiKey {id, name, hash, scopes_json, created_at, created_by, revoked_at, revoked_by})
    (:KeyRing {id: 'keys', version})   bumped by every create and revoke

Only the key's SHA-256 is stored. ``scopes`` maps a kb id, or ``*`` for every kb,
to the key's role there (``admin`` or ``query``). A revoked key keeps its node
(who made and revoked it, and when) but no longer authenticates.

Every API process holds the active keys in memory (:class:`KeyTable`) and asks
Neo4j for the key ring's version at most once per ``refresh_seconds`` (1 s): a
key revoked through any process or the CLI stops everywhere within about that
interval. A key created through any process works everywhere at once: a key
missing from a process's copy is checked against Neo4j before it is refused.
While Neo4j does not answer, a process keeps the keys it loaded last, and a key
it does not hold gets 503 (retry), never "not valid".
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, Literal

import neo4j

from common.errors import ConflictError, DependencyError, InputError, RetryableDependencyError
from common.ids import KB_RE
from kg import neo4j_queries as q
from kg.neo4j_store import Neo4jOntologyStore

logger = logging.getLogger(__name__)

KeyRole = Literal["admin", "query"]
ALL_KBS = "*"
MAX_SCOPES = 200


def check_scopes(scopes: Mapping[str, str]) -> dict[str, KeyRole]:
    """Validated scopes: at least one, each a kb id (or ``*``) with the role ``admin`` or ``query``.

    Raises:
        InputError: naming the scope at fault.
    """
    if not scopes:
        raise InputError('a key needs at least one scope, e.g. {"faq": "query"} or '
                         '{"*": "admin"}', field="scopes")
    if len(scopes) > MAX_SCOPES:
        raise InputError(f"a key may have at most {MAX_SCOPES} scopes; use \"*\" for every kb",
                         field="scopes")
    checked: dict[str, KeyRole] = {}
    for kb, role in scopes.items():
        if kb != ALL_KBS and not (isinstance(kb, str) and KB_RE.fullmatch(kb)):
            raise InputError(f"scope {kb!r} is not a kb id (1-64 characters from A-Z a-z 0-9 _) "
                             'nor "*" (every kb)', field=f"scopes.{kb}")
        if role not in ("admin", "query"):
            raise InputError(f"scope {kb!r} has the role {role!r}; use admin or query",
                             field=f"scopes.{kb}")
        checked[kb] = role  # type: ignore[assignment]
    return checked


@dataclass(frozen=True)
class StoredKey:
    """One key as stored: never the key itself, only its hash."""

    id: str
    name: str
    hash: str
    scopes: Mapping[str, KeyRole]
    created_at: str | None = None
    created_by: str | None = None
    revoked_at: str | None = None
    revoked_by: str | None = None


def _key(record: Any) -> StoredKey:
    return StoredKey(id=record["id"], name=record["name"], hash=record["hash"],
                     scopes=json.loads(record["scopes_json"] or "{}"),
                     created_at=record["created_at"], created_by=record["created_by"],
                     revoked_at=record["revoked_at"], revoked_by=record["revoked_by"])


class Neo4jKeyStore:
    """Creates, lists and revokes stored keys, through the ontology store's driver."""

    def __init__(self, store: Neo4jOntologyStore) -> None:
        self._store = store

    def create(self, *, name: str, key_hash: str, scopes: Mapping[str, str],
               created_by: str) -> StoredKey:
        """Store a new key.

        Raises:
            InputError: bad scopes.
            ConflictError: an active key already has this name.
        """
        checked = check_scopes(scopes)

        def work(tx: neo4j.ManagedTransaction) -> StoredKey:
            tx.run(q.KEYS_LOCK).consume()
            if tx.run(q.KEY_ACTIVE_NAME, name=name).single() is not None:
                raise ConflictError(f"an active key is already named {name!r}; pick another "
                                    "name or revoke that key first", field="name")
            record = tx.run(q.KEY_CREATE, id="k" + uuid.uuid4().hex[:15], name=name,
                            hash=key_hash, scopes_json=json.dumps(checked, sort_keys=True),
                            by=created_by).single()
            return _key(record)

        return self._store._write_tx("store an API key", work)

    def revoke(self, key_id: str, *, revoked_by: str) -> StoredKey | None:
        """Revoke an active key; None when no active key has this id."""
        def work(tx: neo4j.ManagedTransaction) -> StoredKey | None:
            tx.run(q.KEYS_LOCK).consume()
            record = tx.run(q.KEY_REVOKE, id=key_id, by=revoked_by).single()
            return _key(record) if record is not None else None

        return self._store._write_tx("revoke an API key", work)

    def list(self, *, revoked: bool = False) -> list[StoredKey]:
        """The stored keys, oldest first; revoked ones too when ``revoked``."""
        def work(tx: neo4j.ManagedTransaction) -> list[StoredKey]:
            return [_key(r) for r in tx.run(q.KEYS_LIST, revoked=revoked)]

        return self._store._read_tx("list the API keys", work)

    def version(self) -> int:
        """The key ring's version (0 before the first key was ever stored)."""
        def work(tx: neo4j.ManagedTransaction) -> int:
            record = tx.run(q.KEYS_VERSION).single()
            return record["version"] if record is not None else 0

        return self._store._read_tx("read the API key version", work)


class KeyTable:
    """This process's copy of the active stored keys, looked up by hash.

    A lookup first makes sure the copy was checked against Neo4j within
    ``refresh_seconds``; the check (one small read, and a reload of every active
    key when the version moved) runs on a worker thread and the lookup waits for
    it at most ``wait_seconds``. A key found in the copy is answered from it, even
    while Neo4j does not answer (the copy loaded last stays in force).

    A key that is not in the copy is never refused on the copy's word: the lookup
    waits for a check that *began after it arrived* (so it sees every key stored
    before the request came in, through any process), and refuses the key only
    when that check found no such key. Misses that arrive together share one
    check, queued behind the one running, so a burst of unknown keys costs Neo4j
    one small read at a time. When that check fails or does not answer within
    ``wait_seconds`` (``first_wait_seconds`` before anything was loaded), a stored
    key cannot be told from a wrong one and the lookup raises
    :class:`common.errors.RetryableDependencyError` (503), never a refusal.
    """

    def __init__(self, source: Neo4jKeyStore, *, refresh_seconds: float = 1.0,
                 wait_seconds: float = 1.0, first_wait_seconds: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._source = source
        self._refresh = refresh_seconds
        self._wait = wait_seconds
        self._first_wait = first_wait_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._by_hash: dict[str, StoredKey] = {}
        self._version: int | None = None  # None: never loaded
        self._checked_at = float("-inf")
        self._pending: Future | None = None
        # The check the misses wait for: queued, not begun yet (None when there is none).
        self._queued: Future | None = None
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="referent-keys")
        self._closed = False

    def lookup(self, key_hash: str) -> StoredKey | None:
        """The active stored key with this hash, or None when Neo4j, asked after the
        request arrived, holds no such active key.

        Raises:
            RetryableDependencyError: the key is not in the copy and Neo4j could not
                be asked (down, frozen or slow): the caller should retry (503).
        """
        self._ensure_fresh()
        found = self._by_hash.get(key_hash)
        if found is None:
            self._check_after_now()
            found = self._by_hash.get(key_hash)
        return found

    def start(self) -> None:
        """Begin the first load in the background (at start-up), without waiting for it."""
        with self._lock:
            if self._pending is None:
                self._pending = self._worker.submit(self._check)

    def forget_now(self) -> None:
        """Make the next lookup check Neo4j (after a create or revoke through this process)."""
        with self._lock:
            self._checked_at = float("-inf")

    def _ensure_fresh(self) -> None:
        """The periodic check: a revoked key stops within about ``refresh_seconds``.
        On failure or a slow answer the copy loaded last serves."""
        if self._closed or self._clock() - self._checked_at < self._refresh:
            return
        with self._lock:
            if self._clock() - self._checked_at < self._refresh:
                return
            if self._pending is not None and not self._pending.done():
                if self._version is not None:
                    return  # a check is under way (Neo4j slow): the keys loaded last serve
            else:
                self._pending = self._worker.submit(self._check)
            pending = self._pending
        try:
            pending.result(timeout=self._wait_for())
        except FutureTimeout:
            logger.warning("the API key check did not answer within %.1f s; using the keys "
                           "loaded last", self._wait_for())
        except DependencyError as exc:
            logger.warning("could not check the API keys: %s; using the keys loaded last", exc)

    def _check_after_now(self) -> None:
        """Wait for a check that begins after this call (joining one already queued).

        Raises:
            RetryableDependencyError: that check failed or did not answer in time.
        """
        if self._closed:
            raise RetryableDependencyError("the server is shutting down; retry",
                                           service="neo4j")
        with self._lock:
            if self._queued is None:
                self._queued = self._worker.submit(self._check, queued=True)
            queued = self._queued
        wait = self._wait_for()
        try:
            queued.result(timeout=wait)
        except CancelledError:
            raise RetryableDependencyError("the server is shutting down; retry",
                                           service="neo4j") from None
        except FutureTimeout:
            raise RetryableDependencyError(
                f"this API key is not among the keys loaded here and Neo4j, which stores "
                f"them, did not answer within {wait:.1f} s, so it cannot be checked; retry "
                "shortly (keys from REFERENT_AUTH__KEYS keep working meanwhile)",
                service="neo4j") from None
        except DependencyError as exc:
            raise RetryableDependencyError(
                "this API key is not among the keys loaded here and the keys stored in Neo4j "
                f"could not be read ({exc}), so it cannot be checked; retry when Neo4j answers "
                "(keys from REFERENT_AUTH__KEYS keep working meanwhile)",
                service="neo4j") from exc

    def _wait_for(self) -> float:
        # The first load may meet a cold Neo4j (query planning): it gets longer.
        return self._wait if self._version is not None else self._first_wait

    def _check(self, *, queued: bool = False) -> None:
        # A check counts from when it began: what it read may predate a write that
        # committed while it ran. A queued check, once begun, takes no more waiters:
        # a miss arriving now needs a check that begins after it.
        with self._lock:
            if queued:
                self._queued = None
            began = self._clock()
        try:
            version = self._source.version()
            if version != self._version:
                active = self._source.list()
                with self._lock:
                    self._by_hash = {k.hash: k for k in active}
                    self._version = version
        finally:
            # Also after a failure: ask again only after the interval, not on every request.
            with self._lock:
                self._checked_at = began

    def close(self) -> None:
        self._closed = True
        self._worker.shutdown(wait=False, cancel_futures=True)
