"""What a conversation has read: each text's mentions, detected once.

Mention detection runs over the user's words once per turn. The later stages that
need the mentions of a text (the standalone query written for the turn, the previous
turn's query an ellipsis borrows from, the question a clarification resumes) get them
from the turn's :class:`Reading` instead of detecting them again. The texts of earlier
turns come with the session: each turn record keeps what was read of its own texts
(:func:`stored`), and the next turn's reading starts from them (:func:`seeded`), so
nothing a conversation said is parsed twice while the alias snapshot stays the same.

A reading is bound to one snapshot (its kb, uid and version): after an alias refresh
the earlier texts are read again against the new aliases. It is bound as well to the
detection's own vocabulary (the cue words and the code that reads them): a session
saved before an upgrade that changed them is read again, not trusted.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from hashlib import sha256
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from kg.aliases import AliasSnapshot
    from understanding.mentions import Detection, Mention

# Stored readings carry this format; a stored reading of another format is ignored
# (the text is read again), so sessions saved before or after a change still load.
READING_FORMAT = 1

_CURRENT: ContextVar[Reading | None] = ContextVar("referent_reading", default=None)


@cache
def vocabulary() -> str:
    """A fingerprint of what mention detection reads with: its module and the language
    data (``common/language``). Computed once per process."""
    import common.language
    import understanding.mentions

    digest = sha256()
    files = [Path(understanding.mentions.__file__),
             *sorted(Path(common.language.__file__).parent.iterdir())]
    for path in files:
        if path.is_file() and path.suffix in {".py", ".json", ".txt", ".tsv"}:
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def snapshot_key(snapshot: AliasSnapshot) -> list[Any]:
    """What a stored reading must match to stand for a detection against ``snapshot``."""
    return [snapshot.kb, snapshot.uid, snapshot.version]


class Reading:
    """The detections of one turn: ``(text, with aliases?)`` → Detection."""

    def __init__(self, snapshot: AliasSnapshot) -> None:
        self.snapshot = snapshot
        self.key = snapshot_key(snapshot)
        self._seen: dict[tuple[str, bool], Detection] = {}
        self.parsed = 0  # detections run during this reading (the rest were kept ones)

    def get(self, text: str, snapshot: AliasSnapshot | None) -> Detection | None:
        if snapshot is not None and snapshot is not self.snapshot:
            return None  # another snapshot: not this reading's business
        return self._seen.get((text, snapshot is not None))

    def put(self, detection: Detection, snapshot: AliasSnapshot | None) -> None:
        if snapshot is None or snapshot is self.snapshot:
            self._seen[(detection.text, snapshot is not None)] = detection

    def of_texts(self, texts: Iterable[str]) -> list[tuple[Detection, bool]]:
        """What was read of ``texts`` (with aliases and without), for storing."""
        wanted = set(texts)
        return [(d, aliased) for (text, aliased), d in self._seen.items() if text in wanted]


def current() -> Reading | None:
    """The reading of the turn being played in this context, if any."""
    return _CURRENT.get()


@contextmanager
def reading(snapshot: AliasSnapshot, kept: Iterable[dict[str, Any]] = ()) -> Iterator[Reading]:
    """Detections in this block go through a :class:`Reading` of ``snapshot``, seeded with
    the stored readings ``kept`` (earlier turns') that were made against it."""
    this = Reading(snapshot)
    for item in kept:
        seeded = _loaded(item, this.key)
        if seeded is not None:
            this._seen[(seeded[0].text, seeded[1])] = seeded[0]
    token = _CURRENT.set(this)
    try:
        yield this
    finally:
        _CURRENT.reset(token)


def stored(detection: Detection, aliased: bool, key: list[Any]) -> dict[str, Any]:
    """A detection as the session keeps it (JSON)."""
    return {"format": READING_FORMAT, "vocabulary": vocabulary(),
            "snapshot": key if aliased else None,
            "text": detection.text, "ellipsis": detection.ellipsis,
            "mentions": mention_rows(detection.mentions)}


def mention_rows(mentions: Iterable[Mention]) -> list[list[Any]]:
    """Mentions as compact JSON rows: kind, text, start, end, entity ids, value, similarity,
    alias."""
    return [[m.kind.value, m.text, m.start, m.end, list(m.entity_ids), m.value, m.similarity,
             m.alias] for m in mentions]


def mentions_from_rows(rows: Iterable[Sequence[Any]]) -> tuple[Mention, ...]:
    """The mentions of :func:`mention_rows` (raises KeyError, TypeError or ValueError on
    malformed rows)."""
    from understanding.mentions import Mention, MentionKind

    return tuple(Mention(MentionKind(kind), str(text), int(start), int(end), tuple(ids), value,
                         float(similarity), alias)
                 for kind, text, start, end, ids, value, similarity, alias in rows)


def _loaded(item: dict[str, Any], key: list[Any]) -> tuple[Detection, bool] | None:
    """A stored detection, when its format and vocabulary are this process's and it was
    made against ``key`` (or without aliases); None otherwise, and for anything
    malformed."""
    from understanding.mentions import Detection

    if not isinstance(item, dict) or item.get("format") != READING_FORMAT \
            or item.get("vocabulary") != vocabulary():
        return None
    aliased = item.get("snapshot") is not None
    if aliased and item["snapshot"] != key:
        return None
    try:
        return Detection(str(item["text"]), mentions_from_rows(item["mentions"]),
                         bool(item["ellipsis"])), aliased
    except (KeyError, TypeError, ValueError):
        return None
