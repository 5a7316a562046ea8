"""The dialogue policy: given the understood turn and the session state, one decision.

Stateless: it reads the state and the snapshot and changes neither (the
transition applies the decision, dialogue/transition.py). In order:

1. a pending clarification: an answer to it resumes the question (:class:`Resume`),
   anything else drops it and the turn is read as a new one;
2. the turn's kind (dialogue/classify.py), a cue-less topic switch by
   similarity (dialogue/topic_shift.py, when an embedder is configured);
3. the resolvers (dialogue/resolvers/), in the order their configuration names: the
   links settled by what the turn and the dialogue say (a revisit's references, a
   turn that names nothing, both sides of a comparison named, a correction's or an
   ellipsis's counterpart through the ontology, a pronoun by the kind of thing, the
   edition in force, a piece of an attribute only one type has, a sibling of what was
   talked about, ...); this module keeps the mechanisms several of them run; then an
   edition number that none of a shared name's editions has answers nothing;
4. clarify or resolve: the first link the :class:`ClarifyGate` asks about
   (:class:`Clarify`), else :class:`PlanQueries`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from common.language import cues
from dialogue.clarify import Answer, AnswerKind, read_answer
from dialogue.classify import TurnKind, classify, revisit_cue, values_given
from dialogue.policy.counterparts import corrected_by_counterpart
from dialogue.policy.decision import (Clarify, ClarifyVerdict, Decision, NoAnswer, PlanQueries,
                                      QuestionReading, Resume, UnderstoodTurn)
from dialogue.policy.gate import AntecedentGate, ClarifyGate, said_by_user, said_side_by_side
from dialogue.policy.versions import unknown_edition
from dialogue.render import same_type
from dialogue.state import SessionState
from dialogue.resolvers import DialogueContext, Resolver, load_resolvers
from dialogue.topic_shift import SimilarityShift
from dialogue.trace import (CandidateTrace, ClarificationAnswerTrace, ClarifyGateTrace,
                            LinkTrace)
from kg.aliases import AliasSnapshot
from understanding.linker import DEFERRED_PRONOUN_REASON, Candidate, EntityLinker, Link, LinkResult
from understanding.mentions import Mention, MentionKind, detect_mentions
from retrieval.entity_facts import EntityFacts


class DialoguePolicy:
    """Decides what a turn does; holds no session data of its own."""

    def __init__(self, linker: EntityLinker | None = None, *, shift: SimilarityShift | None = None,
                 gate: ClarifyGate | None = None,
                 resolvers: Sequence[Resolver] | None = None) -> None:
        self.linker = linker or EntityLinker()
        self.shift = shift  # similarity-based switch detection (needs an embedder)
        self.gate = gate or AntecedentGate()
        # The steps that settle the links, in the order dialogue/resolvers/order.json names.
        self.resolvers = tuple(resolvers) if resolvers is not None else load_resolvers()

    def decide(self, turn: UnderstoodTurn, state: SessionState, snapshot: AliasSnapshot,
               facts: EntityFacts | None = None, *, by_similarity: bool = True) -> Decision:
        """The turn's decision. ``facts``: what the kb's passages state about each entity
        (None: unknown), which tells the entities in play apart by the attribute a turn
        asks. ``by_similarity`` False leaves out the similarity switch (a continuation
        stays one: the engine's second reading of a switch that found nothing)."""
        trace: dict[str, Any] = {}
        if state.pending is None:
            return self.plan(turn, state, snapshot, trace, facts, by_similarity=by_similarity)
        answer = read_answer(turn.detection, turn.links, state.pending, snapshot)
        decision = (self.resume(turn, state, snapshot, trace, answer=answer)
                    or self.plan(turn, state, snapshot, trace, facts, by_similarity=by_similarity))
        return replace(decision, pending_answer=answer)

    def plan(self, turn: UnderstoodTurn, state: SessionState, snapshot: AliasSnapshot,
             trace: dict[str, Any], facts: EntityFacts | None = None, *,
             by_similarity: bool = True) -> Decision:
        """The decision for a turn that answers no pending question."""
        kind = self.classify(turn, state, snapshot, trace, by_similarity=by_similarity)
        links = self.resolve(DialogueContext(kind, turn, state, snapshot, facts, self.linker), trace)
        kind = corrected_by_counterpart(kind, turn.detection, links)
        missing = unknown_edition(links, turn.text, snapshot)
        if missing is not None:
            return NoAnswer(reasons=(f"the kb holds no {missing} edition of what the turn names",),
                            trace=trace)
        settled: list[Link] = []
        for i, link in enumerate(links.links):
            verdict = self.gate.judge(link, turn, state, snapshot)
            if verdict.ask:
                verdict = not_asked_again(verdict, link, state)
            if link.ambiguous:
                trace.setdefault("clarify_decisions", []).append(ClarifyGateTrace(
                    mention=link.mention.text, reasons=list(verdict.reasons),
                    features=verdict.features).dump())
            if verdict.ask:
                trace["clarify_gate"] = ClarifyGateTrace(
                    mention=link.mention.text, reasons=list(verdict.reasons),
                    features=verdict.features).dump()
                # Earlier links as the gate settled them; this one, asked about after
                # all, without what the linker chose for it.
                asked = replace(link, entity_ids=()) if link.entity_ids else link
                links = LinkResult((*settled, asked, *links.links[i + 1:]))
                return Clarify(link.mention.text, verdict.options, link, links,
                               reasons=verdict.reasons, trace=trace, record=verdict.record)
            if verdict.resolved is not None and link.ambiguous:
                # The gate weighed the candidates and resolved the link without asking.
                link = Link(link.mention, link.candidates, (verdict.resolved,),
                            "; ".join(verdict.reasons) or "resolved by the clarify gate")
            settled.append(link)
        if any(a is not b for a, b in zip(settled, links.links)):
            links = LinkResult(tuple(settled))
            trace["links"] = links_trace(links)
        return PlanQueries(kind, turn.detection, links, lift_consumed=kind is TurnKind.REVISIT,
                           reasons=(f"classified as {kind.value}",), trace=trace)

    def classify(self, turn: UnderstoodTurn, state: SessionState, snapshot: AliasSnapshot,
                 trace: dict[str, Any], *, by_similarity: bool = True) -> TurnKind:
        """The turn's kind; a continuation far from the previous query may be a switch."""
        kind = classify(turn.detection, turn.links, state.focus)
        last = state.last_turn
        if (kind is TurnKind.CONTINUATION and by_similarity and self.shift is not None
                and last is not None
                and self.shift.is_switch(turn.detection, turn.links, snapshot, focus=state.focus,
                                         previous=last.standalone, trace=trace)):
            kind = TurnKind.SWITCH
        return kind

    def resolve(self, context: DialogueContext, trace: dict[str, Any]) -> LinkResult:
        """The turn's links after each resolver in turn; what each changed, and why, goes
        into the trace."""
        links = context.turn.links
        for resolver in self.resolvers:
            done = resolver.resolve(links, context)
            if done is not None:
                links = done.links
                trace["links"] = links_trace(links)
                trace.setdefault("resolvers", []).append({"resolver": resolver.name,
                                                          "reason": done.reason})
        return links

    def resume(self, turn: UnderstoodTurn, state: SessionState, snapshot: AliasSnapshot,
               trace: dict[str, Any], *, answer: Answer | None = None) -> Resume | None:
        """Resume the pending question when this turn answers it; None when it does not."""
        pending = state.pending
        if answer is None:
            answer = read_answer(turn.detection, turn.links, pending, snapshot)
        dropped = answer.kind is AnswerKind.NOT_AN_ANSWER
        trace["clarification_answer"] = ClarificationAnswerTrace(
            kind=answer.kind.value, entity_ids=list(answer.entity_ids), how=answer.how,
            pending_question=pending.question_text,
            note="not an answer: pending question dropped" if dropped else None).dump()
        if dropped:
            return None
        question = pending.question_text
        q_detection = detect_mentions(question, snapshot)
        if answer.kind is AnswerKind.NEITHER:
            return Resume("neither", (), question, q_detection, LinkResult(()),
                          reasons=("neither option: the question as first asked",), trace=trace)
        readings = tuple(
            # The chosen option becomes the focus, which settles the shared alias.
            QuestionReading(chosen, q_detection, self.linker.link(
                q_detection, snapshot, focus=[chosen] + [f for f in state.focus if f != chosen]))
            for chosen in answer.entity_ids)
        return Resume(answer.kind.value, answer.entity_ids, question, q_detection, turn.links,
                      readings, reasons=(f"answers the pending question: {answer.how}",), trace=trace)


def not_asked_again(verdict: ClarifyVerdict, link: Link, state: SessionState) -> ClarifyVerdict:
    """A question the user left unanswered on the last turn is not asked again about a
    reference: when the gate would ask between the same options about a pronoun or a
    turn that names nothing, the user has gone on talking without saying which (KdConv's
    是周牧之 → 哦，原来是青穗奖最佳制作人… → 而且还拿过…, each turn asked again), so the
    option the gate would have chosen stands (the model's best supported, else the
    first offered, the most salient). A new question that says the shared name again
    (A产品多少钱 left for A产品怎么申请) is asked about as before. Returns ``verdict``
    itself when it asks something else or nothing was pending."""
    pending = state.pending
    if (pending is None or link.mention.kind not in _REFERRING or not verdict.options
            or set(verdict.options) != set(pending.options)):
        return verdict
    chosen = verdict.preferred or verdict.options[0]
    return ClarifyVerdict(False, reasons=(
        *verdict.reasons, f"asked on turn {pending.turn} and left unanswered: not asked "
                          f"again, {chosen} taken"), features=verdict.features, resolved=chosen)


def settle_by_salience(links: LinkResult, state: SessionState,
                       snapshot: AliasSnapshot) -> LinkResult:
    """它, 这个景点 while several entities are in focus that the user did not last name side
    by side (a sight's neighbour, or the park it lies in, came with the sight): the most
    salient one, as without a clarify model (the antecedent gate's rule). Two the user
    named side by side (安居贷和易学贷, A and B) stay for the clarify-or-resolve decision
    (see :func:`said_side_by_side`). Returns ``links`` itself when nothing changes."""
    said = said_by_user(state)
    out = list(links.links)
    changed = False
    for i, link in enumerate(out):
        if link.mention.kind is not MentionKind.PRONOUN or link.reason != DEFERRED_PRONOUN_REASON:
            continue
        ids = [c.entity_id for c in link.candidates]
        if not ids or any(e not in state.focus for e in ids):
            continue
        first = ids[0]
        if any(said_side_by_side(first, e, said, snapshot) for e in ids[1:]):
            continue
        out[i] = Link(link.mention, link.candidates, (first,),
                      "pronoun → most salient focus entity (the others were not named beside it)")
        changed = True
    return LinkResult(tuple(out)) if changed else links


def keep_valued_focus(links: LinkResult, turn: UnderstoodTurn, state: SessionState,
                      snapshot: AliasSnapshot, facts: EntityFacts) -> LinkResult:
    """地址在北京市朝阳区…青柳艺术区4号路，电话是多少: a name said inside a value the turn
    gives for an attribute of a focus entity, a value that entity's own passage
    states, is part of that value (where the focus lies), not what the turn is about.

    The value is what follows the attribute and a word that gives it (在, 是, is) up to
    the next punctuation; right after a turn that asked an attribute, also the turn's
    first clause when it names no attribute (地址是哪 → 北京市海淀区松岭公园北侧，这里停车
    收费吗). It must hold more than the name, and what else it holds
    must be quoted from the focus entity's passage that states the attribute and
    names the same name (four in five of its character pairs), so that 导演是林默 (the value is the name) still moves the talk to the director. The
    inner name's link is dropped, a pronoun that went to it goes to the focus entity,
    and the focus entity is the turn's subject. Returns ``links`` itself when nothing
    changes.
    """
    text = turn.text
    given = _values_given(turn, state)
    if not given or not state.focus:
        return links
    inner, keeper = _names_inside_values(links, text, given, state, snapshot, facts)
    if keeper is None:
        return links
    return _focus_for_inner_names(links, inner, keeper)


def _values_given(turn: UnderstoodTurn, state: SessionState) -> list[tuple[int, str]]:
    """(start of the value, the attribute it gives): after the attribute and a word that
    gives it (地址在…); a turn whose first clause says no attribute answers the one
    the last turn asked (北京市海淀区松岭公园北侧，… after 地址是哪) from its start."""
    text = turn.text
    given = [(start, str(attribute.value)) for start, attribute in values_given(turn.detection)
             if attribute.value]
    asked = state.slots.attribute
    last = state.last_turn
    first_end = next((j for j in range(len(text)) if text[j] in _VALUE_END), len(text))
    if (asked is not None and last is not None and asked.how == "said"
            and asked.turn == last.index
            and not any(m.start < first_end for m in turn.detection.of(MentionKind.ATTRIBUTE))):
        given.extend((0, value) for value in asked.values)
    return given


def _names_inside_values(links: LinkResult, text: str, given: Sequence[tuple[int, str]],
                         state: SessionState, snapshot: AliasSnapshot,
                         facts: EntityFacts) -> tuple[set[int], str | None]:
    """The indices of the links of names said inside a value the turn gives for an
    attribute of a focus entity the turn does not name, and the first such entity."""
    named = [(i, link) for i, link in enumerate(links.links)
             if link.mention.kind is MentionKind.ALIAS and link.entity_ids]
    inner: set[int] = set()
    keeper: str | None = None
    for focus_id in state.focus:
        if focus_id in state.negated or any(focus_id in link.entity_ids for _, link in named):
            continue
        for start, attribute in given:
            if not snapshot.has_attribute(focus_id, attribute):
                continue
            passages = facts.passages_stating(focus_id, attribute)
            if not passages:
                continue
            end = next((j for j in range(start, len(text)) if text[j] in _VALUE_END), len(text))
            for i, link in named:
                if _quoted_inside(text, start, end, link.mention, attribute, passages, snapshot):
                    inner.add(i)
                    keeper = keeper or focus_id
    return inner, keeper


def _quoted_inside(text: str, start: int, end: int, mention: Mention, attribute: str,
                   passages: Sequence[str], snapshot: AliasSnapshot) -> bool:
    """Whether the name ``mention`` is said inside the value ``text[start:end]`` and what
    else the value holds is quoted from one of the ``passages`` that names it (four in
    five of its character pairs)."""
    if not (start <= mention.start and mention.end <= end):
        return False
    name = snapshot.normalize(mention.text)
    rest = snapshot.normalize(text[start:mention.start] + text[mention.end:end])
    # What restates the attribute (是周牧之填的词 after 谁填词的) is no part of
    # the value: there the name is the whole answer.
    if attribute.isascii():
        rest = rest.replace(snapshot.normalize(attribute), "")
    content = "".join(c for c in rest if c.isalnum() and c not in cues.FUNCTION_CHARS
                      and (attribute.isascii() or c not in attribute))
    pairs = [content[j:j + 2] for j in range(len(content) - 1)]
    quoted = [p for p in passages if name in p]
    if not pairs or not quoted:
        return False
    return sum(any(pair in p for p in quoted) for pair in pairs) >= 0.8 * len(pairs)


def _focus_for_inner_names(links: LinkResult, inner: set[int], keeper: str) -> LinkResult:
    """The links without the ``inner`` names', a pronoun that went to one of them going
    to ``keeper`` instead, and ``keeper`` the turn's subject."""
    gone = {e for i in inner for e in links.links[i].entity_ids}
    reason = "the turn gives the focus entity's value; the name inside it is part of it"
    out: list[Link] = []
    for i, link in enumerate(links.links):
        if i in inner:
            continue
        if link.mention.kind in _REFERRING and link.entity_ids and set(link.entity_ids) <= gone:
            link = Link(link.mention, (Candidate(keeper, 1.0, "focus"),), (keeper,), reason)
        out.append(link)
    if not any(keeper in link.entity_ids for link in out):
        out.append(Link(Mention(MentionKind.IMPLICIT, "", 0, 0), (Candidate(keeper, 1.0, "focus"),),
                        (keeper,), reason))
    return LinkResult(tuple(out))


def _in_play(state: SessionState) -> list[str]:
    """The entities a reference may mean, most salient first: the focus, the alternates,
    the options of a question left unanswered, the recent turns' and the summarized
    older ones' (repeats kept: callers take the first that fits)."""
    return [*state.focus, *state.alternates, *open_options(state),
            *(e for record in reversed(state.recent) for e in record.entities),
            *(e for line in reversed(state.summary) for e in line.entities)]


# What ends the value a turn gives for an attribute.
_VALUE_END = frozenset("，,。？?！!；;\n")


def fit_pronouns(links: LinkResult, turn: UnderstoodTurn, state: SessionState,
                 facts: EntityFacts) -> LinkResult:
    """他 and 她 mean a person, 它 a thing: what the passages state about each entity
    (a birth date, an occupation) tells which entities in play are people.

    A singular pronoun that went to an entity of the other kind (他 after the film,
    the focus, while its director was talked about two turns before) goes to the most
    recent one of its own kind: a name said in the turn before it, then the pronoun's
    own candidates, the focus, the alternates, the entities of the recent turns and of
    the summarized older ones; when none is known to be of its kind, the first of the
    names said before it and its own candidates that is not known to be of the other
    kind (那你对他了解吗 after the film and its director, whose passages say neither).
    A pronoun left between several candidates resolves
    when only one of them is of its kind, and keeps only those that are when several
    are. A pronoun whose pick is of its kind while every other focus entity is of
    the other kind is settled (no question about which of them it means). What the
    turn asks says the kind too when the words do not (片长多久 after a film and its
    director: a runtime is stated of things only, 出生日期 of people only): a
    reference left between candidates of both kinds keeps those of the asked kind. A
    demonstrative's own word says the kind as 他 and 它 do (这个电影, 此片, 这张专辑 a
    thing; 这位, 这个演员 a person; this album, this singer), for its pronoun, for the
    turn when the turn names nothing, and for a name that a singer and an album share
    when it stands right before it (程远这个人). Entities the kb has no passage about alone
    decide nothing. Returns ``links`` itself when
    nothing changes.
    """
    out = list(links.links)
    pool = _in_play(state)
    asked = facts.asks_of_person(m.value for m in turn.detection.of(MentionKind.ATTRIBUTE)
                                 if m.value)
    # 这首歌, 此片, 这位: a demonstrative's own word says the kind of what the turn is
    # about when the turn names nothing (its subject comes from the dialogue alone).
    named = any(link.mention.kind is MentionKind.ALIAS and link.entity_ids for link in out)
    changed = False
    for i, link in enumerate(out):
        says = _kind_said(turn.text, link, named)
        want = _kind_wanted(link, says, asked)
        if want is None:
            continue
        word = link.mention.text.lower()
        # 他 / 她: a person of the other sex, as the passages speak of them, clashes too.
        other_sex = ("f" if word in cues.MALE_PRONOUNS else "m" if word in cues.FEMALE_PRONOUNS
                     else None) if link.mention.kind is MentionKind.PRONOUN else None
        fitted = _fitted(link, out, _Kind(want, other_sex, facts, state.negated), says, pool,
                         state)
        if fitted is not None:
            out[i] = fitted
            changed = True
    return LinkResult(tuple(out)) if changed else links


@dataclass(frozen=True)
class _Kind:
    """The kind a reference wants: a person (``want``) or a thing, not of ``other_sex``;
    judged by what the passages state of each entity (``facts``)."""
    want: bool
    other_sex: str | None
    facts: EntityFacts
    negated: Any

    def fits(self, entity_id: str) -> bool:
        return (self.facts.is_person(entity_id) is self.want and entity_id not in self.negated
                and (self.other_sex is None or self.facts.sex(entity_id) != self.other_sex))

    def clashes(self, entity_id: str) -> bool:
        return self.facts.is_person(entity_id) is (not self.want) or (
            self.other_sex is not None and self.facts.sex(entity_id) == self.other_sex)


def _kind_said(text: str, link: Link, named: bool) -> bool | None:
    """The kind a demonstrative's own word says (这个电影 a thing, 这位 a person): for a
    pronoun, for the turn when it names nothing, and for a shared name right before it."""
    mention = link.mention
    if mention.kind is MentionKind.PRONOUN:
        return cues.reference_kind(text, mention.start)
    if mention.kind is MentionKind.IMPLICIT and not named:
        return cues.reference_kind(text)
    if mention.kind is MentionKind.ALIAS and link.ambiguous:
        # 程远这个人, 《苏晴》这张专辑: a demonstrative right after a shared name
        # says which kind of its bearers is meant.
        after = mention.end
        while after < min(len(text), mention.end + 2) and not text[after].isalnum():
            after += 1
        return cues.reference_kind(text, after)
    return None


def _kind_wanted(link: Link, says: bool | None, asked: bool | None) -> bool | None:
    """Whether the link's mention means a person (True) or a thing (False): by its own
    word (他, 它), by a demonstrative's word, or by what the turn asks; None when nothing
    says."""
    mention = link.mention
    word = mention.text.lower()
    if mention.kind is MentionKind.PRONOUN and (
            word in cues.PERSON_PRONOUNS or word in cues.THING_PRONOUNS):
        return word in cues.PERSON_PRONOUNS
    if mention.kind in _REFERRING and says is not None and (
            link.ambiguous or len(link.entity_ids) == 1):
        return says
    if mention.kind is MentionKind.ALIAS and says is not None:
        return says
    if mention.kind in _REFERRING and link.ambiguous and asked is not None:
        return asked
    return None


def _kind_label(link: Link, kind: _Kind, says: bool | None) -> str:
    """The kind as the trace says it, and how it is known."""
    word = link.mention.text.lower()
    label = "a person" if kind.want else "a thing"
    if kind.other_sex is not None and any(kind.facts.sex(c.entity_id) == kind.other_sex
                                          for c in link.candidates):
        return "a man" if kind.other_sex == "f" else "a woman"
    if word in cues.PERSON_PRONOUNS or word in cues.THING_PRONOUNS:
        return label
    if says is not None:
        return label + ", by the words of the turn"
    return label + ", by what is asked"


def _fitted(link: Link, out: Sequence[Link], kind: _Kind, says: bool | None,
            pool: Sequence[str], state: SessionState) -> Link | None:
    """The link made to fit ``kind``: moved off an entity of the other kind, settled on
    the one focus entity of its kind, or narrowed to the candidates of its kind; None
    when nothing changes."""
    label = _kind_label(link, kind, says)
    what = f"“{link.mention.text}”" if link.mention.text else "the turn"
    if len(link.entity_ids) == 1 and kind.clashes(link.entity_ids[0]):
        return _moved_to_fitting(link, out, kind, pool, f"{what} means {label}")
    if len(link.entity_ids) == 1 and kind.fits(link.entity_ids[0]):
        others = [e for e in state.focus if e != link.entity_ids[0]]
        if others and all(kind.clashes(e) for e in others):
            return Link(link.mention, link.candidates, link.entity_ids,
                        f"{what} means {label}: the one in focus")
        return None
    if link.ambiguous:
        return _kept_to_kind(link, kind, says, f"{what} means {label}")
    return None


def _moved_to_fitting(link: Link, out: Sequence[Link], kind: _Kind, pool: Sequence[str],
                      reason: str) -> Link | None:
    """A link to an entity of the other kind, moved to the most recent one of its kind:
    a name said in the turn before it, then its own candidates, then those in play."""
    mention = link.mention
    said = [e for other in out if other.mention.kind is MentionKind.ALIAS
            and other.mention.end <= mention.start for e in reversed(other.entity_ids)]
    order = [*reversed(said), *(c.entity_id for c in link.candidates), *pool]
    fitting = next((e for e in dict.fromkeys(order) if kind.fits(e)), None)
    how = "the most recent one in play"
    if fitting is None:
        # None in play is known to be of its kind: the pronoun's own candidates or
        # a name said before it that is not known to be of the other kind (a
        # director whose passages say neither) beats one that is known to be.
        near = [*reversed(said), *(c.entity_id for c in link.candidates)]
        fitting = next((e for e in dict.fromkeys(near)
                        if kind.facts.is_person(e) is None and not kind.clashes(e)
                        and e not in kind.negated), None)
        how = "the one beside it not known to be otherwise"
    if fitting is None:
        return None
    return Link(mention, (Candidate(fitting, 1.0, "focus"), *(
        c for c in link.candidates if c.entity_id != fitting)), (fitting,), f"{reason}: {how}")


def _kept_to_kind(link: Link, kind: _Kind, says: bool | None, reason: str) -> Link | None:
    """A link left between candidates, kept to those of its kind when only some are."""
    fitting = [c for c in link.candidates if kind.fits(c.entity_id)]
    if not fitting and (link.mention.kind is MentionKind.PRONOUN or says is not None):
        # None is known to be of its kind: those not known to be of the other.
        fitting = [c for c in link.candidates if not kind.clashes(c.entity_id)
                   and c.entity_id not in kind.negated]
    if fitting and len(fitting) < len(link.candidates):
        ids = (fitting[0].entity_id,) if len(fitting) == 1 else ()
        return Link(link.mention, tuple(fitting), ids,
                    f"{reason}: " + ("the one candidate that is" if ids else "only those candidates"))
    return None


def keep_referred_kind(links: LinkResult, turn: UnderstoodTurn, state: SessionState,
                       facts: EntityFacts) -> LinkResult:
    """这部电影的导演是林默, 这张专辑的编曲是谁 (after the album and then its singer), the
    director of this film is …: a demonstrative whose word says what it points at (a
    thing, a person), in a turn whose resolved entities are all known to be of the
    other kind, points at the most recent one of its kind still in play (the focus,
    the alternates, the recent turns, the summary), which stays the turn's subject
    beside the names the turn says. An entity the passages do not tell (a company, a
    band) may be what it points at (这家公司): nothing is added then. A turn that
    resolves nothing is left to the other rules (its subject comes from the dialogue
    alone), an ambiguous one to the clarify gate; a kb without people decides
    nothing. Returns ``links`` itself when nothing changes."""
    says = cues.reference_kind(turn.text)
    if says is None or any(link.ambiguous for link in links.links):
        return links
    resolved = [e for link in links.links for e in link.entity_ids]
    if not resolved or not all(facts.is_person(e) is (not says) for e in resolved):
        return links  # one of them may be what it points at (a company, a band)
    fitting = next((e for e in dict.fromkeys(_in_play(state))
                    if e not in resolved and e not in state.negated
                    and facts.is_person(e) is says), None)
    if fitting is None:
        return links
    reason = (f"the turn points at {'a person' if says else 'a thing'} by its words: "
              "the most recent one in play")
    return LinkResult((*links.links, Link(Mention(MentionKind.IMPLICIT, "", 0, 0),
                                          (Candidate(fitting, 1.0, "focus"),), (fitting,), reason)))


def fit_question(links: LinkResult, turn: UnderstoodTurn, state: SessionState,
                 facts: EntityFacts, snapshot: AliasSnapshot) -> LinkResult:
    """The entity a turn's question fits, by what the passages state about each.

    A turn that asks about an attribute (导演是谁, 门票多少钱) whose subjects' own
    passages state none of what it asks, while an entity still in play (the focus,
    an alternate, an entity of the recent turns) has passages that do, is about
    that entity too: a film stays the subject when the user asks its director's
    name after talking about its lead actor. Where the turn's subject came only
    from the dialogue (a pronoun, or nothing named), the fitting entity replaces
    it; beside a name the user said, it is kept after that name, unless it is of
    that name's kind (the same type, both people or both not): a
    sibling the user names takes the place of the one in play, whatever its
    passages lack. An ambiguous
    reference is left to the clarify gate (it, 这个 after two cards: which one is
    asked even if only one card's passages name the fee). Entities the kb has no
    passage about alone decide nothing. Returns ``links`` itself when nothing
    changes.
    """
    asked = [m.value for m in turn.detection.of(MentionKind.ATTRIBUTE) if m.value]
    if not asked:
        return links
    if any(link.ambiguous for link in links.links):
        return links  # which of two is meant is the clarify gate's to decide
    out = list(links.links)
    subjects = [e for link in out for e in link.entity_ids]
    verdicts = [facts.states(e, asked) for e in subjects]
    if any(verdicts):
        return _narrowed(out, verdicts, asked, facts) or links
    if subjects and None in verdicts:
        return links
    pool = _in_play(state)
    # 他 / 它 say whether a person or a thing is meant: an entity of the other kind
    # does not fit, whatever its passages state.
    kinds = {m.text.lower() in cues.PERSON_PRONOUNS for m in turn.detection.of(MentionKind.PRONOUN)
             if m.text.lower() in cues.PERSON_PRONOUNS or m.text.lower() in cues.THING_PRONOUNS}
    said = [e for link in out if link.mention.kind is MentionKind.ALIAS for e in link.entity_ids]
    fitting = next((e for e in dict.fromkeys(pool)
                    if e not in subjects and e not in state.negated
                    and not _sibling_of(e, said, snapshot, facts)
                    and facts.states(e, asked)
                    and not (len(kinds) == 1 and facts.is_person(e) is (not next(iter(kinds))))),
                   None)
    if fitting is None:
        return links
    reason = f"the question fits it: its passages state {'/'.join(asked)}"
    candidate = Candidate(fitting, 1.0, "focus")
    if not any(link.mention.kind is MentionKind.ALIAS and link.entity_ids for link in out):
        # Its subject came from the dialogue alone (a pronoun, or nothing named).
        referring = [i for i, link in enumerate(out) if link.mention.kind in _REFERRING]
        if referring:
            for i in referring:
                out[i] = Link(out[i].mention, (candidate,), (fitting,), reason)
            return LinkResult(tuple(out))
    out.append(Link(Mention(MentionKind.IMPLICIT, "", 0, 0), (candidate,), (fitting,), reason))
    return LinkResult(tuple(out))


def _sibling_of(entity: str, named: Sequence[str], snapshot: AliasSnapshot,
                facts: EntityFacts) -> bool:
    """Whether ``entity`` is of the kind of one of ``named``: the same type, and not a
    person beside a thing (kbs that put everything under one type tell those apart by
    their passages only)."""
    return any(same_type(entity, n, snapshot) and facts.is_person(n) == facts.is_person(entity)
               for n in named)


def _narrowed(out: list[Link], verdicts: list[bool | None], asked: list[str],
              facts: EntityFacts) -> LinkResult | None:
    """A turn that names nothing and stands for several focus entities (片长多久 after a
    film and its director were both in focus): when the passages of some of them
    state what it asks and those of the others, known to be of the other kind (a
    person beside a thing), do not, it is about the former. Entities of one kind
    stay together (哪张的可约课时更多 after two cards asks about both). None when that
    does not apply."""
    if len(out) != 1 or out[0].mention.kind is not MentionKind.IMPLICIT:
        return None
    link = out[0]
    if len(link.entity_ids) < 2 or None in verdicts or all(verdicts):
        return None
    kept = tuple(e for e, v in zip(link.entity_ids, verdicts) if v)
    dropped = [e for e in link.entity_ids if e not in kept]
    kinds = {facts.is_person(e) for e in kept}
    if len(kinds) != 1 or None in kinds or any(facts.is_person(e) is not (not next(iter(kinds)))
                                                for e in dropped):
        return None
    reason = f"the question fits them: their passages state {'/'.join(asked)}"
    return LinkResult((Link(link.mention, tuple(c for c in link.candidates if c.entity_id in kept),
                            kept, reason),))


# What refers to an entity without naming it.
_REFERRING = (MentionKind.PRONOUN, MentionKind.IMPLICIT)


def open_options(state: SessionState) -> list[str]:
    """The options of a question asked about a name and left unanswered while nothing
    was in focus: the pending question's (this turn does not answer it), else those
    kept as alternates since (see dialogue/transition.py)."""
    if state.focus:
        return []
    return list(state.pending.options) if state.pending is not None else list(state.alternates)


def earlier_focus(state: SessionState, text: str) -> list[str]:
    """Entities of the recent turns, then of the summarized older ones, most recent
    first; for "回到刚才…" the current focus goes last, since the user is leaving it."""
    seen: dict[str, None] = {}
    for entity_ids in [*(r.entities for r in reversed(state.recent)),
                       *(line.entities for line in reversed(state.summary))]:
        for entity_id in entity_ids:
            seen.setdefault(entity_id, None)
    ordered = list(seen)
    if revisit_cue(text) == "back":
        ordered = [e for e in ordered if e not in state.focus] + [e for e in ordered if e in state.focus]
    return ordered


def links_trace(links: LinkResult) -> list[dict[str, Any]]:
    """The links as the trace shows them (``trace["links"]``)."""
    return [LinkTrace(mention=link.mention.text, kind=link.mention.kind.value,
                      resolved=list(link.entity_ids), reason=link.reason,
                      candidates=[CandidateTrace(id=c.entity_id, score=c.score, source=c.source)
                                  for c in link.candidates]).dump()
            for link in links.links]
