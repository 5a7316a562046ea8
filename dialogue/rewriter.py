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
from dialogue.render import QuestionSlots
from dialogue.state import SessionState
from kg.aliases import AliasSnapshot
from understanding.linker import LinkResult
from understanding.mentions import Detection, MentionKind
from common.language import cues
from common.language.normalize import turn_language

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
    slots: QuestionSlots | None = None  # the slots it was rendered from, when it was


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

    def excluded(self, entities: tuple[str, ...] = ()) -> list[str]:
        """Entities the user corrected away from, this turn's correction included: a
        rewrite about ``entities`` must not name them."""
        state = self.state
        last = state.last_turn
        corrected = [e for e in (last.entities if last else ())
                     if self.kind is TurnKind.CORRECTION and e not in entities]
        return [e for e in dict.fromkeys([*state.negated, *corrected]) if e not in entities]

    def structure(self, entities: tuple[str, ...] = ()) -> dict[str, str]:
        """The turn's frame as a rewriter that is not the rules one is shown it: the
        subjects, the attribute, times and versions, what is compared, the negations and
        question words, the entities corrected away, the language, and the rendered
        standalone. A follow-up's slots are those the standalone was rendered from
        (the previous question's with the turn's put in)."""
        state, snapshot, detection = self.state, self.snapshot, self.detection
        rendered = self.reference.slots if self.reference else None

        def names(ids) -> str:
            return "、".join(snapshot.name(e) for e in ids)

        def slot(name: str) -> list[str]:
            value = getattr(state.slots, name)
            return list(value.values) if value is not None else []

        def said(kind: MentionKind) -> list[str]:
            return [m.text for m in detection.of(kind)]

        attribute = said(MentionKind.ATTRIBUTE) or slot("attribute")
        times = said(MentionKind.TIME) or slot("time")
        compared = [snapshot.name(e) for e in slot("comparison") if e not in entities]
        if rendered is not None:
            attribute, times = list(rendered.attribute) or attribute, list(rendered.times) or times
            compared = list(dict.fromkeys([*rendered.compared, *compared]))
        negations = said(MentionKind.NEGATION)
        if rendered is not None:
            negations = list(dict.fromkeys([*negations, *rendered.negations]))
        spans = [(m.start, m.end) for m in detection.of(MentionKind.ALIAS)]
        return {"entities": names(entities), "attribute": "、".join(attribute),
                "times and versions": "、".join(times), "compared with": "、".join(compared),
                "negations": "、".join(negations),
                "question words": "、".join(m.group(0) for m in
                                            cues.QUESTION_START_RE.finditer(self.text)),
                "excluded (never name)": names(self.excluded(entities)),
                "language": "English" if turn_language(self.text, spans) == "en" else "Chinese",
                "rules draft": " | ".join(self.reference.queries) if self.reference else ""}

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
