"""Fuzzy alias lookup: aliases within about one edit of a text fragment.

A one-deletion index (every alias, and every alias with one character
deleted, points to the alias) finds candidates for insertions, deletions and
substitutions with a few dictionary lookups, whatever the table's size;
rapidfuzz's normalized similarity ranks them. Only aliases of at least
``min_len`` characters take part: one wrong character in a three-character
name is as likely another name as a typo.
"""

from __future__ import annotations

from collections.abc import Iterable

from rapidfuzz import fuzz

# Similarity (0-100) a fragment needs to count as a mention of an alias. Tuned on
# the KdConv dev set (docs/linking.md): 75 and 80 cost entity precision and recall
# there, 90 does not. At 90 an added or missing character passes in names of 5+
# characters (综合意外保险 → 综合意外险), a wrong one only in names of 10+.
DEFAULT_THRESHOLD = 90.0
DEFAULT_MIN_LEN = 4
_MAX_LEN = 32


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1:] for i in range(len(word))}


class FuzzyAliasIndex:
    """Normalized aliases, looked up by near matches."""

    def __init__(self, keys: Iterable[str], *, min_len: int = DEFAULT_MIN_LEN) -> None:
        self.min_len = min_len
        index: dict[str, set[str]] = {}
        lengths: dict[int, int] = {}
        for key in keys:
            if min_len <= len(key) <= _MAX_LEN:
                lengths[len(key)] = lengths.get(len(key), 0) + 1
                for variant in _deletions(key) | {key}:
                    index.setdefault(variant, set()).add(key)
        self._index = {k: tuple(sorted(v)) for k, v in index.items()}
        self._set_lengths(lengths)

    def _set_lengths(self, lengths: dict[int, int]) -> None:
        self._lengths = lengths
        # Fragment lengths worth trying: an alias's length, one shorter or one longer.
        self.fragment_lengths = tuple(sorted({n + d for n, c in lengths.items() if c
                                             for d in (-1, 0, 1) if n + d >= self.min_len - 1},
                                            reverse=True))

    def updated(self, added: Iterable[str], removed: Iterable[str]) -> FuzzyAliasIndex:
        """A new index with these alias keys added and removed: one dictionary copy
        plus work for the change, instead of a rebuild over every key."""
        new = FuzzyAliasIndex.__new__(FuzzyAliasIndex)
        new.min_len = self.min_len
        index = dict(self._index)
        lengths = dict(self._lengths)
        for key, sign in [*((k, -1) for k in removed), *((k, 1) for k in added)]:
            if not self.min_len <= len(key) <= _MAX_LEN:
                continue
            lengths[len(key)] = lengths.get(len(key), 0) + sign
            for variant in _deletions(key) | {key}:
                keys = set(index.get(variant, ()))
                if sign > 0:
                    keys.add(key)
                else:
                    keys.discard(key)
                if keys:
                    index[variant] = tuple(sorted(keys))
                else:
                    index.pop(variant, None)
        new._index = index
        new._set_lengths(lengths)
        return new

    def __len__(self) -> int:
        return len(self._index)

    def lookup(self, fragment: str, *, threshold: float = DEFAULT_THRESHOLD) -> list[tuple[str, float]]:
        """Aliases similar to ``fragment`` (score ≥ threshold), best first."""
        found: set[str] = set()
        for variant in _deletions(fragment) | {fragment}:
            found.update(self._index.get(variant, ()))
        scored = [(key, fuzz.ratio(fragment, key)) for key in found if key != fragment]
        return sorted(((k, s) for k, s in scored if s >= threshold), key=lambda ks: (-ks[1], ks[0]))


# -- sound-alike slips ----------------------------------------------------------------------
#
# Chinese is typed by sound: the common one-character slip is a homophone (房带 for 房贷,
# 携号转往 for 携号转网, 白金咔 for 白金卡). The similarity above cannot see those in short
# names (one wrong character in four scores 75), so a second index answers "which
# aliases differ from this fragment in exactly one character that sounds the same
# (tones ignored)". It takes aliases of two or more characters: the sound constraint,
# not the length, keeps an ordinary word from passing for a name.

SOUND_MIN_LEN = 2
# From 10 characters on, one wrong character scores 90 and the similarity above finds it.
SOUND_MAX_LEN = 9


def _readings(char: str) -> frozenset[str]:
    """Toneless pinyin readings of one Chinese character; empty for anything else."""
    if not "\u4e00" <= char <= "\u9fff":
        return frozenset()
    return _reading_cache(char)


def _reading_cache(char: str, _cache: dict[str, frozenset[str]] = {}) -> frozenset[str]:
    found = _cache.get(char)
    if found is None:
        from pypinyin import Style, pinyin

        found = _cache[char] = frozenset(r for r in pinyin(char, style=Style.NORMAL,
                                                          heteronym=True)[0] if r.isalpha())
    return found


class SoundAliasIndex:
    """Aliases keyed by (the rest of the alias, the position, a reading of the character
    there): a fragment finds every alias that differs from it in one homophone."""

    def __init__(self, keys: Iterable[str], *, min_len: int = SOUND_MIN_LEN) -> None:
        index: dict[tuple[str, int, str], set[str]] = {}
        lengths: set[int] = set()
        for key in keys:
            if not min_len <= len(key) <= SOUND_MAX_LEN:
                continue
            for i, char in enumerate(key):
                for reading in _readings(char):
                    index.setdefault((key[:i] + "\0" + key[i + 1:], i, reading), set()).add(key)
                    lengths.add(len(key))
        self._index = {k: tuple(sorted(v)) for k, v in index.items()}
        self.fragment_lengths = tuple(sorted(lengths, reverse=True))

    def __len__(self) -> int:
        return len(self._index)

    def lookup(self, fragment: str) -> list[str]:
        """Aliases that are ``fragment`` with one character replaced by a homophone
        (never ``fragment`` itself), sorted."""
        found: set[str] = set()
        for i, char in enumerate(fragment):
            for reading in _readings(char):
                found.update(self._index.get((fragment[:i] + "\0" + fragment[i + 1:], i, reading), ()))
        found.discard(fragment)
        return sorted(found)


def one_edit_apart(a: str, b: str) -> bool:
    """At most one insertion, deletion or substitution turns ``a`` into ``b``."""
    if abs(len(a) - len(b)) > 1:
        return False
    return a == b or bool(_deletions(a) & ({b} | _deletions(b))) or b in _deletions(a) \
        or a in _deletions(b)
