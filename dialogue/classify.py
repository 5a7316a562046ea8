"""Turn classification: how this turn relates to the conversation so far."""

from __future__ import annotations

import re
from enum import Enum

from common.language import cues
from common.language.normalize import normalize
from understanding.linker import LinkResult
from understanding.mentions import Detection, Mention, MentionKind

# Explicit topic-switch cues (also stripped from the front of the search query) and
# the ellipsis cue: every language's, from common.language.
_SWITCH_RE = cues.SWITCH_RE
_CUE_RE = cues.ELLIPSIS_CUE_RE


def is_switch(text: str) -> bool:
    """An explicit cue that the user leaves the current question (换个话题, 算了，我直接问…)."""
    return bool(_SWITCH_RE.search(text))


def residue(detection: Detection, links: LinkResult) -> str:
    """The user's own words once every mention and ellipsis cue is taken out
    (normalized: no spaces or punctuation). Empty for 那华南区呢 or "the Night Owls"."""
    return normalize(_own_words(detection, links))


def _own_words(detection: Detection, links: LinkResult) -> str:
    """The turn's text with every mention and the ellipsis cue taken out, spaces kept."""
    rest = list(detection.text)
    for m in [*detection.mentions, *(link.mention for link in links.links)]:
        rest[m.start:m.end] = [""] * (m.end - m.start)
    return _CUE_RE.sub("", "".join(rest))


_LATIN_WORD_RE = re.compile(r"[A-Za-z]+")


def own_size(text: str) -> int:
    """How much a turn adds of its own, in Chinese characters' worth: a word written in
    Latin letters counts as two (about what a two-character Chinese word carries), so an
    English ellipsis ("what about the 2024 edition") is measured like a Chinese one
    (那2024版呢) rather than letter by letter."""
    words = len(_LATIN_WORD_RE.findall(text))
    return 2 * words + len(normalize(_LATIN_WORD_RE.sub(" ", text)))


# A question word in what the user added makes a question of its own (那怎么办呢).
_ASKS_RE = cues.ASKS_RE
# How much of its own an ellipsis may add besides names: 那东馆呢, 打印呢, 普通版的…呢.
_ELLIPSIS_OWN_CHARS = 6


def is_ellipsis(detection: Detection, links: LinkResult) -> bool:
    """那华南区呢 / 价格呢 / 打印呢 / what about X: a cue, and little else of the user's
    own — a few words that ask nothing by themselves."""
    if not detection.ellipsis:
        return False
    rest = residue(detection, links)
    size = own_size(_own_words(detection, links))
    return size <= 2 or (size <= _ELLIPSIS_OWN_CHARS and not _ASKS_RE.search(rest))


def is_short_correction(text: str) -> bool:
    """说错了，我想问西城 / No, I meant the super one: a correction's cue opening the turn,
    then a few words that ask nothing by themselves (as much as an ellipsis adds): the
    turn asks the last question again, of what those words name. So do what was wrong
    and what was meant, each in a few words, in either order (抱歉，不是东城，西城;
    西城的，不是东城 / the super one, not the basic). 不是的，这是一部彩色电影 says
    something of its own."""
    if cues.CORRECTION_RE.match(text):
        rest = strip_correction_cue(text)
        return rest != text and _says_little(rest)
    end = len(text.rstrip(" 。.!！"))
    for m in (m for regex in cues.CORRECTED_RES for m in regex.finditer(text)):
        if not _says_little(m.group("x")):
            continue
        if m.start() == 0 and _says_little(text[m.end():]):
            return True  # 抱歉，不是东城，西城: what was wrong first
        if m.start() > 0 and m.end() >= end and _says_little(text[:m.start()].strip(" ，,;；")):
            return True  # 西城的，不是东城: what was meant first
    return False


def _says_little(words: str) -> bool:
    """A few words that ask nothing by themselves (as much as an ellipsis adds)."""
    return bool(words.strip()) and own_size(words) <= _ELLIPSIS_OWN_CHARS \
        and not _ASKS_RE.search(words)


def values_given(detection: Detection) -> list[tuple[int, Mention]]:
    """Where the turn gives the value of an attribute it names (地址在…, 发行公司是…, the
    address is …): the offset the value starts at, with the attribute's mention. 地址呢
    and "the address of X" give none."""
    text = detection.text
    return [(lead.end(), attribute) for attribute in detection.of(MentionKind.ATTRIBUTE)
            if (lead := cues.VALUE_LEAD_RE.match(text, attribute.end)) is not None]


def is_bare_mention(detection: Detection, links: LinkResult) -> bool:
    """A turn that only names one entity, with no cue ("the Night Owls", an answer
    said back): it adds that entity without dropping the earlier one. A turn that
    also asks something of it (退货运费谁出: an attribute) is a question, not a bare name."""
    named = [link for link in links.links
             if link.mention.kind is MentionKind.ALIAS and link.entity_ids]
    asks = detection.of(MentionKind.ATTRIBUTE) or detection.of(MentionKind.TIME)
    return (len(named) == 1 and not detection.ellipsis and not asks
            and len(residue(detection, links)) <= 2)


# A correction's cue: 不对 / 不是的 / 错了, then what the user asked (我问的是…), or
# 不是A，是B, or "I meant B" / "not A but B". Classifying looks for one; the query
# drops it (the cue's 不 is not a negation the rewrite must keep).
_CORRECTION_RE = cues.CORRECTION_RE
_CORRECTION_STRIP_RE = cues.CORRECTION_STRIP_RE


def strip_correction_cue(text: str) -> str:
    """What a correction asks once its cue is gone (不对，我问的是华北区 → 华北区): the
    validator must not demand that the cue's 不 survive the rewrite."""
    stripped = _CORRECTION_STRIP_RE.sub(" ", text).strip(" ，,。")
    return stripped or text


def is_correction(detection: Detection, links: LinkResult) -> bool:
    """不对，我问的是华北区 / 不是A，是B / I meant B: the user fixes what the last turn was
    about. B，不是A / not A, B / B, not A are corrections when A names something (a name or
    an edition): "is it free, not just cheap" corrects nothing."""
    named = [link.mention for link in links.links
             if link.mention.kind is MentionKind.ALIAS and link.entity_ids]
    # 不是2019，是2020版的: an edition names what was meant as well as a name does.
    said = named + list(detection.of(MentionKind.TIME))
    if not said:
        return False
    if _CORRECTION_RE.search(detection.text) or retracted_to_name(detection, named):
        return True
    wrong = corrected_spans(detection.text)
    return any(start <= m.start and m.end <= end for m in said for start, end in wrong)


_WORD_RE = re.compile(r"[^\W\d_]+")


def retracted_to_name(detection: Detection, named: list[Mention]) -> bool:
    """其实是B / Actually, B: a retraction followed by one name and nothing of its own
    (fillers such as 'the' and closing particles aside)."""
    cue = cues.RETRACTION_RE.match(detection.text)
    if cue is None or len(named) != 1:
        return False
    text, m = detection.text, named[0]
    rest = text[cue.end():m.start] + " " + text[m.end:]
    words = [w for w in _WORD_RE.findall(rest.lower())
             if w not in cues.NAME_FILLERS and not set(w) <= cues.CLOSING_PARTICLES]
    return m.start >= cue.end() and not words


def corrected_spans(text: str) -> list[tuple[int, int]]:
    """Where a correction says what was wrong (the 北校区 of 不是北校区，是南校区 or of
    南校区，不是北校区; not A but B)."""
    return [m.span("x") for regex in cues.CORRECTED_RES for m in regex.finditer(text)]


# 回到刚才那个产品 / go back to …: an earlier topic; 再给我看看刚才那个 / show me that again:
# the same one again. Either way, evidence shown before may come back.
_BACK_RE = cues.REVISIT_BACK_RE
_AGAIN_RE = cues.REVISIT_AGAIN_RE


_LEADING_CUE_RE = cues.LEADING_CUE_RE


# "The one from before, again" inside a turn: 把刚才…那条再发我一下 → what it was about.
_RECALL_RE = cues.RECALL_RE
_AGAIN_TAIL_RE = cues.AGAIN_TAIL_RE


def strip_conversation_cues(query: str) -> str:
    """换个话题，退货政策是什么 → 退货政策是什么; 回到刚才A产品（个人版），怎么申请 →
    A产品（个人版），怎么申请; 再给我看看刚才那个年假有几天 → 年假有几天; 把刚才月卡价格
    那条再发我一下 → 月卡价格: such cues are about the conversation, not something to
    search for."""
    stripped = _LEADING_CUE_RE.sub("", query, count=1) or query
    if stripped != query and stripped[:1].isascii() and stripped[:1].islower():
        # The question now opens the sentence (Unrelated, but how much … → How much …).
        stripped = stripped[0].upper() + stripped[1:]
    if _AGAIN_TAIL_RE.search(stripped):
        stripped = _AGAIN_TAIL_RE.sub("", _RECALL_RE.sub("", stripped)).strip(" ，,。") or stripped
    return stripped


def asks_again(text: str) -> bool:
    """再发我一下 / show me that again: the same evidence again, not a new question."""
    return bool(_AGAIN_RE.search(text))


def revisit_cue(text: str) -> str | None:
    """'back' (return to an earlier topic), 'again' (the same one again) or None."""
    if _BACK_RE.search(text):
        return "back"
    if _AGAIN_RE.search(text):
        return "again"
    return None


_MORE_RE = cues.MORE_RE


def asks_for_more(text: str) -> bool:
    """还有呢 / 其他的 / what else / more: the user wants what has not been shown yet."""
    return bool(_MORE_RE.search(text))


class TurnKind(str, Enum):
    NEW_TOPIC = "new_topic"          # names entities, none of them in focus
    CONTINUATION = "continuation"    # refers back (pronoun, ellipsis, or names nothing)
    SWITCH = "switch"                # an explicit topic-switch cue
    CORRECTION = "correction"        # 不是A，是B: rebinds the focus, A becomes negated
    REVISIT = "revisit"              # 回到刚才那个 / show me that again: earlier evidence may return
    ANSWER = "answer"                # answers a pending clarification


def classify(detection: Detection, links: LinkResult, focus: list[str]) -> TurnKind:
    """Classify a turn that is not the answer to a clarification."""
    if _SWITCH_RE.search(detection.text):
        return TurnKind.SWITCH
    if focus and is_correction(detection, links):
        return TurnKind.CORRECTION
    if revisit_cue(detection.text):
        return TurnKind.REVISIT
    named = {i for link in links.links if link.mention.kind is MentionKind.ALIAS
             for i in (link.entity_ids or tuple(c.entity_id for c in link.candidates))}
    if named and not named & set(focus) and not (focus and is_ellipsis(detection, links)) \
            and not (focus and refers_back(detection, links, focus)):
        return TurnKind.NEW_TOPIC
    return TurnKind.CONTINUATION


# "和华北区比", "跟去年相比", "与个人版对比", "比华南区高", "compared with X", "X versus Y", "than X".
_COMPARISON_RES = cues.COMPARISON_RES


def comparison_targets(detection: Detection, links: LinkResult) -> list[str]:
    """Entities the turn compares its subject with (华东区和华北区比呢 → the 华北区 entity)."""
    spans = [m.span("x") for regex in _COMPARISON_RES for m in regex.finditer(detection.text)]
    found: list[str] = []
    for link in links.links:
        if link.mention.kind is not MentionKind.ALIAS or len(link.entity_ids) != 1:
            continue
        if any(start <= link.mention.start and link.mention.end <= end for start, end in spans):
            found.extend(e for e in link.entity_ids if e not in found)
    return found


def comparison_spans(text: str) -> list[tuple[int, int]]:
    """Where the turn names what its subject is compared with (the X of 和X比, 比X高)."""
    return [m.span("x") for regex in _COMPARISON_RES for m in regex.finditer(text)]


def condition_spans(text: str) -> list[tuple[int, int]]:
    """Where the turn states a condition before its question (the X of 要是X呢，…; if X, …)."""
    return [m.span("x") for regex in cues.CONDITION_RES for m in regex.finditer(text)
            if text[m.end():].strip()]


def joint_spans(text: str) -> list[tuple[int, int]]:
    """Where the turn names what its subject goes with (the X of 跟X可以同时拿吗)."""
    return [m.span("x") for regex in cues.JOINT_RES for m in regex.finditer(text)]


def side_spans(text: str) -> list[tuple[int, int]]:
    """Where the turn names something beside its subject: what the subject is compared
    with or goes with, and the conditions it states (要是已经理赔过一次呢，还退钱吗 about
    退保: 理赔 is a circumstance of the question, not its subject)."""
    return [*comparison_spans(text), *condition_spans(text), *joint_spans(text)]


def refers_back(detection: Detection, links: LinkResult, focus: list[str]) -> bool:
    """The turn keeps the focus as its subject while naming something new: a pronoun
    that resolved to a focus entity (它比2024版贵多少), or new names that are only what
    the focus is compared with (跟次卡比，一次贵多少) or goes with (跟国奖可以同时拿吗),
    or a condition of the question (要是已经理赔过一次呢，还退钱吗)."""
    if any(link.mention.kind is MentionKind.PRONOUN and set(link.entity_ids) & set(focus)
           for link in links.links):
        return True
    named = [link for link in links.links
             if link.mention.kind is MentionKind.ALIAS and link.entity_ids]
    targets = set(comparison_targets(detection, links))
    conditions = [*condition_spans(detection.text), *joint_spans(detection.text)]
    return bool(named) and all(
        set(link.entity_ids) <= targets
        or any(start <= link.mention.start and link.mention.end <= end for start, end in conditions)
        for link in named)
