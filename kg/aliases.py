"""The in-memory alias snapshot a process links against, and its refresh.

Linking must not wait on Neo4j, so each process keeps an immutable snapshot
of each kb's alias table. A turn takes one snapshot object and uses it to the
end, so it always sees one consistent table even while a refresh swaps in a
newer one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from kg.fuzzy import DEFAULT_THRESHOLD as DEFAULT_FUZZY_THRESHOLD
from kg.fuzzy import FuzzyAliasIndex
from kg.normalize import NormalizedText, normalize
from kg.ontology import EntityDef, Ontology
from kg.store import OntologyStore


def _is_word_char(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


class LongestMatcher:
    """Leftmost-longest, non-overlapping matching of normalized keys in normalized text.

    Keys made of ASCII letters/digits at an edge only match at a word boundary
    of the original text, so the alias ``ai`` is not found inside ``said``.
    """

    def __init__(self, keys: Iterable[str]) -> None:
        self._keys = frozenset(k for k in keys if k)
        self._lengths = sorted({len(k) for k in self._keys}, reverse=True)

    def __len__(self) -> int:
        return len(self._keys)

    def find(self, norm: NormalizedText) -> list[tuple[int, int, str]]:
        """Return ``(start, end, key)`` spans on the normalized text."""
        text, found, i = norm.text, [], 0
        while i < len(text):
            for length in self._lengths:
                if i + length > len(text):
                    continue
                key = text[i:i + length]
                if key in self._keys and self.at_boundary(norm, i, i + length):
                    found.append((i, i + length, key))
                    i += length
                    break
            else:
                i += 1
        return found

    @staticmethod
    def at_boundary(norm: NormalizedText, start: int, end: int) -> bool:
        """False when a span would cut an ASCII word of the original text in two."""
        original = norm.original
        o_start, o_end = norm.span(start, end)
        if _is_word_char(original[o_start]) and o_start > 0 and _is_word_char(original[o_start - 1]):
            return False
        if _is_word_char(original[o_end - 1]) and o_end < len(original) and _is_word_char(original[o_end]):
            return False
        return True


@dataclass(frozen=True)
class AliasSnapshot:
    """One immutable view of a kb's ontology, built for linking."""

    kb: str
    version: int
    entities: Mapping[str, EntityDef]
    by_norm: Mapping[str, tuple[str, ...]]
    type_attributes: Mapping[str, tuple[str, ...]]
    confusable: Mapping[str, frozenset[str]]
    children: Mapping[str, tuple[str, ...]]
    alias_matcher: LongestMatcher = field(repr=False)
    attribute_matcher: LongestMatcher = field(repr=False)
    attribute_by_norm: Mapping[str, str] = field(repr=False)
    # Fuzzy matching: similarity threshold (0-100); 0 turns it off. Tables larger
    # than fuzzy_max_aliases skip it (its index costs memory: see docs/linking.md).
    fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD
    fuzzy_max_aliases: int = 300_000
    # Derived structures built on first use (the snapshot itself never changes).
    _derived: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def fuzzy_index(self):
        """The :class:`kg.fuzzy.FuzzyAliasIndex` of this snapshot, or None when off."""
        if self.fuzzy_threshold <= 0 or len(self.by_norm) > self.fuzzy_max_aliases:
            return None
        index = self._derived.get("fuzzy")
        if index is None:
            index = self._derived["fuzzy"] = FuzzyAliasIndex(self.by_norm)
        return index

    def context_fit(self):
        """The :class:`kg.fit.ContextFit` of this snapshot, built once on first use."""
        fit = self._derived.get("fit")
        if fit is None:
            from kg.fit import ContextFit

            fit = self._derived["fit"] = ContextFit(self)
        return fit

    @classmethod
    def from_ontology(cls, kb: str, version: int, ontology: Ontology, *,
                      fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD, fuzzy_max_aliases: int = 300_000) -> AliasSnapshot:
        by_norm: dict[str, set[str]] = {}
        for entity in ontology.entities:
            for alias in entity.all_aliases:
                key = normalize(alias)
                if key:
                    by_norm.setdefault(key, set()).add(entity.id)
        type_attributes = {t.name: t.attributes for t in ontology.types}
        attribute_by_norm = {normalize(a): a for attrs in type_attributes.values() for a in attrs
                             if normalize(a)}
        confusable: dict[str, set[str]] = {}
        for pair in ontology.confusables:
            confusable.setdefault(pair.a, set()).add(pair.b)
            confusable.setdefault(pair.b, set()).add(pair.a)
        children: dict[str, list[str]] = {}
        for entity in ontology.entities:
            if entity.parent is not None:
                children.setdefault(entity.parent, []).append(entity.id)
        return cls(kb=kb, version=version,
                   entities={e.id: e for e in ontology.entities},
                   by_norm={k: tuple(sorted(v)) for k, v in by_norm.items()},
                   type_attributes=type_attributes,
                   confusable={k: frozenset(v) for k, v in confusable.items()},
                   children={k: tuple(sorted(v)) for k, v in children.items()},
                   alias_matcher=LongestMatcher(by_norm),
                   attribute_matcher=LongestMatcher(attribute_by_norm),
                   attribute_by_norm=attribute_by_norm,
                   fuzzy_threshold=fuzzy_threshold, fuzzy_max_aliases=fuzzy_max_aliases)

    def name(self, entity_id: str) -> str:
        entity = self.entities.get(entity_id)
        return entity.name if entity else entity_id

    def has_attribute(self, entity_id: str, attribute: str) -> bool:
        entity = self.entities.get(entity_id)
        return entity is not None and attribute in self.type_attributes.get(entity.type, ())

    def distinguishing_words(self, entity_id: str, *shared_norms: str) -> tuple[str, ...]:
        """What tells ``entity_id`` apart from the others named by ``shared_norms``:
        its names and aliases with the shared part removed (``A产品（个人版）`` → ``个人版``)."""
        entity = self.entities.get(entity_id)
        if entity is None:
            return ()
        words = []
        for alias in entity.all_aliases:
            key = normalize(alias)
            for shared in shared_norms:
                rest = key.replace(shared, "") if shared and shared in key else ""
                if len(rest) >= 2:  # one leftover character (险, 版) tells nothing apart
                    words.append(rest)
        return tuple(dict.fromkeys(words))

    def variants(self, entity_id: str) -> dict[str, tuple[str, ...]]:
        """The entities a user may switch to from ``entity_id`` by naming only what
        differs (个人版 after 企业版, 2025版 after 2024版), with those words.

        Variants are entities sharing an alias with it, its siblings under one
        parent, and its children; the words are their aliases minus the shared
        alias or the parent's names.
        """
        entity = self.entities.get(entity_id)
        if entity is None:
            return {}
        own = {normalize(a) for a in entity.all_aliases}
        related: set[str] = set()
        for key in own:
            related.update(self.by_norm.get(key, ()))
        if entity.parent is not None:
            related.update(self.children.get(entity.parent, ()))
        related.update(self.children.get(entity_id, ()))
        related.discard(entity_id)
        out = {}
        for other in sorted(related):
            o = self.entities[other]
            keys = {normalize(a) for a in o.all_aliases}
            bases = {k for k in keys if k in own or len(self.by_norm.get(k, ())) > 1}
            for parent_id in (o.parent, entity_id if o.parent == entity_id else None):
                if parent_id in self.entities:
                    bases.update(normalize(a) for a in self.entities[parent_id].all_aliases)
            words = self.distinguishing_words(other, *sorted(bases, key=len, reverse=True))
            if words:
                out[other] = words
        return out


class SnapshotCache:
    """Per-process snapshots, reloaded when the kb's alias version changes.

    The version is checked at most once every ``check_interval`` seconds, so a
    write made through any process is seen by every process within that bound.
    """

    def __init__(self, store: OntologyStore, *, check_interval: float = 1.0,
                 clock: Callable[[], float] = time.monotonic, fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD,
                 fuzzy_max_aliases: int = 300_000) -> None:
        self._store = store
        self._fuzzy = {"fuzzy_threshold": fuzzy_threshold, "fuzzy_max_aliases": fuzzy_max_aliases}
        self._interval = check_interval
        self._clock = clock
        self._lock = threading.Lock()
        self._snapshots: dict[str, AliasSnapshot] = {}
        self._checked: dict[str, float] = {}

    def get(self, kb: str) -> AliasSnapshot | None:
        """The current snapshot of ``kb``, or None when the kb has no ontology."""
        now = self._clock()
        current = self._snapshots.get(kb)
        if current is not None and now - self._checked.get(kb, 0.0) < self._interval:
            return current
        with self._lock:
            current = self._snapshots.get(kb)
            if current is not None and now - self._checked.get(kb, 0.0) < self._interval:
                return current
            version = self._store.alias_version(kb)
            self._checked[kb] = now
            if version is None:
                self._snapshots.pop(kb, None)
                return None
            if current is None or current.version != version:
                ontology = self._store.export_ontology(kb)
                current = AliasSnapshot.from_ontology(kb, version, ontology, **self._fuzzy)
                self._snapshots[kb] = current
            return current
