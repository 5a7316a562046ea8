"""Neo4j implementation of :class:`kg.store.OntologyStore`.

The graph, per knowledge base ``kb`` (every node but the kb's own carries ``kb``):

    (:KnowledgeBase {id, uid, alias_version, normalization, audit_seq})
    (:EntityType {kb, name, attributes, parent})
    (:Entity {kb, id, name, type, description, parent, attributes_json})
    (:Alias {kb, text, norm})-[:NAMES {pos}]->(:Entity)   one alias may name several entities
    (:Entity)-[:REL {type}]->(:Entity)                     PART_OF, IS_A, custom
    (:Entity)-[:CONFUSABLE {note}]->(:Entity)
    (:AuditEntry {kb, seq, at, who, action, target, before, after, version, entities})

``alias_version`` goes up by one with every write that changes the kb; each
process compares it with its snapshot's to know when to reload. Every write
takes the kb node's lock first, so the writes of one kb are serialised and a
check made inside the transaction still holds at commit. Each write and its
audit entry commit together, or neither does.

All Cypher lives in :mod:`kg.neo4j_queries`. Driver errors are translated
into :mod:`common.errors` here and nowhere else.

Every call is bounded. The driver has no read timeout of its own: against a
server that accepts connections but answers nothing (a frozen host, SIGSTOP) a
query waits for ever, and a transaction that waited may still commit when the
server wakes. So each call runs on a worker thread and the caller waits at most
``call_timeout`` (``bulk_timeout`` for imports, exports and whole alias-table
reads), then gets a retryable DependencyError (the API answers 503 with
Retry-After). A write transaction carries the same deadline to Neo4j: it reads
the server's clock when it starts, and right before it commits asks the server
whether the deadline has passed, rolling back if it has; the server-side
transaction timeout is set to the bound too. The last check must pass a
commit margin (a third of the bound, at most 2 s) before the bound, so the
commit itself has that long. A write whose caller was told "nothing was
written" is therefore not applied later; only a commit still running when the
bound passes (the server froze or crawled in that margin) has an unknown
outcome, and the 503 says so.
"""

from __future__ import annotations

import contextvars
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from typing import Any, TypeVar

import neo4j
from neo4j import exceptions as neo4j_errors

from common.errors import (ConfigurationError, DependencyError, NotFoundError,
                           RetryableDependencyError)
from common.ids import check_kb
from common.language.normalize import DEFAULT, Normalization
from kg import neo4j_queries as q
from kg.import_plan import entity_row, plan_import
from kg.ontology import ConfusableDef, EntityDef, Ontology, RelationDef, TypeDef
from kg.store import Actor, AliasRow, ImportReport, KbState, LinkingData, LinkingDelta

T = TypeVar("T")
_BATCH = 5000
# Entity ids kept in one audit entry (an import may touch 100,000).
AUDIT_MAX_IDS = 1000
# Writes after which a snapshot is rebuilt whole instead of patched.
FULL_RELOAD_ACTIONS = frozenset({"ontology.import", "kb.create", "kb.normalization"})
# More changes than this since a snapshot: reload it whole.
MAX_DELTA_WRITES = 200
_TX_MEMORY = "Neo.TransientError.General.MemoryPoolOutOfMemoryError"


class _TooLargeForOneTransaction(Exception):
    """Raised inside a transaction function so the driver does not retry it."""


class _PastDeadline(Exception):
    """Raised inside a transaction (or before one starts) once its caller's bound has
    passed: the driver rolls it back and does not retry it."""


class _Call:
    """The bounded call a worker thread is running: its deadline (time.monotonic())
    and whether its transaction has passed the last check and is committing."""

    def __init__(self, deadline: float, commit_by: float) -> None:
        self.deadline = deadline
        self.commit_by = commit_by  # the last check must pass before this
        self.committing = False


_current = threading.local()


def _commit_margin(limit: float) -> float:
    """The part of a call's bound left for the commit after the last deadline check."""
    return min(2.0, limit / 3)


@contextmanager
def translate_errors(action: str) -> Iterator[None]:
    """Turn neo4j driver exceptions into Referent errors that say what to do."""
    try:
        yield
    except _PastDeadline as exc:
        raise RetryableDependencyError(
            f"Neo4j answered too late to {action}; nothing was written (a write is rolled "
            "back once its time bound has passed), retry", service="neo4j") from exc
    except _TooLargeForOneTransaction as exc:
        raise DependencyError(
            f"Neo4j ran out of transaction memory while trying to {action}: the change is too "
            "large for one transaction. Raise Neo4j's heap (REFERENT_NEO4J__LOCAL_HEAP for the "
            "local one; dbms.memory.transaction.total.max on a server) or split the file",
            service="neo4j") from exc
    except neo4j_errors.AuthError as exc:
        raise ConfigurationError(
            f"Neo4j refused the credentials while trying to {action}: set "
            "REFERENT_NEO4J__USER and REFERENT_NEO4J__PASSWORD") from exc
    except (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired,
            neo4j_errors.TransientError) as exc:
        raise RetryableDependencyError(
            f"Neo4j is unreachable or busy while trying to {action} ({exc}); start it with "
            "`referent neo4j start` or check REFERENT_NEO4J__URI, then retry",
            service="neo4j") from exc
    except neo4j_errors.Neo4jError as exc:
        if "TransactionTimedOut" in (exc.code or ""):
            raise RetryableDependencyError(
                f"Neo4j ended the transaction to {action} at its time bound "
                "(REFERENT_NEO4J__CALL_TIMEOUT_SECONDS, or __BULK_TIMEOUT_SECONDS for imports): "
                "nothing was written; retry, or raise the bound if Neo4j is just slow",
                service="neo4j") from exc
        raise DependencyError(f"Neo4j failed to {action}: {exc}", service="neo4j") from exc
    except neo4j_errors.DriverError as exc:
        raise DependencyError(f"the Neo4j driver failed to {action}: {exc}",
                              service="neo4j") from exc


def _batches(rows: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(rows), _BATCH):
        yield rows[start:start + _BATCH]


def record_change(tx: neo4j.ManagedTransaction, kb: str, actor: Actor, action: str,
                  target: str | None, before: Any, after: Any,
                  entities: Iterable[str] = ()) -> tuple[int, int]:
    """Bump the kb's version and write the audit entry of this change, in ``tx``.

    Returns:
        The new alias table version and the audit entry's sequence number.
    """
    record = tx.run(q.KB_NEXT_AUDIT, kb=kb).single()
    version, seq = record["version"], record["seq"]
    tx.run(q.AUDIT_CREATE, kb=kb, seq=seq, who=actor.name, action=action, target=target,
           before=None if before is None else json.dumps(before, ensure_ascii=False),
           after=None if after is None else json.dumps(after, ensure_ascii=False),
           version=version, entities=list(entities)[:AUDIT_MAX_IDS]).consume()
    return version, seq


def read_ontology(tx: neo4j.ManagedTransaction, kb: str) -> tuple[Ontology, dict[str, str]]:
    """The kb's whole ontology and its stored alias keys, read in ``tx``."""
    types = tuple(TypeDef(name=r["name"], attributes=tuple(r["attributes"] or ()),
                          parent=r["parent"])
                  for r in tx.run(q.READ_TYPES, kb=kb))
    entities = []
    norms: dict[str, str] = {}
    for record in tx.run(q.READ_ENTITIES, kb=kb):
        for eid, name, type_, description, parent, attributes, pairs in record["batch"]:
            texts = []
            for text, norm in pairs:
                texts.append(text)
                if norm is not None:
                    norms[text] = norm
            entities.append(EntityDef(
                id=eid, name=name, type=type_, aliases=tuple(a for a in texts if a != name),
                description=description or "", parent=parent,
                attributes=json.loads(attributes) if attributes and attributes != "{}" else {}))
    relations = tuple(RelationDef(from_id=r["from"], type=r["type"], to_id=r["to"])
                      for r in tx.run(q.READ_RELATIONS, kb=kb))
    confusables = tuple(ConfusableDef(a=r["a"], b=r["b"], note=r["note"] or "")
                        for r in tx.run(q.READ_CONFUSABLES, kb=kb))
    return Ontology(types=types, entities=tuple(entities), relations=relations,
                    confusables=confusables), norms


def entity_from_record(r: Any, aliases: list[str]) -> EntityDef:
    """An EntityDef from a stored entity row and its alias texts (the name among them)."""
    attributes = r["attributes_json"]
    return EntityDef(id=r["id"], name=r["name"], type=r["type"],
                     aliases=tuple(a for a in aliases if a != r["name"]),
                     description=r["description"] or "", parent=r["parent"],
                     attributes=json.loads(attributes) if attributes and attributes != "{}" else {})


class Neo4jOntologyStore:
    """The ontology of every knowledge base, in one Neo4j database."""

    def __init__(self, driver: neo4j.Driver, database: str | None = None, *,
                 check_timeout: float = 5.0, call_timeout: float = 15.0,
                 bulk_timeout: float = 600.0) -> None:
        self._driver = driver
        self._database = database
        self._check_timeout = check_timeout
        self._call_timeout = call_timeout
        self._bulk_timeout = bulk_timeout
        # Callers wait on these threads, never on a socket: a frozen Neo4j holds a few
        # workers until it wakes (their calls then fail their deadline), not the API.
        self._workers = ThreadPoolExecutor(max_workers=32, thread_name_prefix="neo4j-call")

    @classmethod
    def connect(cls, uri: str, user: str, password: str, database: str | None = None, *,
                connection_timeout: float = 5.0, max_retry_seconds: float = 10.0,
                call_timeout: float = 15.0, bulk_timeout: float = 600.0) -> Neo4jOntologyStore:
        """Open a driver (lazy: nothing is sent until the first query).

        Args:
            connection_timeout: seconds to open one connection; also the longest a
                version check (:meth:`kb_state`) waits for an unreachable server.
            max_retry_seconds: how long a transaction is retried on transient
                failures (Neo4j unreachable, a leader election) before it fails.
            call_timeout: the longest any call waits, retries included (see the
                module docstring); also the wait for a pooled connection.
            bulk_timeout: the same for imports, exports and whole alias-table reads.
        """
        with translate_errors("connect"):
            # Server notifications (e.g. "property key does not exist" on an empty
            # kb) are expected here and would only clutter the logs.
            driver = neo4j.GraphDatabase.driver(uri, auth=(user, password),
                                                notifications_min_severity="OFF",
                                                connection_timeout=connection_timeout,
                                                connection_acquisition_timeout=call_timeout,
                                                max_transaction_retry_time=max_retry_seconds)
        return cls(driver, database, check_timeout=connection_timeout, call_timeout=call_timeout,
                   bulk_timeout=bulk_timeout)

    def close(self) -> None:
        self._workers.shutdown(wait=False, cancel_futures=True)
        self._driver.close()

    # -- plumbing -------------------------------------------------------------

    def _bounded(self, action: str, call: Callable[[], T], *, bulk: bool = False) -> T:
        """``call()`` on a worker thread; waits at most the call (or bulk) timeout.

        Raises:
            RetryableDependencyError: no answer within the bound. A write transaction
                started by ``call`` rolls back by itself once the bound has passed.
        """
        limit = self._bulk_timeout if bulk else self._call_timeout
        deadline = time.monotonic() + limit
        state = _Call(deadline, deadline - _commit_margin(limit))

        def run() -> T:
            if time.monotonic() >= deadline:
                raise _PastDeadline()  # queued behind stuck calls until its caller gave up
            _current.value = state
            try:
                return call()
            finally:
                _current.value = None

        # Log lines of the call keep the request's context (request id, kb).
        try:
            future = self._workers.submit(contextvars.copy_context().run, run)
        except RuntimeError as exc:  # the store was closed: as unreachable as a stopped Neo4j
            raise RetryableDependencyError(
                f"could not {action}: this process closed its Neo4j connection",
                service="neo4j") from exc
        try:
            with translate_errors(action):
                return future.result(timeout=limit)
        except FutureTimeout:
            future.cancel()
            setting = ("REFERENT_NEO4J__BULK_TIMEOUT_SECONDS" if bulk
                       else "REFERENT_NEO4J__CALL_TIMEOUT_SECONDS")
            outcome = ("Nothing was written (a write rolls back once this bound has passed); "
                       "retry" if not state.committing else
                       "The write was committing when the bound passed, so it may have been "
                       "applied: read it back before you retry")
            raise RetryableDependencyError(
                f"Neo4j did not answer within {limit:g} s ({setting}) while trying to {action}: "
                f"is it frozen or overloaded? {outcome}", service="neo4j") from None

    def _read(self, action: str, query: str, bulk_: bool = False,
              **params: Any) -> list[neo4j.Record]:
        def call() -> list[neo4j.Record]:
            with translate_errors(action):
                records, _, _ = self._driver.execute_query(
                    query, params, database_=self._database, routing_=neo4j.RoutingControl.READ)
            return records

        return self._bounded(action, call, bulk=bulk_)

    def _write_tx(self, action: str, work: Callable[[neo4j.ManagedTransaction], T], *,
                  bulk: bool = False) -> T:
        """Run ``work`` in one write transaction (retried by the driver on transient errors,
        except running out of transaction memory, which a retry cannot fix), bounded in
        time on both sides: the caller stops waiting, and Neo4j refuses to commit, once
        the bound has passed."""
        limit = self._bulk_timeout if bulk else self._call_timeout

        def guarded(tx: neo4j.ManagedTransaction) -> T:
            call: _Call | None = getattr(_current, "value", None)
            server_deadline = None
            if call is not None:
                call.committing = False
                if time.monotonic() >= call.commit_by:
                    raise _PastDeadline()  # a driver retry after the caller gave up
                started = tx.run(q.SERVER_TIME).single()["now"]
                # The server read its clock before we got the answer, so this deadline on
                # its clock is at most as late as ours. The margin after it is the commit's.
                server_deadline = started + int((call.commit_by - time.monotonic()) * 1000)
            try:
                result = work(tx)
            except neo4j_errors.TransientError as exc:
                if exc.code == _TX_MEMORY:
                    raise _TooLargeForOneTransaction(str(exc)) from exc
                raise
            if call is not None:
                if (time.monotonic() >= call.commit_by
                        or not tx.run(q.BEFORE_DEADLINE, deadline=server_deadline).single()["ok"]):
                    raise _PastDeadline()
                call.committing = True
            return result

        # Neo4j's own transaction timeout, a second guard: a transaction whose caller gave
        # up is ended by the server too, and stops holding the kb's lock for the retries.
        guarded.timeout = limit - _commit_margin(limit)  # type: ignore[attr-defined]

        def call() -> T:
            with translate_errors(action):
                with self._driver.session(database=self._database) as session:
                    return session.execute_write(guarded)

        return self._bounded(action, call, bulk=bulk)

    def _read_tx(self, action: str, work: Callable[[neo4j.ManagedTransaction], T], *,
                 bulk: bool = False) -> T:
        def call() -> T:
            with translate_errors(action):
                with self._driver.session(database=self._database,
                                          default_access_mode=neo4j.READ_ACCESS) as session:
                    return session.execute_read(work)

        return self._bounded(action, call, bulk=bulk)

    def verify(self) -> None:
        """Fail fast with a clear message when Neo4j cannot be reached."""
        def call() -> None:
            with translate_errors("connect"):
                self._driver.verify_connectivity()

        self._bounded("connect", call)

    # -- schema and versions --------------------------------------------------

    def ensure_schema(self) -> None:
        """Create constraints and indexes (idempotent)."""
        def call() -> None:
            with translate_errors("create the schema"):
                for statement in q.SCHEMA:
                    self._driver.execute_query(statement, database_=self._database)

        self._bounded("create the schema", call, bulk=True)

    def alias_version(self, kb: str) -> int | None:
        records = self._read("read the alias table version", q.KB_VERSION, kb=check_kb(kb))
        return records[0]["version"] if records else None

    def kb_state(self, kb: str) -> KbState | None:
        """The kb's alias table version and uid, or None when it has no ontology.

        One attempt, bounded by the connection timeout: every process asks this
        once a second, and when Neo4j is away the caller (the snapshot cache)
        keeps linking with what it holds rather than wait for driver retries.
        """
        check_kb(kb)

        def call() -> list[neo4j.Record]:
            with translate_errors("read the alias table version"):
                with self._driver.session(database=self._database,
                                          default_access_mode=neo4j.READ_ACCESS) as session:
                    return list(session.run(
                        neo4j.Query(q.KB_STATE, timeout=self._check_timeout), kb=kb))

        records = self._bounded("read the alias table version", call)
        if not records or records[0]["version"] is None:
            return None
        return KbState(version=records[0]["version"], uid=records[0]["uid"])

    def normalization(self, kb: str) -> Normalization:
        """The kb's normalization (the default for a kb that does not exist yet)."""
        records = self._read("read the kb's normalization", q.KB_STATE, kb=check_kb(kb))
        return Normalization.from_json(records[0]["normalization"]) if records else DEFAULT

    def linking_data(self, kb: str) -> LinkingData:
        """The kb's ontology and alias keys as of one version.

        The version is read before and after the data; when a write committed
        in between, the read is repeated, so the data never mixes two versions
        under one version number. When writes keep landing, the last attempt
        takes the kb's write lock, which holds the writers back for the length
        of one read: slower for them, but the read always ends.

        Raises:
            NotFoundError: the kb does not exist.
        """
        check_kb(kb)

        def work(tx: neo4j.ManagedTransaction, lock: bool = False) -> LinkingData | None:
            if lock and tx.run(q.KB_LOCK, kb=kb).single() is None:
                raise NotFoundError(f"knowledge base {kb!r} does not exist")
            before = tx.run(q.KB_STATE, kb=kb).single()
            if before is None or before["version"] is None:
                raise NotFoundError(f"knowledge base {kb!r} has no ontology; import one with "
                                    f"`referent ontology import --kb {kb} FILE`")
            ontology, norms = read_ontology(tx, kb)
            after = tx.run(q.KB_STATE, kb=kb).single()
            if after is None or (after["version"], after["uid"]) != (before["version"], before["uid"]):
                return None
            return LinkingData(version=before["version"], uid=before["uid"],
                               normalization=Normalization.from_json(before["normalization"]),
                               ontology=ontology, alias_norms=norms)

        for _ in range(3):
            data = self._read_tx("read the alias table", work, bulk=True)
            if data is not None:
                return data
        data = self._write_tx("read the alias table", lambda tx: work(tx, lock=True), bulk=True)
        if data is None:  # cannot happen under the lock; kept as a guard
            raise RetryableDependencyError(f"the ontology of {kb!r} kept changing while it was "
                                           "read; retry", service="neo4j")
        return data

    def linking_delta(self, kb: str, since_version: int, uid: str) -> LinkingDelta | None:
        """The entities (and types) written after ``since_version``, read as of one version.

        Returns None when a patch cannot be trusted and the snapshot must be
        reloaded whole: the kb was re-created (another uid), a bulk import or a
        normalization change happened, more than MAX_DELTA_WRITES writes landed,
        or a version has no audit entry (data written before audit existed).
        """
        check_kb(kb)

        def work(tx: neo4j.ManagedTransaction) -> LinkingDelta | None | bool:
            before = tx.run(q.KB_STATE, kb=kb).single()
            if before is None or before["version"] is None or before["uid"] != uid:
                return None
            latest = before["version"]
            if latest - since_version > MAX_DELTA_WRITES or latest <= since_version:
                return None
            writes = list(tx.run(q.AUDIT_SINCE, kb=kb, since=since_version,
                                 limit=MAX_DELTA_WRITES + 1))
            if [w["version"] for w in writes] != list(range(since_version + 1, latest + 1)):
                return None
            if any(w["action"] in FULL_RELOAD_ACTIONS for w in writes):
                return None
            ids = sorted({i for w in writes for i in (w["entities"] or ())})
            entities: dict[str, EntityDef | None] = dict.fromkeys(ids)
            norms: dict[str, str] = {}
            confusables: dict[str, frozenset[str]] = {i: frozenset() for i in ids}
            for r in tx.run(q.READ_ENTITIES_BY_IDS, kb=kb, ids=ids):
                for text, norm in r["aliases"]:
                    if norm is not None:
                        norms[text] = norm
                entities[r["id"]] = entity_from_record(r, [text for text, _ in r["aliases"]])
                confusables[r["id"]] = frozenset(r["confusables"])
            types = None
            if any(w["action"].startswith("type.") for w in writes):
                types = tuple(TypeDef(name=r["name"], attributes=tuple(r["attributes"] or ()),
                                      parent=r["parent"]) for r in tx.run(q.READ_TYPES, kb=kb))
            after = tx.run(q.KB_STATE, kb=kb).single()
            if after is None or after["version"] != latest or after["uid"] != uid:
                return False  # a write landed meanwhile: read again
            return LinkingDelta(version=latest, uid=uid, entities=entities, alias_norms=norms,
                                confusables=confusables, types=types)

        for _ in range(5):
            delta = self._read_tx("read the alias table changes", work)
            if delta is not False:
                return delta
        return None

    def list_kbs(self) -> list[str]:
        return [r["kb"] for r in self._read("list knowledge bases", q.KB_LIST)]

    # -- import / export --------------------------------------------------------

    def import_ontology(self, kb: str, lines: list[str], *, path: str | None = None,
                        actor: Actor = Actor("cli"), dry_run: bool = False) -> ImportReport:
        """Validate the whole file against what is stored, then write the
        difference in one transaction with its audit entry. Re-importing the
        same file writes nothing. Creates the kb when it does not exist.

        With ``dry_run`` the file is validated and the report computed, and
        nothing is written.

        Raises:
            FormatError: a bad line (nothing is written).
            DependencyError: Neo4j failed (the transaction is rolled back).
        """
        check_kb(kb)
        if dry_run:
            return self._read_tx("check the ontology file",
                                 lambda tx: self._import_in(tx, kb, lines, path, actor, False),
                                 bulk=True)
        return self._write_tx("import the ontology",
                              lambda tx: self._import_in(tx, kb, lines, path, actor, True),
                              bulk=True)

    def _import_in(self, tx: neo4j.ManagedTransaction, kb: str, lines: list[str],
                   path: str | None, actor: Actor, write: bool) -> ImportReport:
        state = tx.run(q.KB_LOCK_OR_CREATE if write else q.KB_STATE, kb=kb).single()
        normalization = Normalization.from_json(state["normalization"] if state else None)
        old_version = state["version"] if state else None
        stored, _ = read_ontology(tx, kb)
        stored_entities = {e.id: e for e in stored.entities}
        plan = plan_import(stored, lines, path=path, old_version=old_version)
        report = plan.report
        if not report.changed or not write:
            return report

        types, changed, relations, confusables = (plan.types, plan.changed, plan.relations,
                                                  plan.confusables)
        entities = list(plan.entities)
        for rows in _batches([{"name": t.name, "attributes": list(t.attributes),
                               "parent": t.parent} for t in types]):
            tx.run(q.UPSERT_TYPES, kb=kb, rows=rows).consume()
        for rows in _batches([entity_row(e) for e in entities]):
            tx.run(q.UPSERT_ENTITIES, kb=kb, rows=rows).consume()
        changed_ids = [e.id for e in changed]
        for start in range(0, len(changed_ids), _BATCH):
            tx.run(q.DETACH_ALIASES, kb=kb, ids=changed_ids[start:start + _BATCH]).consume()
        # Aliases that normalize to nothing (an album called "？") are stored too, so
        # export gives the file back and re-import changes nothing; the matcher skips them.
        norm = normalization.normalize
        alias_rows = [{"text": alias, "norm": norm(alias), "id": e.id, "pos": pos}
                      for e in entities for pos, alias in enumerate(e.all_aliases)]
        for rows in _batches(alias_rows):
            tx.run(q.LINK_ALIASES, kb=kb, rows=rows).consume()
        old_texts = [a for e in changed for a in stored_entities[e.id].all_aliases]
        for start in range(0, len(old_texts), _BATCH):
            tx.run(q.DELETE_ORPHAN_ALIASES, kb=kb, texts=old_texts[start:start + _BATCH]).consume()
        for rows in _batches([{"from": r.from_id, "type": r.type, "to": r.to_id}
                              for r in relations]):
            tx.run(q.UPSERT_RELATIONS, kb=kb, rows=rows).consume()
        for rows in _batches([{"a": c.a, "b": c.b, "note": c.note} for c in confusables]):
            tx.run(q.UPSERT_CONFUSABLES, kb=kb, rows=rows).consume()
        touched = [e.id for e in entities]
        summary = {k: v for k, v in report.__dict__.items() if k != "version"}
        version, _ = record_change(
            tx, kb, actor, "ontology.import", path,
            {"version": old_version or None},
            {**summary, "entities": touched[:AUDIT_MAX_IDS],
             "entities_truncated": len(touched) > AUDIT_MAX_IDS},
            touched)
        return ImportReport(**{**report.__dict__, "version": version})

    def export_ontology(self, kb: str, *, missing_ok: bool = False) -> Ontology:
        """Read a kb's whole ontology back (the import format's records).

        Raises:
            NotFoundError: the kb has no ontology (unless ``missing_ok``).
        """
        check_kb(kb)

        def work(tx: neo4j.ManagedTransaction) -> Ontology | None:
            state = tx.run(q.KB_STATE, kb=kb).single()
            if state is None or state["version"] is None:
                return None
            return read_ontology(tx, kb)[0]

        ontology = self._read_tx("read the ontology", work, bulk=True)
        if ontology is None:
            if missing_ok:
                return Ontology()
            raise NotFoundError(f"knowledge base {kb!r} has no ontology; import one with "
                                f"`referent ontology import --kb {kb} FILE`")
        return ontology

    def load_alias_rows(self, kb: str) -> list[AliasRow]:
        return [AliasRow(norm=r["norm"], text=r["text"], entity_id=r["id"])
                for r in self._read("read the alias table", q.READ_ALIAS_TABLE, kb=check_kb(kb),
                                    bulk_=True)]

    def delete_kb(self, kb: str) -> None:
        """Remove a kb's whole ontology and audit log (tests and benchmarks).

        The kb node goes first, so every process sees the kb gone at once; its
        nodes are then deleted in batches.
        """
        check_kb(kb)

        def call() -> None:
            with translate_errors("delete the knowledge base"):
                self._driver.execute_query(q.DELETE_KB_NODE, {"kb": kb}, database_=self._database)
                with self._driver.session(database=self._database) as session:
                    for statement in q.DELETE_KB_LABELLED:
                        session.run(statement, kb=kb).consume()

        self._bounded("delete the knowledge base", call, bulk=True)

