"""The in-memory alias snapshot a process links against, and its refresh.

Linking must not wait on Neo4j, so each process keeps an immutable snapshot
of each kb's alias table. A turn takes one snapshot object and uses it to the
end, so it always sees one consistent table even while a refresh swaps in a
newer one.
"""

from __future__ import annotations

import bisect
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from rapidfuzz import fuzz, process

from common.errors import DependencyError
from common.language.normalize import DEFAULT, Normalization, NormalizedText
from kg.fuzzy import DEFAULT_THRESHOLD as DEFAULT_FUZZY_THRESHOLD
from kg.fuzzy import FuzzyAliasIndex, SoundAliasIndex
from kg.ontology import EntityDef, Ontology
from kg.store import LinkingData, LinkingDelta, OntologyStore

SearchMode = Literal["exact", "prefix", "fuzzy"]

logger = logging.getLogger(__name__)


def _is_word_char(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


class LongestMatcher:
    """Leftmost-longest, non-overlapping matching of normalized keys in normalized text.

    Keys made of ASCII letters/digits at an edge only match at a word boundary
    of the original text, so the alias ``ai`` is not found inside ``said``.
    """

    def __init__(self, keys: Iterable[str]) -> None:
        self._keys = frozenset(keys) - {""}
        counts: dict[int, int] = {}
        for length in map(len, self._keys):
            counts[length] = counts.get(length, 0) + 1
        self._set(counts)

    def _set(self, counts: dict[int, int]) -> None:
        self._length_counts = counts
        self._lengths = sorted((n for n, c in counts.items() if c), reverse=True)

    def updated(self, added: Iterable[str], removed: Iterable[str]) -> LongestMatcher:
        """A new matcher with these keys added and removed, in time proportional to the
        change plus one set copy (not a rebuild over every key)."""
        added = set(added) - {""} - self._keys
        removed = (set(removed) & self._keys) - added
        counts = dict(self._length_counts)
        for key in added:
            counts[len(key)] = counts.get(len(key), 0) + 1
        for key in removed:
            counts[len(key)] -= 1
        new = LongestMatcher.__new__(LongestMatcher)
        new._keys = (self._keys - removed) | added
        new._set(counts)
        return new

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
class AliasMatch:
    """One search hit: an entity, the alias key that matched and how well (0-100)."""

    entity_id: str
    alias: str
    score: float
    mode: SearchMode


@dataclass(frozen=True)
class AliasSnapshot:
    """One immutable view of a kb's ontology, built for linking.

    ``uid`` tells two kbs of the same name apart (a kb deleted and created
    again starts its versions anew); ``normalization`` is the kb's own, used
    for every key in here and for the text linked against it.
    """

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
    normalization: Normalization = DEFAULT
    uid: str = ""
    # Fuzzy matching: similarity threshold (0-100); 0 turns it off. Tables larger
    # than fuzzy_max_aliases skip it (its index costs memory: see docs/linking.md).
    fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD
    fuzzy_max_aliases: int = 300_000
    # For the clarify-or-resolve features: each type's parent type, and each entity's
    # relations as (relation type, entity at the other end), both directions.
    type_parents: Mapping[str, str | None] = field(default_factory=dict)
    relations: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    # Entities one relation away (either direction): what a shared alias may lean on.
    related: Mapping[str, frozenset[str]] = field(default_factory=dict, repr=False)
    # Derived structures built on first use (the snapshot itself never changes).
    _derived: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def fuzzy_index(self) -> FuzzyAliasIndex | None:
        """The fuzzy alias index of this snapshot, or None when off."""
        if self.fuzzy_threshold <= 0 or len(self.by_norm) > self.fuzzy_max_aliases:
            return None
        index = self._derived.get("fuzzy")
        if index is None:
            index = self._derived["fuzzy"] = FuzzyAliasIndex(self.by_norm)
        return index

    def sound_index(self) -> SoundAliasIndex | None:
        """The homophone-slip index of this snapshot (off with fuzzy matching)."""
        if self.fuzzy_threshold <= 0 or len(self.by_norm) > self.fuzzy_max_aliases:
            return None
        index = self._derived.get("sound")
        if index is None:
            index = self._derived["sound"] = SoundAliasIndex(self.by_norm)
        return index

    @classmethod
    def from_linking_data(cls, kb: str, data: LinkingData, **fuzzy: float) -> AliasSnapshot:
        """Build from what the store read (stored alias keys are reused, not recomputed)."""
        return cls.from_ontology(kb, data.version, data.ontology, normalization=data.normalization,
                                 alias_norms=data.alias_norms, uid=data.uid, **fuzzy)

    @classmethod
    def from_ontology(cls, kb: str, version: int, ontology: Ontology, *,
                      normalization: Normalization = DEFAULT,
                      alias_norms: Mapping[str, str] | None = None,
                      uid: str = "", fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD,
                      fuzzy_max_aliases: int = 300_000) -> AliasSnapshot:
        """Build the linking view of ``ontology``.

        Args:
            alias_norms: alias text → key as stored; aliases missing from it
                are normalized here.
        """
        norm = normalization.normalize
        known = alias_norms or {}
        by_norm: dict[str, set[str]] = {}
        for entity in ontology.entities:
            for alias in entity.all_aliases:
                key = known.get(alias)
                if key is None:
                    key = norm(alias)
                if key:
                    by_norm.setdefault(key, set()).add(entity.id)
        type_attributes = {t.name: t.attributes for t in ontology.types}
        attribute_by_norm = {norm(a): a for attrs in type_attributes.values() for a in attrs
                             if norm(a)}
        confusable: dict[str, set[str]] = {}
        for pair in ontology.confusables:
            confusable.setdefault(pair.a, set()).add(pair.b)
            confusable.setdefault(pair.b, set()).add(pair.a)
        children: dict[str, list[str]] = {}
        for entity in ontology.entities:
            if entity.parent is not None:
                children.setdefault(entity.parent, []).append(entity.id)
        relations: dict[str, list[tuple[str, str]]] = {}
        for rel in ontology.relations:
            relations.setdefault(rel.from_id, []).append((rel.type, rel.to_id))
            relations.setdefault(rel.to_id, []).append((rel.type, rel.from_id))
        return cls(kb=kb, version=version,
                   related={k: frozenset(other for _, other in v) for k, v in relations.items()},
                   entities={e.id: e for e in ontology.entities},
                   by_norm={k: tuple(sorted(v)) for k, v in by_norm.items()},
                   type_attributes=type_attributes,
                   confusable={k: frozenset(v) for k, v in confusable.items()},
                   children={k: tuple(sorted(v)) for k, v in children.items()},
                   alias_matcher=LongestMatcher(by_norm),
                   attribute_matcher=LongestMatcher(attribute_by_norm),
                   attribute_by_norm=attribute_by_norm,
                   normalization=normalization, uid=uid,
                   fuzzy_threshold=fuzzy_threshold, fuzzy_max_aliases=fuzzy_max_aliases,
                   type_parents={t.name: t.parent for t in ontology.types},
                   relations={k: tuple(v) for k, v in relations.items()})

    def patched(self, delta: LinkingDelta) -> AliasSnapshot:
        """A new snapshot: this one with ``delta`` applied (this one is left as it is).

        Costs a shallow copy of the maps plus work proportional to the change,
        instead of reading and building the whole table again, so a kb of a
        million aliases is refreshed within the check interval.
        """
        norm = self.normalize
        entities = dict(self.entities)
        by_norm = dict(self.by_norm)
        children = dict(self.children)
        confusable = dict(self.confusable)
        changed = set(delta.entities)
        keys: set[str] = set()
        for eid, new in delta.entities.items():
            old = self.entities.get(eid)
            if old is not None:
                keys.update(norm(a) for a in old.all_aliases)
                if old.parent is not None:
                    siblings = tuple(c for c in children.get(old.parent, ()) if c != eid)
                    if siblings:
                        children[old.parent] = siblings
                    else:
                        children.pop(old.parent, None)
            for partner in self.confusable.get(eid, ()):
                rest = confusable.get(partner, frozenset()) - {eid}
                if rest:
                    confusable[partner] = rest
                else:
                    confusable.pop(partner, None)
            confusable.pop(eid, None)
            if new is None:
                entities.pop(eid, None)
                continue
            entities[eid] = new
            if new.parent is not None:
                children[new.parent] = tuple(sorted({*children.get(new.parent, ()), eid}))
        new_keys: dict[str, set[str]] = {}
        for eid, new in delta.entities.items():
            if new is None:
                continue
            for alias in new.all_aliases:
                key = delta.alias_norms.get(alias)
                if key is None:
                    key = norm(alias)
                if key:
                    new_keys.setdefault(key, set()).add(eid)
                    keys.add(key)
        gone, came = [], []
        for key in keys:
            ids = {i for i in by_norm.get(key, ()) if i not in changed} | new_keys.get(key, set())
            if ids:
                if key not in by_norm:
                    came.append(key)
                by_norm[key] = tuple(sorted(ids))
            elif by_norm.pop(key, None) is not None:
                gone.append(key)
        for eid, partners in delta.confusables.items():
            if delta.entities.get(eid) is None:
                continue
            partners = frozenset(p for p in partners if p in entities)
            if partners:
                confusable[eid] = partners
            for partner in partners:
                confusable[partner] = confusable.get(partner, frozenset()) | {eid}
        type_attributes, attribute_by_norm = self.type_attributes, self.attribute_by_norm
        attribute_matcher = self.attribute_matcher
        if delta.types is not None:
            type_attributes = {t.name: t.attributes for t in delta.types}
            attribute_by_norm = {norm(a): a for attrs in type_attributes.values() for a in attrs
                                 if norm(a)}
            attribute_matcher = LongestMatcher(attribute_by_norm)
        patched = AliasSnapshot(kb=self.kb, version=delta.version, entities=entities,
                                by_norm=by_norm, type_attributes=type_attributes,
                                confusable=confusable, children=children,
                                alias_matcher=self.alias_matcher.updated(came, gone),
                                attribute_matcher=attribute_matcher,
                                attribute_by_norm=attribute_by_norm,
                                normalization=self.normalization, uid=self.uid,
                                fuzzy_threshold=self.fuzzy_threshold,
                                fuzzy_max_aliases=self.fuzzy_max_aliases,
                                # A patch carries no relations: those of deleted entities go,
                                # new ones arrive with the next full load.
                                type_parents=({t.name: t.parent for t in delta.types}
                                              if delta.types is not None else self.type_parents),
                                relations={k: v for k, v in self.relations.items()
                                           if k in entities},
                                related={k: v for k, v in self.related.items() if k in entities})
        # The fuzzy index is the one derived structure too slow to rebuild after every
        # write (seconds at 100,000 aliases): patch it too when this snapshot built one.
        fuzzy = self._derived.get("fuzzy")
        if fuzzy is not None and len(by_norm) <= self.fuzzy_max_aliases:
            patched._derived["fuzzy"] = fuzzy.updated(came, gone)
        return patched

    def normalize(self, text: str) -> str:
        """The kb's matching key of ``text``."""
        return self.normalization.normalize(text)

    def normalize_with_offsets(self, text: str) -> NormalizedText:
        return self.normalization.with_offsets(text)

    @cached_property
    def _sorted_keys(self) -> list[str]:
        # Built on the first prefix search only: linking never needs it.
        return sorted(self.by_norm)

    def search(self, query: str, mode: SearchMode = "exact", *, limit: int = 20,
               min_score: float = 60.0) -> list[AliasMatch]:
        """Entities whose alias keys match ``query`` (normalized like the aliases).

        ``exact``: the same key; ``prefix``: keys starting with the query's key,
        shortest first; ``fuzzy``: rapidfuzz WRatio over every key, best first,
        at least ``min_score``. One hit per entity, its best alias.
        """
        key = self.normalize(query)
        if not key:
            return []
        found: list[tuple[str, float]] = []
        if mode == "exact":
            found = [(key, 100.0)] if key in self.by_norm else []
        elif mode == "prefix":
            keys = self._sorted_keys
            start = bisect.bisect_left(keys, key)
            matched = []
            for k in keys[start:]:
                if not k.startswith(key):
                    break
                matched.append(k)
            found = [(k, 100.0 * len(key) / len(k)) for k in sorted(matched, key=lambda k: (len(k), k))]
        else:
            hits = process.extract(key, self.by_norm.keys(), scorer=fuzz.WRatio, processor=None,
                                   limit=max(limit * 4, limit), score_cutoff=min_score)
            found = [(k, float(score)) for k, score, _ in sorted(hits, key=lambda h: (-h[1], len(h[0]), h[0]))]
        out: dict[str, AliasMatch] = {}
        for k, score in found:
            for entity_id in self.by_norm[k]:
                if entity_id not in out:
                    out[entity_id] = AliasMatch(entity_id, k, round(score, 1), mode)
            if len(out) >= limit:
                break
        return list(out.values())[:limit]

    def described_with(self, entity_id: str) -> frozenset[str]:
        """The entities ``entity_id``'s description names, each by a name only it has
        (a film's description naming its director, a sight's naming the park it lies
        in): what the knowledge base tells about it with them. Built once per snapshot,
        on first use; a name found in many descriptions is a common word there (a
        number, "city") and ties nothing."""
        table = self._derived.get("described_with")
        if table is None:
            table = self._derived["described_with"] = self._described_with_table()
        return table.get(entity_id, frozenset())

    # A name found in more than this share of the descriptions is a common word there.
    _COMMON_IN_DESCRIPTIONS = 0.02

    def _described_with_table(self) -> dict[str, frozenset[str]]:
        named: dict[str, set[str]] = {}  # entity -> alias keys its description names
        seen_in: dict[str, int] = {}  # alias key -> descriptions it occurs in
        described = 0
        for entity in self.entities.values():
            if not entity.description:
                continue
            described += 1
            keys = {key for _, _, key in self.alias_matcher.find(
                self.normalize_with_offsets(entity.description))}
            for key in keys:
                seen_in[key] = seen_in.get(key, 0) + 1
                ids = self.by_norm.get(key, ())
                # A shared name says nothing about which entity; a one-character or
                # numeric one is too easily a word of the text.
                if len(ids) == 1 and ids[0] != entity.id and len(key) >= 2 and not key.isdigit():
                    named.setdefault(entity.id, set()).add(key)
        limit = max(3, int(described * self._COMMON_IN_DESCRIPTIONS))
        return {entity_id: frozenset(self.by_norm[k][0] for k in keys if seen_in[k] <= limit)
                for entity_id, keys in named.items()}

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
            key = self.normalize(alias)
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
        own = {self.normalize(a) for a in entity.all_aliases}
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
            keys = {self.normalize(a) for a in o.all_aliases}
            bases = {k for k in keys if k in own or len(self.by_norm.get(k, ())) > 1}
            for parent_id in (o.parent, entity_id if o.parent == entity_id else None):
                if parent_id in self.entities:
                    bases.update(self.normalize(a) for a in self.entities[parent_id].all_aliases)
            words = self.distinguishing_words(other, *sorted(bases, key=len, reverse=True))
            if words:
                out[other] = words
        return out


class SnapshotCache:
    """Per-process snapshots, reloaded when the kb's alias table version changes.

    The version (and the kb's uid) is checked at most once every
    ``check_interval`` seconds, on the next ``get``. A newer version is applied
    as a patch of the entities the writes touched (read from the audit log),
    or by a full reload after a bulk import or a normalization change. So a write made through
    any process is used by every process from its first turn that starts more
    than ``check_interval`` seconds after the write committed. A process that
    made a write itself calls :meth:`invalidate` and uses it at once. That a kb
    has no ontology is remembered the same way: for ``check_interval`` seconds
    (or until this process writes to it) ``get`` answers None without asking.

    Snapshots are never changed in place: a reload builds a new object and
    swaps it in, so a turn that took a snapshot keeps one consistent table
    to its end.

    Neo4j slow or away. A check (with the patch or reload it leads to) runs in a
    thread of its own, one per kb at a time. A turn that holds a snapshot waits
    for it at most ``check_timeout`` seconds (None: as long as it takes), then
    links with the snapshot held; a check still running meanwhile is not joined
    but left to finish, and its result is used from the next turn on. A check
    that fails or times out is logged (once per outage, then once a minute),
    counted in :attr:`check_failures`, reported by :meth:`stale` and tried again
    after ``check_interval``; one that hangs for ``abandon_after`` seconds is given
    up for a new one. A kb this process has never loaded, or has just written to
    (:meth:`invalidate`), waits for its check whatever it takes; with the store
    away, ``get`` then raises the store's :class:`~common.errors.DependencyError`.
    """

    def __init__(self, store: OntologyStore, *, check_interval: float = 1.0,
                 check_timeout: float | None = None, abandon_after: float = 30.0,
                 clock: Callable[[], float] = time.monotonic,
                 fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD,
                 fuzzy_max_aliases: int = 300_000) -> None:
        self._store = store
        self._fuzzy = {"fuzzy_threshold": fuzzy_threshold, "fuzzy_max_aliases": fuzzy_max_aliases}
        self._interval = check_interval
        self._timeout = check_timeout
        self._abandon_after = abandon_after
        self._clock = clock
        self._lock = threading.Lock()
        self._snapshots: dict[str, AliasSnapshot] = {}
        self._checked: dict[str, float] = {}
        self._writes: dict[str, int] = {}  # invalidations by this process, per kb
        # kb -> (checked at, invalidations then) of a check that found no ontology
        self._absent: dict[str, tuple[float, int]] = {}
        self._running: dict[str, _Check] = {}
        self._failing: dict[str, _Outage] = {}
        #: Failed or timed-out version checks per kb since the process started (a metric).
        self.check_failures: dict[str, int] = {}

    def get(self, kb: str) -> AliasSnapshot | None:
        """The current snapshot of ``kb``, or None when the kb has no ontology.

        Raises:
            DependencyError: the store is unreachable and this process holds no
                snapshot of ``kb`` yet.
        """
        now = self._clock()
        current = self._snapshots.get(kb)
        if current is not None and now - self._checked.get(kb, float("-inf")) < self._interval:
            return current
        if current is None and self._known_absent(kb, now):
            return None
        with self._lock:
            current = self._snapshots.get(kb)
            checked = self._checked.get(kb)
            if current is not None and checked is not None and now - checked < self._interval:
                return current
            # A kb never loaded, or one this process wrote to, must see the store.
            patient = current is None or checked is None
            writes = self._writes.get(kb, 0)
            check = self._running.get(kb)
            if (check is None or check.future.done() or check.writes != writes
                    or now - check.started > self._abandon_after):
                check = _Check(Future(), now, writes)
                self._running[kb] = check
                threading.Thread(target=self._check, args=(kb, current, check), daemon=True,
                                 name=f"alias-check-{kb}").start()
            elif not patient:
                return current  # a check is on its way; its result serves the next turns
        try:
            return check.future.result(timeout=None if patient else self._timeout)
        except FutureTimeout:
            with self._lock:
                self._failed(kb, current, f"no answer within {self._timeout:g} s "
                                          "(the check goes on in the background)", now)
            return current
        except DependencyError:
            if current is None:
                raise
            return current  # counted and logged by the check

    def _check(self, kb: str, current: AliasSnapshot | None, check: _Check) -> None:
        """Thread body: read the kb's state and patch or reload; install the result."""
        try:
            fresh = self._load(kb, current)
        except BaseException as exc:
            with self._lock:
                if self._running.get(kb) is check:
                    del self._running[kb]
                if isinstance(exc, DependencyError) and current is not None:
                    self._failed(kb, current, str(exc), self._clock())
            check.future.set_exception(exc)
            return
        with self._lock:
            if self._running.get(kb) is check:
                del self._running[kb]
            if fresh is None:
                self._snapshots.pop(kb, None)
                self._checked.pop(kb, None)
                self._absent[kb] = (check.started, check.writes)
            else:
                self._absent.pop(kb, None)
                held = self._snapshots.get(kb)
                # A check that ran long must not replace what a later one installed.
                if held is None or held.uid != fresh.uid or fresh.version >= held.version:
                    self._snapshots[kb] = fresh
                if self._writes.get(kb, 0) == check.writes:
                    self._checked[kb] = self._clock()
            self._recovered(kb)
            result = self._snapshots.get(kb)
        check.future.set_result(result)

    def _known_absent(self, kb: str, now: float) -> bool:
        """Whether a check less than ``check_interval`` ago found no ontology for ``kb``
        and this process has not written to it since (every turn of a kb served without
        an ontology asked the store otherwise, and waited for the answer)."""
        absent = self._absent.get(kb)
        return (absent is not None and now - absent[0] < self._interval
                and absent[1] == self._writes.get(kb, 0))

    def _load(self, kb: str, current: AliasSnapshot | None) -> AliasSnapshot | None:
        state = self._store.kb_state(kb)
        if state is None:
            return None
        if current is not None and (current.version, current.uid) == (state.version, state.uid):
            return current
        delta = None
        if current is not None and current.uid == state.uid and state.version > current.version:
            delta = self._store.linking_delta(kb, current.version, current.uid)
        if delta is not None:
            return current.patched(delta)
        return AliasSnapshot.from_linking_data(kb, self._store.linking_data(kb), **self._fuzzy)

    def _failed(self, kb: str, current: AliasSnapshot | None, error: str, now: float) -> None:
        """Count and log a failed check (under the lock); try again after the interval."""
        self.check_failures[kb] = self.check_failures.get(kb, 0) + 1
        held = current.version if current is not None else None
        outage = self._failing.get(kb)
        if outage is None:
            self._failing[kb] = _Outage(since=now, ok_at=self._checked.get(kb, now), error=error,
                                        logged_at=now)
            logger.warning("alias table check of kb %r failed; linking with the snapshot held "
                           "(version %s) until the store answers again: %s", kb, held, error)
        else:
            outage.error = error
            if now - outage.logged_at >= 60.0:
                outage.logged_at = now
                logger.warning("alias table check of kb %r still failing after %.0f s (%d failed "
                               "checks); linking with snapshot version %s: %s", kb,
                               now - outage.since, self.check_failures[kb], held, error)
        self._checked[kb] = now

    def _recovered(self, kb: str) -> None:
        outage = self._failing.pop(kb, None)
        if outage is not None:
            logger.warning("alias table check of kb %r works again after %.1f s", kb,
                           self._clock() - outage.since)

    def stale(self, kb: str) -> dict[str, object] | None:
        """None while checks of ``kb`` succeed; else how long (seconds) the snapshot held
        has gone unchecked against the store, and the last error."""
        outage = self._failing.get(kb)
        if outage is None:
            return None
        return {"stale_seconds": round(self._clock() - outage.ok_at, 3), "error": outage.error}

    def peek(self, kb: str) -> AliasSnapshot | None:
        """The snapshot this process holds now, without checking the store."""
        return self._snapshots.get(kb)

    def invalidate(self, kb: str) -> None:
        """Check the store on the next ``get`` (after this process wrote to ``kb``)."""
        with self._lock:
            self._writes[kb] = self._writes.get(kb, 0) + 1
            self._checked.pop(kb, None)


@dataclass
class _Check:
    """One version check of a kb in flight: its result, when it began, and how many
    invalidations had happened then (a check begun before a write does not count as
    having seen it)."""

    future: Future
    started: float
    writes: int


@dataclass
class _Outage:
    """A run of failed checks of one kb: when it began, the last good check, the error."""

    since: float
    ok_at: float
    error: str
    logged_at: float
