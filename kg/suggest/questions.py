"""Names FAQ questions ask about: the subject of ``问：积点转赠怎么办理？`` is 积点转赠.

An FAQ asks about the things users ask about, and many of them (a service, a
procedure) have no document, title or listed label of their own. A question's
subject is its words before the first that asks (a question word, a modal verb,
a particle). It names a thing when it is one to three words, one of them one the
dictionary seldom counts (a domain's own word: 积点, not 升级), it is no everyday
word as a whole nor two characters of which the first is an adjective (旧卡), it
is no short form of a name found elsewhere (钻石卡 or 晨星卡钻石版 of
晨星信用卡钻石版 is that card), and the passages use it twice or more.
"""

from __future__ import annotations

import re
from collections import defaultdict

from common.language import documents as words
from kg.suggest.corpus import Occurrences, Passage
from kg.suggest.segment import common_word, describes, rare_word, words_of

MAX_WORDS = 3
MIN_USES = 2
_NAME_RE = re.compile(r"^[\u4e00-\u9fff]{2,8}$")


def names(passages: list[Passage], occurrences: Occurrences, known: set[str]) -> dict[str, int]:
    """Subjects of FAQ questions that name a thing (name → questions asking about it);
    ``known`` names, found elsewhere, are left to their own sources."""
    asked: dict[str, int] = defaultdict(int)
    for p in passages:
        for m in words.FAQ_QUESTION_RE.finditer(p.text):
            subject = _subject(m.group(1))
            if subject and subject not in known:
                asked[subject] += 1
    asked = {s: n for s, n in asked.items() if occurrences.count(s) >= MIN_USES}
    if asked:
        from kg.suggest.aliases import forms_of  # aliases reads the entities these names make

        shorter = set().union(*(forms_of(name) for name in known))
        asked = {s: n for s, n in asked.items()
                 if s not in shorter and not any(_shortens(s, name) for name in known)}
    return asked


def _shortens(subject: str, name: str) -> bool:
    """星河卡标准版 of 星河信用卡标准版: it starts as the name does and its characters
    follow in the name's order."""
    rest = iter(name)
    return subject[0] == name[0] and len(name) > len(subject) and all(ch in rest for ch in subject)


def _subject(question: str) -> str | None:
    """The words of ``question`` before what it asks, when they name a thing."""
    parts = words_of(question)
    lead = []
    for part in parts:
        if part in words.QUESTION_SUBJECT_ENDS:
            break
        lead.append(part)
    subject = "".join(lead)
    if not lead or len(lead) == len(parts) or len(lead) > MAX_WORDS or not _NAME_RE.match(subject):
        return None
    if common_word(subject) or not any(rare_word(w) for w in lead):
        return None
    if len(subject) == 2 and describes(subject[0]):
        return None  # 旧卡, 大包: an adjective before a kind describes, names nothing
    return subject
