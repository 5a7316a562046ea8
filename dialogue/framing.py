"""The turn's frame, kept with the session: what the turn said and what the dialogue
settled (understanding/frame.py), and what was read of its texts (understanding/reading.py).

The engine builds the frame once, when the turn is applied, from the decision, the
plan and the slots after the turn; the turn record keeps it and the mentions read of
the turn's own texts (the user's words, the standalone query), which the next turns'
readings start from. The frame holds the turn's standalone as slots
(dialogue/render.py), which a follow-up puts its own into: :func:`kept_question`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dialogue.classify import TurnKind, asks_for_more
from dialogue.policy.decision import Clarify, PlanQueries, Resume
from dialogue.render import read_question, render
from dialogue.state import SessionState, TurnRecord
from dialogue.transition import TurnOutcome
from kg.aliases import AliasSnapshot
from understanding.frame import Intent, QuestionSlots, TurnFrame, build_frame
from understanding.linker import LinkResult
from understanding.mentions import detect_mentions
from understanding.reading import Reading, snapshot_key, stored

_INTENTS = {TurnKind.CORRECTION: Intent.CORRECTION, TurnKind.REVISIT: Intent.REVISIT,
            TurnKind.ANSWER: Intent.ANSWER}


def kept_readings(state: SessionState) -> Iterator[dict[str, Any]]:
    """What the session's recent turns kept of their reading."""
    for record in state.recent:
        yield from record.read


def intent_of(outcome: TurnOutcome) -> Intent:
    """What the turn does: answers the clarification, corrects, revisits, asks for more
    of the same, or asks."""
    if isinstance(outcome.decision, Resume):
        return Intent.ANSWER
    intent = _INTENTS.get(outcome.kind) if outcome.kind is not None else None
    if intent is not None:
        return intent
    if outcome.kind is TurnKind.CONTINUATION and asks_for_more(outcome.text):
        return Intent.MORE
    return Intent.QUESTION


def kept_question(record: TurnRecord | None, snapshot: AliasSnapshot) -> QuestionSlots | None:
    """The slots ``record``'s standalone was rendered from or read as, when its frame kept
    them against ``snapshot``; None for a turn saved before frames kept them, or after an
    alias refresh (the standalone is read again then)."""
    return TurnFrame.stored_question(record.frame, snapshot_key(snapshot)) if record else None


def _question(record: TurnRecord, rendered: QuestionSlots | None,
              snapshot: AliasSnapshot) -> QuestionSlots | None:
    """The turn's standalone as slots: those it was rendered from, when it is their
    render as searched, else the standalone read into slots about the entities the
    turn record keeps (a standalone the rules wrote in place, or another rewriter's);
    none in a kb without an ontology, where no follow-up is rendered."""
    if not snapshot.entities:
        return None
    if rendered is not None and render(rendered, snapshot) == record.standalone:
        return rendered
    return read_question(record.standalone, record.entities, snapshot)


def turn_frame(before: SessionState, after: SessionState, outcome: TurnOutcome,
               snapshot: AliasSnapshot) -> TurnFrame:
    """The frame of the turn ``outcome`` played on ``before``, giving ``after`` (whose
    last record is the turn's)."""
    decision = outcome.decision
    own = detect_mentions(outcome.text, snapshot)  # read already: the turn's reading has it
    links = decision.links if isinstance(decision, (Clarify, Resume, PlanQueries)) else LinkResult(())
    slots = after.slots
    values = lambda slot: tuple(slot.values) if slot is not None else ()  # noqa: E731
    return build_frame(
        own, links, intent=intent_of(outcome), subjects=outcome.entities,
        attribute=values(slots.attribute), times=values(slots.time),
        comparison=values(slots.comparison),
        corrected_away=tuple(e for e in after.negated if e not in before.negated),
        standalone=outcome.standalone,
        question=_question(after.recent[-1], outcome.question, snapshot),
        question_snapshot=snapshot_key(snapshot))


def keep_understanding(before: SessionState, after: SessionState, outcome: TurnOutcome,
                       snapshot: AliasSnapshot, reading: Reading | None) -> None:
    """Keep the turn's frame on its record in ``after``, and on every recent record what
    the turn's reading holds of that record's texts."""
    if not after.recent or after.recent[-1].index != outcome.turn:
        return
    after.recent[-1].keep(frame=turn_frame(before, after, outcome, snapshot).to_stored())
    if reading is not None:
        for record in after.recent:
            _keep_read(record, reading, snapshot)


def _keep_read(record: TurnRecord, reading: Reading, snapshot: AliasSnapshot) -> None:
    key = snapshot_key(snapshot)
    record.keep(read=[stored(detection, aliased, key)
                      for detection, aliased in reading.of_texts((record.user, record.standalone))])
