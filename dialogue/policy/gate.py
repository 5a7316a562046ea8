"""Clarify or resolve: the one place that decides whether a link is worth a question.

The linker (kg/linker.py) settles what the turn and the dialogue settle and
leaves the rest ambiguous; a :class:`ClarifyGate` looks at each link of the
turn and says whether to ask about it, with the options in the order they
will be offered and the features and reasons of its verdict. The policy asks
about the first link a gate says to ask about. :class:`AmbiguityGate` (the
default) asks exactly when a link stayed ambiguous; a learned gate or one
that also asks about a resolved pronoun plugs in through the same method.
"""

from __future__ import annotations

import time
from typing import Protocol

from dialogue.policy.clarify_model import ClarifyModel, DecisionInput
from dialogue.policy.decision import ClarifyVerdict, UnderstoodTurn
from dialogue.state import SessionState
from kg.aliases import AliasSnapshot
from kg.linker import Link
from kg.mentions import MentionKind


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
                                  record=verdict.record())
        reasons = (f"clarify model resolved it: score {verdict.score:.3f} < threshold "
                   f"{verdict.threshold:.3f}, most support for {verdict.options[0]}",)
        return ClarifyVerdict(False, reasons=reasons, features=features,
                              resolved=verdict.options[0])
