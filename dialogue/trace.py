"""The turn's trace as typed parts: what every stage saw and decided.

The trace is part of the public answer (``TurnResult.trace``, and
``GET .../turns/{n}/trace``), so its shape is declared here and published in
the OpenAPI document (``TurnTrace``). The engine writes each part from these
models; every part allows further keys, so a stage may say more without
breaking a client that reads only what is declared. Code that reacts to a turn
(metrics, analytics) reads the typed events of dialogue/events.py, never paths
in this trace.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow")

    def dump(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class MentionTrace(_Part):
    kind: str = Field(description="alias, pronoun, ordinal, attribute, time, negation, ...")
    text: str
    start: int
    end: int


class CandidateTrace(_Part):
    id: str
    score: float
    source: str = Field(description="how the candidate was found: exact, normalized, fuzzy, "
                                    "focus, listed, and whether the context fit decided")


class LinkTrace(_Part):
    mention: str
    kind: str
    resolved: list[str] = Field(description="entity ids the mention was linked to ([] if ambiguous)")
    reason: str
    candidates: list[CandidateTrace]


class ClarifyGateTrace(_Part):
    """Why the turn asked which entity was meant: the gate's reasons and features."""

    mention: str
    reasons: list[str]
    features: dict[str, Any] = Field(default_factory=dict)


class ClarificationAnswerTrace(_Part):
    kind: str = Field(description="chosen, both, neither or not_an_answer")
    entity_ids: list[str]
    how: str
    pending_question: str
    note: str | None = None


class RewriteAttempt(_Part):
    source: str = Field(description="llm or rules")
    queries: list[str] | None = None
    checks: dict[str, bool] | None = None
    error: str | None = None


class RewriteTrace(_Part):
    how: str
    note: str | None = None
    tried: list[RewriteAttempt] = Field(default_factory=list)
    fallback: str | None = Field(None, description="set when every rewrite was refused")


class ConsumedTrace(_Part):
    granularity: str = Field(description="chunk or doc")
    lifted: bool = Field(description="a revisit: earlier evidence may come back")
    excluded: int | None = Field(None, description="used chunks (or, at doc granularity, "
                                 "documents) left out")
    intent: str | None = Field(None, description="new, more (everything shown left out) or "
                               "revisit (shown evidence first, never no_answer)")
    shown: int | None = Field(None, description="chunks shown earlier that competed again")


class RetrievalTrace(_Part):
    """Per query: BM25/dense pool sizes, the entity filter applied or relaxed; then
    near-duplicates dropped, the no-answer check and the dual path."""

    queries: list[dict[str, Any]] = Field(default_factory=list)
    entity_filter: list[str] | None = None
    no_answer: dict[str, Any] | None = None
    dual_path: dict[str, Any] | None = None
    dropped_negated: int | None = None
    novelty: dict[str, Any] | None = Field(None, description=(
        "shown chunks that competed, came back (with the turn that showed them) or stayed out"))
    history: dict[str, Any] | None = Field(None, description=(
        "a turn that linked nothing: the query after the previous turn's, the turn's own "
        "rare words, whether it follows up, and the weight of that ranking"))
    names_added: list[str] | None = Field(None, description=(
        "queries with the entities' names in the other script added"))


class FallbackTrace(_Part):
    stage: str = Field(description="detect, link, policy, rewrite, retrieve, pack or apply")
    error: str = Field(description="the exception's type name")
    fallback: str = Field(description="what the turn used instead")


class TurnTrace(_Part):
    """One turn's trace. Stage timings are in milliseconds."""

    alias_version: int | None = None
    alias_snapshot_stale: dict[str, Any] | None = Field(
        None, description="Neo4j unreachable: linked with the alias snapshot this process holds")
    focus_before: list[str] = Field(default_factory=list)
    timings_ms: dict[str, float] = Field(default_factory=dict)
    mentions: list[MentionTrace] = Field(default_factory=list)
    links: list[LinkTrace] = Field(default_factory=list)
    classification: str | None = None
    topic_shift: dict[str, Any] | None = None
    clarify_gate: ClarifyGateTrace | None = None
    clarify_decisions: list[ClarifyGateTrace] | None = Field(
        None, description="every ambiguous link the clarify gate judged: ask or resolve, "
        "with its features and score")
    clarification_answer: ClarificationAnswerTrace | None = None
    rewrite: RewriteTrace | None = None
    consumed: ConsumedTrace | None = None
    retrieval: RetrievalTrace | None = None
    no_answer: dict[str, Any] | None = None
    slots: dict[str, Any] | None = None
    fallbacks: list[FallbackTrace] = Field(default_factory=list)
    collection_incomplete: dict[str, Any] | None = Field(
        None, description="an ingest into the kb started and did not finish: when, which file")


def openapi_schemas() -> dict[str, dict[str, Any]]:
    """``TurnTrace`` and its parts as OpenAPI component schemas."""
    schema = TurnTrace.model_json_schema(ref_template="#/components/schemas/{model}")
    parts = schema.pop("$defs", {})
    return {"TurnTrace": schema, **parts}
