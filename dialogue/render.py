"""The standalone query rendered from a question's slots, never spliced from strings.

A standalone question is held as slots: its subjects (entity ids), its times and
versions, the attribute asked, what it is compared with, and a *pattern*: the
question's own words (negations and question words included, in the user's order)
with a placeholder where each slot was written (``{s0}的{a0}{t0}是多少``). Rendering
fills the placeholders with canonical names and slot values, and writes the subjects
the pattern has no place for by the language's template (common/language/templates.py).

A follow-up (an ellipsis, 那X呢 / what about X; a correction, 不是A，是B) is the
previous question's slots with what the turn says put in: a subject replaces the one of
its type (in its place), a time or attribute replaces the previous one, an entity
corrected away leaves every slot. Nothing is pasted into the previous sentence, so a
name is never written twice and a corrected name never survives.

Each turn keeps the slots its standalone was rendered from or read as in its stored
frame (understanding/frame.py), so a follow-up starts from them, never from the
previous sentence.

Limits: the slots of an earlier question are read from its standalone when its turn
kept none (a session saved before turns kept them, or an alias refresh since); a
subject of a type the question had none of goes beside the first subject; a
follow-up's own words that are no mention (打印呢) replace a word of the same length
and head, or go before the question word.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from common.language import cues
from common.language.normalize import is_cjk, turn_language
from common.language.templates import TEMPLATES, name_links, template
from kg.aliases import AliasSnapshot
from understanding.frame import FIELD_RE as _FIELD_RE
from understanding.frame import QuestionSlots
from understanding.mentions import Detection, Mention, MentionKind, detect_mentions

# Between two names written together (A和B, A、B, A and B): they are one place.
_BETWEEN_NAMES_RE = re.compile(rf"^\s*(?:{'|'.join(map(re.escape, name_links()))})?\s*$", re.IGNORECASE)
_MARK_RE = re.compile(r"\s*([?？.。!！]+)\s*$")


@dataclass(frozen=True)
class Change:
    """What a follow-up turn puts into the previous question.

    ``subjects`` each replace the previous subject of their type, or join the
    subjects; ``removed`` leave every slot (corrected away); ``times`` and
    ``attribute`` replace the previous ones when given; ``words`` are the turn's own
    words that are no mention (打印 of 打印呢); ``compared`` what is compared with;
    ``negated`` the verbs the turn negates (the previous question's 能 becomes 不能).
    """

    subjects: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    times: tuple[str, ...] = ()
    attribute: tuple[str, ...] = ()
    compared: tuple[str, ...] = ()
    words: str = ""
    said: tuple[tuple[str, str], ...] = ()
    # The verbs the turn negates, with its words for each: (能, 不能) of 标快也不能吗.
    negated: tuple[tuple[str, str], ...] = ()


# -- reading a written question into slots --------------------------------------------------

def read_question(text: str, subjects: Sequence[str], snapshot: AliasSnapshot) -> QuestionSlots:
    """The slots of a standalone question written earlier about ``subjects``."""
    text, compared = _without_compared_note(_without_lead(text, subjects, snapshot))
    detection = detect_mentions(text, snapshot)
    lang = turn_language(text, [(m.start, m.end) for m in detection.of(MentionKind.ALIAS)])
    found = _subject_spans(text, subjects, snapshot)
    taken = [(start, end) for start, end, _ in found]
    mentions = [m for m in detection.mentions
                if not any(s < m.end and m.start < e for s, e in taken)]
    said = [m for m in mentions if m.kind in (MentionKind.TIME, MentionKind.ATTRIBUTE)]
    negations = tuple(m.text for m in mentions if m.kind is MentionKind.NEGATION)
    pieces: list[tuple[int, int, str]] = [(s, e, "" if i < 0 else f"{{s{i}}}") for s, e, i in found]
    times, attribute = _slot_pieces(said, pieces)
    beside = tuple((subjects[i], words) for s, e, i in found if i >= 0
                   if (words := _beside(text[s:e], subjects[i], snapshot)))
    return QuestionSlots(lang, _pattern(text, pieces), tuple(subjects), tuple(times),
                         tuple(attribute), tuple(compared), beside, negations)


def read_turn(detection: Detection, subjects: Sequence[str], lang: str, *, lead: int = 0,
              asked: str = "", carried: Sequence[str] = (),
              put: tuple[int, str] | None = None) -> QuestionSlots:
    """A turn that names none of its ``subjects`` as slots, from its own detection (no
    parse): its words are the pattern, its times and attributes in their places; the
    subjects, with the times ``carried`` from the dialogue, go where the language's
    template puts them. ``lead``: where the question starts (a continuation cue before it
    is left out); ``asked``: the attribute the turn left out, written before its words;
    ``put``: words written in at a position (``(at, words)``)."""
    text = detection.text
    pieces: list[tuple[int, int, str]] = [(0, lead, "")] if lead else []
    if put is not None:
        pieces.append((put[0], put[0], _escaped(put[1])))
    said = [m for m in detection.mentions if m.kind in (MentionKind.TIME, MentionKind.ATTRIBUTE)
            and m.start >= lead]
    times, attribute = _slot_pieces(said, pieces)
    if asked:
        pieces.append((lead, lead, f"{{a{len(attribute)}}}"))
        attribute.append(asked)
    negations = tuple(m.text for m in detection.of(MentionKind.NEGATION) if m.start >= lead)
    return QuestionSlots(lang, _pattern(text, pieces), tuple(subjects), (*times, *carried),
                         tuple(attribute), negations=negations)


def _beside(written: str, entity_id: str, snapshot: AliasSnapshot) -> str:
    """The user's words a render wrote beside a name (年假（年休假）: 年休假)."""
    name = snapshot.name(entity_id)
    found = re.match(r"\s?[（(]([^（）()]{1,40})[）)]", written[len(name):]) \
        if written.startswith(name) else None
    return found.group(1) if found else ""


def _without_lead(text: str, subjects: Sequence[str], snapshot: AliasSnapshot) -> str:
    """A continuation cue in front of a name (那么A产品…) is not part of the question."""
    cue = cues.CUE_BEFORE_NAME_RE.match(text)
    if cue and any(text[cue.end():].startswith(snapshot.name(e)) for e in subjects):
        return text[cue.end():]
    return text


def _without_compared_note(text: str) -> tuple[str, list[str]]:
    """The question without the compared-with note a render wrote (in any language's
    wording), and what it names."""
    for lang in TEMPLATES:
        wording = cues.wording(lang)
        head, _, tail = wording.compared_with.partition("{names}")
        note = re.compile(re.escape(head) + r"(?P<names>.+?)" + re.escape(tail) + r"\s*$")
        found = note.search(text)
        if found is not None:
            return text[:found.start()], found.group("names").split(wording.joiner)
    return text, []


def _subject_spans(text: str, subjects: Sequence[str],
                   snapshot: AliasSnapshot) -> list[tuple[int, int, int]]:
    """Where each subject is written (start, end, its index); a name written right after
    another (A和B) joins the first one's place (index -1: nothing of its own is written)."""
    # Leftmost, then longest: a name shared by two subjects (学生手册) must not hide the
    # longer name of the other written from the same place (学生手册（2025版）).
    spots = sorted(((start, _over_own_edition(text, end, e, snapshot), i)
                    for i, e in enumerate(subjects) for start, end in written_spans(text, e, snapshot)),
                   key=lambda spot: (spot[0], -spot[1], spot[2]))
    out: list[tuple[int, int, int]] = []
    for start, end, i in spots:
        if out and start < out[-1][1]:
            continue  # inside a longer name already found
        if out and _BETWEEN_NAMES_RE.match(text[out[-1][1]:start]):
            start = out[-1][1]
            i = -1
        out.append((start, end, i))
    return out


def _over_own_edition(text: str, end: int, entity_id: str, snapshot: AliasSnapshot) -> int:
    """Past a version the entity's own name holds, written right after a shorter alias
    (套餐2023版 for 套餐（2023版）): it says which entity, it is no time of the question."""
    said = cues.TIME_RE.match(text, end)
    if said and said.group(0) in snapshot.name(entity_id):
        return said.end()
    return end


def written_spans(text: str, entity_id: str, snapshot: AliasSnapshot) -> list[tuple[int, int]]:
    """Every place ``text`` writes the entity (see :func:`written_span`)."""
    out: list[tuple[int, int]] = []
    at = 0
    while (found := written_span(text[at:], entity_id, snapshot)) is not None:
        out.append((at + found[0], at + found[1]))
        at += found[1]
    return out


def _slot_pieces(said: Sequence[Mention], pieces: list[tuple[int, int, str]]) -> tuple[list[str], list[str]]:
    """Add a placeholder piece for each time and attribute said; their values, in order."""
    times: list[str] = []
    attribute: list[str] = []
    for m in sorted(said, key=lambda m: m.start):
        if any(s < m.end and m.start < e for s, e, _ in pieces):
            continue
        values, kind = (times, "t") if m.kind is MentionKind.TIME else (attribute, "a")
        pieces.append((m.start, m.end, f"{{{kind}{len(values)}}}"))
        values.append(m.text)
    return times, attribute


def _pattern(text: str, pieces: Sequence[tuple[int, int, str]]) -> str:
    out, at = [], 0
    for start, end, field in sorted(pieces):
        out.append(_escaped(text[at:start]) + field)
        at = end
    out.append(_escaped(text[at:]))
    return "".join(out)


def _escaped(words: str) -> str:
    return words.replace("{", "{{").replace("}", "}}")


def written_span(text: str, entity_id: str, snapshot: AliasSnapshot) -> tuple[int, int] | None:
    """Where ``text`` writes the entity: its canonical name with what stood beside it
    (星卡尊享版 (Star Card Premium), 年假（年休假）), else its longest alias found."""
    entity = snapshot.entities.get(entity_id)
    if entity is None:
        return None
    at = text.find(entity.name)
    if at >= 0:
        end = at + len(entity.name)
        beside = re.match(r"\s?[（(][^（）()]{1,40}[）)]", text[end:])
        return at, end + (beside.end() if beside else 0)
    for alias in sorted(entity.all_aliases, key=len, reverse=True):
        at = text.find(alias)
        if at >= 0:
            return at, at + len(alias)
    return None


# -- a follow-up: the previous slots with the turn's put in ---------------------------------

def follow_up(previous: QuestionSlots, change: Change, snapshot: AliasSnapshot) -> QuestionSlots:
    """The previous question with what the turn changes, every other slot kept."""
    subjects = _subjects_changed(previous.subjects, change, snapshot)
    said = dict(previous.said) | dict(change.said)
    out = replace(previous, subjects=subjects,
                  said=tuple((e, w) for e, w in said.items() if e in subjects))
    if change.times:
        out = replace(out, times=change.times)
    if change.attribute:
        pattern = out.pattern if out.places("a") else _words_put_in(out, "{a0}", field=True)
        kept = out.attribute[len(change.attribute):]
        out = replace(out, pattern=pattern, attribute=(*change.attribute, *kept))
    elif change.words:
        out = replace(out, pattern=_words_put_in(out, change.words))
    compared = [c for c in (*out.compared, *change.compared) if c]
    if change.negated:
        out = replace(out, pattern=_negated(out.pattern, change.negated, out.language))
    return replace(out, compared=tuple(dict.fromkeys(compared)))


def _negated(pattern: str, negated: Sequence[tuple[str, str]], lang: str) -> str:
    """The previous question with each verb the follow-up negates negated in it, where
    the question writes it (标快也不能吗 after 特快专递能寄到新疆吗: 不能寄到新疆). A verb
    the question does not write changes nothing, nor does anything in a question that is
    negative already."""
    if cues.NEGATIVE_QUESTION_RE.search(_FIELD_RE.sub("\0", pattern)):
        return pattern
    for verb, said in negated:
        # A negation without a verb (不行): the first verb of ability the question writes.
        choices = [(verb, said)] if verb else list(cues.ability_negated(lang).items())
        for choice, form in choices:
            if (negated_once := _negate_first(pattern, choice, form, lang)) != pattern:
                pattern = negated_once
                break
    return pattern


def _negate_first(pattern: str, verb: str, said: str, lang: str) -> str:
    """``pattern`` with the first place it writes ``verb`` (outside the language's words
    that only hold it, 功能's 能) said as ``said``."""
    literal = _FIELD_RE.sub(lambda m: "\0" * len(m.group(0)), pattern)
    words = cues.NOT_VERB_WORDS_RE
    inside = [(m.start(), m.end()) for m in words.finditer(literal)] if words else []
    for found in cues.negatable_verb_re(lang, verb).finditer(literal):
        if not any(start <= found.start() < end for start, end in inside):
            if found.group(0)[:1].isupper():
                said = said[:1].upper() + said[1:]
            return pattern[:found.start()] + _escaped(said) + pattern[found.end():]
    return pattern


def _subjects_changed(subjects: Sequence[str], change: Change, snapshot: AliasSnapshot) -> tuple[str, ...]:
    out = ["" if e in change.removed else e for e in subjects]
    for new in change.subjects:
        if new in out:
            continue
        same = next((i for i, e in enumerate(out) if same_type(e, new, snapshot)
                     and e not in change.subjects), None)
        if same is None:
            same = next((i for i, e in enumerate(subjects) if not out[i] and e in change.removed), None)
        if same is None:
            out.append(new)
        else:
            out[same] = new
    return tuple(out)


def same_type(a: str, b: str, snapshot: AliasSnapshot) -> bool:
    """Two different entities of one type (what a follow-up puts one in place of)."""
    ea, eb = snapshot.entities.get(a), snapshot.entities.get(b)
    return a != b and ea is not None and eb is not None and ea.type == eb.type


def _inserted(pattern: str, field: str, before_attribute: bool = False) -> str:
    """``field`` put where the question is asked about: before the last attribute, else
    before the question word, else just after the subjects, else in front."""
    attributes = [m.start() for m in _FIELD_RE.finditer(pattern) if m.group(1) == "a"]
    at = attributes[-1] if before_attribute and attributes else -1
    if at < 0:
        literal = _FIELD_RE.sub(lambda m: "\0" * len(m.group(0)), pattern)
        found = cues.QUESTION_START_RE.search(literal)
        at = found.start() if found else -1
    if at < 0:
        subject = _FIELD_RE.search(pattern)
        at = subject.end() if subject and subject.group(1) == "s" else 0
    return pattern[:at] + field + pattern[at:]


def _words_put_in(slots: QuestionSlots, words: str, *, field: bool = False) -> str:
    """The follow-up's own words (打印 of 打印呢) in place of the word of the same length
    and head (复印), else before the attribute asked, else in place of what the question
    asked about between its subjects and its question word. ``field``: ``words`` is a
    placeholder (an attribute the question had no place for)."""
    pattern, words = slots.pattern, words.strip()
    if not words or len(words) > 12:
        return pattern
    written = words if field else _escaped(words)
    literal = _FIELD_RE.sub(lambda m: "\0" * len(m.group(0)), pattern)
    if not field and len(words) >= 2 and is_cjk(words[-1]):
        for at in range(len(literal) - len(words) + 1):
            piece = literal[at:at + len(words)]
            if piece[-1] == words[-1] and piece != words and all(is_cjk(c) for c in piece):
                return pattern[:at] + written + pattern[at + len(words):]
    space = " " if slots.language == "en" else ""
    if "{a0}" in pattern:
        return _inserted(pattern, written + space, before_attribute=True)
    subjects = [m.end() for m in _FIELD_RE.finditer(pattern) if m.group(1) == "s"]
    asked = cues.QUESTION_START_RE.search(literal, max(subjects, default=0))
    if subjects and asked:
        return pattern[:max(subjects)] + space + written + space + pattern[asked.start():]
    if subjects and template(slots.language).loose_after_subjects:
        return pattern[:max(subjects)] + space + written + pattern[max(subjects):]
    return _inserted(pattern, written + space)


# -- rendering -----------------------------------------------------------------------------

def render(slots: QuestionSlots, snapshot: AliasSnapshot) -> str:
    """The standalone query the slots say, in the question's language."""
    lang = slots.language
    said = dict(slots.said)
    names = [written_name(e, said.get(e, ""), _said_in(e, said.get(e, ""), lang, snapshot),
                          snapshot) if e else "" for e in slots.subjects]
    placed = set(slots.places("s"))
    loose = [n for i, n in enumerate(names) if n and i not in placed]
    loose_times = [t for i, t in enumerate(slots.times) if i not in set(slots.places("t"))]
    group = _group(loose, loose_times, lang)
    values = {f"s{i}": n for i, n in enumerate(names)}
    values.update({f"t{i}": t for i, t in enumerate(slots.times)})
    values.update(_attribute_values(slots))
    if placed:
        first = min(placed, key=lambda i: slots.pattern.find(f"{{s{i}}}"))
        values[f"s{first}"] = _group([n for n in (names[first], *loose) if n], loose_times, lang)
        text = _filled(slots.pattern, values)
    else:
        text = _unplaced(_filled(slots.pattern, values), group, lang)
    if slots.compared:
        text += cues.wording(lang).compared_with.format(names=cues.wording(lang).joiner.join(slots.compared))
    return _tidy(text)


def _said_in(entity_id: str, said: str, lang: str, snapshot: AliasSnapshot) -> str:
    """The language a name is written in: the user's English words for a Chinese name
    go beside it in either language, unless the name already says them (500M)."""
    english = said.isascii() and any(c.isalpha() for c in said)
    return "en" if english and said.lower() not in snapshot.name(entity_id).lower() else lang


def _attribute_values(slots: QuestionSlots) -> dict[str, str]:
    """Each attribute in its own place: new ones take the first places, the previous
    ones left over keep theirs (挂失补卡 in place of 跨行汇款, 手续费 kept); more
    attributes than places all go in the last."""
    places = slots.places("a")
    values = {f"a{i}": a for i, a in enumerate(slots.attribute[:len(places)])}
    if places and len(slots.attribute) > len(places):
        values[f"a{len(places) - 1}"] = "".join(slots.attribute[len(places) - 1:])
    return values


def _group(names: Sequence[str], times: Sequence[str], lang: str) -> str:
    tpl = template(lang)
    joined = tpl.group.format(subjects=cues.wording(lang).joiner.join(names),
                              times=tpl.time_joiner.join(times))
    return " ".join(joined.split()) if lang == "en" else joined


def _filled(pattern: str, values: dict[str, str]) -> str:
    return _FIELD_RE.sub(lambda m: values.get(m.group(1) + m.group(2), ""), pattern.replace("{{", "\0").replace("}}", "\1")).replace("\0", "{").replace("\1", "}")


def _unplaced(question: str, group: str, lang: str) -> str:
    if not group:
        return question
    body, mark = question, ""
    found = _MARK_RE.search(question)
    if found and lang == "en":
        body, mark = question[:found.start()], found.group(1)
    return template(lang).unplaced.format(group=group, question=body, mark=mark) if lang == "en" \
        else glue(group, question)


def _tidy(text: str) -> str:
    text = re.sub(r"[ \t]{2,}", " ", text)
    text = re.sub(r"\s+([?？,，.。!！)）])", r"\1", text)
    return re.sub(r"^[，,、\s]+", "", text).strip()


def glue(prefix: str, text: str) -> str:
    """Two pieces written together, a space between two Latin letters or digits."""
    if prefix and text and prefix[-1].isascii() and prefix[-1].isalnum() and text[0].isascii() \
            and text[0].isalnum():
        return f"{prefix} {text}"
    return prefix + text


def written_name(entity_id: str, said: str, lang: str, snapshot: AliasSnapshot) -> str:
    """The canonical name, plus what it would lose of the user's words:

    - an alias that says more than the name (保修期 for 保修政策: the 期) stays
      beside it, 保修政策（保修期）, so the asked-about part is still searched;
    - in an English turn, a Chinese name gets the English words as well, 婚假
      (marriage leave): the user's, or the entity's English alias for a pronoun.
    """
    name = snapshot.name(entity_id)
    cjk = lambda s: {c for c in s if is_cjk(c)}  # noqa: E731
    if said and cjk(said) - cjk(name) and snapshot.normalize(said) != snapshot.normalize(name):
        return f"{name}（{said}）"
    if lang == "en" and cjk(name):
        entity = snapshot.entities.get(entity_id)
        english = said if said and said.isascii() else next(
            (a for a in (entity.all_aliases if entity else ()) if a.isascii()
             and any(c.isalpha() for c in a) and len(a) > 3), "")
        if english:
            return f"{name} ({english})"
    return name
