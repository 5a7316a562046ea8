"""The rules rewriter: a standalone query built only from what was resolved.

Pronouns and aliases become canonical names; a follow-up (an ellipsis, 那华南区呢;
a correction; a sibling question) is the previous question's slots with the turn's
put in, rendered (dialogue/render.py); a turn with nothing to link inherits the
focus entity and the previous time expression.
It only ever writes entities that are resolved or already in the dialogue,
and it keeps the user's own words, so negations and times survive.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from common.language import cues
from common.language.normalize import is_cjk, turn_language
from common.language.relative import anchored
from dialogue.classify import (TurnKind, asks_for_more, comparison_spans, corrected_spans,
                               is_ellipsis, residue, revisit_cue, side_spans,
                               strip_conversation_cues)
from dialogue.framing import kept_question
from dialogue.policy.counterparts import is_counterpart
from dialogue.render import (Change, QuestionSlots, follow_up, glue, read_question, read_turn,
                             render, same_type, written_name)
from dialogue.rewriter import Proposal, RewriteRequest
from kg.aliases import AliasSnapshot
from understanding.linker import Link, LinkResult
from understanding.mentions import Detection, MentionKind, detect_mentions



_SEPARATELY_RE = cues.SEPARATELY_RE
_LEADING_JOINER_RE = cues.LEADING_JOINER_RE
# What an ellipsis varies, once its cue is gone: 那东馆呢 → 东馆, what about printing → printing.
_ELLIPSIS_BODY_RE = cues.ELLIPSIS_BODY_RE
# Particles and modal verbs a short follow-up is made of besides its names (个人版能约吗).
_LIGHT_RE = cues.LIGHT_RE
# A continuation shorter than this that names no attribute asks about the last one (怎么才能退掉).
_SHORT_FOLLOW_UP = 8
# Demonstratives a noun follows (这张卡, 这门课).
_NOUN_POINTERS = cues.NOUN_POINTERS
# A leading continuation cue in front of a name (那掌上课堂简洁版…): not part of the question.
_LEADING_CUE_RE = cues.FOLLOW_UP_LEAD_RE
_CUE_BEFORE_NAME_RE = cues.CUE_BEFORE_NAME_RE
# What the turn writes over with canonical names.
_WRITTEN_KINDS = (MentionKind.ALIAS, MentionKind.PRONOUN, MentionKind.ORDINAL)


@dataclass(frozen=True)
class Rewrite:
    standalone: str
    queries: tuple[str, ...]
    entities: tuple[str, ...]  # the entities the standalone query is about
    how: str  # which rule produced it, for the trace
    slots: QuestionSlots | None = None  # what it was rendered from, when it was


def _beside(names: str, text: str, lang: str) -> str:
    """Names the question keeps though it does not say them: in front of a Chinese
    question (安居贷利率多少), in brackets at the end of an English one, before its mark
    (is there a fine (续保)?), never pasted onto its first word."""
    if lang != "en" or not names:
        return glue(names, text)
    body = text.rstrip()
    mark = body[-1] if body and body[-1] in "?？.!" else ""
    body = body[:-1].rstrip() if mark else body
    return f"{body} ({names}){mark}"


def _join(names: Sequence[str], lang: str) -> str:
    return cues.wording(lang).join(names)


def _names_it(word: str, entities: Sequence[str], snapshot: AliasSnapshot) -> bool:
    """Whether "the <word>" of an English turn stands for the focus: the word is one of
    the words of a focus entity's English names or of its type's name (the card, the
    plan). "The genre", "the office" or "the shower" ask about something else; the
    name goes after the question instead of over them."""
    word = word.lower()
    for entity_id in entities:
        entity = snapshot.entities.get(entity_id)
        if entity is None:
            continue
        words = {w.lower() for a in entity.all_aliases if a.isascii()
                 for w in re.findall(r"[A-Za-z]+", a)}
        words.update(w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", entity.type))
        if word in words or word.rstrip("s") in words:
            return True
    return False


def links_named(detection: Detection):
    """The turn's alias mentions."""
    return detection.of(MentionKind.ALIAS)


def _tidy(query: str, entities: Sequence[str], snapshot: AliasSnapshot) -> str:
    """Drop a continuation cue left in front of a name (那掌上课堂简洁版… → 掌上课堂简洁版…)."""
    cue = _CUE_BEFORE_NAME_RE.match(query)
    if cue and any(query[cue.end():].startswith(snapshot.name(e)) for e in entities):
        return query[cue.end():]
    return query


# A follow-up that asks about a topic of its own (火星上的天气怎么样, 有健身房吗, 退课的时候…)
# rather than leaving out what it asks about (怎么才能退掉, 连续缺勤几次会被停卡).
_OWN_TOPIC_RE = cues.OWN_TOPIC_RE
# "Both versions" / 两个版本 / 两版 / 两年: the last two versions or times named.
_BOTH_VERSIONS_RE = cues.BOTH_VERSIONS_RE


def _asks_without_object(detection: Detection, links: LinkResult) -> bool:
    """A short predicate with no topic of its own: what it asks about was left out."""
    rest = residue(detection, links)
    return 0 < len(rest) <= _SHORT_FOLLOW_UP and not _OWN_TOPIC_RE.search(detection.text)


def _both_versions(text: str, earlier: Sequence[str]) -> str | None:
    """两个版本月费差多少 → 2025版和2024版两个版本月费差多少, from the last two versions named
    (the user's words stay: they may name what is asked)."""
    put = _versions_put(text, earlier)
    return None if put is None else text[:put[0]] + put[1] + text[put[0]:]


def _versions_put(text: str, earlier: Sequence[str]) -> tuple[int, str] | None:
    """Where "both versions" is said and the two versions it stands for, as written in
    before it."""
    cue = _BOTH_VERSIONS_RE.search(text)
    pair = list(dict.fromkeys(earlier))[:2]
    if cue is None or len(pair) < 2:
        return None
    lang = turn_language(text)
    joined = cues.wording(lang).join(pair)
    return cue.start(), joined + ("" if joined.endswith(cue.group(0)) else " " if lang == "en" else "")


def _stated(text: str) -> bool:
    """Whether a standalone was written as a statement: it ends with a full stop or an
    exclamation mark and holds no question mark (a question typed without its mark, as
    Chinese queries often are, still counts as a question)."""
    return re.search(r"[.。!！]\s*$", text) is not None and not re.search(r"[?？]", text)


def _inside(mention, spans: Sequence[tuple[int, int]]) -> bool:
    return any(start <= mention.start and mention.end <= end for start, end in spans)


def _with_times_written_out(rewrite: Rewrite, detection: Detection, previous: str) -> Rewrite:
    """The rewrite with each time the turn said relative to the previous query's (比上个月
    多多少 after 华东区7月…) written as the time it stands for (6月): searchable on its
    own, as an annotator would write it."""
    out = rewrite
    for m in detection.of(MentionKind.TIME):
        said = anchored(m.text, previous)
        if said is None or m.text not in out.standalone:
            continue
        out = replace(out, standalone=out.standalone.replace(m.text, said),
                      queries=tuple(q.replace(m.text, said) for q in out.queries))
    return out


def _with_held_focus(out: str, links: LinkResult, snapshot: AliasSnapshot, lang: str) -> str:
    """The focus the turn keeps beside what it names (这部电影是韩默导演的), written
    beside the query when the names put in left it out."""
    held = [snapshot.name(e) for link in links.links if link.mention.kind is MentionKind.IMPLICIT
            for e in link.entity_ids]
    if held and not all(name in out for name in held):
        return _beside(_join([n for n in held if n not in out], lang), _LEADING_CUE_RE.sub("", out), lang)
    return out


def _pronoun_replaced(text: str, mention, written: str, end: int,
                      then: str | None) -> tuple[str, int]:
    """What a pronoun ending at ``end`` becomes, given the names ``written`` for it, and
    where what it replaces ends: nothing when the name follows it (那个年假 → 年假), the
    names at the time ``then`` when it is what the turn compares with, else the names
    without the noun after it that they already say."""
    if text[end:end + 1] and written.endswith(text[end]):
        end += 1  # 这个区 → 西南区, not 西南区区
    if text[end:].lstrip().startswith(written):
        return "", end  # the pronoun only points at the name that follows
    if then is not None:
        return written + then, end
    return written, end + _noun_echo(text, mention, written, end)


def _recall_start(text: str, start: int) -> int:
    """Where a pointer starting at ``start`` begins with the recall word before it (刚才那个
    → from 刚才): the name written for the pointer says which one, the recall word is about
    the conversation."""
    recall = cues.RECALL_BEFORE_POINTER_RE
    found = recall.search(text, 0, start) if recall is not None else None
    return found.start() if found is not None else start


def _noun_echo(text: str, mention, written: str, end: int) -> int:
    """How many characters after a pronoun repeat a noun of the name written for it:
    这个套餐 → 畅练套餐个人版, not 畅练套餐个人版套餐; after a measure word the noun
    inside the name goes too (这张卡 → 星卡尊享版)."""
    tail = text[end:end + 4]
    inside = mention.text.lower()[-2:] in _NOUN_POINTERS
    for cut in range(len(tail), 0, -1):
        if any(is_cjk(c) for c in tail[:cut]) and (written.endswith(tail[:cut])
                                 or (inside and tail[:cut] in written)):
            return cut
    return 0


def _attribute_left_out(detection: Detection, links: LinkResult, attributes: Sequence[str],
                        previous: str | None) -> str:
    """The dialogue's attribute, when a short follow-up that names none asks about it
    (怎么才能退掉 after 定金…); only one the previous question asked: 要交学费吗 two
    turns after 几个学分 (and after 分班考试是哪天) leaves out nothing of it."""
    text = detection.text
    if (attributes and not detection.of(MentionKind.ATTRIBUTE)
            and not detection.of(MentionKind.TIME) and _asks_without_object(detection, links)
            and not any(a in text for a in attributes)
            and (not previous or any(a in previous for a in attributes))):
        return "".join(attributes)
    return ""


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
            previous_slots=kept_question(last, request.snapshot),
            correction=kind is TurnKind.CORRECTION,
            continuation=kind is TurnKind.CONTINUATION
            or (kind is TurnKind.REVISIT and revisit_cue(detection.text) == "again"),
            times=_slot_values(state, "time") if kind is not TurnKind.SWITCH else [],
            compared=_slot_values(state, "comparison") if kind is TurnKind.CONTINUATION else [],
            attributes=_slot_values(state, "attribute") if kind is TurnKind.CONTINUATION else [],
            earlier_times=_earlier_times(state) if kind is not TurnKind.SWITCH else [],
            excluded=_corrected_away(request))
        if last and kind is not TurnKind.SWITCH:
            rewrite = _with_times_written_out(rewrite, detection, last.standalone)
        return Proposal("rules", tuple(strip_conversation_cues(q) for q in rewrite.queries),
                        strip_conversation_cues(rewrite.standalone), rewrite.entities, rewrite.how,
                        slots=rewrite.slots)

    def _resumed(self, request: RewriteRequest) -> Proposal:
        question = request.detection.text
        if request.neither:
            return Proposal("rules", (question,), question, (),
                            "neither option: original question as asked", note="neither")
        state = request.state
        last = state.last_turn
        previous = last.standalone if last and last.action != "clarify" else None
        previous_slots = kept_question(last, request.snapshot) if previous else None
        queries: list[str] = []
        entities: list[str] = []
        for reading in request.readings:
            rw = self.rewrite(reading.detection, reading.links, request.snapshot,
                              entities=reading.links.resolved or (reading.chosen,),
                              previous_standalone=previous,
                              previous_entities=last.entities if last else (),
                              previous_slots=previous_slots,
                              times=_slot_values(state, "time"))
            entities.extend(e for e in rw.entities if e not in entities)
            queries.extend(q for q in rw.queries if q not in queries)
        standalone = queries[0]
        if len(request.readings) > 1 and len(queries) > 1:
            # Both options: one query each is searched; the standalone names them all.
            first = request.readings[0]
            both = LinkResult(tuple(
                replace(link, entity_ids=tuple(r.chosen for r in request.readings))
                if set(link.entity_ids) & {r.chosen for r in request.readings} and
                link.mention.kind is not MentionKind.IMPLICIT else link
                for link in first.links.links))
            standalone = self.rewrite(first.detection, both, request.snapshot,
                                      entities=tuple(entities), previous_standalone=None,
                                      previous_entities=()).standalone
        return Proposal("rules", tuple(queries), standalone, tuple(entities),
                        "clarification answered: pending question resumed")

    def rewrite(self, detection: Detection, links: LinkResult, snapshot: AliasSnapshot, *,
                entities: Sequence[str], previous_standalone: str | None,
                previous_entities: Sequence[str],
                previous_slots: QuestionSlots | None = None, correction: bool = False,
                continuation: bool = False, times: Sequence[str] | None = None,
                compared: Sequence[str] = (), attributes: Sequence[str] = (),
                earlier_times: Sequence[str] = (), excluded: Sequence[str] = ()) -> Rewrite:
        """Write the standalone query.

        Args:
            previous_slots: the previous question as slots, as its turn kept them; None
                reads them off ``previous_standalone`` (a turn saved before turns kept them).
            correction: the turn corrects the previous one (不对，我问的是B): the
                previous query is asked again with B in place of what it replaces.
            continuation: the turn goes on with the previous one's topic: what the
                previous query fixed and this turn does not replace (its time and
                version, an entity of another type such as 员工手册（2025版）) carries over.
            times: the dialogue's time/version slot, carried when the turn states none;
                None reads them off ``previous_standalone``.
            compared: the comparison-target slot (华东区和华北区比): on a continuation
                that does not name them, the query keeps "（与华北区相比）".
            attributes: the dialogue's attribute slot (定金): a short continuation that
                asks about no attribute of its own (怎么才能退掉) asks about this one.
            earlier_times: the times and versions the conversation has named, most
                recent first: "the two versions" (两个版本) are the last two of them.
            excluded: entities corrected away: a follow-up's render leaves them out.
        """
        names = [(m.start, m.end) for m in detection.of(MentionKind.ALIAS)]
        lang = turn_language(detection.text, names)
        if previous_standalone:
            swapped = self._swapped(detection, links, snapshot, previous_standalone,
                                    previous_entities, previous_slots, correction, excluded)
            if swapped is not None:
                return swapped
        out, replaced_any = self._names_written(detection, links, snapshot, lang, times)
        if replaced_any:
            out = _with_held_focus(out, links, snapshot, lang)
            if not detection.of(MentionKind.TIME):
                out = _both_versions(out, earlier_times) or out
        split = self._split_intents(detection, links, snapshot, out)
        if split is not None:
            return split
        if replaced_any and continuation and previous_standalone:
            return self._carry_context(out, detection, snapshot, entities, previous_standalone,
                                       previous_entities, lang, times, compared)
        if replaced_any or not entities:
            tidy = _tidy(out, entities, snapshot)
            return Rewrite(tidy, (tidy,), tuple(entities),
                           "canonical names substituted" if replaced_any else "as-is")
        asked = (_attribute_left_out(detection, links, attributes, previous_standalone)
                 if continuation else "")
        return self._focus_carried(detection, snapshot, entities, lang, asked,
                                   self._missing_times(detection, previous_standalone, times),
                                   earlier_times)

    def _swapped(self, detection: Detection, links: LinkResult, snapshot: AliasSnapshot,
                 previous: str, previous_entities: Sequence[str],
                 previous_slots: QuestionSlots | None, correction: bool,
                 excluded: Sequence[str] = ()) -> Rewrite | None:
        """A correction, an ellipsis or a sibling follow-up: the previous question's slots
        with what the turn changes, rendered (dialogue/render.py); None when the turn is
        none of these, changes nothing, or the previous turn was a statement (an ellipsis
        after a statement borrows no question: the focus is carried instead), and in a kb
        without an ontology (there retrieval's history of the turns carries the topic)."""
        turn_aliases = [link for link in links.links if link.entity_ids
                        and (link.mention.kind is MentionKind.ALIAS or is_counterpart(link))]
        if not (correction or is_ellipsis(detection, links)
                or self._sibling_follow_up(detection, turn_aliases, snapshot, previous_entities)):
            return None
        named = [link for link in links.links if link.entity_ids
                 and (link.mention.kind in _WRITTEN_KINDS or is_counterpart(link))]
        if not correction and _stated(previous):
            return None  # a statement before (I'm told X): no question to borrow
        if not snapshot.entities:
            return None  # a kb without an ontology: the turns' history carries the topic
        before = previous_slots or read_question(previous, previous_entities, snapshot)
        read = "kept slots" if previous_slots else "slots read from its standalone"
        change = _change(detection, named, snapshot, previous, previous_entities, excluded)
        after = follow_up(before, change, snapshot)
        if replace(after, said=()) == replace(before, said=()):
            return None
        standalone = render(after, snapshot)
        compared = [link.entity_ids[0] for link in named
                    if _inside(link.mention, comparison_spans(detection.text))]
        # What the turn names comes first: it is what the turn is about.
        entities = [*(e for e in change.subjects if e in after.entities), *after.entities, *compared]
        return Rewrite(standalone, (standalone,), tuple(dict.fromkeys(entities)),
                       ("correction" if correction else "ellipsis")
                       + f": the previous question's {read} with the turn's, rendered", after)

    def _names_written(self, detection: Detection, links: LinkResult, snapshot: AliasSnapshot,
                       lang: str, times: Sequence[str] | None) -> tuple[str, bool]:
        """The turn with each resolved name, pronoun and ordinal written as the canonical
        name(s) it stands for, and whether any was. Replaced right to left, so offsets
        stay valid."""
        text = detection.text
        spans = comparison_spans(text)
        said_times = [m.text for m in detection.of(MentionKind.TIME)]
        named = {e for link in links.links if link.mention.kind is MentionKind.ALIAS
                 for e in link.entity_ids}
        out, replaced_any = text, False
        for link in sorted(links.links, key=lambda l: l.mention.start, reverse=True):
            if not link.entity_ids or link.mention.kind not in _WRITTEN_KINDS:
                continue
            start, end = link.mention.start, self._extend_over_marker(text, link, snapshot)
            # A slip (星咔) is not written beside the name it was taken for.
            # Nor are the user's words written beside each of several names they stand for.
            said = (text[start:end] if link.mention.kind is MentionKind.ALIAS
                    and link.mention.similarity == 100 and len(link.entity_ids) == 1 else "")
            written = _join([written_name(e, said, lang, snapshot) for e in link.entity_ids], lang)
            if link.mention.kind is MentionKind.PRONOUN:
                if link.candidates[0].source == "named before it" or (
                        set(link.entity_ids) <= named and not _inside(link.mention, spans)):
                    # 程远…，他获得过 / "how much does it cost to get a Gold Card" once the
                    # card is known: the turn writes the name already; not twice.
                    continue
                # 2020版比它便宜多少 after 2019版: "it" is the entity as it was, at its time.
                then = ("".join(t for t in times if t not in text)
                        if _inside(link.mention, spans) and said_times and times
                        and not set(times) & set(said_times) else None)
                written, end = _pronoun_replaced(text, link.mention, written, end, then)
                if written and link.mention.text.lower() in cues.POSSESSIVE_PRONOUNS:
                    written = cues.wording(lang).possessive.format(name=written)
                start = _recall_start(text, start)
            out = out[:start] + written + out[end:]
            replaced_any = True
        return out, replaced_any

    def _focus_carried(self, detection: Detection, snapshot: AliasSnapshot,
                       entities: Sequence[str], lang: str, asked: str,
                       missing_times: Sequence[str], earlier_times: Sequence[str]) -> Rewrite:
        """Nothing in the turn names an entity: it is about the focus, at the dialogue's
        time (``missing_times``), and about the attribute ``asked`` when it left it out.
        The turn's own words as slots, the focus written by the language's template
        (dialogue/render.py); an English question whose subject is "the <word>" of the
        focus's names, or that leaves out its attribute, gets the names written in."""
        text = detection.text
        # A version the focus's names say (套餐（2024版）) is written by them, not again.
        said = [snapshot.name(e) for e in entities]
        carried = [t for t in missing_times if t not in text and not any(t in n for n in said)]
        versions = _versions_put(text, earlier_times)
        if versions:
            carried = []
        if lang == "en" and (asked or self._english_subject(text, entities, snapshot)):
            written = text if versions is None else _both_versions(text, earlier_times)
            standalone = self._english_with_names(written, [*entities], "".join(carried), asked,
                                                  snapshot)
            return Rewrite(standalone, (standalone,), tuple(entities),
                           "focus entity written into the English question")
        cue = _LEADING_CUE_RE.match(text) if lang != "en" else None
        lead = cue.end() if cue and cue.end() < len(text) else 0
        slots = read_turn(detection, entities, lang, lead=lead, asked=asked, carried=carried,
                          put=versions)
        standalone = render(slots, snapshot)
        return Rewrite(standalone, (standalone,), tuple(entities),
                       "focus entity carried: the turn's words rendered with it", slots)

    @staticmethod
    def _english_subject(text: str, entities: Sequence[str], snapshot: AliasSnapshot):
        """"The <word>" of an English question that stands for the focus, if any."""
        return next((m for m in cues.SUBJECT_RE.finditer(text)
                     if _names_it(m.group(1), entities, snapshot)), None)

    @staticmethod
    def _english_with_names(text: str, entities: Sequence[str], times: str, asked: str,
                            snapshot: AliasSnapshot) -> str:
        """An English question that names nothing gets the focus's names where its
        subject is, when "the <word>" there is a word of the focus's own English names
        or type (How long does the transfer take? → How long does 跨校区转课 (the
        transfer) take?, for an entity called "course transfer"), else after the
        question, in brackets (What is the genre (1 vs. 100)?): "the genre" is what
        is asked, not the entity."""
        names = " and ".join(written_name(e, "", "en", snapshot) for e in entities)
        extra = " ".join(x for x in (times, asked) if x)
        subject = RuleRewriter._english_subject(text, entities, snapshot)
        if subject:
            head = snapshot.name(entities[0])
            written = f"{head} {extra}".strip() + f" ({subject.group(0)})"
            if len(entities) > 1:
                written = f"{names} ({subject.group(0)})"
            return text[:subject.start()] + written + text[subject.end():]
        body = text.rstrip()
        mark = body[-1] if body and body[-1] in "?？.!" else ""
        body = body[:-1] if mark else body
        return f"{body} ({names}{' ' + extra if extra else ''}){mark}"

    @staticmethod
    def _sibling_follow_up(detection: Detection, turn_aliases, snapshot: AliasSnapshot,
                           previous_entities: Sequence[str]) -> bool:
        """个人版能约吗 after …家庭版每周最多能约几节: the turn puts another entity of the same
        kind in place of the previous one and adds nothing of its own but particles:
        it asks the previous question about that entity."""
        if not turn_aliases or detection.of(MentionKind.ATTRIBUTE) or detection.of(MentionKind.TIME):
            return False
        # 研究生公寓有门禁吗: whether it has a thing is a question of its own.
        after = detection.text[max(link.mention.end for link in turn_aliases):]
        if any(regex.search(after) for regex in cues.EXISTENCE_RES):
            return False
        kinds = {snapshot.entities[e].type for e in previous_entities if e in snapshot.entities}
        for link in turn_aliases:
            entity = snapshot.entities.get(link.entity_ids[0])
            if entity is None or entity.type not in kinds or link.entity_ids[0] in previous_entities:
                return False
        rest = list(detection.text)
        for m in detection.mentions:
            rest[m.start:m.end] = [" "] * (m.end - m.start)
        said = re.sub(r"[\s，,。？?！!、]", "", "".join(rest))
        own = re.sub(r"[\s，,。？?！!、]", "", _LIGHT_RE.sub("", "".join(rest)))
        return bool(said) and len(own) <= 2


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
        queries = tuple(glue(snapshot.name(e), question) for e in ids)
        return Rewrite(standalone, queries, tuple(ids), "several intents: one query per entity")

    def _carry_context(self, out: str, detection: Detection, snapshot: AliasSnapshot,
                       entities: Sequence[str], previous: str, previous_entities: Sequence[str],
                       lang: str, slot_times: Sequence[str] | None,
                       compared: Sequence[str]) -> Rewrite:
        types = {snapshot.entities[e].type for e in entities if e in snapshot.entities}
        carried = [e for e in previous_entities if e not in entities and e in snapshot.entities
                   and snapshot.entities[e].type not in types]
        # 跟次卡比，一次贵多少: what the turn names is only what the focus is compared
        # with (or a condition of the question: 要是已经理赔过一次呢，还退钱吗); the focus stays
        # the subject.
        spans = side_spans(detection.text)
        targets = [link for link in links_named(detection) if _inside(link, spans)]
        subject_kept = bool(spans) and bool(targets) and len(targets) == len(links_named(detection))
        if subject_kept:
            carried = [e for e in previous_entities if e not in entities and e in snapshot.entities]
        if carried:
            out = _beside(_join([snapshot.name(e) for e in carried], lang), _LEADING_CUE_RE.sub("", out), lang)
        times = "".join(t for t in self._missing_times(detection, previous, slot_times)
                        if t not in out)
        if times:
            # Right after the subject's first name: 华东区的负责人 → 华东区7月的负责人.
            subject = carried if subject_kept else entities
            spots = [out.find(snapshot.name(e)) + len(snapshot.name(e)) for e in subject
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
        kept = (*carried, *entities) if subject_kept else (*entities, *carried)
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
        for word in sorted(words, key=len, reverse=True):  # 2024版 before 2024
            if tail.text.startswith(word):
                return end + tail.span(0, len(word))[1]
        return end

    @staticmethod
    def _missing_times(detection: Detection, previous: str | None,
                       slot: Sequence[str] | None = None) -> list[str]:
        """The dialogue's time and version expressions (the slot's, else the previous
        query's), when this turn has none of its own: a time the turn names only as
        what it compares with (比6.5版高了多少) leaves the subject's time missing."""
        spans = comparison_spans(detection.text)
        own = [m for m in detection.of(MentionKind.TIME) if not _inside(m, spans)]
        if own:
            return []
        said = {m.text for m in detection.of(MentionKind.TIME)}
        if slot is not None:
            return [t for t in slot if t not in said]
        if not previous:
            return []
        found = list(dict.fromkeys(m.text for m in detect_mentions(previous, None).of(MentionKind.TIME)))
        # Each once, and not a part of a longer one (2004年 inside 2004年06月).
        return [t for t in found if not any(t != other and t in other for other in found)
                and t not in said]

def _corrected_away(request: RewriteRequest) -> list[str]:
    """The entities no slot may keep: those the user corrected away before, and what
    this turn's correction says was wrong (the A of 不是A，是B)."""
    detection = request.detection
    wrong = corrected_spans(detection.text) if request.kind is TurnKind.CORRECTION else []
    said = [e for m in detection.of(MentionKind.ALIAS) if _inside(m, wrong) for e in m.entity_ids]
    resolved = request.links.resolved
    return [*(e for e in dict.fromkeys([*request.state.negated, *said]) if e not in resolved),
            *(_named_wrong(request) if request.kind is TurnKind.CORRECTION else ())]


def _named_wrong(request: RewriteRequest) -> list[str]:
    """What a correction names as wrong though no cue marks it (不是A，我问的是B): an
    entity the previous turn asked about, named beside a new one of its type."""
    last = request.state.last_turn
    before = set(last.entities) if last else set()
    resolved = request.links.resolved
    new = [e for e in resolved if e not in before]
    return [e for e in resolved if e in before
            and any(same_type(e, n, request.snapshot) for n in new)]


def _change(detection: Detection, named: Sequence[Link], snapshot: AliasSnapshot,
            previous: str, previous_entities: Sequence[str], excluded: Sequence[str]) -> Change:
    """What a follow-up puts into the previous question: its names (what they compare
    with aside), its times (relative ones counted from the previous question's), its
    attribute, or else its own words; what it corrects away leaves every slot."""
    spans = comparison_spans(detection.text)
    wrong = corrected_spans(detection.text)
    named = [link for link in named if not _inside(link.mention, wrong)
             and link.entity_ids[0] not in excluded]
    aside = [*spans, *wrong, *((link.mention.start, link.mention.end) for link in named)]
    subjects = tuple(link.entity_ids[0] for link in named if not _inside(link.mention, spans))
    said = lambda m: anchored(m.text, previous) or m.text  # noqa: E731
    times = tuple(said(m) for m in detection.of(MentionKind.TIME) if not _inside(m, aside))
    attribute = tuple(m.text for m in detection.of(MentionKind.ATTRIBUTE) if not _inside(m, aside))
    compared = tuple(snapshot.name(link.entity_ids[0]) for link in named
                     if _inside(link.mention, spans))
    compared += tuple(said(m) for kind in (MentionKind.ATTRIBUTE, MentionKind.TIME)
                      for m in detection.of(kind) if _inside(m, spans))
    new = [e for e in subjects if e not in previous_entities]
    words = "" if (new or times or attribute or compared) else _own_words(detection)
    return Change(subjects=subjects, removed=tuple(excluded), times=times, attribute=attribute,
                  compared=compared, words=words, said=_words_for(named),
                  negated=_negated_verbs(detection, aside, previous))


def _negated_verbs(detection: Detection, aside: Sequence[tuple[int, int]],
                   previous: str) -> tuple[tuple[str, str], ...]:
    """The verbs a follow-up negates after the name it asks of, and nothing else
    (标快也不能吗: 能, said 不能; 也不行吗: "", the question's verb of ability; Basic members
    can't?, an English word said before aside): with words of its own besides
    (普通会员不能打折吗) the turn asks something else; a negation before the name
    (不是皮克斯出品的么) asks a question of its own; and a correction's 不是 (不是A，是B)
    says what was wrong, not what is asked."""
    text = detection.text
    if cues.CORRECTION_RE.match(text):
        return ()
    aside = [*aside, *(m.span() for regex in cues.CORRECTED_RES for m in regex.finditer(text))]
    named = max((m.end for m in detection.of(MentionKind.ALIAS)), default=0)
    found = [m for regex in cues.NEGATED_VERB_RES for m in regex.finditer(text)]
    if cues.NEGATED_ABILITY_RE is not None:
        found += cues.NEGATED_ABILITY_RE.finditer(text)
    if any(m.start() < named or any(s < m.end() and m.start() < e for s, e in aside) for m in found):
        return ()
    rest = list(text)
    for start, end in [*((m.start, m.end) for m in detection.mentions),
                       *((m.start(), m.end()) for m in found)]:
        rest[start:end] = [" "] * (end - start)
    said_before = set(re.findall(r"[a-z]+", previous.lower()))
    own = [w for w in re.split(r"[\s，,。？?！!、]+", _LIGHT_RE.sub(" ", "".join(rest)))
           if w and w.lower() not in said_before]
    # A negation without a verb (不行) negates the question's verb of ability: verb "".
    return () if own else tuple((m.groupdict().get("verb") or "", m.group(0)) for m in found)


def _words_for(named: Sequence[Link]) -> tuple[tuple[str, str], ...]:
    """The user's own words for each name the turn writes (not a slip, not an edition
    word that stands for its counterpart): kept beside the canonical name."""
    return tuple((link.entity_ids[0], link.mention.text) for link in named
                 if link.mention.kind is MentionKind.ALIAS and link.mention.similarity == 100
                 and len(link.entity_ids) == 1 and not is_counterpart(link))


def _own_words(detection: Detection) -> str:
    """What an ellipsis says besides its cue, when it names nothing (打印 of 打印呢)."""
    body = _ELLIPSIS_BODY_RE.match(detection.text)
    if (body is None or detection.of(MentionKind.ALIAS) or detection.of(MentionKind.PRONOUN)
            or asks_for_more(detection.text)):
        return ""  # 还有呢 asks for more of the same, with no words of its own
    return body.group("x").strip()


def _earlier_times(state) -> list[str]:
    """Times and versions the recent standalone queries name, most recent first."""
    found: list[str] = []
    for record in reversed(state.recent):
        for mention in detect_mentions(record.standalone, None).of(MentionKind.TIME):
            if mention.text not in found:
                found.append(mention.text)
    return found


def _slot_values(state, name: str) -> list[str]:
    slot = getattr(state.slots, name)
    return list(slot.values) if slot is not None else []
