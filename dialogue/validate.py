"""The rewrite validator: a rewrite is accepted only if it invents nothing and drops nothing.

Checks, each recorded in the trace:
- ``entities_known``    every entity the rewrite names is one the dialogue resolved or the
                        user wrote
- ``entities_present``  every entity the turn is about is named
- ``negation_kept``     every negation word of the user's turn is still there
- ``time_kept``         every time and version expression of the user's turn is still there
- ``no_new_numbers``    no number that is in neither the conversation nor an entity's name
- ``intent_kept``       the question word (怎么, 为什么, 多少, how, why…) is still there
- ``attribute_kept``    every attribute the user (or the trusted reference) asks about is there
- ``excluded_absent``   no entity the user corrected away from or negated is named
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from common.language import cues
from common.language.relative import anchored
from dialogue.policy.versions import edition
from kg.aliases import AliasSnapshot
from understanding.mentions import Mention, MentionKind, detect_mentions

_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")
# Question words in groups of synonyms across languages (怎么 = 如何 = how).
_INTENT_GROUPS = cues.INTENT_GROUPS


@dataclass(frozen=True)
class Verdict:
    accepted: bool
    checks: dict[str, bool]


def _spelled_inside(entity_id: str, written: Sequence[Mention], snapshot: AliasSnapshot) -> bool:
    """The entity's full name is written inside a longer name the rewrite names
    (安心医疗险 in 安心医疗险条款（2024版）): it is named, though the longer name is what
    mention detection finds there."""
    entity = snapshot.entities.get(entity_id)
    if entity is None:
        return False
    name = entity.name.lower()
    return any(name in m.text.lower() and len(m.text) > len(name)
               for m in written if m.kind is MentionKind.ALIAS)


def _intents(text: str) -> list[set[str]]:
    lowered = text.lower()
    return [group for group in _INTENT_GROUPS if any(w in lowered for w in group)]


def _forms(time: str, anchors: Sequence[str]) -> set[str]:
    """How a time of the turn may be written: as said, or, said relative to one of the
    ``anchors`` (上个月 after 2025年5月), as the time it stands for."""
    return {time.lower()} | {a.lower() for text in anchors if (a := anchored(time, text))}


def _editions_for(time: str, entities: Sequence[str], snapshot: AliasSnapshot) -> set[str]:
    """旧版, the previous version: kept when the rewrite names the edition it stands for
    (one of the turn's entities whose name holds an edition number)."""
    if not (cues.OLDER_EDITION_RE.search(time) or cues.NEWER_EDITION_RE.search(time)):
        return set()
    return {snapshot.name(e).lower() for e in entities
            if e in snapshot.entities and edition(snapshot.name(e)) is not None}


def _to_keep(turn: str, said: Sequence[Mention], reference: Sequence[str],
             snapshot: AliasSnapshot) -> list[Mention]:
    """What the rewrite must keep: the user's mentions, and those of the trusted
    reference. A negation inside a conversation cue (先别管这个，…) is about the
    conversation, not the question: the rewrite leaves the cue out, and the negation
    with it."""
    cue_spans = [m.span() for m in cues.SWITCH_RE.finditer(turn)]
    own = [m for m in said if not (m.kind is MentionKind.NEGATION and any(
        a <= m.start and m.end <= b for a, b in cue_spans))]
    return [*own, *(m for r in reference for m in detect_mentions(r, snapshot).mentions)]


def _known_numbers(texts: Iterable[str], entities: Iterable[str],
                   snapshot: AliasSnapshot) -> set[str]:
    """The numbers a rewrite may write: those of ``texts`` (the turn, the conversation,
    the forms of its times) and of the names and aliases of ``entities``."""
    known = set(_NUMBER_RE.findall(" ".join(texts)))
    known |= {n for e in entities if e in snapshot.entities
              for alias in snapshot.entities[e].all_aliases
              for n in _NUMBER_RE.findall(alias)}
    return known


class RewriteValidator:
    """Checks a rewrite against the user's turn and what the dialogue resolved."""

    def check(self, turn: str, queries: Sequence[str], snapshot: AliasSnapshot, *,
              entities: Sequence[str], allowed: Iterable[str], context: Sequence[str] = (),
              reference: Sequence[str] = (), excluded: Iterable[str] = ()) -> Verdict:
        """Args:
            turn: the user's words.
            queries: the rewrite to judge.
            entities: what the turn is about (each must be named).
            allowed: every entity the rewrite may name (resolved or in the dialogue).
            context: earlier text of the conversation (numbers may come from it).
            reference: a rewrite already trusted (the rules one): negations and times it
                carried over from earlier turns (那综合意外险呢 after 意外险不保哪些情况)
                must survive too, and so must the attributes and compared entities it names.
            excluded: entities the user corrected away from (不对，我问的是B: A); a
                rewrite that names one of them (and the turn does not) is refused.
        """
        user = detect_mentions(turn, snapshot)
        said = {e for m in user.mentions if m.kind is MentionKind.ALIAS for e in m.entity_ids}
        # A name the user wrote is never invented, even when the turn is not about it
        # (the park named inside the gallery's address).
        allowed_ids = set(allowed) | set(entities) | said
        joined = "\n".join(queries)
        written = [m for q in queries for m in detect_mentions(q, snapshot).mentions]
        named = {e for m in written if m.kind is MentionKind.ALIAS for e in m.entity_ids}
        ambiguous_ok = all(set(m.entity_ids) & allowed_ids for m in written
                           if m.kind is MentionKind.ALIAS)
        kept = _to_keep(turn, user.mentions, reference, snapshot)
        # A relative time (上个月) may be written as the time it stands for (2025年4月),
        # counted from one the conversation named: that form keeps it, and its numbers
        # are not new.
        anchors = [*context, *reference]
        times = {id(m): _forms(m.text, anchors) | _editions_for(m.text, entities, snapshot)
                 for m in kept if m.kind is MentionKind.TIME}
        known_numbers = _known_numbers([turn, *context, *(
            form for forms in times.values() for form in forms)], allowed_ids, snapshot)
        checks = {
            "entities_known": bool(queries) and ambiguous_ok,
            "entities_present": all(e in named or _spelled_inside(e, written, snapshot)
                                    for e in entities),
            "negation_kept": all(m.text.lower() in joined.lower() for m in kept
                                 if m.kind is MentionKind.NEGATION),
            "time_kept": all(any(form in joined.lower() for form in times[id(m)]) for m in kept
                             if m.kind is MentionKind.TIME),
            "no_new_numbers": set(_NUMBER_RE.findall(joined)) <= known_numbers,
            # The ellipsis cue's own question word (how about, 又如何) asks nothing.
            "intent_kept": all(any(w in joined.lower() for w in group)
                               for group in _intents(cues.ASKLESS_CUE_RE.sub(" ", turn))),
            "attribute_kept": all(m.text.lower() in joined.lower() or str(m.value) in joined
                                  for m in kept if m.kind is MentionKind.ATTRIBUTE),
            # A name shared with the entity meant (student handbook beside 学生手册（2024版）)
            # does not name the one corrected away.
            "excluded_absent": not ({e for m in written if m.kind is MentionKind.ALIAS
                                     and len(m.entity_ids) == 1 for e in m.entity_ids}
                                    & (set(excluded) - set(entities) - said)),
        }
        return Verdict(accepted=all(checks.values()), checks=checks)
