"""What counts as printable text in names, aliases and types.

Python's ``str.isprintable`` also refuses every space but U+0020, among them
the no-break space and the ideographic space (U+3000) that Chinese text is
full of (KdConv has "ONE\\u00a0STUDIO"). Refused here are only the characters
that break a line or a record: controls (Cc, tab and newline included),
surrogates (Cs) and the line and paragraph separators (Zl, Zp).
"""

from __future__ import annotations

import unicodedata

_REFUSED = frozenset({"Cc", "Cs", "Zl", "Zp"})


def first_unprintable(text: str, *, allowed: str = "") -> int | None:
    """The position of the first control character, surrogate or line separator
    of ``text`` that is not in ``allowed`` (a turn's text may hold tabs and line
    breaks), or None."""
    for position, ch in enumerate(text):
        if ch not in allowed and unicodedata.category(ch) in _REFUSED:
            return position
    return None


def printable(text: str) -> bool:
    """True when ``text`` has no control character, surrogate or line separator."""
    return first_unprintable(text) is None
