"""Words of a name, and whether a word is everyday language, from jieba's bundled
dictionary (no model is downloaded). The dictionary loads once, on first use."""

from __future__ import annotations

import logging
from functools import lru_cache

# A word the dictionary counts this often or more is everyday language (分期, 标准, 住房),
# not a name (皮肤科, 周包, 标准版 are counted a few times or not at all).
COMMON_WORD_FREQ = 100
# A word it counts fewer times than this is rare: a name's own word (万兆, 日包) rather than
# a describing one (转账 50, 限额 369).
RARE_WORD_FREQ = 20


@lru_cache(maxsize=1)
def _jieba():
    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


@lru_cache(maxsize=65536)
def words_of(text: str) -> tuple[str, ...]:
    """The words of ``text`` (jieba's segmentation), spaces dropped."""
    return tuple(w for w in _jieba().lcut(text) if w.strip())


def rare_word(text: str) -> bool:
    """A word the dictionary lacks or counts seldom (万兆, 日包, a brand): the mark of a name
    among words that only describe (转账限额 is made of dictionary words only)."""
    return (_jieba().dt.FREQ.get(text) or 0) < RARE_WORD_FREQ


def common_word(text: str) -> bool:
    return (_jieba().dt.FREQ.get(text) or 0) >= COMMON_WORD_FREQ


@lru_cache(maxsize=1)
def _tags() -> dict[str, str]:
    import jieba.posseg

    _jieba()
    return jieba.posseg.dt.word_tag_tab


def names_something(word: str) -> bool:
    """A noun to the dictionary (流量, 利率, 免息期), or a word it does not know (月费, 副卡:
    a domain's own nouns), rather than a verb, adverb or measure word (收取, 最高, 每张)."""
    tag = _tags().get(word)
    return tag is None or tag.startswith("n") or tag == "vn"


def describes(word: str) -> bool:
    """An adjective or adverb (最高, 最低, 约): what stands between an aspect and its figure
    (额度最高30万元)."""
    tag = _tags().get(word) or ""
    return tag.startswith(("a", "d"))


def words_at(text: str) -> dict[int, str]:
    """The words of ``text`` (jieba's segmentation) by the offset each starts at; the
    offset of the text's end maps to ``""``."""
    found, at = {}, 0
    for word in _jieba().lcut(text):
        found[at] = word
        at += len(word)
    found[at] = ""
    return found
