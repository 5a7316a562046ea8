"""The suggestion as files: an ontology in the import format (docs/formats.md §1)
and, beside it, the evidence of every line.

The format refuses keys it does not list, so confidence and evidence go to a
sidecar file (``<out>.evidence.jsonl``, one JSON object a line, keyed like the
ontology lines), and a ``#`` comment before each entity line sums them up for
whoever reads the ontology file itself.

Against a kb that already has an ontology, only what is new is written: an
entity none of whose names the kb already knows, with an id the kb does not
use. The kb's entities are never written, so importing the file cannot change
an administrator's edits.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from kg.ontology import (ConfusableDef, EntityDef, Ontology, RelationDef, TypeDef, dump_ontology,
                         parse_ontology)
from kg.suggest.model import Suggestion

_ID_BAD = re.compile(r"[^A-Za-z0-9_.:-]+")


@dataclass
class Written:
    ontology: Ontology
    evidence: list[dict]
    known: list[str]  # suggested names the kb already holds


def slug(name: str) -> str:
    """An entity id from a name: its pinyin, lower case, in id characters."""
    from pypinyin import lazy_pinyin

    text = "-".join(lazy_pinyin(name))
    text = _ID_BAD.sub("-", text).strip("-").lower()
    return re.sub(r"-{2,}", "-", text)[:100] or "entity"


def to_ontology(suggestion: Suggestion, existing: Ontology | None = None) -> Written:
    """The suggested ontology, without what ``existing`` (the kb's) already holds."""
    existing = existing or Ontology()
    held_names = {a for e in existing.entities for a in e.all_aliases}
    used_ids = {e.id for e in existing.entities}
    evidence: list[dict] = []
    known: list[str] = []
    kept = {}
    for key in sorted(suggestion.entities):
        entity = suggestion.entities[key]
        if entity.name in held_names or (not entity.stem and entity.aliases.keys() & held_names
                                         and _same_thing(entity, existing)):
            known.append(entity.name)
            continue
        entity.id = _unique(slug(entity.name), used_ids)
        kept[key] = entity
    parents = {r.from_key: kept[r.to_key].id for r in suggestion.relations
               if r.type == "PART_OF" and r.from_key in kept and r.to_key in kept}
    entities = []
    for entity in kept.values():
        entities.append(EntityDef(id=entity.id, name=entity.name, type=entity.type,
                                  aliases=tuple(sorted(entity.aliases)), description=entity.description,
                                  parent=parents.get(entity.key), attributes=dict(entity.attributes)))
        evidence.append({"kind": "entity", "id": entity.id, "name": entity.name,
                         **entity.evidence.as_json(),
                         "aliases": {a: ev.as_json() for a, ev in sorted(entity.aliases.items())}})
    type_names = {e.type for e in entities}
    have_types = {t.name for t in existing.types}
    typedefs = [TypeDef(name=t.name, attributes=tuple(t.attributes)) for t in suggestion.types.values()
                if t.name in type_names and t.name not in have_types]
    for t in typedefs:
        evidence.append({"kind": "type", "name": t.name,
                         "attributes": {a: ev.as_json() for a, ev in suggestion.types[t.name].attributes.items()}})
    relations = []
    for rel in suggestion.relations:
        if rel.from_key in kept and rel.to_key in kept:
            relations.append(RelationDef(kept[rel.from_key].id, rel.type, kept[rel.to_key].id))
            evidence.append({"kind": "relation", "from": kept[rel.from_key].id, "type": rel.type,
                             "to": kept[rel.to_key].id, **rel.evidence.as_json()})
    pairs = []
    for pair in suggestion.confusables:
        if pair.a in kept and pair.b in kept:
            pairs.append(ConfusableDef(kept[pair.a].id, kept[pair.b].id, pair.note))
            evidence.append({"kind": "confusable", "a": kept[pair.a].id, "b": kept[pair.b].id,
                             **pair.evidence.as_json()})
    ontology = Ontology(types=tuple(typedefs), entities=tuple(entities), relations=tuple(relations),
                        confusables=tuple(pairs))
    return Written(ontology, evidence, known)


def _same_thing(entity, existing: Ontology) -> bool:
    """True when the kb holds an entity named like this one's own name or qualifier-free name."""
    names = {entity.name, *[a for a in entity.aliases if entity.name.startswith(a) or a.startswith(entity.name)]}
    return any(names & set(e.all_aliases) for e in existing.entities)


def _unique(base: str, used: set[str]) -> str:
    candidate, n = base, 2
    while candidate in used:
        candidate, n = f"{base}-{n}", n + 1
    used.add(candidate)
    return candidate


def write(written: Written, out: Path) -> Path:
    """Write the ontology file (checked by the importer's own parser first) and the
    evidence file beside it; returns the evidence file's path."""
    confidence = {line["id"]: line for line in written.evidence if line["kind"] == "entity"}
    lines: list[str] = []
    for line in dump_ontology(written.ontology):
        obj = json.loads(line)
        if obj.get("kind") == "entity":
            ev = confidence[obj["id"]]
            lines.append(f"# confidence {ev['confidence']:.2f}: {ev['reason']}; "
                         f"{ev['counts'].get('passages', 0)} passages")
        lines.append(line)
    parse_ontology(lines, path=str(out))  # never write a file the import would refuse
    out.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    sidecar = evidence_path(out)
    sidecar.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in written.evidence),
                       encoding="utf-8")
    return sidecar


def evidence_path(out: Path) -> Path:
    return out.with_name(out.name + ".evidence.jsonl")
