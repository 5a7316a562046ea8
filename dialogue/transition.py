"""The session state transition: the one place a turn changes the session state.

:func:`apply_turn` takes the loaded state and what the turn decided and found
(:class:`TurnOutcome`) and returns the next state; the engine saves it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from common.language import cues
from dialogue.classify import TurnKind, is_bare_mention, is_ellipsis, values_given
from dialogue.policy.decision import Clarify, Decision, PlanQueries, Resume
from dialogue.slots import fold_into_summary, update_slots
from dialogue.state import PendingClarification, SessionState, ShownRecord, TurnRecord
from kg.aliases import AliasSnapshot
from understanding.frame import QuestionSlots
from understanding.linker import LinkResult
from understanding.mentions import Detection, MentionKind


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
    # Whether each of the turn's and the focus's entities is a person, a thing or unknown
    # (True / False / None, the entity facts'); {} a kb without people; None not known.
    kinds: Mapping[str, bool | None] | None = None
    # The topic the turn left behind, in a kb without an ontology (dialogue/topics.py).
    topic: Mapping[str, float] = field(default_factory=dict)
    # The slots the standalone was rendered from, when it was (dialogue/render.py).
    question: QuestionSlots | None = None


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
                                        entities=entities, found=list(outcome.found_titles),
                                        topic=dict(outcome.topic)),
                             keep_turns=limits.recent_turns)
    fold_into_summary(state, evicted, snapshot)
    return state


# Turns that go on about the same talk: what they keep of the focus stays its subject.
_GOING_ON = (TurnKind.CONTINUATION, TurnKind.NEW_TOPIC)


def salience_order(entities: tuple[str, ...], focus: list[str], kind: TurnKind | None,
                   links: LinkResult | None = None, detection: Detection | None = None,
                   kinds: Mapping[str, bool | None] | None = None) -> list[str]:
    """The focus after a turn, most salient first.

    A turn that goes on about the talk (a continuation, or a new name with the focus
    kept beside it) keeps what was already in focus ahead of a new name of the same
    kind: 门票包含在青萝园景区门票里了，营业时间呢 after a street inside the park is still
    about the street, and 它 in the next turn means the street, not the park the turn
    named. ``kinds`` says whether each entity is a person (True), a thing (False) or
    unknown (None), as the entity facts tell; an empty mapping is a kb without people,
    where all are alike; None keeps the turn's own order. A name of another kind, or
    of an unknown one, keeps its place (是韩启明 after a question about the film's
    director: the talk often turns to the person), and so does a name given as the value
    of what was asked (出品公司是鹿鸣影业: the answer is what comes next). A name the
    turn introduces under a phrase about an entity in focus (它边上的松鹤寺, 这个景点附近的
    白鹭湾, Qingluo Garden next to it: the old one only says where the new one lies)
    is what the talk turns to, and leads. A correction, an answer, a revisit or a switch
    puts what the turn says first, as it says it.
    """
    if kind not in _GOING_ON:
        return list(entities)
    text = detection.text if detection is not None else ""
    introduced = [e for e in (_introduced(links, focus, text) if links is not None else [])
                  if e in entities]
    carried = [e for e in entities if e in focus]

    def alike(a: str, b: str) -> bool:
        if kinds is None:
            return False
        if not kinds:
            return True
        return kinds.get(a) is not None and kinds.get(a) == kinds.get(b)

    answers = _given_as_value(links, detection) if links is not None and detection else set()
    behind = [e for e in entities if e not in focus and e not in introduced
              and e not in answers and any(alike(e, c) for c in carried)]
    return list(dict.fromkeys([*introduced, *(e for e in entities if e not in behind), *behind]))


def _given_as_value(links: LinkResult, detection: Detection) -> set[str]:
    """Names that are the whole start of the value the turn gives for an attribute
    (出品公司是鹿鸣影业, the park is Qingluo Garden): the answer to what was asked."""
    text = detection.text
    leads = [start for start, _ in values_given(detection)]
    return {link.entity_ids[0] for link in links.links
            if link.mention.kind is MentionKind.ALIAS and len(link.entity_ids) == 1
            and any(end <= link.mention.start
                    and cues.VALUE_NAME_GAP_RE.fullmatch(text[end:link.mention.start])
                    for end in leads)}


def _introduced(links: LinkResult, focus: list[str], text: str) -> list[str]:
    """New names the turn introduces beside an entity in focus that a pronoun of the same
    clause refers to (see :func:`salience_order`)."""
    pronouns = [link.mention for link in links.links if link.mention.kind is MentionKind.PRONOUN
                and link.entity_ids and set(link.entity_ids) <= set(focus)]
    out: list[str] = []
    for link in links.links:
        named = link.mention
        if (named.kind is not MentionKind.ALIAS or len(link.entity_ids) != 1
                or link.entity_ids[0] in focus):
            continue
        for pronoun in pronouns:
            if pronoun.end <= named.start:
                anchored = cues.ANCHORED_AFTER_PRONOUN_RE.fullmatch(text[pronoun.end:named.start])
            elif named.end <= pronoun.start and cues.ANCHORED_BEFORE_PRONOUN_RE is not None:
                anchored = cues.ANCHORED_BEFORE_PRONOUN_RE.fullmatch(text[named.end:pronoun.start])
            else:
                anchored = None
            if anchored:
                out.append(link.entity_ids[0])
                break
    return out


def swapped_by_ellipsis(kind: TurnKind | None, detection: Detection | None,
                        links: LinkResult | None, previous: list[str],
                        entities: tuple[str, ...] | list[str]) -> bool:
    """An ellipsis that put one entity in place of the one focus entity before it."""
    return (kind is TurnKind.CONTINUATION and detection is not None and links is not None
            and len(entities) == 1 and len(previous) == 1 and is_ellipsis(detection, links))


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
        # What the user corrected away is not another one a reference may mean.
        previous = [e for e in state.focus if e not in entities and e not in state.negated]
        state.alternates = previous if bare else []
        state.focus = salience_order(entities, state.focus, kind, outcome.links,
                                     outcome.detection, outcome.kinds)
        if len(entities) > 1:
            state.listed = list(entities)
        elif swapped_by_ellipsis(kind, outcome.detection, outcome.links, previous, entities):
            # 那北校区的呢 after 南校区自习室…: both sides were talked about, in that order
            # (前者 is the one before, 后者 the one the ellipsis put in its place).
            state.listed = [previous[0], entities[0]]
    elif kind is TurnKind.SWITCH:
        state.focus, state.listed, state.alternates = [], [], []
    if kind is TurnKind.SWITCH:
        state.negated = []
    state.slots = update_slots(state.slots, turn=outcome.turn, kind=kind,
                               detection=outcome.detection, links=outcome.links,
                               entities=entities, negated=state.negated)
