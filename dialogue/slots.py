"""The dialogue's structured slots and the rolling summary of older turns.

After every answered turn :func:`update_slots` records what the conversation has
fixed — focus, negated entities, attribute, time/version, comparison target —
each with the turn that set it:

- a value the turn states is ``said`` at this turn (``corrected`` when the turn is
  a correction: a later correction always overrides an earlier value);
- a value the turn does not replace is ``carried``, keeping the turn that said it;
- a topic switch clears every slot, and a new topic clears what belonged to the
  old one (attribute, time, comparison) unless the turn states them again.

:func:`summarize` turns the records that fall out of the last K verbatim turns
into :class:`~dialogue.state.SummaryLine` s that keep their entity names,
numbers, dates and attributes, so a later turn (or the LLM rewriter) can still
reach them while the state stays bounded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from dialogue.classify import TurnKind, comparison_targets
from dialogue.state import SessionState, Slot, Slots, SummaryLine, TurnRecord
from kg.aliases import AliasSnapshot
from understanding.linker import LinkResult
from understanding.mentions import Detection, MentionKind, detect_mentions

# Summary lines kept: older ones go first. Each line is at most SUMMARY_CHARS long.
SUMMARY_LINES = 8
SUMMARY_CHARS = 80

_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?%?")


def _stated(previous: Slot | None, values: list[str], turn: int, how: str) -> Slot | None:
    """The slot after a turn that may state ``values``: stated values replace the
    earlier ones (the same values said again keep their first turn); else carried."""
    if values:
        if previous is not None and previous.values == values and how != "corrected":
            return previous
        return Slot(values=values, turn=turn, how=how)
    if previous is None:
        return None
    return previous.model_copy(update={"how": "carried"})


def update_slots(slots: Slots, *, turn: int, kind: TurnKind, detection: Detection,
                 links: LinkResult, entities: Sequence[str], negated: Sequence[str]) -> Slots:
    """The slots after this turn. ``detection``/``links`` are of the user's own words
    (what the turn states); ``entities`` is what the turn ended up being about."""
    if kind is TurnKind.SWITCH:
        slots = Slots()
    elif kind is TurnKind.NEW_TOPIC:
        # A new subject: what was asked about the old one no longer applies.
        slots = Slots(focus=slots.focus, negated=slots.negated)
    how = "corrected" if kind is TurnKind.CORRECTION else "said"
    attributes = list(dict.fromkeys(m.text for m in detection.of(MentionKind.ATTRIBUTE)))
    times = list(dict.fromkeys(m.text for m in detection.of(MentionKind.TIME)))
    named = {e for link in links.links if link.mention.kind is MentionKind.ALIAS
             for e in link.entity_ids}
    focus = _stated(slots.focus, list(entities), turn, how)
    if focus is not None and focus is slots.focus and not set(focus.values) <= named:
        focus = focus.model_copy(update={"how": "carried"})  # reached by a pronoun or ellipsis
    negated_slot = slots.negated
    if list(negated) != (negated_slot.values if negated_slot else []):
        negated_slot = Slot(values=list(negated), turn=turn, how="corrected") if negated else None
    compared = [e for e in comparison_targets(detection, links) if e in entities or e in named]
    comparison = _stated(slots.comparison, compared, turn, how)
    if comparison is not None and not compared and focus is not None \
            and set(comparison.values) & set(focus.values):
        comparison = None  # the focus moved onto what it used to be compared with
    return Slots(focus=focus, negated=negated_slot,
                 attribute=_stated(slots.attribute, attributes, turn, how),
                 time=_stated(slots.time, times, turn, how),
                 comparison=comparison)


def summarize(records: Sequence[TurnRecord], snapshot: AliasSnapshot) -> list[SummaryLine]:
    """Extractive lines for turns leaving the verbatim window: the standalone query
    when it fits, else its entity names, times, numbers and attributes in order."""
    lines = []
    for record in records:
        if record.action == "clarify":
            continue  # its question is resumed (or dropped) by the next turn
        text = record.standalone.strip()
        if len(text) > SUMMARY_CHARS:
            text = _extract(text, record.entities, snapshot)
        lines.append(SummaryLine(turn=record.index, text=text, entities=list(record.entities)))
    return lines


def _extract(text: str, entities: Sequence[str], snapshot: AliasSnapshot) -> str:
    """The spans of ``text`` that carry entities, times, numbers and attributes,
    in their order, clipped to SUMMARY_CHARS (entities and numbers first)."""
    detection = detect_mentions(text, snapshot)
    spans: list[tuple[int, int, int]] = []  # (priority, start, end)
    for m in detection.mentions:
        if m.kind in (MentionKind.ALIAS, MentionKind.TIME, MentionKind.NEGATION):
            spans.append((0, m.start, m.end))
        elif m.kind is MentionKind.ATTRIBUTE:
            spans.append((1, m.start, m.end))
    spans.extend((0, m.start(), m.end()) for m in _NUMBER_RE.finditer(text))
    for e in entities:  # a name the standalone query spells in full
        name = snapshot.name(e)
        at = text.find(name)
        if at >= 0:
            spans.append((0, at, at + len(name)))
    chosen: list[tuple[int, int]] = []
    used = 0
    for _, start, end in sorted(spans, key=lambda s: (s[0], s[1], -s[2])):
        if any(start < e and s < end for s, e in chosen):
            continue
        if used + (end - start) + 1 > SUMMARY_CHARS:
            continue
        chosen.append((start, end))
        used += end - start + 1
    return " ".join(text[s:e] for s, e in sorted(chosen))


def fold_into_summary(state: SessionState, evicted: Sequence[TurnRecord],
                      snapshot: AliasSnapshot) -> None:
    """Add the turns that left the verbatim window to the bounded summary."""
    if evicted:
        state.summary = (state.summary + summarize(evicted, snapshot))[-SUMMARY_LINES:]
