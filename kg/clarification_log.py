"""The clarification log in Neo4j: which questions Referent asked and how users answered.

One ``(:Clarification {kb, session, turn})`` node per question, shared by every
API instance of the kb (the session id is stored hashed: the log is for
counting, not for finding a conversation again)::

    kind        alias | pronoun | implicit   what was ambiguous
    mention     the text the user wrote (A产品)
    alias       the alias key it matched (a产品), None for pronouns
    match       exact | normalized | fuzzy | focus ...
    candidates  the entity ids offered, sorted
    answer      chosen | both | neither | new_question (None: not answered yet)
    chosen      the entity ids the answer picked
    how         how the answer was read (ordinal 第一个, distinguishing word, ...)

Every statement is in :mod:`kg.neo4j_queries`, with parameters only.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import neo4j

from common.errors import NotFoundError
from common.ids import check_kb
from kg import neo4j_queries as q
from kg.neo4j_store import Neo4jOntologyStore

ANSWERS = ("chosen", "both", "neither", "new_question")


def session_key(kb: str, session_id: str) -> str:
    """The stored form of a session id: enough to pair a question with its answer."""
    return hashlib.sha256(f"{kb}\x00{session_id}".encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Asked:
    """A clarification question, as the turn that asked it saw it."""

    kb: str
    session_id: str
    turn: int
    at: datetime
    kind: str
    mention: str
    alias: str | None
    match: str
    candidates: tuple[str, ...]
    # The clarify model's verdict that asked (JSON: features, score, params, top option).
    decision: str | None = None


@dataclass(frozen=True)
class Answered:
    """What the next turn of the session made of the question (``turn`` is the question's)."""

    kb: str
    session_id: str
    turn: int
    at: datetime
    answer: str
    chosen: tuple[str, ...]
    how: str


@dataclass(frozen=True)
class CountRow:
    """Clarifications of one kind/alias/candidate set that ended one way, counted."""

    kind: str
    alias: str | None
    candidates: tuple[str, ...]
    answer: str  # one of ANSWERS, or "open"
    chosen: tuple[str, ...]
    count: int
    mentions: tuple[str, ...]
    matches: tuple[str, ...]
    last_asked: str | None


@dataclass(frozen=True)
class RecentClarification:
    """One question as the log keeps it (the session left out)."""

    asked_at: str | None
    kind: str
    mention: str
    alias: str | None
    match: str | None
    candidates: tuple[str, ...]
    answer: str  # one of ANSWERS, or "open"
    chosen: tuple[str, ...]
    how: str | None


@dataclass(frozen=True)
class RecordedDecision:
    """An answered question and the verdict that asked it (JSON, see :class:`Asked`)."""

    decision: str
    answer: str
    chosen: tuple[str, ...]


@dataclass(frozen=True)
class StoredParams:
    params: str  # JSON parameter file
    report: str  # JSON report of the recalibration
    fitted_at: str | None


class ClarificationLog:
    """Writes and reads of the clarification log, through the ontology store's driver."""

    def __init__(self, store: Neo4jOntologyStore) -> None:
        self._store = store

    def record_asked(self, event: Asked) -> None:
        check_kb(event.kb)
        asked = {"asked_at": event.at, "kind": event.kind, "mention": event.mention,
                 "alias": event.alias, "match": event.match,
                 "candidates": sorted(event.candidates)}
        if event.decision is not None:
            asked["decision"] = event.decision
        self._write("record a clarification", q.CLARIFICATION_ASKED, kb=event.kb,
                    session=session_key(event.kb, event.session_id), turn=event.turn, asked=asked)

    def record_answer(self, event: Answered) -> None:
        check_kb(event.kb)
        if event.answer not in ANSWERS:
            raise ValueError(f"unknown answer kind {event.answer!r}")
        self._write("record a clarification answer", q.CLARIFICATION_ANSWERED, kb=event.kb,
                    session=session_key(event.kb, event.session_id), turn=event.turn,
                    answer=event.answer, chosen=list(event.chosen), how=event.how, at=event.at)

    def counts(self, kb: str, since: datetime | None = None) -> list[CountRow]:
        """The questions asked since ``since`` (all when None), grouped and counted."""
        check_kb(kb)

        def work(tx: neo4j.ManagedTransaction) -> list[CountRow]:
            return [CountRow(kind=r["kind"], alias=r["alias"],
                             candidates=tuple(r["candidates"] or ()), answer=r["answer"],
                             chosen=tuple(r["chosen"]), count=r["n"],
                             mentions=tuple(m for m in r["mentions"] if m is not None),
                             matches=tuple(m for m in r["matches"] if m is not None),
                             last_asked=_iso(r["last_asked"]))
                    for r in tx.run(q.CLARIFICATION_COUNTS, kb=kb, since=since)]

        return self._store._read_tx("read the clarification log", work)

    def recent(self, kb: str, *, since: datetime | None = None,
               limit: int = 20) -> list[RecentClarification]:
        """The last ``limit`` questions asked, newest first."""
        check_kb(kb)

        def work(tx: neo4j.ManagedTransaction) -> list[RecentClarification]:
            return [RecentClarification(
                        asked_at=_iso(r["asked_at"]), kind=r["kind"], mention=r["mention"],
                        alias=r["alias"], match=r["match"],
                        candidates=tuple(r["candidates"] or ()), answer=r["answer"],
                        chosen=tuple(r["chosen"]), how=r["how"])
                    for r in tx.run(q.CLARIFICATION_RECENT, kb=kb, since=since, limit=limit)]

        return self._store._read_tx("read the clarification log", work)

    def decisions(self, kb: str, *, limit: int = 100_000) -> list[RecordedDecision]:
        """The answered questions whose asking verdict was recorded, oldest first."""
        check_kb(kb)

        def work(tx: neo4j.ManagedTransaction) -> list[RecordedDecision]:
            return [RecordedDecision(decision=r["decision"], answer=r["answer"],
                                     chosen=tuple(r["chosen"]))
                    for r in tx.run(q.CLARIFICATION_DECISIONS, kb=kb, limit=limit)]

        return self._store._read_tx("read the clarification decisions", work)

    def save_params(self, kb: str, params: str, report: str) -> None:
        """Store the kb's own clarify parameters (JSON) and the report of their fit."""
        check_kb(kb)

        def work(tx: neo4j.ManagedTransaction) -> None:
            if tx.run(q.CLARIFY_PARAMS_SAVE, kb=kb, params=params, report=report).single() is None:
                raise NotFoundError(f"knowledge base {kb!r} does not exist")

        self._store._write_tx("store the clarify parameters", work)

    def params(self, kb: str) -> StoredParams | None:
        """The kb's own clarify parameters, or None when it uses the shipped ones."""
        check_kb(kb)

        def work(tx: neo4j.ManagedTransaction) -> StoredParams | None:
            r = tx.run(q.CLARIFY_PARAMS_GET, kb=kb).single()
            return None if r is None else StoredParams(r["params"], r["report"],
                                                       _iso(r["fitted_at"]))

        return self._store._read_tx("read the clarify parameters", work)

    def delete_params(self, kb: str) -> bool:
        """Back to the shipped parameters; True when the kb had its own."""
        check_kb(kb)

        def work(tx: neo4j.ManagedTransaction) -> bool:
            return tx.run(q.CLARIFY_PARAMS_DELETE, kb=kb).single()["deleted"] > 0

        return self._store._write_tx("delete the clarify parameters", work)

    def prune(self, before: datetime, *, limit: int = 10_000) -> int:
        """Delete up to ``limit`` questions (of every kb) asked before ``before``."""
        def work(tx: neo4j.ManagedTransaction) -> int:
            return tx.run(q.CLARIFICATION_PRUNE, before=before, limit=limit).single()["deleted"]

        return self._store._write_tx("prune the clarification log", work)

    def _write(self, what: str, query: str, **params: Any) -> None:
        def work(tx: neo4j.ManagedTransaction) -> None:
            tx.run(query, **params).consume()

        self._store._write_tx(what, work)


def _iso(value: Any) -> str | None:
    if value is None:
        return None
    return value.iso_format() if hasattr(value, "iso_format") else str(value)
