"""The session state transition: the one place a turn changes the session state.

:func:`apply_turn` takes the loaded state and what the turn decided and found
(:class:`TurnOutcome`) and returns the next state; the engine saves it.
"""

from __future__ import annotations

from dataclasses import dataclass

from dialogue.classify import TurnKind, is_bare_mention
from dialogue.policy.decision import Clarify, Decision, PlanQueries, Resume
from dialogue.slots import fold_into_summary, update_slots
from dialogue.state import PendingClarification, SessionState, ShownRecord, TurnRecord
from kg.aliases import AliasSnapshot
from kg.linker import LinkResult
from kg.mentions import Detection


@dataclass(frozen=True)
class TurnOutcome:
    """What a turn decided, searched and found, as the transition needs it.

    For a searched turn ``kind``, ``detection`` and ``links`` are those of the
    plan (the resumed question's, for an answer); ``negated`` is the negated
    list after this turn's correction (see :func:`negated_after`).
    """

    turn: int
    text: str
    decision: Decision
    action: str  # retrieve | clarify | no_answer
    standalone: str
    entities: tuple[str, ...] = ()
    kind: TurnKind | None = None  # None: nothing was searched (a clarification, no answer)
    detection: Detection | None = None
    links: LinkResult | None = None
    negated: tuple[str, ...] = ()
    chunk_ids: tuple[str, ...] = ()
    doc_ids: tuple[str, ...] = ()
    asked: str = ""  # the searched queries, joined: what the shown chunks were shown for
    found_titles: tuple[str, ...] = ()  # titles of the best evidence (history for later turns)


@dataclass(frozen=True)
class Limits:
    recent_turns: int = 4
    consumed_window: int = 200


def negated_after(state: SessionState, kind: TurnKind, entities: tuple[str, ...]) -> list[str]:
    """The entities the user corrected away from, once this turn is counted: a
    correction adds the last turn's entities it replaces (at most 20 kept)."""
    if kind is not TurnKind.CORRECTION:
        return list(state.negated)
    last = state.last_turn
    corrected = [e for e in (last.entities if last else ()) if e not in entities]
    return list(dict.fromkeys([*state.negated, *corrected]))[-20:]


def apply_turn(state: SessionState, outcome: TurnOutcome, snapshot: AliasSnapshot,
               limits: Limits = Limits()) -> SessionState:
    """The state after ``outcome``; ``state`` itself is left as it was."""
    state = state.model_copy(deep=True)
    dropped, state.pending = state.pending, None
    if (dropped is not None and not isinstance(outcome.decision, Resume)
            and state.listed == dropped.options):
        state.listed = []  # a later 第一个 must not pick from a question the user left
    if (dropped is not None and isinstance(outcome.decision, PlanQueries)
            and outcome.decision.kind is TurnKind.CONTINUATION and not outcome.entities
            and not state.focus):
        # The question was left unanswered while nothing was in focus (the user went on
        # talking about the name it asked about): its options stay in play, for a
        # later turn's words or question to settle (dialogue/policy: open_options).
        state.alternates = list(dropped.options)
    if isinstance(outcome.decision, Clarify):
        _asked(state, outcome.turn, outcome.text, outcome.decision)
        entities = list(outcome.decision.resolved)
    else:
        if outcome.kind is not None:
            _searched(state, outcome)
            state.consume(list(outcome.chunk_ids), window=limits.consumed_window,
                          doc_ids=list(outcome.doc_ids))
            state.show([ShownRecord(chunk_id=c, doc_id=d, turn=outcome.turn, query=outcome.asked)
                        for c, d in zip(outcome.chunk_ids, outcome.doc_ids, strict=True)],
                       window=limits.consumed_window)
        entities = list(outcome.entities)
    state.turn_count = outcome.turn
    evicted = state.remember(TurnRecord(index=outcome.turn, user=outcome.text,
                                        standalone=outcome.standalone, action=outcome.action,
                                        entities=entities, found=list(outcome.found_titles)),
                             keep_turns=limits.recent_turns)
    fold_into_summary(state, evicted, snapshot)
    return state


def _asked(state: SessionState, turn: int, text: str, clarify: Clarify) -> None:
    options = list(clarify.options)
    state.pending = PendingClarification(turn=turn, question_text=text,
                                         mention=clarify.mention, options=options)
    state.listed = options


def _searched(state: SessionState, outcome: TurnOutcome) -> None:
    kind, entities = outcome.kind, outcome.entities
    state.negated = list(outcome.negated)
    if entities:
        bare = kind is not TurnKind.ANSWER and is_bare_mention(outcome.detection, outcome.links)
        previous = [e for e in state.focus if e not in entities]
        state.alternates = previous if bare else []
        state.focus = list(entities)
        if len(entities) > 1:
            state.listed = list(entities)
    elif kind is TurnKind.SWITCH:
        state.focus, state.listed, state.alternates = [], [], []
    if kind is TurnKind.SWITCH:
        state.negated = []
    state.slots = update_slots(state.slots, turn=outcome.turn, kind=kind,
                               detection=outcome.detection, links=outcome.links,
                               entities=entities, negated=state.negated)
