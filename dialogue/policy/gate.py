"""Clarify or resolve: the one place that decides whether a link is worth a question.

The linker (understanding/linker.py) settles what the turn and the dialogue settle and
leaves the rest ambiguous; a :class:`ClarifyGate` looks at each link of the
turn and says whether to ask about it, with the options in the order they
will be offered and the features and reasons of its verdict. The policy asks
about the first link a gate says to ask about. :class:`AmbiguityGate` (the
default) asks exactly when a link stayed ambiguous; a learned gate or one
that also asks about a resolved pronoun plugs in through the same method:
:class:`AntecedentGate` (the policy's default) is that one, through
:func:`ask_which_antecedent`.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Sequence
from typing import Protocol

from common.language import cues
from dialogue.classify import is_switch
from dialogue.policy.clarify_model import ClarifyModel, DecisionInput
from dialogue.policy.decision import ClarifyVerdict, UnderstoodTurn
from dialogue.state import SessionState
from kg.aliases import AliasSnapshot
from understanding.linker import NAMED_BEFORE_REASON, Link, LinkResult
from understanding.mentions import Detection, MentionKind

logger = logging.getLogger(__name__)


class ClarifyGate(Protocol):
    def judge(self, link: Link, turn: UnderstoodTurn, state: SessionState,
              snapshot: AliasSnapshot) -> ClarifyVerdict:
        """Whether to ask the user which entity ``link``'s mention means."""
        ...


def link_features(link: Link) -> dict[str, object]:
    """What a gate may weigh: the mention's kind, the candidates and their scores."""
    scores = sorted((c.score for c in link.candidates), reverse=True)
    return {"mention_kind": link.mention.kind.value, "candidates": len(link.candidates),
            "resolved": len(link.entity_ids),
            "top_score": scores[0] if scores else 0.0,
            "margin": scores[0] - scores[1] if len(scores) > 1 else None,
            "sources": sorted({c.source for c in link.candidates})}


def offered_order(link: Link) -> tuple[str, ...]:
    """Alias ambiguities list options by id (stable across turns and sessions);
    pronoun and implicit ones in salience order (the candidates' order)."""
    ids = [c.entity_id for c in link.candidates]
    return tuple(sorted(ids) if link.mention.kind is MentionKind.ALIAS else ids)


class AmbiguityGate:
    """Ask when, and only when, the linker left a mention ambiguous."""

    def judge(self, link: Link, turn: UnderstoodTurn, state: SessionState,
              snapshot: AliasSnapshot) -> ClarifyVerdict:
        features = link_features(link)
        if not link.ambiguous:
            return ClarifyVerdict(False, reasons=("resolved or unknown: nothing to ask",),
                                  features=features)
        reasons = (f"{link.mention.kind.value} “{link.mention.text}” stays ambiguous between "
                   f"{len(link.candidates)} candidates", link.reason)
        return ClarifyVerdict(True, offered_order(link), tuple(r for r in reasons if r), features)


class ModelGate:
    """Clarify or resolve by the fitted model (dialogue/policy/clarify_model.py): an
    ambiguous link is asked about when the model's clarify probability reaches the
    threshold, else resolved to its best supported candidate. A link the linker
    resolved is left alone. A failing model asks (the safe side) and says why."""

    def __init__(self, model: ClarifyModel) -> None:
        self.model = model

    def judge(self, link: Link, turn: UnderstoodTurn, state: SessionState,
              snapshot: AliasSnapshot) -> ClarifyVerdict:
        try:
            self.model.prepare(snapshot)  # a kb's first turn starts its candidate vectors
        except Exception:  # noqa: BLE001 - preparing never takes a turn down
            logger.exception("clarify model: preparing kb %s failed", snapshot.kb)
        if not link.ambiguous:
            return ClarifyVerdict(False, reasons=("resolved or unknown: nothing to ask",),
                                  features=link_features(link))
        item = DecisionInput(
            question=turn.text, mention=link.mention.text, kind=link.mention.kind.value,
            candidates=tuple(c.entity_id for c in link.candidates),
            fuzzy=link.mention.similarity < 100,
            attributes=tuple(m.value for m in turn.detection.of(MentionKind.ATTRIBUTE)),
            focus=tuple(state.focus), recent=tuple(tuple(r.entities) for r in state.recent),
            negated=tuple(state.negated))
        started = time.perf_counter()
        try:
            verdict = self.model.decide(item, snapshot)
        except Exception as exc:  # noqa: BLE001 - a turn never fails on the model
            return ClarifyVerdict(True, offered_order(link), (
                f"the clarify model failed ({type(exc).__name__}: {exc}): asking instead",),
                {**link_features(link), "error": str(exc)})
        features = {**verdict.as_trace(),
                    "ms": round((time.perf_counter() - started) * 1000, 3)}
        if verdict.clarify:
            reasons = (f"clarify model: score {verdict.score:.3f} ≥ threshold "
                       f"{verdict.threshold:.3f}",)
            return ClarifyVerdict(True, offered_order(link), reasons, features,
                                  record=verdict.record(), preferred=verdict.options[0])
        reasons = (f"clarify model resolved it: score {verdict.score:.3f} < threshold "
                   f"{verdict.threshold:.3f}, most support for {verdict.options[0]}",)
        return ClarifyVerdict(False, reasons=reasons, features=features,
                              resolved=verdict.options[0])


def ask_which_antecedent(link: Link, detection: Detection, links: LinkResult,
                         snapshot: AliasSnapshot, *, focus: Sequence[str], recent: Sequence[str],
                         negated: Sequence[str] = (), said: Sequence[str] = ()) -> tuple[str, ...]:
    """The options to offer when ``link`` resolved a reference that has two compatible
    antecedents in focus, else () (the linker's choice stands).

    - A singular pronoun or demonstrative (它, 这个, it) that went to the most salient
      focus entity while another focus entity of the same type fits the question as
      well (both have the asked attribute) and the user last named the two side by
      side (A和B, A还是B, A、B, A and B; ``said``: the user's words of the recent
      turns, most recent first, see :func:`said_side_by_side`): 安居贷和易学贷… →
      这个能随时提前结清吗. Two things of one type named otherwise (X主演的Y) leave the
      pronoun to the most salient one, and a pronoun right after the one name the turn
      said (清溪古镇这个景点, 林晚秋，她的…) means that name: nothing to ask.
    - A shared alias settled only because one reading is the current focus, while
      another reading was also talked about in the last turns (悦享 after both the
      plan and the installment service).
    """
    if len(link.entity_ids) != 1 or link.entity_ids[0] not in snapshot.entities:
        return ()
    chosen = link.entity_ids[0]
    kind = snapshot.entities[chosen].type
    attributes = [m.value for m in detection.of(MentionKind.ATTRIBUTE)]
    named = {e for other in links.links if other.mention.kind is MentionKind.ALIAS
             for e in other.entity_ids}

    def fits(eid: str) -> bool:
        # A shared alias already says the readings are alike; a pronoun needs one type.
        return (eid in snapshot.entities
                and (snapshot.entities[eid].type == kind or link.mention.kind is MentionKind.ALIAS)
                and eid not in negated and (eid not in named or link.mention.kind is MentionKind.ALIAS)
                and all(snapshot.has_attribute(eid, a) for a in attributes
                        if snapshot.has_attribute(chosen, a)))

    if link.mention.kind is MentionKind.PRONOUN and link.reason == NAMED_BEFORE_REASON:
        return ()  # 清溪古镇这个景点, 林晚秋，她…: the turn said which one it means
    if link.mention.kind is MentionKind.PRONOUN and link.reason.startswith("pronoun"):
        rivals = [e for e in focus if e != chosen and fits(e)
                  and said_side_by_side(chosen, e, said, snapshot)]
        return tuple(e for e in focus if e == chosen or e in rivals) if rivals else ()
    if link.mention.kind is MentionKind.ALIAS and link.reason == "already the dialogue's focus":
        rivals = [c.entity_id for c in link.candidates
                  if c.entity_id != chosen and c.entity_id in recent and fits(c.entity_id)]
        return tuple(sorted([chosen, *rivals])) if rivals else ()
    return ()


_COORDINATOR_RE = cues.LISTED_TOGETHER_RE


def said_by_user(state: SessionState) -> list[str]:
    """The user's own words of the recent turns, most recent first."""
    return [record.user for record in reversed(state.recent)]


def said_side_by_side(a: str, b: str, said: Sequence[str], snapshot: AliasSnapshot) -> bool:
    """Whether the user last named ``a`` and ``b`` side by side: the most recent of the
    turns ``said`` (the user's own words, most recent first) that names either of them
    decides. A turn that named neither goes on about what was said before it (安居贷和
    易学贷有什么区别 → 利率呢 → 它能提前还吗 still has both side by side). What the
    rewrite wrote for such a turn is not the user's: a turn without a name is written
    with every focus entity in front (门票多少 after a sight and the park it lies in
    becomes 翠屏山溶洞和翠屏山门票多少), which names them side by side though the user
    never did."""
    for text in said:
        if listed_together(a, b, text, snapshot):
            return True
        if _spans(a, text, snapshot) or _spans(b, text, snapshot):
            return False
    return False


def _spans(entity_id: str, text: str, snapshot: AliasSnapshot) -> list[tuple[int, int]]:
    """Where ``text`` says one of the entity's names or aliases."""
    entity = snapshot.entities.get(entity_id)
    found = []
    for name in (entity.all_aliases if entity else ()):
        at = text.find(name)
        while at >= 0:
            found.append((at, at + len(name)))
            at = text.find(name, at + 1)
    return found


def listed_together(a: str, b: str, text: str, snapshot: AliasSnapshot) -> bool:
    """``text`` names ``a`` and ``b`` joined by a conjunction (their names or aliases)."""
    for first, second in ((a, b), (b, a)):
        for _, end in _spans(first, text, snapshot):
            for start, _ in _spans(second, text, snapshot):
                # What stands beside a name (年假 (annual leave)) is not in the way.
                gap = re.sub(r"[（(][^（）()]*[）)]", "", text[end:start]).strip(" ()（）")
                if start >= end and _COORDINATOR_RE.match(gap):
                    return True
    return False


class AntecedentGate:
    """Ask what ``base`` asks (an ambiguous link: :class:`AmbiguityGate`, or the fitted
    model's :class:`ModelGate`), and also when a reference the linker resolved had
    two compatible antecedents in focus (:func:`ask_which_antecedent`)."""

    def __init__(self, base: ClarifyGate | None = None) -> None:
        self.base = base or AmbiguityGate()

    def judge(self, link: Link, turn: UnderstoodTurn, state: SessionState,
              snapshot: AliasSnapshot) -> ClarifyVerdict:
        verdict = self.base.judge(link, turn, state, snapshot)
        if verdict.ask or is_switch(turn.text):
            return verdict
        recent = list(dict.fromkeys(e for record in reversed(state.recent) for e in record.entities))
        options = ask_which_antecedent(link, turn.detection, turn.links, snapshot,
                                       focus=state.focus, recent=recent, negated=state.negated,
                                       said=said_by_user(state))
        if not options:
            return verdict
        return ClarifyVerdict(True, options, (
            f"{link.mention.kind.value} “{link.mention.text}” has {len(options)} compatible "
            f"antecedents in focus: ask which", link.reason), link_features(link))
