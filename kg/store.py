"""The ontology store seam: what the rest of Referent needs from a graph backend."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kg.ontology import Ontology


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


class OntologyStore(Protocol):
    """Where the ontology of each knowledge base lives (Neo4j in production)."""

    def ensure_schema(self) -> None: ...

    def import_ontology(self, kb: str, lines: list[str], *, path: str | None = None) -> ImportReport:
        """Validate the whole file, then write it in one transaction (or nothing)."""
        ...

    def export_ontology(self, kb: str) -> Ontology: ...

    def alias_version(self, kb: str) -> int | None:
        """The kb's alias table version; None when the kb has no ontology."""
        ...

    def load_alias_rows(self, kb: str) -> list[AliasRow]: ...

    def close(self) -> None: ...
