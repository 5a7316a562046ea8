"""Administrative writes and reads of a kb's ontology in Neo4j.

Every write runs in one transaction that first takes the kb node's lock,
then reads what it needs, checks (alias clashes, unknown entities, parent
cycles, references), writes, bumps the alias table version and adds its
audit entry. A failed check raises before anything is written and the
transaction rolls back, so a request is applied whole or not at all, and
parallel writes to one kb are serialised rather than lost.

A write that changes nothing (adding an alias the entity already has)
returns ``changed=False``: no version bump, no audit entry.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import neo4j

from common.errors import (AliasConflictError, ConflictError, InputError, NotFoundError,
                           ReferencedError)
from common.ids import check_kb
from common.language.normalize import DEFAULT, Normalization
from kg import neo4j_queries as q
from kg.admin import (AuditPage, AuditQuery, EntityView, KbInfo, WriteResult, audit_entry,
                      checked_alias, checked_attributes, checked_description, checked_id,
                      checked_relation_type, checked_text, checked_type_def, checked_type_name,
                      entity_json)
from kg.import_plan import entity_row, same_entity
from kg.neo4j_store import Neo4jOntologyStore, entity_from_record, record_change
from kg.ontology import MAX_ALIAS_LEN, ConfusableDef, EntityDef, RelationDef, TypeDef
from kg.store import Actor

_MAX_PARENT_DEPTH = 1000
_BATCH = 5000


@dataclass(frozen=True)
class _Change:
    """What a write function did, for the audit entry and the caller."""

    target: str | None
    before: Any
    after: Any
    entities: tuple[str, ...]
    details: Mapping[str, Any]


_UNSET: Any = object()


class Neo4jOntologyAdmin:
    """Entity, alias, relation, confusable, type and kb-setting writes, with audit.

    Args:
        store: the store whose driver and error translation this uses.
        on_change: called with ``(kb, version)`` after every committed write
            that changed something (the API refreshes its snapshot and queues
            re-tagging there).
    """

    def __init__(self, store: Neo4jOntologyStore,
                 on_change: Callable[[str, int], None] | None = None) -> None:
        self._store = store
        self._on_change = on_change

    # -- plumbing ---------------------------------------------------------------------

    def _write(self, kb: str, actor: Actor, action: str, what: str,
               work: Callable[[neo4j.ManagedTransaction, Normalization], _Change | None],
               *, create: bool = False) -> WriteResult:
        check_kb(kb)

        def tx_work(tx: neo4j.ManagedTransaction) -> WriteResult:
            locked = tx.run(q.KB_LOCK, kb=kb).single()
            if locked is None:
                raise _unknown_kb(kb)
            normalization = Normalization.from_json(locked["normalization"])
            change = work(tx, normalization)
            if change is None:
                return WriteResult(changed=False, version=locked["version"])
            version, seq = record_change(tx, kb, actor, action, change.target, change.before,
                                         change.after, change.entities)
            return WriteResult(changed=True, version=version, audit_seq=seq,
                               details=change.details)

        result = self._store._write_tx(what, tx_work)
        if result.changed and self._on_change is not None:
            self._on_change(kb, result.version)
        return result

    def _read(self, what: str, work: Callable[[neo4j.ManagedTransaction], Any]) -> Any:
        return self._store._read_tx(what, work)

    # -- knowledge bases ---------------------------------------------------------------

    def kb_info(self, kb: str) -> KbInfo:
        """Version, normalization and sizes of a kb.

        Raises:
            NotFoundError: no such kb.
        """
        check_kb(kb)

        def work(tx: neo4j.ManagedTransaction) -> KbInfo:
            state = tx.run(q.KB_STATE, kb=kb).single()
            if state is None:
                raise _unknown_kb(kb)
            counts = tx.run(q.KB_COUNTS, kb=kb).single()
            created = state["created_at"]
            return KbInfo(kb=kb, version=state["version"] or 0, uid=state["uid"],
                          normalization=Normalization.from_json(state["normalization"]),
                          entities=counts["entities"], aliases=counts["aliases"],
                          types=counts["types"],
                          created_at=created.iso_format() if created is not None else None)

        return self._read("read the kb", work)

    def create_kb(self, kb: str, actor: Actor,
                  normalization: Normalization | None = None) -> tuple[bool, WriteResult]:
        """Create an empty kb (idempotent), or change the normalization of an existing one.

        Changing the normalization re-keys every alias of the kb in the same
        transaction; aliases that now share a key become ambiguous, and the
        result lists those keys.

        Returns:
            Whether the kb was created, and the write's result.
        """
        check_kb(kb)

        def create(tx: neo4j.ManagedTransaction) -> bool:
            return tx.run(q.KB_CREATE, kb=kb,
                          normalization=(normalization or DEFAULT).to_json()).single()["created"]

        created = self._store._write_tx("create the kb", create)
        if created:
            result = self._write(kb, actor, "kb.create", "create the kb",
                                 lambda tx, norm: _Change(kb, None, {"normalization": _norm_json(norm)},
                                                          (), {}))
            return True, result
        if normalization is None:
            return False, WriteResult(changed=False, version=self.kb_info(kb).version)
        return False, self._write(kb, actor, "kb.normalization", "change the normalization",
                                  lambda tx, old: _renormalize(tx, kb, old, normalization))

    # -- entities ----------------------------------------------------------------------

    def get_entity(self, kb: str, entity_id: str) -> EntityView:
        """An entity with its aliases, children, relations and confusable partners.

        Raises:
            NotFoundError: no such kb or entity.
        """
        check_kb(kb)
        checked_id(entity_id, "entity_id")

        def work(tx: neo4j.ManagedTransaction) -> EntityView:
            if tx.run(q.KB_STATE, kb=kb).single() is None:
                raise _unknown_kb(kb)
            view = _read_view(tx, kb, entity_id)
            if view is None:
                raise _unknown_entity(kb, entity_id, "entity_id")
            return view

        return self._read("read an entity", work)

    def create_entity(self, kb: str, entity: EntityDef, actor: Actor, *,
                      ambiguous_aliases: Iterable[str] = ()) -> WriteResult:
        """Create an entity with its aliases (its name is one).

        Raises:
            ConflictError: the id is taken (field ``id``).
            AliasConflictError: an alias already names another entity and is
                not listed in ``ambiguous_aliases``.
            InputError: a bad field (named), or an unknown parent.
        """
        checked_id(entity.id, "id")
        entity = _checked_entity(entity)
        allowed = list(ambiguous_aliases)

        def work(tx: neo4j.ManagedTransaction, norm: Normalization) -> _Change:
            if _read_entity(tx, kb, entity.id) is not None:
                raise ConflictError(f"entity {entity.id!r} already exists in {kb!r}; update it "
                                    f"with PATCH .../entities/{entity.id} or pick another id",
                                    field="id")
            if entity.parent is not None:
                _must_exist(tx, kb, entity.parent, "parent")
            keyed = _alias_keys(entity, norm)
            shared = _check_clashes(tx, kb, entity.id, keyed, _keys(allowed, norm, "ambiguous_aliases"))
            tx.run(q.CREATE_ENTITY, kb=kb, row=entity_row(entity)).consume()
            tx.run(q.LINK_ALIASES, kb=kb, rows=[{"text": text, "norm": key, "id": entity.id,
                                                 "pos": pos}
                                                for pos, (text, key, _) in enumerate(keyed)]).consume()
            after = entity_json(entity)
            if shared:
                after["shared_aliases"] = shared
            return _Change(entity.id, None, after, (entity.id,), {"shared_aliases": shared})

        return self._write(kb, actor, "entity.create", "create an entity", work)

    def update_entity(self, kb: str, entity_id: str, actor: Actor, *, name: str = _UNSET,
                      type: str = _UNSET, description: str = _UNSET, parent: str | None = _UNSET,
                      attributes: Mapping[str, Any] = _UNSET,
                      ambiguous_aliases: Iterable[str] = ()) -> WriteResult:
        """Change some fields of an entity; fields not given stay as they are.

        A new name becomes an alias (checked for clashes like any alias); the
        old name stays an alias, so users who say it are still understood.

        Raises:
            NotFoundError: no such entity.
            AliasConflictError: the new name already names another entity.
            InputError: a bad field, an unknown parent or a parent cycle (field ``parent``).
        """
        checked_id(entity_id, "entity_id")
        if name is not _UNSET:
            checked_text(name, "name", max_len=MAX_ALIAS_LEN, what="a name")
        if type is not _UNSET:
            checked_type_name(type)
        if description is not _UNSET:
            checked_description(description)
        if parent is not _UNSET and parent is not None:
            checked_id(parent, "parent")
            if parent == entity_id:
                raise InputError("an entity cannot be its own parent", field="parent")
        if attributes is not _UNSET:
            attributes = checked_attributes(attributes)
        allowed = list(ambiguous_aliases)

        def work(tx: neo4j.ManagedTransaction, norm: Normalization) -> _Change | None:
            old = _read_entity(tx, kb, entity_id)
            if old is None:
                raise _unknown_entity(kb, entity_id, "entity_id")
            new = old
            if name is not _UNSET and name != old.name:
                new = replace(new, name=name,
                              aliases=tuple(a for a in (old.name, *old.aliases) if a != name))
            if type is not _UNSET:
                new = replace(new, type=type)
            if description is not _UNSET:
                new = replace(new, description=description or "")
            if attributes is not _UNSET:
                new = replace(new, attributes=attributes)
            if parent is not _UNSET and parent != old.parent:
                if parent is not None:
                    _must_exist(tx, kb, parent, "parent")
                    _check_no_cycle(tx, kb, entity_id, parent)
                new = replace(new, parent=parent)
            if same_entity(new, old):
                return None
            shared: dict[str, list[str]] = {}
            if new.name != old.name:
                text, key = checked_alias(new.name, "name", norm)
                shared = _check_clashes(tx, kb, entity_id, [(text, key, "name")],
                                        _keys(allowed, norm, "ambiguous_aliases"))
                if text not in old.all_aliases:
                    pos = tx.run(q.NEXT_ALIAS_POS, kb=kb, id=entity_id).single()["pos"]
                    tx.run(q.LINK_ALIASES, kb=kb,
                           rows=[{"text": text, "norm": key, "id": entity_id, "pos": pos}]).consume()
            tx.run(q.UPDATE_ENTITY, kb=kb, row=entity_row(new)).consume()
            after = entity_json(new)
            if shared:
                after["shared_aliases"] = shared
            return _Change(entity_id, entity_json(old), after, (entity_id,),
                           {"shared_aliases": shared})

        return self._write(kb, actor, "entity.update", "update an entity", work)

    def delete_entity(self, kb: str, entity_id: str, actor: Actor, *,
                      force: bool = False) -> WriteResult:
        """Delete an entity and its aliases (aliases shared with others stay theirs).

        Without ``force``, an entity that others refer to (children, relations,
        confusable pairs) is not deleted: the error lists every reference. With
        ``force`` those relations and pairs are deleted too and the children lose
        their parent; the result's details list what was removed.

        Raises:
            NotFoundError: no such entity.
            ReferencedError: references exist and ``force`` is false.
        """
        checked_id(entity_id, "entity_id")

        def work(tx: neo4j.ManagedTransaction, norm: Normalization) -> _Change:
            view = _read_view(tx, kb, entity_id)
            if view is None:
                raise _unknown_entity(kb, entity_id, "entity_id")
            refs = view.references()
            if refs and not force:
                summary = ", ".join(f"{len(v)} {k.replace('_', ' ')}" for k, v in refs.items())
                raise ReferencedError(
                    f"entity {entity_id!r} is still referenced ({summary}); remove those first "
                    "or delete with force=true, which removes the relations and confusable "
                    "pairs and leaves the children without a parent", references=refs)
            tx.run(q.CLEAR_PARENT, kb=kb, id=entity_id).consume()
            tx.run(q.DELETE_ENTITY, kb=kb, id=entity_id).consume()
            tx.run(q.DELETE_ORPHAN_ALIASES, kb=kb, texts=list(view.entity.all_aliases)).consume()
            before = {**entity_json(view.entity), "references": refs}
            touched = (entity_id, *view.children)
            return _Change(entity_id, before, None, touched, {"removed_references": refs})

        return self._write(kb, actor, "entity.delete", "delete an entity", work)

    # -- aliases ---------------------------------------------------------------------------

    def add_alias(self, kb: str, entity_id: str, alias: str, actor: Actor, *,
                  ambiguous: bool = False) -> WriteResult:
        """Add an alias to an entity.

        An alias whose key already names another entity is refused, naming
        both entities, unless ``ambiguous`` says it is meant to be shared
        (then a mention of it alone leads to a clarification).

        Raises:
            NotFoundError: no such entity.
            AliasConflictError: the clash described above.
            InputError: empty, over 128 characters, or nothing left once normalized.
        """
        checked_id(entity_id, "entity_id")

        def work(tx: neo4j.ManagedTransaction, norm: Normalization) -> _Change | None:
            text, key = checked_alias(alias, "alias", norm)
            old = _read_entity(tx, kb, entity_id)
            if old is None:
                raise _unknown_entity(kb, entity_id, "entity_id")
            if text in old.all_aliases:
                return None
            shared = _check_clashes(tx, kb, entity_id, [(text, key, "alias")],
                                    {key} if ambiguous else set())
            pos = tx.run(q.NEXT_ALIAS_POS, kb=kb, id=entity_id).single()["pos"]
            tx.run(q.LINK_ALIASES, kb=kb,
                   rows=[{"text": text, "norm": key, "id": entity_id, "pos": pos}]).consume()
            after = {"entity": entity_id, "aliases": [*old.aliases, text]}
            if shared:
                after["shared_with"] = shared[text]
            return _Change(entity_id, {"entity": entity_id, "aliases": list(old.aliases)},
                           after, (entity_id, *shared.get(text, ())),
                           {"alias": text, "key": key, "shared_with": shared.get(text, [])})

        return self._write(kb, actor, "alias.add", "add an alias", work)

    def remove_alias(self, kb: str, entity_id: str, alias: str, actor: Actor) -> WriteResult:
        """Remove one alias (its exact text) from an entity.

        Raises:
            NotFoundError: no such entity, or the entity has no such alias.
            InputError: the alias is the entity's name (rename the entity instead).
        """
        checked_id(entity_id, "entity_id")
        if not isinstance(alias, str) or not alias:
            raise InputError("alias must not be empty", field="alias")

        def work(tx: neo4j.ManagedTransaction, norm: Normalization) -> _Change:
            old = _read_entity(tx, kb, entity_id)
            if old is None:
                raise _unknown_entity(kb, entity_id, "entity_id")
            if alias == old.name:
                raise InputError(f"{alias!r} is the name of {entity_id!r}, which is always an "
                                 "alias; rename the entity first", field="alias")
            if alias not in old.aliases:
                raise NotFoundError(f"entity {entity_id!r} has no alias {alias!r}; its aliases "
                                    f"are {list(old.aliases)}", field="alias")
            tx.run(q.UNLINK_ALIAS, kb=kb, text=alias, id=entity_id).consume()
            tx.run(q.DELETE_ORPHAN_ALIASES, kb=kb, texts=[alias]).consume()
            return _Change(entity_id, {"entity": entity_id, "aliases": list(old.aliases)},
                           {"entity": entity_id, "aliases": [a for a in old.aliases if a != alias]},
                           (entity_id,), {"alias": alias})

        return self._write(kb, actor, "alias.remove", "remove an alias", work)

    # -- relations and confusable pairs ----------------------------------------------------

    def add_relation(self, kb: str, relation: RelationDef, actor: Actor) -> WriteResult:
        """Add ``from -[type]-> to`` (idempotent).

        Raises:
            InputError: a bad id or type, or an unknown entity (field ``from`` / ``to``).
        """
        rel = RelationDef(from_id=checked_id(relation.from_id, "from"),
                          type=checked_relation_type(relation.type),
                          to_id=checked_id(relation.to_id, "to"))

        def work(tx: neo4j.ManagedTransaction, norm: Normalization) -> _Change | None:
            _must_exist(tx, kb, rel.from_id, "from")
            _must_exist(tx, kb, rel.to_id, "to")
            if tx.run(q.RELATION_EXISTS, kb=kb, **{"from": rel.from_id, "type": rel.type,
                                                   "to": rel.to_id}).single()["found"]:
                return None
            tx.run(q.UPSERT_RELATIONS, kb=kb,
                   rows=[{"from": rel.from_id, "type": rel.type, "to": rel.to_id}]).consume()
            return _Change(rel.from_id, None, _relation_json(rel), (rel.from_id, rel.to_id), {})

        return self._write(kb, actor, "relation.add", "add a relation", work)

    def remove_relation(self, kb: str, relation: RelationDef, actor: Actor) -> WriteResult:
        """Remove ``from -[type]-> to``.

        Raises:
            NotFoundError: there is no such relation.
        """
        rel = RelationDef(from_id=checked_id(relation.from_id, "from"),
                          type=checked_relation_type(relation.type),
                          to_id=checked_id(relation.to_id, "to"))

        def work(tx: neo4j.ManagedTransaction, norm: Normalization) -> _Change:
            params = {"from": rel.from_id, "type": rel.type, "to": rel.to_id}
            if not tx.run(q.RELATION_EXISTS, kb=kb, **params).single()["found"]:
                raise NotFoundError(f"there is no relation {rel.from_id} -[{rel.type}]-> "
                                    f"{rel.to_id} in {kb!r}", field="type")
            tx.run(q.DELETE_RELATION, kb=kb, **params).consume()
            return _Change(rel.from_id, _relation_json(rel), None, (rel.from_id, rel.to_id), {})

        return self._write(kb, actor, "relation.remove", "remove a relation", work)

    def add_confusable(self, kb: str, pair: ConfusableDef, actor: Actor) -> WriteResult:
        """Mark two entities as confusable (or change the pair's note).

        Raises:
            InputError: the same entity twice, a bad id, an unknown entity, a note too long.
        """
        a, b = checked_id(pair.a, "a"), checked_id(pair.b, "b")
        if a == b:
            raise InputError("a confusable pair needs two different entities", field="b")
        note = pair.note or ""
        if len(note) > 1000:
            raise InputError(f"note is {len(note)} characters long; the limit is 1000", field="note")

        def work(tx: neo4j.ManagedTransaction, norm: Normalization) -> _Change | None:
            _must_exist(tx, kb, a, "a")
            _must_exist(tx, kb, b, "b")
            found = tx.run(q.READ_CONFUSABLE, kb=kb, a=a, b=b).single()
            if found is not None and found["note"] == note:
                return None
            tx.run(q.UPSERT_CONFUSABLES, kb=kb, rows=[{"a": a, "b": b, "note": note}]).consume()
            before = None if found is None else {"a": a, "b": b, "note": found["note"]}
            return _Change(f"{a}|{b}", before, {"a": a, "b": b, "note": note}, (a, b), {})

        return self._write(kb, actor, "confusable.add", "mark a confusable pair", work)

    def remove_confusable(self, kb: str, a: str, b: str, actor: Actor) -> WriteResult:
        """Unmark a confusable pair (either order).

        Raises:
            NotFoundError: the two are not marked confusable.
        """
        checked_id(a, "a")
        checked_id(b, "b")

        def work(tx: neo4j.ManagedTransaction, norm: Normalization) -> _Change:
            found = tx.run(q.READ_CONFUSABLE, kb=kb, a=a, b=b).single()
            if found is None:
                raise NotFoundError(f"{a!r} and {b!r} are not marked confusable in {kb!r}",
                                    field="b")
            tx.run(q.DELETE_CONFUSABLE, kb=kb, a=a, b=b).consume()
            return _Change(f"{a}|{b}", {"a": a, "b": b, "note": found["note"]}, None, (a, b), {})

        return self._write(kb, actor, "confusable.remove", "unmark a confusable pair", work)

    # -- types -----------------------------------------------------------------------------

    def put_type(self, kb: str, type_def: TypeDef, actor: Actor) -> WriteResult:
        """Create or replace a type's attribute list and parent.

        Raises:
            InputError: a bad field, an unknown parent type or a parent cycle.
        """
        t = checked_type_def(type_def)

        def work(tx: neo4j.ManagedTransaction, norm: Normalization) -> _Change | None:
            old = tx.run(q.READ_TYPE, kb=kb, name=t.name).single()
            before = None if old is None else _type_json(
                TypeDef(old["name"], tuple(old["attributes"] or ()), old["parent"]))
            if before == _type_json(t):
                return None
            if t.parent is not None:
                parents = {r["name"]: r["parent"] for r in tx.run(q.READ_TYPE_PARENTS, kb=kb)}
                if t.parent not in parents:
                    raise InputError(f"unknown parent type {t.parent!r}; create it first",
                                     field="parent")
                parents[t.name] = t.parent
                seen, current = {t.name}, t.parent
                while current is not None:
                    if current in seen:
                        raise InputError(f"parent cycle through type {current!r}; a type cannot "
                                         "be its own ancestor", field="parent")
                    seen.add(current)
                    current = parents.get(current)
            tx.run(q.UPSERT_TYPES, kb=kb, rows=[{"name": t.name, "attributes": list(t.attributes),
                                                 "parent": t.parent}]).consume()
            return _Change(t.name, before, _type_json(t), (), {})

        return self._write(kb, actor, "type.put", "write a type", work)

    def delete_type(self, kb: str, name: str, actor: Actor) -> WriteResult:
        """Delete a type no entity and no other type uses.

        Raises:
            NotFoundError: no such type.
            ReferencedError: entities of this type or child types exist (listed).
        """
        checked_type_name(name, "name")

        def work(tx: neo4j.ManagedTransaction, norm: Normalization) -> _Change:
            old = tx.run(q.READ_TYPE, kb=kb, name=name).single()
            if old is None:
                raise NotFoundError(f"there is no type {name!r} in {kb!r}", field="name")
            refs = tx.run(q.TYPE_REFERENCES, kb=kb, name=name).single()
            references = {}
            if refs["entity_count"]:
                references["entities"] = list(refs["entities"])
                references["entity_count"] = refs["entity_count"]
            if refs["child_types"]:
                references["child_types"] = list(refs["child_types"])
            if references:
                raise ReferencedError(
                    f"type {name!r} is still used ({refs['entity_count']} entities, "
                    f"{len(refs['child_types'])} child types); change them first",
                    references=references)
            tx.run(q.DELETE_TYPE, kb=kb, name=name).consume()
            return _Change(name, _type_json(TypeDef(old["name"], tuple(old["attributes"] or ()),
                                                    old["parent"])), None, (), {})

        return self._write(kb, actor, "type.delete", "delete a type", work)

    def list_types(self, kb: str) -> list[TypeDef]:
        """The kb's type schema, by name."""
        return sorted(self._read_all(kb, q.READ_TYPES, lambda r: TypeDef(
            r["name"], tuple(r["attributes"] or ()), r["parent"])), key=lambda t: t.name)

    def list_confusables(self, kb: str) -> list[ConfusableDef]:
        """Every confusable pair of the kb, each once."""
        return sorted(self._read_all(kb, q.READ_CONFUSABLES, lambda r: ConfusableDef(
            r["a"], r["b"], r["note"] or "")), key=lambda c: (c.a, c.b))

    def _read_all(self, kb: str, query: str, row: Callable[[Any], Any]) -> list[Any]:
        check_kb(kb)

        def work(tx: neo4j.ManagedTransaction) -> list[Any]:
            if tx.run(q.KB_STATE, kb=kb).single() is None:
                raise _unknown_kb(kb)
            return [row(r) for r in tx.run(query, kb=kb)]

        return self._read("read the kb", work)

    # -- audit -------------------------------------------------------------------------------

    def audit(self, kb: str, query: AuditQuery) -> AuditPage:
        """One page of the kb's audit log, newest first.

        Raises:
            NotFoundError: no such kb.
        """
        check_kb(kb)
        if not 1 <= query.limit <= 500:
            raise InputError("limit must be between 1 and 500", field="limit")

        def work(tx: neo4j.ManagedTransaction) -> AuditPage:
            if tx.run(q.KB_STATE, kb=kb).single() is None:
                raise _unknown_kb(kb)
            records = list(tx.run(
                q.AUDIT_QUERY, kb=kb, who=query.who, action=query.action,
                action_prefix=f"{query.action}." if query.action else None,
                target=query.target,
                since=query.since.isoformat() if query.since else None,
                until=query.until.isoformat() if query.until else None,
                before_seq=query.before_seq, limit=query.limit + 1))
            entries = tuple(audit_entry(r) for r in records[:query.limit])
            more = len(records) > query.limit
            return AuditPage(entries, entries[-1].seq if more and entries else None)

        return self._read("read the audit log", work)


# -- transaction helpers -------------------------------------------------------------------

def _unknown_kb(kb: str) -> NotFoundError:
    return NotFoundError(f"knowledge base {kb!r} does not exist; create it with PUT "
                         f"/v1/kbs/{kb}/admin or import an ontology into it")


def _unknown_entity(kb: str, entity_id: str, field_name: str) -> NotFoundError:
    return NotFoundError(f"entity {entity_id!r} does not exist in {kb!r}; check the id or "
                         "create the entity first", field=field_name)


def _read_entity(tx: neo4j.ManagedTransaction, kb: str, entity_id: str) -> EntityDef | None:
    record = tx.run(q.READ_ENTITY, kb=kb, id=entity_id).single()
    return None if record is None else entity_from_record(record, list(record["aliases"]))


def _read_view(tx: neo4j.ManagedTransaction, kb: str, entity_id: str) -> EntityView | None:
    entity = _read_entity(tx, kb, entity_id)
    if entity is None:
        return None
    refs = tx.run(q.READ_ENTITY_REFERENCES, kb=kb, id=entity_id).single()
    return EntityView(
        entity=entity, children=tuple(refs["children"]),
        relations_out=tuple(RelationDef(entity_id, t, to) for t, to in refs["relations_out"]),
        relations_in=tuple(RelationDef(frm, t, entity_id) for frm, t in refs["relations_in"]),
        confusables=tuple(ConfusableDef(entity_id, other, note)
                          for other, note in refs["confusables"]))


def _must_exist(tx: neo4j.ManagedTransaction, kb: str, entity_id: str, field_name: str) -> None:
    if not list(tx.run(q.READ_EXISTING_IDS, kb=kb, ids=[entity_id])):
        raise InputError(f"unknown entity {entity_id!r} in {kb!r}: create it first or fix the id",
                         field=field_name)


def _check_no_cycle(tx: neo4j.ManagedTransaction, kb: str, entity_id: str, parent: str) -> None:
    current: str | None = parent
    for _ in range(_MAX_PARENT_DEPTH):
        if current is None:
            return
        if current == entity_id:
            raise InputError(f"parent {parent!r} would make a cycle: {entity_id!r} is already "
                             f"an ancestor of {parent!r}; pick another parent", field="parent")
        record = tx.run(q.READ_PARENT, kb=kb, id=current).single()
        current = record["parent"] if record else None
    raise InputError(f"the parent chain above {parent!r} is deeper than {_MAX_PARENT_DEPTH}",
                     field="parent")


def _checked_entity(e: EntityDef) -> EntityDef:
    checked_text(e.name, "name", max_len=MAX_ALIAS_LEN, what="a name")
    checked_type_name(e.type)
    parent = checked_id(e.parent, "parent") if e.parent is not None else None
    if parent == e.id:
        raise InputError("an entity cannot be its own parent", field="parent")
    for i, alias in enumerate(e.aliases):
        checked_text(alias, f"aliases[{i}]", max_len=MAX_ALIAS_LEN, what="an alias")
    return replace(e, description=checked_description(e.description),
                   attributes=checked_attributes(e.attributes))


def _alias_keys(e: EntityDef, norm: Normalization) -> list[tuple[str, str, str]]:
    """(text, key, field) of the entity's name and aliases, without repeated texts."""
    out: dict[str, tuple[str, str, str]] = {}
    text, key = checked_alias(e.name, "name", norm)
    out[text] = (text, key, "name")
    for i, alias in enumerate(e.aliases):
        if alias not in out:
            text, key = checked_alias(alias, f"aliases[{i}]", norm)
            out[text] = (text, key, f"aliases[{i}]")
    return list(out.values())


def _keys(texts: Sequence[str], norm: Normalization, field_name: str) -> set[str]:
    keys = set()
    for i, text in enumerate(texts):
        keys.add(checked_alias(text, f"{field_name}[{i}]", norm)[1])
    return keys


def _check_clashes(tx: neo4j.ManagedTransaction, kb: str, entity_id: str,
                   keyed: Sequence[tuple[str, str, str]], allowed: set[str]) -> dict[str, list[str]]:
    """Refuse aliases whose key names other entities, unless the key is ``allowed``.

    Returns:
        alias text → the other entities it will be shared with (allowed clashes).
    """
    by_key: dict[str, list[tuple[str, str]]] = {}
    for record in tx.run(q.ALIAS_OWNERS, kb=kb, norms=sorted({k for _, k, _ in keyed})):
        if record["id"] != entity_id:
            by_key.setdefault(record["norm"], []).append((record["id"], record["name"]))
    shared: dict[str, list[str]] = {}
    for text, key, field_name in keyed:
        owners = sorted(by_key.get(key, ()))
        if not owners:
            continue
        if key not in allowed:
            named = ", ".join(f"{oid} ({oname})" for oid, oname in owners)
            raise AliasConflictError(
                f"alias {text!r} already names {named}; adding it to {entity_id!r} would make it "
                "ambiguous. Send it as ambiguous (\"ambiguous\": true, or list it in "
                "\"ambiguous_aliases\") if both entities should answer to it, or remove it from "
                f"{owners[0][0]!r} first",
                alias=text, entity_id=entity_id, other_ids=tuple(o for o, _ in owners),
                field=field_name)
        shared[text] = [o for o, _ in owners]
    return shared


def _renormalize(tx: neo4j.ManagedTransaction, kb: str, old: Normalization,
                 new: Normalization) -> _Change | None:
    """Re-key every alias of the kb under ``new`` (same transaction as the setting)."""
    if new == old:
        return None
    tx.run(q.KB_SET_NORMALIZATION, kb=kb, normalization=new.to_json()).consume()
    rows = []
    for record in tx.run(q.READ_ALIAS_TEXTS, kb=kb):
        key = new.normalize(record["text"])
        if key != record["norm"]:
            rows.append({"text": record["text"], "norm": key})
    for start in range(0, len(rows), _BATCH):
        tx.run(q.SET_ALIAS_NORMS, kb=kb, rows=rows[start:start + _BATCH]).consume()
    return _Change(kb, {"normalization": _norm_json(old)}, {"normalization": _norm_json(new),
                                                            "aliases_rekeyed": len(rows)},
                   (), {"aliases_rekeyed": len(rows)})


def _norm_json(n: Normalization) -> dict[str, bool]:
    return json.loads(n.to_json())


def _relation_json(r: RelationDef) -> dict[str, str]:
    return {"from": r.from_id, "type": r.type, "to": r.to_id}


def _type_json(t: TypeDef) -> dict[str, Any]:
    return {"name": t.name, "attributes": list(t.attributes), "parent": t.parent}
