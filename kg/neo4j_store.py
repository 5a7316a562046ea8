"""Neo4j implementation of :class:`kg.store.OntologyStore`.

The graph, per knowledge base ``kb`` (every node carries ``kb``):

    (:KnowledgeBase {id, alias_version})
    (:EntityType {kb, name, attributes, parent})
    (:Entity {kb, id, name, type, description, parent, attributes_json})
    (:Alias {kb, text, norm})-[:NAMES]->(:Entity)      one alias may name several entities
    (:Entity)-[:REL {type}]->(:Entity)                 PART_OF, IS_A, custom
    (:Entity)-[:CONFUSABLE {note}]->(:Entity)

All Cypher lives in :mod:`kg.neo4j_queries`. Driver errors are translated
into :mod:`common.errors` here and nowhere else.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import neo4j
from neo4j import exceptions as neo4j_errors

from common.errors import (ConfigurationError, DependencyError, NotFoundError,
                           RetryableDependencyError)
from common.ids import check_kb
from kg import neo4j_queries as q
from kg.normalize import normalize
from kg.ontology import (ConfusableDef, EntityDef, Ontology, RelationDef, TypeDef,
                         parse_ontology)
from kg.store import AliasRow, ImportReport

T = TypeVar("T")
_BATCH = 5000


@contextmanager
def translate_errors(action: str) -> Iterator[None]:
    """Turn neo4j driver exceptions into Referent errors that say what to do."""
    try:
        yield
    except neo4j_errors.AuthError as exc:
        raise ConfigurationError(
            f"Neo4j refused the credentials while trying to {action}: set "
            "REFERENT_NEO4J__USER and REFERENT_NEO4J__PASSWORD") from exc
    except (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired,
            neo4j_errors.TransientError) as exc:
        raise RetryableDependencyError(
            f"Neo4j is unreachable while trying to {action} ({exc}); start it with "
            "`referent neo4j start` or check REFERENT_NEO4J__URI") from exc
    except neo4j_errors.Neo4jError as exc:
        raise DependencyError(f"Neo4j failed to {action}: {exc}") from exc
    except neo4j_errors.DriverError as exc:
        raise DependencyError(f"the Neo4j driver failed to {action}: {exc}") from exc


def _batches(rows: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(rows), _BATCH):
        yield rows[start:start + _BATCH]


class Neo4jOntologyStore:
    """The ontology of every knowledge base, in one Neo4j database."""

    def __init__(self, driver: neo4j.Driver, database: str | None = None) -> None:
        self._driver = driver
        self._database = database

    @classmethod
    def connect(cls, uri: str, user: str, password: str,
                database: str | None = None) -> Neo4jOntologyStore:
        """Open a driver (lazy: nothing is sent until the first query)."""
        with translate_errors("connect"):
            # Server notifications (e.g. "property key does not exist" on an empty
            # kb) are expected here and would only clutter the logs.
            driver = neo4j.GraphDatabase.driver(uri, auth=(user, password),
                                                notifications_min_severity="OFF")
        return cls(driver, database)

    def close(self) -> None:
        self._driver.close()

    # -- plumbing -------------------------------------------------------------

    def _read(self, action: str, query: str, **params: Any) -> list[neo4j.Record]:
        with translate_errors(action):
            records, _, _ = self._driver.execute_query(
                query, params, database_=self._database, routing_=neo4j.RoutingControl.READ)
        return records

    def _write_tx(self, action: str, work: Callable[[neo4j.ManagedTransaction], T]) -> T:
        with translate_errors(action):
            with self._driver.session(database=self._database) as session:
                return session.execute_write(work)

    def verify(self) -> None:
        """Fail fast with a clear message when Neo4j cannot be reached."""
        with translate_errors("connect"):
            self._driver.verify_connectivity()

    # -- schema and versions --------------------------------------------------

    def ensure_schema(self) -> None:
        """Create constraints and indexes (idempotent)."""
        with translate_errors("create the schema"):
            for statement in q.SCHEMA:
                self._driver.execute_query(statement, database_=self._database)

    def alias_version(self, kb: str) -> int | None:
        records = self._read("read the alias table version", q.KB_VERSION, kb=check_kb(kb))
        return records[0]["version"] if records else None

    def list_kbs(self) -> list[str]:
        return [r["kb"] for r in self._read("list knowledge bases", q.KB_LIST)]

    # -- import / export --------------------------------------------------------

    def import_ontology(self, kb: str, lines: list[str], *, path: str | None = None) -> ImportReport:
        """Validate the whole file against what is stored, then write the
        difference in one transaction. Re-importing the same file writes nothing.

        Raises:
            FormatError: a bad line (nothing is written).
            DependencyError: Neo4j failed (the transaction is rolled back).
        """
        check_kb(kb)
        stored = self.export_ontology(kb, missing_ok=True)
        stored_entities = {e.id: e for e in stored.entities}
        ontology = parse_ontology(lines, path=path, known_entity_ids=stored_entities,
                                  known_parents={e.id: e.parent for e in stored.entities})

        stored_types = {t.name: t for t in stored.types}
        types = [t for t in ontology.types if stored_types.get(t.name) != t]
        added = [e for e in ontology.entities if e.id not in stored_entities]
        changed = [e for e in ontology.entities
                   if e.id in stored_entities and not _same_entity(e, stored_entities[e.id])]
        stored_rel = set(stored.relations)
        relations = [r for r in dict.fromkeys(ontology.relations) if r not in stored_rel]
        stored_conf = {_pair_key(c): c for c in stored.confusables}
        confusables = [c for c in {_pair_key(c): c for c in ontology.confusables}.values()
                       if getattr(stored_conf.get(_pair_key(c)), "note", None) != c.note]
        report = ImportReport(types_written=len(types), entities_added=len(added),
                              entities_changed=len(changed),
                              entities_unchanged=len(ontology.entities) - len(added) - len(changed),
                              relations=len(relations), confusables=len(confusables),
                              version=self.alias_version(kb))
        if not report.changed:
            return report

        entities = added + changed

        def work(tx: neo4j.ManagedTransaction) -> int:
            for rows in _batches([{"name": t.name, "attributes": list(t.attributes),
                                   "parent": t.parent} for t in types]):
                tx.run(q.UPSERT_TYPES, kb=kb, rows=rows).consume()
            for rows in _batches([_entity_row(e) for e in entities]):
                tx.run(q.UPSERT_ENTITIES, kb=kb, rows=rows).consume()
            changed_ids = [e.id for e in changed]
            for start in range(0, len(changed_ids), _BATCH):
                tx.run(q.DETACH_ALIASES, kb=kb, ids=changed_ids[start:start + _BATCH]).consume()
            # Aliases that normalize to nothing (an album called "？") are stored so
            # export gives the file back; the matcher skips them.
            alias_rows = [{"text": alias, "norm": normalize(alias), "id": e.id, "pos": pos}
                          for e in entities for pos, alias in enumerate(e.all_aliases)]
            for rows in _batches(alias_rows):
                tx.run(q.LINK_ALIASES, kb=kb, rows=rows).consume()
            if changed:
                tx.run(q.DELETE_ORPHAN_ALIASES, kb=kb).consume()
            for rows in _batches([{"from": r.from_id, "type": r.type, "to": r.to_id}
                                  for r in relations]):
                tx.run(q.UPSERT_RELATIONS, kb=kb, rows=rows).consume()
            for rows in _batches([{"a": c.a, "b": c.b, "note": c.note}
                                  for c in confusables]):
                tx.run(q.UPSERT_CONFUSABLES, kb=kb, rows=rows).consume()
            return tx.run(q.KB_BUMP_VERSION, kb=kb).single()["version"]

        version = self._write_tx("import the ontology", work)
        return ImportReport(**{**report.__dict__, "version": version})

    def export_ontology(self, kb: str, *, missing_ok: bool = False) -> Ontology:
        """Read a kb's whole ontology back (the import format's records).

        Raises:
            NotFoundError: the kb has no ontology (unless ``missing_ok``).
        """
        check_kb(kb)
        if not missing_ok and self.alias_version(kb) is None:
            raise NotFoundError(f"knowledge base {kb!r} has no ontology; import one with "
                                f"`referent ontology import --kb {kb} FILE`")
        types = tuple(TypeDef(name=r["name"], attributes=tuple(r["attributes"] or ()),
                              parent=r["parent"])
                      for r in self._read("read types", q.READ_TYPES, kb=kb))
        entities = []
        for r in self._read("read entities", q.READ_ENTITIES, kb=kb):
            aliases = [a for a in r["aliases"] if a != r["name"]]
            entities.append(EntityDef(id=r["id"], name=r["name"], type=r["type"],
                                      aliases=tuple(aliases), description=r["description"] or "",
                                      parent=r["parent"],
                                      attributes=json.loads(r["attributes_json"] or "{}")))
        relations = tuple(RelationDef(from_id=r["from"], type=r["type"], to_id=r["to"])
                          for r in self._read("read relations", q.READ_RELATIONS, kb=kb))
        confusables = tuple(ConfusableDef(a=r["a"], b=r["b"], note=r["note"] or "")
                            for r in self._read("read confusables", q.READ_CONFUSABLES, kb=kb))
        return Ontology(types=types, entities=tuple(entities), relations=relations,
                        confusables=confusables)

    def load_alias_rows(self, kb: str) -> list[AliasRow]:
        return [AliasRow(norm=r["norm"], text=r["text"], entity_id=r["id"])
                for r in self._read("read the alias table", q.READ_ALIAS_TABLE, kb=check_kb(kb))]

    def delete_kb(self, kb: str) -> None:
        """Remove a kb's whole ontology (tests and `referent ontology delete`)."""
        check_kb(kb)

        def work(tx: neo4j.ManagedTransaction) -> None:
            tx.run(q.DELETE_KB, kb=kb).consume()
            tx.run(q.DELETE_KB_NODE, kb=kb).consume()

        self._write_tx("delete the knowledge base", work)


def _entity_row(e: EntityDef) -> dict[str, Any]:
    return {"id": e.id, "name": e.name, "type": e.type, "description": e.description,
            "parent": e.parent,
            "attributes_json": json.dumps(dict(e.attributes), ensure_ascii=False)}


def _same_entity(a: EntityDef, b: EntityDef) -> bool:
    return (_entity_row(a) == _entity_row(b)
            and a.all_aliases == b.all_aliases)


def _pair_key(c: ConfusableDef) -> tuple[str, str]:
    return (min(c.a, c.b), max(c.a, c.b))
