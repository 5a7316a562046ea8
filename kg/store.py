"""The ontology store seam: what the rest of Referent needs from a graph backend.

Backends: ``kg.neo4j_store.Neo4jOntologyStore`` (the server's) and
``kg.memory_store.InMemoryOntologyStore`` (for tests); both decide what an
import changes with ``kg.import_plan`` and pass the same contract tests
(``tests/contract/test_ontology_store_contract.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from common.language.normalize import Normalization
from kg.ontology import EntityDef, Ontology, TypeDef


@dataclass(frozen=True)
class ImportReport:
    """What an import changed. All zero when the file was already stored."""

    types_written: int
    entities_added: int
    entities_changed: int
    entities_unchanged: int
    relations: int
    confusables: int
    version: int | None

    @property
    def changed(self) -> bool:
        return bool(self.types_written or self.entities_added or self.entities_changed
                    or self.relations or self.confusables)


@dataclass(frozen=True)
class AliasRow:
    """One alias → entity edge of the alias table."""

    norm: str
    text: str
    entity_id: str


@dataclass(frozen=True)
class KbState:
    """A kb's alias table version and identity (a kb created again gets a new uid)."""

    version: int
    uid: str


@dataclass(frozen=True)
class LinkingData:
    """Everything an alias snapshot is built from, read as of one version."""

    version: int
    uid: str
    normalization: Normalization
    ontology: Ontology
    alias_norms: Mapping[str, str]


@dataclass(frozen=True)
class LinkingDelta:
    """What changed in a kb between two versions, for patching a snapshot.

    Attributes:
        entities: every entity a write touched, as it is now (None: deleted).
        confusables: the confusable partners of each of those entities, now.
        types: the whole type schema when a write changed it, else None.
    """

    version: int
    uid: str
    entities: Mapping[str, EntityDef | None]
    alias_norms: Mapping[str, str]
    confusables: Mapping[str, frozenset[str]]
    types: tuple[TypeDef, ...] | None


@dataclass(frozen=True)
class Actor:
    """Who makes a write, as the audit log names them: an API key's name, or ``cli``."""

    name: str


class OntologyStore(Protocol):
    """Where the ontology of each knowledge base lives (Neo4j in production)."""

    def ensure_schema(self) -> None: ...

    def import_ontology(self, kb: str, lines: list[str], *, path: str | None = None,
                        actor: Actor = Actor("cli"), dry_run: bool = False) -> ImportReport:
        """Validate the whole file, then write it in one transaction (or nothing)."""
        ...

    def export_ontology(self, kb: str) -> Ontology: ...

    def alias_version(self, kb: str) -> int | None:
        """The kb's alias table version; None when the kb has no ontology."""
        ...

    def kb_state(self, kb: str) -> KbState | None:
        """Version and uid of the kb; None when it does not exist."""
        ...

    def linking_data(self, kb: str) -> LinkingData:
        """The kb's ontology and alias keys, consistent with one version."""
        ...

    def linking_delta(self, kb: str, since_version: int, uid: str) -> LinkingDelta | None:
        """What changed after ``since_version``; None when only a full reload will do
        (a bulk import, a normalization change, a gap in the record, another uid)."""
        ...

    def load_alias_rows(self, kb: str) -> list[AliasRow]: ...

    def close(self) -> None: ...
