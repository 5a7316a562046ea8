"""What a turn returns (docs/formats.md §4 plus the fields the API adds)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr

Action = Literal["retrieve", "clarify", "no_answer"]
# Keys a results line (docs/formats.md §4) may carry beyond ``results_line()``'s:
# the system that wrote it (eval --out with baselines) and a failed turn's error.
OPTIONAL_RESULTS_KEYS = frozenset({"system", "error"})


class ClarifyOption(BaseModel):
    id: str
    name: str
    description: str = ""


class Clarification(BaseModel):
    """A question back to the user, with the options as structured ids."""

    question: str
    mention: str
    options: list[ClarifyOption]


class EvidenceItem(BaseModel):
    chunk_id: str
    doc_id: str
    score: float
    title: str = ""
    text: str = ""
    entity_ids: list[str] = Field(default_factory=list)
    query: str = ""
    # Set when this chunk was shown on an earlier turn of the session and comes back
    # because it answers what this turn newly asks; a client that kept it may drop it.
    seen_in_turn: int | None = None


class RewriteInfo(BaseModel):
    source: Literal["rules", "llm", "original"]
    accepted: bool
    checks: dict[str, bool] = Field(default_factory=dict)


class TurnResult(BaseModel):
    """One turn's outcome. ``results_line`` gives exactly the docs/formats.md §4 record."""

    session: str
    turn: int
    user: str
    action: Action
    standalone: str
    queries: list[str]
    entities: list[str]
    clarification: Clarification | None = None
    evidence: list[EvidenceItem] = Field(default_factory=list)
    rewrite: RewriteInfo
    context: str = ""
    context_tokens: int = 0
    latency_ms: float = 0.0
    # True when this is the stored answer of a turn played before (a retry with the same
    # Idempotency-Key or turn number), not a second play of the turn.
    replayed: bool = False
    # Things the caller should know about this answer, in words: e.g. the kb's
    # collection is incomplete (an ingest was interrupted), so evidence may be missing.
    warnings: list[str] = Field(default_factory=list)
    # Its shape is dialogue.trace.TurnTrace (so the OpenAPI document shows it).
    trace: dict[str, Any] = Field(default_factory=dict)
    # What the turn tells the metrics and the analytics (dialogue/events.py); not serialized.
    _events: list[Any] = PrivateAttr(default_factory=list)

    @property
    def events(self) -> list[Any]:
        """The turn's typed events (dialogue.events.TurnEvent), in the order they happened."""
        return self._events

    def results_line(self) -> dict[str, Any]:
        """The record `referent eval` writes (docs/formats.md §4)."""
        return {
            "session": self.session, "turn": self.turn, "user": self.user,
            "action": self.action, "standalone": self.standalone, "queries": self.queries,
            "entities": self.entities,
            "clarification": self.clarification.model_dump() if self.clarification else None,
            "evidence": [{"chunk_id": e.chunk_id, "doc_id": e.doc_id, "score": round(e.score, 4),
                          **({"seen_in_turn": e.seen_in_turn} if e.seen_in_turn is not None else {})}
                         for e in self.evidence],
            "rewrite": self.rewrite.model_dump(),
            "context_tokens": self.context_tokens,
            "latency_ms": round(self.latency_ms, 2),
        }
