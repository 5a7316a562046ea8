"""Text normalization shared by import, linking and tagging.

One function decides when two strings name the same thing: Unicode NFKC
(full-width → half-width), case folding, traditional → simplified Chinese,
and dropping whitespace and punctuation, so that ``A产品（个人版）``,
``A产品 个人版`` and ``a产品个人版`` all normalize to ``a产品个人版``.

Normalization is done character by character so that every normalized
character can be mapped back to the span of the original text it came from:
mention spans are found on the normalized text and reported on the original.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache


@lru_cache(maxsize=1)
def _t2s():
    # Loaded on first use, not at import: the dictionaries take a moment.
    from opencc import OpenCC

    return OpenCC("t2s")


@lru_cache(maxsize=65536)
def _norm_char(ch: str) -> str:
    out = []
    for c in unicodedata.normalize("NFKC", ch):
        cat = unicodedata.category(c)
        if cat[0] in "PZC" or c.isspace():
            continue
        out.append(c.casefold())
    text = "".join(out)
    if text and any("\u3400" <= c <= "\u9fff" for c in text):
        text = _t2s().convert(text)
    return text


def normalize(text: str) -> str:
    """Return the matching key of ``text`` (see module docstring)."""
    return "".join(_norm_char(ch) for ch in text)


@dataclass(frozen=True)
class NormalizedText:
    """A normalized string plus, for each of its characters, the index of the
    original character it came from."""

    original: str
    text: str
    origin: tuple[int, ...]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Map a normalized [start, end) span back to the original text."""
        return self.origin[start], self.origin[end - 1] + 1


def normalize_with_offsets(text: str) -> NormalizedText:
    """Normalize ``text`` keeping a map from normalized to original positions."""
    chars: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        for c in _norm_char(ch):
            chars.append(c)
            origin.append(i)
    return NormalizedText(text, "".join(chars), tuple(origin))


def is_cjk(ch: str) -> bool:
    return "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff"


def language_of(text: str) -> str:
    """'zh' when the text holds any CJK character, else 'en'."""
    return "zh" if any(is_cjk(c) for c in text) else "en"
