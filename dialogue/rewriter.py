"""The rewriter protocol: one typed request in, one proposed standalone query out.

Implemented by the rules rewriter (dialogue/rewrite.py) and the LLM rewriter
(dialogue/llm_rewriter.py); :class:`dialogue.rewrite_chain.RewriteChain` tries
them in order and validates what they propose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from dialogue.classify import TurnKind
from dialogue.policy.decision import QuestionReading
from dialogue.state import SessionState
from kg.aliases import AliasSnapshot
from kg.linker import LinkResult
from kg.mentions import Detection

Source = Literal["rules", "llm", "original"]


@dataclass(frozen=True)
class Proposal:
    """A rewriter's standalone query (or several: one per intent) and the
    entities it is about."""

    source: Source
    queries: tuple[str, ...]
    standalone: str
    entities: tuple[str, ...]
    how: str  # which rule (or which rewriter) produced it, for the trace
    note: str = ""


@dataclass(frozen=True)
class RewriteRequest:
    """What a rewriter is given: the planned turn, the session state (read only)
    and the snapshot.

    ``detection`` is the text to rewrite: the user's turn, or for a resumed
    clarification the question it interrupted, read once per chosen option in
    ``readings`` (``neither``: asked as first written). ``reference`` is the
    rules proposal, for a rewriter that is checked against it (the LLM).
    """

    kind: TurnKind
    detection: Detection
    links: LinkResult
    state: SessionState
    snapshot: AliasSnapshot
    turn: int
    readings: tuple[QuestionReading, ...] = ()
    neither: bool = False
    reference: Proposal | None = None

    @property
    def text(self) -> str:
        return self.detection.text

    def allowed(self, entities: tuple[str, ...] = ()) -> set[str]:
        """Every entity a rewrite may name: the turn's and the dialogue's."""
        state = self.state
        return {*entities, *state.focus, *state.alternates,
                *(e for record in state.recent for e in record.entities),
                *(e for line in state.summary for e in line.entities)}

    def context(self) -> list[str]:
        """Earlier text of the conversation: the summary, then the recent turns."""
        state = self.state
        return [*(line.text for line in state.summary),
                *(t for record in state.recent for t in (record.user, record.standalone))]


class Rewriter(Protocol):
    def propose(self, request: RewriteRequest) -> Proposal:
        """The standalone query for the request's turn.

        Raises:
            ReferentError: a dependency of the rewriter failed (the chain falls back).
        """
        ...
