"""Turn classification: how this turn relates to the conversation so far."""

from __future__ import annotations

import re
from enum import Enum

from kg.linker import LinkResult
from kg.mentions import Detection, MentionKind
from kg.normalize import normalize

# Explicit topic-switch cues; also stripped from the front of the search query.
_SWITCH_CUES = (r"换个话题|换一个话题|另外问一?下|另外问个|另外想问|顺便问一?下|我想问别的"
                r"|算了[，,。!！\s]*(?:我)?(?:直接|还是|就)?(?:问|说)"
                r"|\bby the way\b|\bbtw\b|\banother question\b|\bchanging the subject\b")
_SWITCH_RE = re.compile(_SWITCH_CUES, re.IGNORECASE)


def is_switch(text: str) -> bool:
    """An explicit cue that the user leaves the current question (换个话题, 算了，我直接问…)."""
    return bool(_SWITCH_RE.search(text))


_CUE_RE = re.compile(r"^\s*(?:那么?|还有|and|what about|how about)\s*|\s*(?:呢|怎么样)\s*[?？]*\s*$",
                     re.IGNORECASE)


def residue(detection: Detection, links: LinkResult) -> str:
    """The user's own words once every mention and ellipsis cue is taken out
    (normalized: no spaces or punctuation). Empty for 那华南区呢 or "the Beatles"."""
    rest = list(detection.text)
    for m in [*detection.mentions, *(link.mention for link in links.links)]:
        rest[m.start:m.end] = [""] * (m.end - m.start)
    return normalize(_CUE_RE.sub("", "".join(rest)))


# A question word in what the user added makes a question of its own (那怎么办呢).
_ASKS_RE = re.compile(r"为什么|为何|怎么|如何|多少|几|哪|是否|能否|什么|谁|何时|吗"
                      r"|\b(?:what|why|how|which|who|when|where|whether)\b", re.IGNORECASE)
# How much of its own an ellipsis may add besides names: 那二套呢, 发短信呢, 普通版的…呢.
_ELLIPSIS_OWN_CHARS = 6


def is_ellipsis(detection: Detection, links: LinkResult) -> bool:
    """那华南区呢 / 价格呢 / 发短信呢 / what about X: a cue, and little else of the user's
    own — a few words that ask nothing by themselves."""
    if not detection.ellipsis:
        return False
    rest = residue(detection, links)
    return len(rest) <= 2 or (len(rest) <= _ELLIPSIS_OWN_CHARS and not _ASKS_RE.search(rest))


def is_bare_mention(detection: Detection, links: LinkResult) -> bool:
    """A turn that only names one entity, with no cue ("the Beatles", an answer
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
_OH = r"(?:(?:哦|噢|啊|呃|嗯|唉|哎|oh|sorry|oops)[，,。!！\s]*)?"
_WRONG = r"(?:不对|不是的|错了|(?:说|搞|打|写|问)错了)"
_ASKED = r"(?:我(?:想|要|是)?(?:问|说|指|找|去|查|办)的是|我是说|我是想问)"
_ANYWHERE = (r"不是.{1,20}?[，,、\s]*(?:而)?是"
             r"|^\s*(?:(?:no|sorry|oops)[,.]?\s+)?i\s+meant?\b|\bnot\s+.{1,40}?,?\s+but\b")
_CORRECTION_RE = re.compile(rf"^\s*{_OH}(?:{_WRONG}|{_ASKED})|{_ANYWHERE}", re.IGNORECASE)
_CORRECTION_STRIP_RE = re.compile(
    rf"^\s*{_OH}(?:{_WRONG}[，,。!！\s]*)?{_ASKED}|^\s*{_OH}{_WRONG}[，,。!！\s]*|{_ANYWHERE}",
    re.IGNORECASE)


def strip_correction_cue(text: str) -> str:
    """What a correction asks once its cue is gone (不对，我问的是华北区 → 华北区): the
    validator must not demand that the cue's 不 survive the rewrite."""
    stripped = _CORRECTION_STRIP_RE.sub(" ", text).strip(" ，,。")
    return stripped or text


def is_correction(detection: Detection, links: LinkResult) -> bool:
    """不对，我问的是华北区 / 不是A，是B / I meant B: the user fixes what the last turn was about."""
    names = any(link.mention.kind is MentionKind.ALIAS and link.entity_ids for link in links.links)
    return names and bool(_CORRECTION_RE.search(detection.text))


# 回到刚才那个产品 / go back to …: an earlier topic; 再给我看看刚才那个 / show me that again:
# the same one again. Either way, evidence shown before may come back.
_BACK_RE = re.compile(r"回到(?:刚才|之前|前面|上面)|(?:刚才|之前|前面|上面)(?:说|问|提到)?的?那个|"
                      r"\bgo(?:ing)? back to\b|\bback to (?:the|that)\b|\bthe (?:earlier|previous) one\b",
                      re.IGNORECASE)
_AGAIN_RE = re.compile(r"再(?:给我)?(?:看看|看一下|发一下|说一遍|讲一遍)|再发(?:给)?我一下|再发一[遍次]|重新(?:发|给)|"
                       r"\bshow (?:me )?(?:that|it) again\b|\bonce more\b|\brepeat that\b",
                       re.IGNORECASE)


_LEADING_CUE_RE = re.compile(
    r"^\s*(?:回到(?:刚才|之前|前面|上面)(?:说|问|提到)?的?|(?:let'?s\s+)?go(?:ing)? back to\s+"
    r"|(?:请)?再(?:给我)?(?:看看|看一下|发一下|说一遍|讲一遍)(?:刚才|之前|前面|上面)?(?:说|问|提到)?的?"
    r"(?:那个|那些)?[，,：:\s]*"
    rf"|(?:{_SWITCH_CUES})[，,：:。\s]*)",
    re.IGNORECASE)


# "The one from before, again" inside a turn: 把刚才…那条再发我一下 → what it was about.
_RECALL_RE = re.compile(r"把?(?:刚才|之前|前面|上面)(?:讲|说|问|提到|发)?(?:过)?的?(?:那[条段篇个](?!月))?")
_AGAIN_TAIL_RE = re.compile(r"的?那(?:条|段|篇|些|个)?\s*再(?:给我)?(?:发|看|说|讲)(?:给)?我?(?:一下|一遍|一次|看看)?"
                            r"|再(?:给我)?发(?:给)?我?一下")


def strip_conversation_cues(query: str) -> str:
    """换个话题，退货政策是什么 → 退货政策是什么; 回到刚才A产品（个人版），怎么申请 →
    A产品（个人版），怎么申请; 再给我看看刚才那个年假有几天 → 年假有几天; 把刚才千兆价格
    那条再发我一下 → 千兆价格: such cues are about the conversation, not something to
    search for."""
    stripped = _LEADING_CUE_RE.sub("", query, count=1) or query
    if _AGAIN_TAIL_RE.search(stripped):
        stripped = _AGAIN_TAIL_RE.sub("", _RECALL_RE.sub("", stripped)).strip(" ，,。") or stripped
    return stripped


def revisit_cue(text: str) -> str | None:
    """'back' (return to an earlier topic), 'again' (the same one again) or None."""
    if _BACK_RE.search(text):
        return "back"
    if _AGAIN_RE.search(text):
        return "again"
    return None


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
_COMPARISON_RES = (
    re.compile(r"(?:和|跟|与|同|相对于|相较于)(?P<x>[^，,。？?！!]{1,24}?)"
               r"(?:相比|比较|对比|比起来|比)"),
    re.compile(r"(?<![对相])比(?P<x>[^，,。？?！!]{1,16}?)(?:高|低|多|少|好|差|大|小|快|慢|贵|便宜|强|弱)"),
    re.compile(r"\b(?:compared (?:with|to)|versus|vs\.?|than)\s+(?P<x>[^,.?!]{1,40})", re.IGNORECASE),
)


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


def refers_back(detection: Detection, links: LinkResult, focus: list[str]) -> bool:
    """The turn keeps the focus as its subject while naming something new: a pronoun
    that resolved to a focus entity (它比2024版贵多少), or new names that are only what
    the focus is compared with (跟港澳台日包比，一天贵多少)."""
    if any(link.mention.kind is MentionKind.PRONOUN and set(link.entity_ids) & set(focus)
           for link in links.links):
        return True
    named = [link for link in links.links
             if link.mention.kind is MentionKind.ALIAS and link.entity_ids]
    targets = set(comparison_targets(detection, links))
    return bool(named) and all(set(link.entity_ids) <= targets for link in named)
