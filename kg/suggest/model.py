"""The suggested ontology while it is being built: entities with their aliases,
types, relations and confusable pairs, each with its evidence."""

from __future__ import annotations

from dataclasses import dataclass, field

from kg.suggest.evidence import Evidence


@dataclass
class SuggestedEntity:
    key: str  # the name the rules know it by until it gets an id
    name: str
    type: str = "Entity"
    aliases: dict[str, Evidence] = field(default_factory=dict)
    attributes: dict[str, str] = field(default_factory=dict)
    attribute_words: set[str] = field(default_factory=set)  # what its documents say of it
    description: str = ""
    evidence: Evidence = field(default_factory=lambda: Evidence(0.0))
    edition: str | None = None
    stem: str | None = None  # the name shared by its editions
    title_name: str | None = None  # the title's name, when an everyday last word was taken off
    id: str = ""

    def add_alias(self, alias: str, evidence: Evidence) -> None:
        alias = alias.strip()
        if alias and alias != self.name and 1 <= len(alias) <= 128:
            kept = self.aliases.get(alias)
            if kept is None or kept.confidence < evidence.confidence:
                self.aliases[alias] = evidence


@dataclass
class SuggestedType:
    name: str
    attributes: dict[str, Evidence] = field(default_factory=dict)
    head: str | None = None  # the head word it was split from, by its members' owner


@dataclass
class SuggestedRelation:
    from_key: str
    type: str
    to_key: str
    evidence: Evidence


@dataclass
class SuggestedConfusable:
    a: str
    b: str
    note: str
    evidence: Evidence


@dataclass
class Suggestion:
    entities: dict[str, SuggestedEntity] = field(default_factory=dict)
    types: dict[str, SuggestedType] = field(default_factory=dict)
    relations: list[SuggestedRelation] = field(default_factory=list)
    confusables: list[SuggestedConfusable] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # name → why it is not suggested

    def ambiguous_aliases(self) -> dict[str, list[str]]:
        holders: dict[str, list[str]] = {}
        for entity in self.entities.values():
            for alias in (entity.name, *entity.aliases):
                holders.setdefault(alias, []).append(entity.key)
        return {a: keys for a, keys in holders.items() if len(keys) > 1}
