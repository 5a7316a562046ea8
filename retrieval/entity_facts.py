"""What the corpus states about each entity, read from the kb's own chunks.

An ontology lists the attributes of a *type* (a film type has 导演, 主演 and
出生日期, because people and films share it); the corpus says which of them a
given entity actually has: the chunks tagged with that entity alone that name
the attribute (``X的导演：Y``, ``白金卡年费…``). The dialogue policy uses this to
tell which of the entities in play a question fits ("导演是谁？" after a film and
its lead actor is about the film, whose passages state a director).

Built from the index on first use per kb and rebuilt when the kb's chunk count
or its alias snapshot changes, like the term statistics of retrieval/novelty.py.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from common.language import cues
from kg.aliases import AliasSnapshot
from retrieval.index import VectorIndex
from retrieval.models import Chunk

# Seconds a kb's facts are trusted before the chunk count is checked again.
_TTL = 30.0
# A kb larger than this is read only this far (the facts of the rest are unknown).
_MAX_CHUNKS = 300_000


# Passages kept per (entity, attribute), and how much of each: what a turn may quote.
_PASSAGES_PER_FACT = 8
_PASSAGE_CHARS = 400

# An attribute that at least this many entities' passages state, and no more than this
# share of them people's, marks a thing (上映时间, 门票): what states it is no person.
_THING_MIN_ENTITIES = 3
_THING_MAX_PERSON_SHARE = 0.05
# A person's passages speak of a man (他, he) or a woman (她, she) at least this often, and
# this many times as often as of the other, for the pronoun's sex to tell people apart.
_SEX_MIN_WORDS = 1
_SEX_MAJORITY = 2


@dataclass(frozen=True)
class EntityFacts:
    """Per entity: the attributes of its type that its own passages state."""

    stated: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # (entity, attribute) -> the normalized text of the entity's own passages stating it.
    passages: Mapping[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    # Per entity whose passages speak of it as a man or a woman: "m" or "f" (see sex).
    sexes: Mapping[str, str] = field(default_factory=dict)
    # Per entity: the attributes stated by passages titled with its name that are tagged
    # with other entities too (its page naming its director). They add to what an entity
    # with passages of its own states; they do not make an entity known, nor say
    # whether it is a person or a thing.
    headed: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # Per entity whose passages say so: True a person, False a thing (see is_person).
    kinds: Mapping[str, bool] = field(init=False, repr=False, compare=False)
    # Attributes that mark a thing in this kb (people's passages never state them).
    thing_marks: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        kinds, marks = _kinds(self.stated)
        object.__setattr__(self, "kinds", kinds)
        object.__setattr__(self, "thing_marks", marks)

    def states(self, entity_id: str, attributes: Iterable[str]) -> bool | None:
        """Whether ``entity_id``'s own passages state one of ``attributes``; None when
        the corpus has no passage about it alone (nothing can be said)."""
        own = self.stated.get(entity_id)
        if own is None:
            return None
        own = own | self.headed.get(entity_id, frozenset())
        return any(a in own for a in attributes)

    def is_person(self, entity_id: str) -> bool | None:
        """Whether ``entity_id`` is a person, by its own passages: True when they state
        an attribute only a person has (a birth date, an occupation); False when they
        state one that the kb's people's passages (almost) never do (a release date, a
        ticket price); None otherwise (a band, a company, no passages of its own)."""
        return self.kinds.get(entity_id)

    def sex(self, entity_id: str) -> str | None:
        """"m" or "f" for a person whose own passages speak of a man or a woman (他 / 她,
        he / she) clearly more often than of the other, else None."""
        return self.sexes.get(entity_id) if self.is_person(entity_id) else None

    def passages_stating(self, entity_id: str, attribute: str) -> tuple[str, ...]:
        """The (normalized) text of ``entity_id``'s own passages that state ``attribute``."""
        return self.passages.get((entity_id, attribute), ())

    def asks_of_person(self, attributes: Iterable[str]) -> bool | None:
        """Whether a question about ``attributes`` is about a person (a birth date)
        or a thing (a release date, a ticket price) in this kb; None when it could
        be either or the kb has no people."""
        if not self.kinds:
            return None
        attributes = list(attributes)
        if any(a in self.thing_marks for a in attributes):
            return False
        if attributes and all(a.lower() in cues.PERSON_ATTRIBUTES for a in attributes):
            return True
        return None

    @classmethod
    def from_chunks(cls, chunks: Iterable[Chunk], snapshot: AliasSnapshot) -> EntityFacts:
        """Read the facts from ``chunks``: a chunk tagged with exactly one entity
        states the attributes of that entity's type it names (title or text); the
        first few such passages are kept per entity and attribute."""
        stated: dict[str, set[str]] = {}
        # What passages tagged with several entities state of the one they are titled
        # with (a film's page naming its director, ``X的导演：Y``).
        headed: dict[str, set[str]] = {}
        passages: dict[tuple[str, str], list[str]] = {}
        words: dict[str, list[int]] = {}  # entity -> [male words, female words]
        for chunk in chunks:
            if len(chunk.entity_ids) != 1:
                head = _titled_with(chunk, snapshot)
                if head is not None:
                    headed.setdefault(head, set()).update(_named_attributes(chunk, head, snapshot)[0])
                continue
            entity_id = chunk.entity_ids[0]
            entity = snapshot.entities.get(entity_id)
            if entity is None:
                continue
            own = stated.setdefault(entity_id, set())
            counts = words.setdefault(entity_id, [0, 0])
            whole = f"{chunk.title}\n{chunk.text}"
            counts[0] += len(cues.MALE_WORDS_RE.findall(whole))
            counts[1] += len(cues.FEMALE_WORDS_RE.findall(whole))
            found, text = _named_attributes(chunk, entity_id, snapshot)
            for attribute in found:
                own.add(attribute)
                kept = passages.setdefault((entity_id, attribute), [])
                if len(kept) < _PASSAGES_PER_FACT and text not in kept:
                    kept.append(text[:_PASSAGE_CHARS])
        sexes = {e: ("m" if m > f else "f") for e, (m, f) in words.items()
                 if max(m, f) >= _SEX_MIN_WORDS and max(m, f) >= _SEX_MAJORITY * min(m, f)}
        return cls({e: frozenset(a) for e, a in stated.items()},
                   {k: tuple(v) for k, v in passages.items()}, sexes,
                   {e: frozenset(a) for e, a in headed.items() if a})


def _titled_with(chunk: Chunk, snapshot: AliasSnapshot) -> str | None:
    """The one entity among ``chunk``'s tags whose name (or an alias) is the chunk's
    whole title: an entity's own page that names others; None when there is none."""
    if not chunk.title:
        return None
    named = snapshot.by_norm.get(snapshot.normalize(chunk.title), ())
    heads = [e for e in dict.fromkeys(chunk.entity_ids) if e in named]
    return heads[0] if len(heads) == 1 else None


def _named_attributes(chunk: Chunk, entity_id: str,
                      snapshot: AliasSnapshot) -> tuple[list[str], str]:
    """The attributes of ``entity_id``'s type that ``chunk``'s title or text names, in
    order, and that title and text normalized."""
    entity = snapshot.entities.get(entity_id)
    norm = snapshot.normalize_with_offsets(f"{chunk.title}\n{chunk.text}")
    if entity is None:
        return [], norm.text
    allowed = snapshot.type_attributes.get(entity.type, ())
    found = (snapshot.attribute_by_norm.get(key) for _, _, key in snapshot.attribute_matcher.find(norm))
    return [a for a in found if a is not None and a in allowed], norm.text


def _kinds(stated: Mapping[str, frozenset[str]]) -> tuple[dict[str, bool], frozenset[str]]:
    """People (their passages state a person's attribute) and things (theirs state an
    attribute that people's passages in this kb do not), and those attributes. No
    person, no thing: a kb without people says nothing either way."""
    persons = {e for e, own in stated.items()
               if any(a.lower() in cues.PERSON_ATTRIBUTES for a in own)}
    if not persons:
        return {}, frozenset()
    stating: dict[str, int] = {}
    by_persons: dict[str, int] = {}
    for entity_id, own in stated.items():
        for attribute in own:
            stating[attribute] = stating.get(attribute, 0) + 1
            if entity_id in persons:
                by_persons[attribute] = by_persons.get(attribute, 0) + 1
    marks = {a for a, n in stating.items()
             if n >= _THING_MIN_ENTITIES and by_persons.get(a, 0) <= _THING_MAX_PERSON_SHARE * n}
    kinds = {e: True for e in persons}
    kinds.update({e: False for e, own in stated.items() if e not in persons and own & marks})
    return kinds, frozenset(marks)


class EntityFactsCache:
    """One :class:`EntityFacts` per kb, read from the index lazily and thread-safely."""

    def __init__(self, index: VectorIndex) -> None:
        self._index = index
        self._lock = threading.Lock()
        # kb -> (facts, chunk count, snapshot key, checked at)
        self._facts: dict[str, tuple[EntityFacts, int, tuple, float]] = {}

    def get(self, kb: str, snapshot: AliasSnapshot) -> EntityFacts:
        """The facts of ``kb`` as tagged against ``snapshot``; empty when the kb has
        no chunks (the index's own errors propagate: the caller falls back)."""
        now = time.monotonic()
        key = (snapshot.uid, snapshot.version)
        cached = self._facts.get(kb)
        if cached is not None and cached[2] == key and now - cached[3] < _TTL:
            return cached[0]
        with self._lock:
            cached = self._facts.get(kb)
            if cached is not None and cached[2] == key and now - cached[3] < _TTL:
                return cached[0]
            if not self._index.has_collection(kb):
                return EntityFacts()
            size = self._index.count(kb)
            if cached is not None and cached[1] == size and cached[2] == key:
                self._facts[kb] = (cached[0], size, key, now)
                return cached[0]
            chunks = (c for i, c in enumerate(self._index.iter_chunks(kb)) if i < _MAX_CHUNKS)
            facts = EntityFacts.from_chunks(chunks, snapshot)
            self._facts[kb] = (facts, size, key, now)
            return facts
