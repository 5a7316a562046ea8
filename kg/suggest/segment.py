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
