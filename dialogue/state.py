"""Session state: what Referent remembers between the turns of one conversation.

Bounded whatever the conversation's length: the last K turns verbatim, an
extractive summary of a few older ones, the focus entities, the slots (each
with the turn that set it), the consumed-evidence window and at most one
pending clarification.

A session belongs to its owner: the key that made it and the end user that key
said it speaks for (``subject``). Only the owner continues it, reads its traces
or deletes it; an admin of its kb may too. Sessions saved before owners existed
have none, and the first caller to continue one becomes its owner.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class _Kept(dict):
    """A turn's frame as stored: written once, never changed in place (a new turn
    writes a new one), so copies of the session state share it."""

    def __deepcopy__(self, memo: dict[int, Any]) -> _Kept:
        return self


class _KeptList(list):
    """What was read of a turn's texts, replaced whole, never changed in place."""

    def __deepcopy__(self, memo: dict[int, Any]) -> _KeptList:
        return self


class TurnRecord(BaseModel):
    index: int
    user: str
    standalone: str
    action: str
    entities: list[str] = Field(default_factory=list)
    # Titles of the evidence the turn found: words a later turn without a name may inherit.
    found: list[str] = Field(default_factory=list)
    # The turn's TurnFrame (understanding/frame.py, JSON with its format number) and the
    # mentions read of its texts (understanding/reading.py): a later turn reads them
    # instead of parsing the words again. Empty in sessions saved before frames.
    frame: dict[str, Any] | None = None
    read: list[dict[str, Any]] = Field(default_factory=list)
    # In a kb without an ontology, the topic the turn left behind: its phrases, most
    # salient first, each with its worth (dialogue/topics.py).
    topic: dict[str, float] = Field(default_factory=dict)

    @field_validator("frame", mode="after")
    @classmethod
    def _frame_kept(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if value is None else _Kept(value)

    @field_validator("read", mode="after")
    @classmethod
    def _read_kept(cls, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return _KeptList(_Kept(item) for item in value)

    def keep(self, *, frame: dict[str, Any] | None = None,
             read: list[dict[str, Any]] | None = None) -> None:
        """Keep the turn's frame and what was read of its texts (each replaced whole)."""
        if frame is not None:
            self.frame = _Kept(frame)
        if read is not None:
            self.read = _KeptList(_Kept(item) for item in read)


class ShownRecord(BaseModel):
    """A chunk the session was shown: on which turn and for which queries (novelty)."""

    chunk_id: str
    doc_id: str
    turn: int
    query: str


class Slot(BaseModel):
    """One thing the conversation has fixed, and the turn that fixed it.

    ``values`` are entity ids (focus, negated, comparison) or the user's words
    (attribute, time). ``how`` is ``said`` (the turn said it), ``carried`` (an
    earlier turn said it and nothing replaced it since: ``turn`` stays that
    earlier turn) or ``corrected`` (a correction replaced the earlier value).
    """

    values: list[str]
    turn: int
    how: str = "said"


class Slots(BaseModel):
    """The structured slots a follow-up turn may lean on (dialogue/slots.py fills them)."""

    focus: Slot | None = None        # the entities the conversation is about
    negated: Slot | None = None      # entities the user corrected away from
    attribute: Slot | None = None    # what is asked about them: 销售额, 价格, 申请条件
    time: Slot | None = None         # times and versions: 7月, 2024版, last year
    comparison: Slot | None = None   # what they are compared with: 和华北区比

    def as_trace(self) -> dict[str, dict[str, object]]:
        return {name: slot.model_dump() for name, slot in self if slot is not None}


class SummaryLine(BaseModel):
    """An older turn, reduced to what later turns may need: its entities, numbers,
    times and attributes, in the words of its standalone query (extractive)."""

    turn: int
    text: str
    entities: list[str] = Field(default_factory=list)


class PendingClarification(BaseModel):
    """A question Referent asked and the user's question it will resume."""

    turn: int
    question_text: str  # the user's original question, resumed after the answer
    mention: str  # the ambiguous mention as the user wrote it
    options: list[str]  # entity ids, in the order they were offered


class SessionOwner(BaseModel):
    """Who a session belongs to: a key (``env:<name>`` or ``key:<id>``) and, when the
    caller asserted one, the end user it speaks for."""

    model_config = ConfigDict(frozen=True)

    key: str
    subject: str | None = None


@dataclass(frozen=True)
class SessionAccess:
    """The sessions a caller may use: its own (same key, same subject), or every one of
    the kb when ``sees_all`` (an admin of the kb)."""

    owner: SessionOwner
    sees_all: bool = False

    def permits(self, stored: SessionOwner | None) -> bool:
        """May this caller use a session (or trace) owned by ``stored``? None: no owner yet."""
        return stored is None or self.sees_all or stored == self.owner


class PlayedTurn(BaseModel):
    """What identifies a played turn to a client that retries it: the turn number, the
    idempotency key it came with (if any), a fingerprint of its request (text and k)
    and, for the newest few, the answer it got (TurnResult JSON), so that a retry
    returns that answer instead of playing a second turn."""

    turn: int
    key: str | None = None
    fingerprint: str
    answer: str | None = None


class SessionState(BaseModel):
    kb: str
    session_id: str
    owner: SessionOwner | None = None  # None: never saved by a caller, or saved before owners
    version: int = 0  # optimistic concurrency: bumped on every save
    turn_count: int = 0
    recent: list[TurnRecord] = Field(default_factory=list)
    focus: list[str] = Field(default_factory=list)  # most salient first
    # Earlier entities still in play after a bare name ("the Night Owls"): a pronoun
    # may mean them as well as the focus.
    alternates: list[str] = Field(default_factory=list)
    listed: list[str] = Field(default_factory=list)  # entities last mentioned together
    # Entities the user corrected away from (不是A，是B): their evidence is not shown again.
    negated: list[str] = Field(default_factory=list)
    consumed: list[str] = Field(default_factory=list)  # chunk ids already returned, oldest first
    consumed_docs: list[str] = Field(default_factory=list)  # their doc ids, oldest first
    # Every chunk shown within the window, with the turn and query that showed it, oldest
    # first; ``used``: the ones the client said it used (consumed for good).
    shown: list[ShownRecord] = Field(default_factory=list)
    used: list[str] = Field(default_factory=list)
    pending: PendingClarification | None = None
    slots: Slots = Field(default_factory=Slots)
    summary: list[SummaryLine] = Field(default_factory=list)  # older turns, oldest first
    # The last turns played, oldest first, saved with the state in the same write: a
    # retried request finds its answer here (see TurnEngine.handle).
    played: list[PlayedTurn] = Field(default_factory=list)

    @property
    def last_turn(self) -> TurnRecord | None:
        return self.recent[-1] if self.recent else None

    def played_turn(self, *, key: str | None = None, turn: int | None = None) -> PlayedTurn | None:
        """The kept record of the turn with this idempotency key, or with this number."""
        for record in reversed(self.played):
            if (key is not None and record.key == key) or (key is None and record.turn == turn):
                return record
        return None

    def keep_played(self, record: PlayedTurn, *, keep: int, answers: int) -> None:
        """Keep ``record`` among the last ``keep`` played turns, only the newest
        ``answers`` of them with their answer (the answers are the bulky part)."""
        kept = [*self.played, record][-keep:]
        cut = len(kept) - answers
        self.played = [p.model_copy(update={"answer": None}) if i < cut and p.answer else p
                       for i, p in enumerate(kept)]

    def remember(self, record: TurnRecord, *, keep_turns: int) -> list[TurnRecord]:
        """Keep ``record`` among the last ``keep_turns``; returns the records that fell out."""
        kept = self.recent + [record]
        self.recent = kept[-keep_turns:]
        return kept[:-keep_turns]

    def consume(self, chunk_ids: list[str], *, window: int,
                doc_ids: list[str] | None = None) -> None:
        """Remember returned items, keeping the last ``window`` chunk ids and doc ids.

        A document returned again moves to the newest end of the doc window.
        """
        fresh = [c for c in chunk_ids if c not in self.consumed]
        self.consumed = (self.consumed + fresh)[-window:] if window else []
        if doc_ids is not None:
            recent = list(dict.fromkeys(doc_ids))
            kept = [d for d in self.consumed_docs if d not in recent]
            self.consumed_docs = (kept + recent)[-window:] if window else []

    def show(self, records: list[ShownRecord], *, window: int) -> None:
        """Remember what a turn showed (a chunk shown again moves to the newest end)."""
        ids = {r.chunk_id for r in records}
        kept = [r for r in self.shown if r.chunk_id not in ids]
        self.shown = (kept + records)[-window:] if window else []
        live = {r.chunk_id for r in self.shown}
        self.used = [c for c in self.used if c in live]

    def mark_used(self, chunk_ids: list[str]) -> None:
        self.used = list(dict.fromkeys([*self.used, *chunk_ids]))
