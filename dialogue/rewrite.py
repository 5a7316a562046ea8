"""The rules rewriter: a standalone query built only from what was resolved.

Pronouns and aliases become canonical names; an ellipsis (那华南区呢) swaps
the entity, attribute or time of the previous standalone query; a turn with
nothing to link inherits the focus entity and the previous time expression.
It only ever writes entities that are resolved or already in the dialogue,
and it keeps the user's own words, so negations and times survive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from common.language import cues
from common.language.normalize import language_of
from dialogue.classify import TurnKind, is_ellipsis, revisit_cue, strip_conversation_cues
from dialogue.rewriter import Proposal, RewriteRequest
from kg.aliases import AliasSnapshot
from kg.linker import LinkResult
from kg.mentions import Detection, MentionKind, detect_mentions



_SEPARATELY_RE = cues.SEPARATELY_RE
_LEADING_JOINER_RE = cues.LEADING_JOINER_RE


@dataclass(frozen=True)
class Rewrite:
    standalone: str
    queries: tuple[str, ...]
    entities: tuple[str, ...]  # the entities the standalone query is about
    how: str  # which rule produced it, for the trace


def _join(names: Sequence[str], lang: str) -> str:
    return cues.wording(lang).join(names)


def _glue(prefix: str, text: str) -> str:
    if prefix and text and prefix[-1].isascii() and prefix[-1].isalnum() and text[0].isascii():
        return f"{prefix} {text}"
    return prefix + text


def _cjk(text: str) -> set[str]:
    return {c for c in text if "\u4e00" <= c <= "\u9fff"}


def _written_name(entity_id: str, said: str, lang: str, snapshot: AliasSnapshot) -> str:
    """The canonical name, plus what it would lose of the user's words:

    - an alias that says more than the name (保修期 for 保修政策: the 期) stays
      beside it, 保修政策（保修期）, so the asked-about part is still searched;
    - in an English turn, a Chinese name gets the English words as well, 婚假
      (marriage leave): the user's, or the entity's English alias for a pronoun.
    """
    name = snapshot.name(entity_id)
    if said and _cjk(said) - _cjk(name) and snapshot.normalize(said) != snapshot.normalize(name):
        return f"{name}（{said}）"
    if lang == "en" and _cjk(name):
        entity = snapshot.entities.get(entity_id)
        english = said if said and said.isascii() else next(
            (a for a in (entity.all_aliases if entity else ()) if a.isascii()
             and any(c.isalpha() for c in a) and len(a) > 3), "")
        if english:
            return f"{name} ({english})"
    return name


class RuleRewriter:
    """Deterministic rewrite constrained by the resolved entities."""

    def propose(self, request: RewriteRequest) -> Proposal:
        """The :class:`dialogue.rewriter.Rewriter` protocol: the rules rewrite of a
        planned turn, or of a resumed question once per chosen option."""
        if request.kind is TurnKind.ANSWER:
            return self._resumed(request)
        kind, detection, state = request.kind, request.detection, request.state
        last = state.last_turn
        rewrite = self.rewrite(
            detection, request.links, request.snapshot, entities=request.links.resolved,
            previous_standalone=last.standalone if last and kind is not TurnKind.SWITCH else None,
            previous_entities=last.entities if last else (),
            correction=kind is TurnKind.CORRECTION,
            continuation=kind is TurnKind.CONTINUATION
            or (kind is TurnKind.REVISIT and revisit_cue(detection.text) == "again"),
            times=_slot_values(state, "time") if kind is not TurnKind.SWITCH else [],
            compared=_slot_values(state, "comparison") if kind is TurnKind.CONTINUATION else [])
        return Proposal("rules", tuple(strip_conversation_cues(q) for q in rewrite.queries),
                        strip_conversation_cues(rewrite.standalone), rewrite.entities, rewrite.how)

    def _resumed(self, request: RewriteRequest) -> Proposal:
        question = request.detection.text
        if request.neither:
            return Proposal("rules", (question,), question, (),
                            "neither option: original question as asked", note="neither")
        state = request.state
        last = state.last_turn
        previous = last.standalone if last and last.action != "clarify" else None
        queries: list[str] = []
        entities: list[str] = []
        for reading in request.readings:
            rw = self.rewrite(reading.detection, reading.links, request.snapshot,
                              entities=reading.links.resolved or (reading.chosen,),
                              previous_standalone=previous,
                              previous_entities=last.entities if last else (),
                              times=_slot_values(state, "time"))
            entities.extend(e for e in rw.entities if e not in entities)
            queries.extend(q for q in rw.queries if q not in queries)
        return Proposal("rules", tuple(queries), queries[0], tuple(entities),
                        "clarification answered: pending question resumed")

    def rewrite(self, detection: Detection, links: LinkResult, snapshot: AliasSnapshot, *,
                entities: Sequence[str], previous_standalone: str | None,
                previous_entities: Sequence[str], correction: bool = False,
                continuation: bool = False, times: Sequence[str] | None = None,
                compared: Sequence[str] = ()) -> Rewrite:
        """Write the standalone query.

        Args:
            correction: the turn corrects the previous one (不对，我问的是B): the
                previous query is asked again with B in place of what it replaces.
            continuation: the turn goes on with the previous one's topic: what the
                previous query fixed and this turn does not replace (its time and
                version, an entity of another type such as 员工手册（2025版）) carries over.
            times: the dialogue's time/version slot, carried when the turn states none;
                None reads them off ``previous_standalone``.
            compared: the comparison-target slot (华东区和华北区比): on a continuation
                that does not name them, the query keeps "（与华北区相比）".
        """
        text = detection.text
        lang = language_of(text)
        turn_aliases = [link for link in links.links
                        if link.mention.kind is MentionKind.ALIAS and link.entity_ids]
        if previous_standalone and (correction or is_ellipsis(detection, links)):
            swapped = self._swap(detection, turn_aliases, snapshot, previous_standalone,
                                 previous_entities)
            if swapped is not None:
                standalone, kept = swapped
                return Rewrite(standalone, (standalone,), kept,
                               ("correction" if correction else "ellipsis")
                               + ": slot substitution on the previous query")

        # Replace resolved spans right to left so offsets stay valid.
        out = text
        replaced_any = False
        for link in sorted(links.links, key=lambda l: l.mention.start, reverse=True):
            if not link.entity_ids:
                continue
            kind = link.mention.kind
            if kind not in (MentionKind.ALIAS, MentionKind.PRONOUN, MentionKind.ORDINAL):
                continue
            start, end = link.mention.start, self._extend_over_marker(text, link, snapshot)
            names = _join([_written_name(e, text[start:end] if kind is MentionKind.ALIAS else "",
                                         lang, snapshot) for e in link.entity_ids], lang)
            if kind is MentionKind.PRONOUN and text[end:end + 1] and names.endswith(text[end]):
                end += 1  # 这个区 → 西南区, not 西南区区
            if kind is MentionKind.PRONOUN and text[end:].lstrip().startswith(names):
                names = ""  # 那个年假 → 年假: the pronoun only points at the name that follows
            out = out[:start] + names + out[end:]
            replaced_any = True
        split = self._split_intents(detection, links, snapshot, out)
        if split is not None:
            return split
        if replaced_any and continuation and previous_standalone:
            return self._carry_context(out, detection, snapshot, entities, previous_standalone,
                                       previous_entities, lang, times, compared)
        if replaced_any or not entities:
            return Rewrite(out, (out,), tuple(entities),
                           "canonical names substituted" if replaced_any else "as-is")

        # Nothing in the turn names an entity: inherit the focus and the time.
        prefix = _join([snapshot.name(e) for e in entities], lang)
        carried = "".join(t for t in self._missing_times(detection, previous_standalone, times)
                          if t not in text)
        standalone = _glue(prefix + carried, text)
        return Rewrite(standalone, (standalone,), tuple(entities), "focus entity carried over")


    @staticmethod
    def _split_intents(detection: Detection, links: LinkResult, snapshot: AliasSnapshot,
                       standalone: str) -> Rewrite | None:
        """A和B分别怎么申请 / how do I apply for A and B respectively: one query per
        entity, each with the question that follows the last of them."""
        if not _SEPARATELY_RE.search(detection.text):
            return None
        named = [link for link in links.links
                 if link.mention.kind is MentionKind.ALIAS and len(link.entity_ids) == 1]
        ids = list(dict.fromkeys(link.entity_ids[0] for link in named))
        if len(ids) < 2:
            return None
        tail = detection.text[max(link.mention.end for link in named):]
        question = _SEPARATELY_RE.sub("", _LEADING_JOINER_RE.sub("", tail)).strip()
        if not question:
            return None
        queries = tuple(_glue(snapshot.name(e), question) for e in ids)
        return Rewrite(standalone, queries, tuple(ids), "several intents: one query per entity")

    def _carry_context(self, out: str, detection: Detection, snapshot: AliasSnapshot,
                       entities: Sequence[str], previous: str, previous_entities: Sequence[str],
                       lang: str, slot_times: Sequence[str] | None,
                       compared: Sequence[str]) -> Rewrite:
        types = {snapshot.entities[e].type for e in entities if e in snapshot.entities}
        carried = [e for e in previous_entities if e not in entities and e in snapshot.entities
                   and snapshot.entities[e].type not in types]
        if carried:
            out = _glue(_join([snapshot.name(e) for e in carried], lang), out)
        times = "".join(t for t in self._missing_times(detection, previous, slot_times)
                        if t not in out)
        if times:
            # Right after the first name of the turn's own entities: 华东区的负责人 → 华东区7月的负责人.
            spots = [out.find(snapshot.name(e)) + len(snapshot.name(e)) for e in entities
                     if snapshot.name(e) in out]
            at = min(spots) if spots else 0
            out = out[:at] + times + out[at:]
        others = [e for e in compared if e not in entities and e not in carried
                  and e in snapshot.entities and snapshot.name(e) not in out]
        if others:
            names = _join([snapshot.name(e) for e in others], lang)
            out = out + cues.wording(lang).compared_with.format(names=names)
            carried.extend(others)
        if not carried and not times:
            return Rewrite(out, (out,), tuple(entities), "canonical names substituted")
        kept = (*entities, *carried)
        return Rewrite(out, (out,), kept, "canonical names substituted; context carried over")

    @staticmethod
    def _extend_over_marker(text: str, link, snapshot: AliasSnapshot) -> int:
        """When a shared alias is followed by the word that settled it
        (A产品 + 企业版), the canonical name replaces both."""
        end = link.mention.end
        if link.mention.kind is not MentionKind.ALIAS or len(link.entity_ids) != 1:
            return end
        words = snapshot.distinguishing_words(link.entity_ids[0], snapshot.normalize(link.mention.text))
        tail = snapshot.normalize_with_offsets(text[end:end + 24])
        for word in words:
            if tail.text.startswith(word):
                return end + tail.span(0, len(word))[1]
        return end

    @staticmethod
    def _missing_times(detection: Detection, previous: str | None,
                       slot: Sequence[str] | None = None) -> list[str]:
        """The dialogue's time and version expressions (the slot's, else the previous
        query's), when this turn has none."""
        if detection.of(MentionKind.TIME):
            return []
        if slot is not None:
            return list(slot)
        if not previous:
            return []
        found = list(dict.fromkeys(m.text for m in detect_mentions(previous, None).of(MentionKind.TIME)))
        # Each once, and not a part of a longer one (2004年 inside 2004年06月).
        return [t for t in found if not any(t != other and t in other for other in found)]

    def _swap(self, detection: Detection, turn_aliases, snapshot: AliasSnapshot,
              previous: str, previous_entities: Sequence[str]) -> tuple[str, tuple[str, ...]] | None:
        """Put the turn's entity, attribute or time in place of the previous
        query's one of the same kind. Returns the query and its entities."""
        out, swapped = previous, False
        entities = list(previous_entities)
        for link in turn_aliases:
            new_id = link.entity_ids[0]
            new_type = snapshot.entities[new_id].type if new_id in snapshot.entities else None
            for old_id in previous_entities:
                old = snapshot.entities.get(old_id)
                if old is None or old.type != new_type or old_id == new_id:
                    continue
                for alias in sorted(old.all_aliases, key=len, reverse=True):
                    if alias in out:
                        out = out.replace(alias, snapshot.name(new_id), 1)
                        if old_id in entities:
                            entities[entities.index(old_id)] = new_id
                        elif new_id not in entities:
                            # An earlier mention of the turn already replaced old_id.
                            entities.append(new_id)
                        swapped = True
                        break
        prev_detection = detect_mentions(previous, snapshot)
        for kind in (MentionKind.ATTRIBUTE, MentionKind.TIME):
            new = detection.of(kind)
            old = prev_detection.of(kind)
            if len(new) == 1 and len(old) == 1 and new[0].text != old[0].text:
                out = out.replace(old[0].text, new[0].text, 1)
                swapped = True
        return (out, tuple(dict.fromkeys(entities))) if swapped else None


def _slot_values(state, name: str) -> list[str]:
    slot = getattr(state.slots, name)
    return list(slot.values) if slot is not None else []
