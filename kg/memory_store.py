"""An in-memory ``OntologyStore``, for tests: linking and the turn engine without Neo4j.

Nothing survives the object, so the server never uses it (its store is
``kg.neo4j_store.Neo4jOntologyStore``). It keeps the contract the Neo4j store
keeps on the side the turn path and imports use
(``tests/contract/test_ontology_store_contract.py``): an import is validated
whole against what is stored and writes only the difference
(``kg.import_plan``, shared with the Neo4j store), or nothing; re-importing
the same file changes nothing; every import that changes something bumps the
alias table version; export gives the records back; the alias table and
``linking_data`` are read as of one version.

Not here: the admin writes (``kg.neo4j_admin``: one entity, alias or type at a
time) and their audit log, and a kb's own normalization (every kb uses the
default one). Since imports are its only writes, ``linking_delta`` always
answers "reload whole", as the Neo4j store does after an import.
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass, field, replace

from common.errors import NotFoundError
from common.ids import check_kb
from common.language.normalize import DEFAULT, Normalization
from kg.import_plan import entity_row, pair_key, plan_import
from kg.ontology import ConfusableDef, EntityDef, Ontology, RelationDef, TypeDef
from kg.store import Actor, AliasRow, ImportReport, KbState, LinkingData, LinkingDelta


@dataclass
class _Kb:
    uid: str
    version: int = 0
    types: dict[str, TypeDef] = field(default_factory=dict)
    entities: dict[str, EntityDef] = field(default_factory=dict)
    relations: dict[RelationDef, None] = field(default_factory=dict)
    confusables: dict[tuple[str, str], ConfusableDef] = field(default_factory=dict)
    # alias text → its matching key, fixed when the alias is first stored (as in Neo4j)
    alias_norms: dict[str, str] = field(default_factory=dict)

    def ontology(self) -> Ontology:
        return Ontology(types=tuple(self.types.values()), entities=tuple(self.entities.values()),
                        relations=tuple(self.relations), confusables=tuple(self.confusables.values()))


class InMemoryOntologyStore:
    """The ontology of every kb in this process's memory (tests only); thread-safe."""

    def __init__(self, normalization: Normalization = DEFAULT) -> None:
        self._normalization = normalization
        self._kbs: dict[str, _Kb] = {}
        self._lock = threading.Lock()

    def ensure_schema(self) -> None:
        """Nothing to create: the dicts are the schema."""

    def verify(self) -> None:
        """Always reachable."""

    def close(self) -> None:
        with self._lock:
            self._kbs.clear()

    # -- versions -------------------------------------------------------------

    def alias_version(self, kb: str) -> int | None:
        found = self._kbs.get(check_kb(kb))
        return found.version if found is not None else None

    def kb_state(self, kb: str) -> KbState | None:
        found = self._kbs.get(check_kb(kb))
        return KbState(found.version, found.uid) if found is not None else None

    def normalization(self, kb: str) -> Normalization:
        check_kb(kb)
        return self._normalization

    def list_kbs(self) -> list[str]:
        return sorted(self._kbs)

    def linking_data(self, kb: str) -> LinkingData:
        """The kb's ontology and alias keys as of one version.

        Raises:
            NotFoundError: the kb has no ontology.
        """
        with self._lock:
            found = self._existing(kb)
            return LinkingData(version=found.version, uid=found.uid,
                               normalization=self._normalization, ontology=found.ontology(),
                               alias_norms=dict(found.alias_norms))

    def linking_delta(self, kb: str, since_version: int, uid: str) -> LinkingDelta | None:
        """Always None (reload whole): imports are the only writes here, and a snapshot
        is never patched across an import."""
        check_kb(kb)
        return None

    def load_alias_rows(self, kb: str) -> list[AliasRow]:
        with self._lock:
            found = self._kbs.get(check_kb(kb))
            if found is None:
                return []
            return [AliasRow(norm=found.alias_norms[text], text=text, entity_id=e.id)
                    for e in found.entities.values() for text in e.all_aliases]

    # -- import / export --------------------------------------------------------

    def import_ontology(self, kb: str, lines: list[str], *, path: str | None = None,
                        actor: Actor = Actor("cli"), dry_run: bool = False) -> ImportReport:
        """Validate the whole file against what is stored, then write the difference.

        Re-importing the same file writes nothing; a write creates the kb when
        it does not exist (at version 0 when the file changes nothing).

        Raises:
            FormatError: a bad line (nothing is written).
        """
        check_kb(kb)
        with self._lock:
            found = self._kbs.get(kb)
            stored = found.ontology() if found is not None else Ontology()
            plan = plan_import(stored, lines, path=path,
                               old_version=found.version if found is not None else None)
            if dry_run:
                return plan.report
            if found is None:
                found = self._kbs[kb] = _Kb(uid=str(uuid.uuid4()))
            if not plan.report.changed:
                return plan.report
            found.types.update((t.name, t) for t in plan.types)
            for entity in plan.entities:
                # Stored as Neo4j reads it back: aliases without the name or repeats,
                # attributes through JSON.
                row = entity_row(entity)
                found.entities[entity.id] = replace(
                    entity, aliases=entity.all_aliases[1:],
                    attributes=json.loads(row["attributes_json"]))
                for text in entity.all_aliases:
                    found.alias_norms.setdefault(text, self._normalization.normalize(text))
            named = {text for e in found.entities.values() for text in e.all_aliases}
            for text in [t for t in found.alias_norms if t not in named]:
                del found.alias_norms[text]
            found.relations.update(dict.fromkeys(plan.relations))
            for pair in plan.confusables:
                # The pair keeps the direction it was first stored in; its note is updated.
                first = found.confusables.get(pair_key(pair), pair)
                found.confusables[pair_key(pair)] = replace(first, note=pair.note)
            found.version += 1
            return replace(plan.report, version=found.version)

    def export_ontology(self, kb: str, *, missing_ok: bool = False) -> Ontology:
        """The kb's whole ontology (the import format's records).

        Raises:
            NotFoundError: the kb has no ontology (unless ``missing_ok``).
        """
        with self._lock:
            if missing_ok and check_kb(kb) not in self._kbs:
                return Ontology()
            return self._existing(kb).ontology()

    def delete_kb(self, kb: str) -> None:
        with self._lock:
            self._kbs.pop(check_kb(kb), None)

    def _existing(self, kb: str) -> _Kb:
        found = self._kbs.get(check_kb(kb))
        if found is None:
            raise NotFoundError(f"knowledge base {kb!r} has no ontology; import one with "
                                f"`referent ontology import --kb {kb} FILE`")
        return found
