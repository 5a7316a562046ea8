"""What the API answers, as typed values (pydantic models).

They mirror the server's OpenAPI document (``TurnResult`` and its parts); a test
checks that their fields are the document's properties, so the two cannot
drift. Unknown fields a newer server adds are ignored, never an error.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Action = Literal["retrieve", "clarify", "no_answer"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class ClarifyOption(_Model):
    """One entity the user may mean."""

    id: str
    name: str
    description: str = ""


class Clarification(_Model):
    """The question the server asks instead of searching, with its options in the
    order it offered them: answer with the user's words ("个人版", "第二个")."""

    question: str
    mention: str
    options: list[ClarifyOption]

    def option_ids(self) -> list[str]:
        return [o.id for o in self.options]


class Evidence(_Model):
    """One retrieved chunk."""

    chunk_id: str
    doc_id: str
    score: float
    title: str = ""
    text: str = ""
    entity_ids: list[str] = Field(default_factory=list)
    query: str = Field(default="", description="the query that found it")
    seen_in_turn: int | None = Field(default=None, description=(
        "set when an earlier turn of the session showed this chunk: it came back because "
        "it answers the new question (drop it if you kept it from that turn)"))


class RewriteInfo(_Model):
    source: Literal["rules", "llm", "original"]
    accepted: bool
    checks: dict[str, bool] = Field(default_factory=dict)


class TurnResult(_Model):
    """One turn's outcome: ``action`` says what to do with it.

    - ``retrieve``: ``evidence`` (and ``context``, packed for a prompt) answer
      ``standalone``, the turn rewritten to stand alone;
    - ``clarify``: ``clarification`` holds the question to show the user; send
      their answer as the next turn of the same session;
    - ``no_answer``: nothing in the kb answers it well enough.
    """

    session: str
    turn: int
    user: str
    action: Action
    standalone: str
    queries: list[str]
    entities: list[str]
    clarification: Clarification | None = None
    evidence: list[Evidence] = Field(default_factory=list)
    rewrite: RewriteInfo
    context: str = ""
    context_tokens: int = 0
    latency_ms: float = 0.0
    replayed: bool = Field(default=False, description=(
        "the answer stored for this turn, returned to a retry with the same Idempotency-Key"))
    warnings: list[str] = Field(default_factory=list)
    trace: dict[str, Any] = Field(default_factory=dict)


class AliasHit(_Model):
    """An entity found by alias search (admin keys only)."""

    id: str
    name: str
    type: str
    matched: str
    score: float
    ambiguous: bool


class AliasSearch(_Model):
    query: str
    mode: Literal["exact", "prefix", "fuzzy"]
    version: int | None
    hits: list[AliasHit]


class ImportReport(_Model):
    """What an ontology import did (or, with ``dry_run``, would do)."""

    types_written: int
    entities_added: int
    entities_changed: int
    entities_unchanged: int
    relations: int
    confusables: int
    version: int | None
    changed: bool
    dry_run: bool
