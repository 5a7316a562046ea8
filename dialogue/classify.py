"""Turn classification: how this turn relates to the conversation so far."""

from __future__ import annotations

from enum import Enum

from common.language import cues
from common.language.normalize import normalize
from kg.linker import LinkResult
from kg.mentions import Detection, MentionKind

# Explicit topic-switch cues (also stripped from the front of the search query) and
# the ellipsis cue: every language's, from common.language.
_SWITCH_RE = cues.SWITCH_RE
_CUE_RE = cues.ELLIPSIS_CUE_RE


def residue(detection: Detection, links: LinkResult) -> str:
    """The user's own words once every mention and ellipsis cue is taken out
    (normalized: no spaces or punctuation). Empty for 那华南区呢 or "the Beatles"."""
    rest = list(detection.text)
    for m in [*detection.mentions, *(link.mention for link in links.links)]:
        rest[m.start:m.end] = [""] * (m.end - m.start)
    return normalize(_CUE_RE.sub("", "".join(rest)))


def is_ellipsis(detection: Detection, links: LinkResult) -> bool:
    """那华南区呢 / 价格呢 / what about X: a cue, and (almost) nothing else of the user's own."""
    return detection.ellipsis and len(residue(detection, links)) <= 2


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
_CORRECTION_RE = cues.CORRECTION_RE
_CORRECTION_STRIP_RE = cues.CORRECTION_STRIP_RE


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
_BACK_RE = cues.REVISIT_BACK_RE
_AGAIN_RE = cues.REVISIT_AGAIN_RE


_LEADING_CUE_RE = cues.LEADING_CUE_RE


def strip_conversation_cues(query: str) -> str:
    """换个话题，退货政策是什么 → 退货政策是什么; 回到刚才A产品（个人版），怎么申请 →
    A产品（个人版），怎么申请; 再给我看看刚才那个年假有几天 → 年假有几天: such cues are
    about the conversation, not something to search for."""
    return _LEADING_CUE_RE.sub("", query, count=1) or query


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
    if named and not named & set(focus) and not (focus and is_ellipsis(detection, links)):
        return TurnKind.NEW_TOPIC
    return TurnKind.CONTINUATION
