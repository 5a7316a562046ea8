"""Text normalization shared by import, linking and tagging.

One function decides when two strings name the same thing. By default it
applies Unicode NFKC (full-width → half-width), case folding, traditional →
simplified Chinese (OpenCC), and drops whitespace and punctuation, so that
``A产品（个人版）``, ``A产品 个人版`` and ``a产品个人版`` all normalize to
``a产品个人版``.

Each knowledge base may switch any of those steps off (a kb whose ids differ
only in case, or one that must keep traditional and simplified apart): the
choice is a :class:`Normalization` stored with the kb, and every alias key of
the kb, the mention detection and the tagging of its chunks use that same
object.

Normalization is done character by character so that every normalized
character can be mapped back to the span of the original text it came from:
mention spans are found on the normalized text and reported on the original.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from typing import Any

from common.errors import InputError


@lru_cache(maxsize=1)
def _t2s():
    # Loaded on first use, not at import: the dictionaries take a moment.
    from opencc import OpenCC

    return OpenCC("t2s")


@lru_cache(maxsize=262144)
def _norm_char(ch: str, width: bool, case: bool, punctuation: bool, chinese: bool) -> str:
    out = []
    for c in (unicodedata.normalize("NFKC", ch) if width else ch):
        if punctuation and (unicodedata.category(c)[0] in "PZC" or c.isspace()):
            continue
        out.append(c.casefold() if case else c)
    text = "".join(out)
    if chinese and text and any("\u3400" <= c <= "\u9fff" for c in text):
        text = _t2s().convert(text)
    return text


@dataclass(frozen=True)
class Normalization:
    """Which normalization steps a knowledge base uses (all on by default).

    Attributes:
        width: Unicode NFKC, which also folds full-width letters and digits.
        case: case folding (``AI`` = ``ai``).
        punctuation: drop whitespace, punctuation and control characters.
        traditional_to_simplified: 產品 = 产品 (OpenCC t2s).
    """

    width: bool = True
    case: bool = True
    punctuation: bool = True
    traditional_to_simplified: bool = True

    def _flags(self) -> tuple[bool, bool, bool, bool]:
        return (self.width, self.case, self.punctuation, self.traditional_to_simplified)

    def normalize(self, text: str) -> str:
        """Return the matching key of ``text``."""
        flags = self._flags()
        return "".join(_norm_char(ch, *flags) for ch in text)

    def with_offsets(self, text: str) -> NormalizedText:
        """Normalize ``text`` keeping a map from normalized to original positions."""
        flags = self._flags()
        chars: list[str] = []
        origin: list[int] = []
        for i, ch in enumerate(text):
            for c in _norm_char(ch, *flags):
                chars.append(c)
                origin.append(i)
        return NormalizedText(text, "".join(chars), tuple(origin))

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> Normalization:
        """The stored form back; None or empty (a kb created before the setting) is the default."""
        if not text:
            return DEFAULT
        return cls.from_mapping(json.loads(text))

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> Normalization:
        """Build from a mapping of step → bool, refusing unknown steps.

        Raises:
            InputError: an unknown step or a value that is not a boolean.
        """
        known = {f.name for f in fields(cls)}
        for key, value in values.items():
            if key not in known:
                raise InputError(f"unknown normalization step {key!r}; use {sorted(known)}",
                                 field=f"normalization.{key}")
            if not isinstance(value, bool):
                raise InputError(f"normalization step {key!r} must be true or false",
                                 field=f"normalization.{key}")
        return cls(**values)


DEFAULT = Normalization()


@lru_cache(maxsize=4096)
def normalize(text: str) -> str:
    """Return the matching key of ``text`` under the default normalization.

    Remembered for the last few thousand texts: a turn normalizes every passage of its
    pool (coverage, the no-answer checks), and the same passages come back turn after
    turn, at about 0.1 ms each for a 300-character passage."""
    return DEFAULT.normalize(text)


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
    """Normalize ``text`` under the default normalization, keeping offsets."""
    return DEFAULT.with_offsets(text)


class _SimplifiedOf(dict):
    """Code point of a traditional character → its simplified form, filled on first
    sight (OpenCC's t2s on the lone character), so ``str.translate`` folds a long
    passage at C speed once its characters have been seen."""

    def __missing__(self, code: int) -> int | str:
        ch = chr(code)
        simplified = _t2s().convert(ch) if is_cjk(ch) else ch
        self[code] = simplified if simplified != ch else code
        return self[code]


_SIMPLIFIED_OF = _SimplifiedOf()


def fold_traditional(text: str) -> str:
    """``text`` with every traditional Chinese character replaced by its simplified
    form (年費 → 年费), character by character; everything else unchanged. For
    search terms, where 國際漫遊 must meet 国际漫游: names are matched with the kb's
    :class:`Normalization` instead."""
    return text.translate(_SIMPLIFIED_OF)


def is_cjk(ch: str) -> bool:
    return "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff"


def language_of(text: str) -> str:
    """'zh' when the text holds any CJK character, else 'en'."""
    return "zh" if any(is_cjk(c) for c in text) else "en"


_LATIN_WORD_RE = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")


def turn_language(text: str, names: Sequence[tuple[int, int]] = ()) -> str:
    """The language the user is writing in, names aside: 'en' when the words outside
    the ``names`` spans (aliases, which may be Chinese) are mostly English
    ("How long does 携号转网 take?", "携号转网 is it free?"), else 'zh'
    ("房贷 early repayment 有什么限制" is Chinese with English words in it)."""
    rest = list(text)
    for start, end in names:
        rest[start:end] = [" "] * (end - start)
    plain = "".join(rest)
    cjk = sum(1 for c in plain if is_cjk(c))
    words = len(_LATIN_WORD_RE.findall(plain))
    if cjk == 0:
        return "en" if words or not any(is_cjk(c) for c in text) else "zh"
    return "en" if words >= 3 and words * 2 > cjk else "zh"
