"""The ontology file format (docs/formats.md §1): typed records, parsing, validation, dumping.

Parsing checks the whole file before anything is written, so a file with one
bad line imports nothing. Every error names the line and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from common.errors import FormatError, InvalidIdError
from common.formats import check_line
from common.ids import check_entity_id
from common.jsonl import Fields, iter_jsonl

MAX_ALIAS_LEN = 128
MAX_NAME_LEN = 128


@dataclass(frozen=True)
class TypeDef:
    """An entity type and the attributes (metrics, aspects) its entities have."""

    name: str
    attributes: tuple[str, ...] = ()
    parent: str | None = None


@dataclass(frozen=True)
class EntityDef:
    """A canonical entity. ``name`` is also an alias."""

    id: str
    name: str
    type: str
    aliases: tuple[str, ...] = ()
    description: str = ""
    parent: str | None = None
    attributes: Mapping[str, Any] = field(default_factory=dict)

    @property
    def all_aliases(self) -> tuple[str, ...]:
        """Name first, then the other aliases, without repeats."""
        seen: dict[str, None] = {self.name: None}
        for alias in self.aliases:
            seen.setdefault(alias, None)
        return tuple(seen)


@dataclass(frozen=True)
class RelationDef:
    from_id: str
    type: str
    to_id: str


@dataclass(frozen=True)
class ConfusableDef:
    a: str
    b: str
    note: str = ""


@dataclass(frozen=True)
class Ontology:
    types: tuple[TypeDef, ...] = ()
    entities: tuple[EntityDef, ...] = ()
    relations: tuple[RelationDef, ...] = ()
    confusables: tuple[ConfusableDef, ...] = ()


#: The keys each kind of ontology line may have (docs/formats.md §1).
RECORD_KEYS: dict[str, frozenset[str]] = {
    "type": frozenset({"kind", "format", "name", "attributes", "parent"}),
    "entity": frozenset({"kind", "format", "id", "name", "type", "aliases", "description",
                         "parent", "attributes"}),
    "relation": frozenset({"kind", "format", "from", "type", "to"}),
    "confusable": frozenset({"kind", "format", "a", "b", "note"}),
}

_RELATION_TYPE_CHARS = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _entity_id(f: Fields, name: str) -> str:
    value = f.string(name)
    try:
        return check_entity_id(value)
    except InvalidIdError as exc:
        raise f.error(name, str(exc)) from exc


def _parse_line(f: Fields) -> TypeDef | EntityDef | RelationDef | ConfusableDef:
    record = _parse_record(f)
    # The published schema (docs/formats.md) has the last word on every line.
    check_line("ontology", f.obj, line=f.line, path=f.path)
    return record


def _parse_record(f: Fields) -> TypeDef | EntityDef | RelationDef | ConfusableDef:
    f.check_format_version()
    kind = f.obj.get("kind")
    if kind == "type":
        f.reject_unknown(RECORD_KEYS["type"])
        return TypeDef(name=f.string("name", max_len=MAX_NAME_LEN, printable=True),
                       attributes=tuple(f.string_list("attributes", max_len=MAX_NAME_LEN,
                                                      printable=True)),
                       parent=f.string("parent", required=False, max_len=MAX_NAME_LEN,
                                       printable=True))
    if kind == "entity":
        f.reject_unknown(RECORD_KEYS["entity"])
        entity_id = _entity_id(f, "id")
        parent = None
        if f.obj.get("parent") is not None:
            parent = _entity_id(f, "parent")
            if parent == entity_id:
                raise f.error("parent", "an entity cannot be its own parent")
        return EntityDef(id=entity_id,
                         name=f.string("name", max_len=MAX_ALIAS_LEN, printable=True),
                         type=f.string("type", max_len=MAX_NAME_LEN, printable=True),
                         aliases=tuple(f.string_list("aliases", max_len=MAX_ALIAS_LEN,
                                                     printable=True)),
                         description=f.string("description", required=False, allow_empty=True) or "",
                         parent=parent,
                         attributes=f.mapping("attributes"))
    if kind == "relation":
        f.reject_unknown(RECORD_KEYS["relation"])
        rel_type = f.string("type", max_len=64)
        if not set(rel_type) <= _RELATION_TYPE_CHARS:
            raise f.error("type", "relation types use letters, digits and '_' only (e.g. PART_OF)")
        return RelationDef(from_id=_entity_id(f, "from"), type=rel_type, to_id=_entity_id(f, "to"))
    if kind == "confusable":
        f.reject_unknown(RECORD_KEYS["confusable"])
        a, b = _entity_id(f, "a"), _entity_id(f, "b")
        if a == b:
            raise f.error("b", "a confusable pair needs two different entities")
        return ConfusableDef(a=a, b=b, note=f.string("note", required=False, allow_empty=True) or "")
    raise f.error("kind", f"unknown kind {kind!r}; use one of type, entity, relation, confusable")


def parse_ontology(lines: Iterable[str], *, path: str | None = None,
                   known_entity_ids: Iterable[str] = (),
                   known_parents: Mapping[str, str | None] | None = None) -> Ontology:
    """Parse and validate a whole ontology file.

    Args:
        lines: the file's lines.
        path: the file name, for error messages.
        known_entity_ids: ids already stored in the kb; references to them are valid.
        known_parents: parent of each stored entity, to detect cycles across the
            file and what is stored.

    Raises:
        FormatError: naming the line and field of the first problem found.
    """
    types: dict[str, TypeDef] = {}
    entities: dict[str, tuple[int, EntityDef]] = {}
    relations: list[tuple[int, RelationDef]] = []
    confusables: list[tuple[int, ConfusableDef]] = []
    for number, obj in iter_jsonl(lines, path):
        record = _parse_line(Fields(obj, number, path))
        if isinstance(record, TypeDef):
            if record.name in types:
                raise FormatError(f"type {record.name!r} is defined twice", line=number,
                                  field="name", path=path)
            types[record.name] = record
        elif isinstance(record, EntityDef):
            if record.id in entities:
                raise FormatError(f"entity id {record.id!r} already defined on line "
                                  f"{entities[record.id][0]}", line=number, field="id", path=path)
            entities[record.id] = (number, record)
        elif isinstance(record, RelationDef):
            relations.append((number, record))
        else:
            confusables.append((number, record))

    known = set(known_entity_ids) | set(entities)

    def must_exist(entity_id: str, number: int, field_name: str) -> None:
        if entity_id not in known:
            raise FormatError(f"unknown entity {entity_id!r}: define it in this file or import "
                              "it first", line=number, field=field_name, path=path)

    for number, entity in entities.values():
        if entity.parent is not None:
            must_exist(entity.parent, number, "parent")
    for number, rel in relations:
        must_exist(rel.from_id, number, "from")
        must_exist(rel.to_id, number, "to")
    for number, pair in confusables:
        must_exist(pair.a, number, "a")
        must_exist(pair.b, number, "b")
    for name, t in types.items():
        if t.parent is not None and t.parent not in types:
            raise FormatError(f"unknown parent type {t.parent!r}", field="parent", path=path)

    parents: dict[str, str | None] = dict(known_parents or {})
    parents.update({eid: e.parent for eid, (_, e) in entities.items()})
    for eid, (number, _) in entities.items():
        seen = {eid}
        current = parents.get(eid)
        while current is not None:
            if current in seen:
                raise FormatError(f"parent cycle through {current!r}; an entity cannot be its "
                                  "own ancestor", line=number, field="parent", path=path)
            seen.add(current)
            current = parents.get(current)

    return Ontology(types=tuple(types.values()),
                    entities=tuple(e for _, e in entities.values()),
                    relations=tuple(r for _, r in relations),
                    confusables=tuple(c for _, c in confusables))


def dump_ontology(ontology: Ontology) -> Iterator[str]:
    """Write an ontology back in the file format, one JSON line per record, in a stable order."""
    def line(obj: dict[str, Any]) -> str:
        return json.dumps(obj, ensure_ascii=False)

    for t in sorted(ontology.types, key=lambda t: t.name):
        yield line({"kind": "type", "name": t.name, "attributes": list(t.attributes),
                    "parent": t.parent})
    for e in sorted(ontology.entities, key=lambda e: e.id):
        yield line({"kind": "entity", "id": e.id, "name": e.name, "type": e.type,
                    "aliases": [a for a in e.aliases if a != e.name],
                    "description": e.description, "parent": e.parent,
                    "attributes": dict(e.attributes)})
    for r in sorted(ontology.relations, key=lambda r: (r.from_id, r.type, r.to_id)):
        yield line({"kind": "relation", "from": r.from_id, "type": r.type, "to": r.to_id})
    for c in sorted(ontology.confusables, key=lambda c: (c.a, c.b)):
        yield line({"kind": "confusable", "a": c.a, "b": c.b, "note": c.note})
