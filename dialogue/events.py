"""What a turn tells the rest of the server, as typed events.

The engine emits these beside the turn's result (``TurnResult.events``, never
serialized): the metrics (api/metrics.py) and the clarification analytics
(analytics/clarifications.py) consume them instead of reading paths in the trace,
so the trace can change shape without either of them noticing.

    TurnEvent
     ├── StagesTimed           every turn: stage timings, alias table version
     ├── ClarificationAsked    the turn asked "which one?"
     ├── ClarificationAnswered the turn answered (or walked away from) the pending question
     ├── FallbackTaken         a stage failed and the turn went on without it
     ├── RewriteFellBack       a rewrite was refused: the rules, or the user's own words, stood in
     └── DependencyDegraded    an optional endpoint (LLM, embedder, reranker) failed; the turn used its fallback
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Union


@dataclass(frozen=True)
class StagesTimed:
    timings_ms: Mapping[str, float]
    alias_version: int | None = None


@dataclass(frozen=True)
class ClarificationAsked:
    """``match``: how the mention matched its candidates (exact, normalized,
    fuzzy, focus, ...); ``options``: entity ids in the order offered."""

    mention: str
    mention_kind: str
    match: str
    options: tuple[str, ...]
    # The clarify model's verdict that asked, for a kb's recalibration (JSON: its
    # decision features, score, parameter set, most supported option); None without one.
    decision: str | None = None


@dataclass(frozen=True)
class ClarificationAnswered:
    """``kind``: chosen, both, neither, or not_an_answer (the user asked something
    else and the pending question was dropped)."""

    kind: Literal["chosen", "both", "neither", "not_an_answer"]
    entity_ids: tuple[str, ...] = ()
    how: str = ""


@dataclass(frozen=True)
class FallbackTaken:
    stage: str
    error: str
    fallback: str


@dataclass(frozen=True)
class RewriteFellBack:
    """``to``: rules (the LLM's rewrite was refused or failed) or original (the
    rules rewrite was refused too: the user's own words were searched)."""

    to: Literal["rules", "original"]


@dataclass(frozen=True)
class DependencyDegraded:
    dependency: Literal["llm", "embedder", "reranker"]


TurnEvent = Union[StagesTimed, ClarificationAsked, ClarificationAnswered, FallbackTaken,
                  RewriteFellBack, DependencyDegraded]
