"""What importing an ontology file into a kb would change, computed without writing.

Every ``OntologyStore`` backend imports the same way: validate the whole file
against what the kb already holds, then write only the difference. Keeping
that difference in one pure function means the Neo4j store and the in-memory
store cannot disagree on what counts as changed (the contract tests check
both against the same files).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kg.ontology import ConfusableDef, EntityDef, Ontology, RelationDef, TypeDef, parse_ontology
from kg.store import ImportReport


@dataclass(frozen=True)
class ImportPlan:
    """The records an import writes, and its report (``version`` still the old one).

    Attributes:
        types: types that are new or differ from the stored ones.
        added: entities the kb does not hold yet.
        changed: stored entities whose fields or aliases differ (their aliases are replaced).
        relations: relations not stored yet.
        confusables: confusable pairs that are new or carry another note.
    """

    report: ImportReport
    types: tuple[TypeDef, ...]
    added: tuple[EntityDef, ...]
    changed: tuple[EntityDef, ...]
    relations: tuple[RelationDef, ...]
    confusables: tuple[ConfusableDef, ...]

    @property
    def entities(self) -> tuple[EntityDef, ...]:
        """Every entity the import writes, added ones first."""
        return self.added + self.changed


def plan_import(stored: Ontology, lines: list[str], *, path: str | None,
                old_version: int | None) -> ImportPlan:
    """Parse ``lines`` against the ``stored`` ontology and work out what to write.

    Raises:
        FormatError: a bad line, naming the line and field (nothing may be written).
    """
    stored_entities = {e.id: e for e in stored.entities}
    ontology = parse_ontology(lines, path=path, known_entity_ids=stored_entities,
                              known_parents={e.id: e.parent for e in stored.entities})
    stored_types = {t.name: t for t in stored.types}
    types = tuple(t for t in ontology.types if stored_types.get(t.name) != t)
    added = tuple(e for e in ontology.entities if e.id not in stored_entities)
    changed = tuple(e for e in ontology.entities
                    if e.id in stored_entities and not same_entity(e, stored_entities[e.id]))
    stored_rel = set(stored.relations)
    relations = tuple(r for r in dict.fromkeys(ontology.relations) if r not in stored_rel)
    stored_conf = {pair_key(c): c for c in stored.confusables}
    confusables = tuple(c for c in {pair_key(c): c for c in ontology.confusables}.values()
                        if getattr(stored_conf.get(pair_key(c)), "note", None) != c.note)
    report = ImportReport(types_written=len(types), entities_added=len(added),
                          entities_changed=len(changed),
                          entities_unchanged=len(ontology.entities) - len(added) - len(changed),
                          relations=len(relations), confusables=len(confusables),
                          version=old_version or None)
    return ImportPlan(report=report, types=types, added=added, changed=changed,
                      relations=relations, confusables=confusables)


def entity_row(e: EntityDef) -> dict[str, Any]:
    """The stored properties of an entity (attributes as JSON text: Neo4j has no map values)."""
    return {"id": e.id, "name": e.name, "type": e.type, "description": e.description,
            "parent": e.parent,
            "attributes_json": json.dumps(dict(e.attributes), ensure_ascii=False)}


def same_entity(a: EntityDef, b: EntityDef) -> bool:
    """Whether storing ``a`` over ``b`` would change nothing (fields and alias order)."""
    return entity_row(a) == entity_row(b) and a.all_aliases == b.all_aliases


def pair_key(c: ConfusableDef) -> tuple[str, str]:
    """A confusable pair's key, the same whichever way round the file names it."""
    return (min(c.a, c.b), max(c.a, c.b))
