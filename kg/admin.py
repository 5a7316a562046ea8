"""What administrators do to an ontology, independent of the graph backend:
the records they read and write, the checks every write passes, the audit log.

The checks here are the domain's, not the HTTP layer's: a write from any
caller (API, CLI, a test) is held to the same rules. The Neo4j implementation
(:mod:`kg.neo4j_admin`) runs them inside the write's transaction, under the
kb's lock, so they still hold when it commits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from common.errors import InputError, InvalidIdError
from common.ids import check_entity_id
from common.language.normalize import Normalization
from common.text import describe_unprintable, first_unprintable
from kg.ontology import MAX_ALIAS_LEN, MAX_NAME_LEN, ConfusableDef, EntityDef, RelationDef, TypeDef

MAX_DESCRIPTION_LEN = 4000
MAX_ATTRIBUTES_JSON = 16_384
MAX_NOTE_LEN = 1000
RELATION_TYPE_RE = re.compile(r"[A-Za-z0-9_]{1,64}")


# -- records ----------------------------------------------------------------------------

@dataclass(frozen=True)
class EntityView:
    """An entity with everything that refers to it or that it refers to."""

    entity: EntityDef
    children: tuple[str, ...] = ()
    relations_out: tuple[RelationDef, ...] = ()
    relations_in: tuple[RelationDef, ...] = ()
    confusables: tuple[ConfusableDef, ...] = ()

    def references(self) -> dict[str, list[Any]]:
        """What would dangle if the entity went away, by kind; empty kinds left out."""
        refs: dict[str, list[Any]] = {}
        if self.children:
            refs["children"] = list(self.children)
        if self.relations_out:
            refs["relations_out"] = [{"type": r.type, "to": r.to_id} for r in self.relations_out]
        if self.relations_in:
            refs["relations_in"] = [{"from": r.from_id, "type": r.type} for r in self.relations_in]
        if self.confusables:
            refs["confusables"] = [{"with": c.b, "note": c.note} for c in self.confusables]
        return refs


@dataclass(frozen=True)
class WriteResult:
    """The outcome of one admin write.

    ``changed`` is False when the request asked for what was already stored:
    then nothing was written, the version did not move and no audit entry
    was made.
    """

    changed: bool
    version: int | None
    audit_seq: int | None = None
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class KbInfo:
    kb: str
    version: int
    uid: str
    normalization: Normalization
    entities: int
    aliases: int
    types: int
    created_at: str | None


@dataclass(frozen=True)
class AuditEntry:
    """One admin write: who (an API key's name, or ``cli``), when, what, before and after."""

    seq: int
    at: str
    who: str
    action: str
    target: str | None
    before: Any
    after: Any
    version: int


@dataclass(frozen=True)
class AuditQuery:
    """Filters and paging of the audit log (newest first).

    ``action`` matches exactly or as a prefix before a dot (``alias`` finds
    ``alias.add`` and ``alias.remove``); ``target`` matches the entry's target
    or any entity it touched; ``before_seq`` pages to older entries.
    """

    who: str | None = None
    action: str | None = None
    target: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    before_seq: int | None = None
    limit: int = 50


@dataclass(frozen=True)
class AuditPage:
    entries: tuple[AuditEntry, ...]
    next_before_seq: int | None


def audit_entry(record: Mapping[str, Any]) -> AuditEntry:
    return AuditEntry(seq=record["seq"], at=record["at"], who=record["who"],
                      action=record["action"], target=record["target"],
                      before=json.loads(record["before"]) if record["before"] else None,
                      after=json.loads(record["after"]) if record["after"] else None,
                      version=record["version"])


def entity_json(entity: EntityDef) -> dict[str, Any]:
    """An entity as the audit log and the API show it (docs/formats.md §1 fields)."""
    return {"id": entity.id, "name": entity.name, "type": entity.type,
            "aliases": [a for a in entity.aliases if a != entity.name],
            "description": entity.description, "parent": entity.parent,
            "attributes": dict(entity.attributes)}


# -- checks -----------------------------------------------------------------------------

def checked_id(value: str, field_name: str) -> str:
    """An entity id, or InvalidIdError naming ``field_name``."""
    try:
        return check_entity_id(value)
    except InvalidIdError as exc:
        raise InvalidIdError(str(exc), field=field_name) from exc


def checked_text(value: str, field_name: str, *, max_len: int, what: str) -> str:
    """A non-blank, printable string of at most ``max_len`` characters."""
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{what} must not be empty", field=field_name)
    if len(value) > max_len:
        raise InputError(f"{what} is {len(value)} characters long; the limit is {max_len}",
                         field=field_name)
    position = first_unprintable(value)
    if position is not None:
        raise InputError(f"{what} contains {describe_unprintable(value, position)}; remove it",
                         field=field_name)
    return value


def checked_alias(value: str, field_name: str, normalization: Normalization) -> tuple[str, str]:
    """An alias and its key under the kb's normalization.

    Raises:
        InputError: empty, longer than 128 characters, a control character,
            or nothing left once normalized (``!!!``), so it could never match.
    """
    alias = checked_text(value, field_name, max_len=MAX_ALIAS_LEN, what="an alias")
    key = normalization.normalize(alias)
    if not key:
        raise InputError(f"alias {alias!r} is only spaces and punctuation, which "
                         "normalization removes, so it could never match; use words",
                         field=field_name)
    return alias, key


def checked_type_name(value: str, field_name: str = "type") -> str:
    return checked_text(value, field_name, max_len=MAX_NAME_LEN, what="a type name")


def checked_relation_type(value: str, field_name: str = "type") -> str:
    if not isinstance(value, str) or not RELATION_TYPE_RE.fullmatch(value):
        raise InputError(f"invalid relation type {value!r}: use 1-64 letters, digits or '_' "
                         "(e.g. PART_OF, IS_A)", field=field_name)
    return value


def checked_attributes(value: Mapping[str, Any] | None, field_name: str = "attributes") -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError("attributes must be a JSON object", field=field_name)
    text = json.dumps(dict(value), ensure_ascii=False)
    if len(text) > MAX_ATTRIBUTES_JSON:
        raise InputError(f"attributes take {len(text)} characters as JSON; the limit is "
                         f"{MAX_ATTRIBUTES_JSON}", field=field_name)
    return dict(value)


def checked_description(value: str | None) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError("description must be a string", field="description")
    if len(value) > MAX_DESCRIPTION_LEN:
        raise InputError(f"description is {len(value)} characters long; the limit is "
                         f"{MAX_DESCRIPTION_LEN}", field="description")
    return value


def checked_type_def(t: TypeDef) -> TypeDef:
    name = checked_type_name(t.name, "name")
    attributes = []
    for i, attribute in enumerate(t.attributes):
        attributes.append(checked_text(attribute, f"attributes[{i}]", max_len=MAX_NAME_LEN,
                                       what="an attribute"))
    if len(set(attributes)) != len(attributes):
        raise InputError("an attribute is listed twice", field="attributes")
    parent = checked_type_name(t.parent, "parent") if t.parent is not None else None
    if parent == name:
        raise InputError("a type cannot be its own parent", field="parent")
    return TypeDef(name=name, attributes=tuple(attributes), parent=parent)
