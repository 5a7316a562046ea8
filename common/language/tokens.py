"""Content tokens of a text, for comparing questions with profiles and passages.

Stemmed English words (stop words left out) and Chinese character bigrams (runs
split on stop words, stop characters dropped, traditional characters folded to
simplified so 年費 meets 年费), with the stop lists of the
language room (common/language/zh.py, en.py). Used by the context fit
(understanding/fit.py), the clarify model's features and retrieval's novelty and search.
"""

from __future__ import annotations

import re

from common.language import cues
from common.language.normalize import fold_traditional

_WORD_RE = re.compile(r"[a-z0-9]+|[\u3400-\u9fff]+")
# Stop words: whole words of the languages written with spaces; for those written
# without, the words a run is split on and the characters dropped from it.
_STOP = cues.STOP_WORDS
_ZH_STOP_WORDS = cues.STOP_WORDS_RE
_ZH_STOP_CHARS = cues.STOP_CHARS


def _stem(word: str) -> str:
    # Crude but language-agnostic enough: instruments/instrument, played/playing.
    for suffix in ("ings", "ing", "ies", "ers", "ed", "es", "er", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def tokens(text: str) -> list[str]:
    """Content tokens: stemmed English words, and Chinese character bigrams."""
    out: list[str] = []
    for piece in _WORD_RE.findall(text.lower()):
        if piece[0] >= "\u3400":
            for run in _ZH_STOP_WORDS.split(fold_traditional(piece)):
                chars = [c for c in run if c not in _ZH_STOP_CHARS]
                out.extend(a + b for a, b in zip(chars, chars[1:]))
        elif piece not in _STOP and len(piece) > 1 and not piece.isdigit():
            out.append(_stem(piece))
    return out
