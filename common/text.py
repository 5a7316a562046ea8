"""What counts as printable text in names, aliases and types.

Python's ``str.isprintable`` also refuses every space but U+0020, among them
the no-break space and the ideographic space (U+3000) that Chinese text is
full of (KdConv has "ONE\\u00a0STUDIO"). Refused here are the characters that
break a line or a record: controls (Cc, tab and newline included), surrogates
(Cs) and the line and paragraph separators (Zl, Zp); and the invisible format
characters (Cf): the bidi embeddings, overrides and isolates (U+202A-U+202E,
U+2066-U+2069) and marks (U+200E/F, U+061C), which make text display in another
order than it is stored (an alias or a logged turn that reads differently from
what it matches), zero-width spaces and joiners, the soft hyphen, the BOM and
the tag characters (U+E0000 block, which can carry hidden text to an LLM).

Chinese and English need none of them. The one exception a caller may allow is
the zero-width joiner (U+200D) in a user's turn, which glues emoji sequences
(👩‍💻) that chat clients send; names and aliases allow no format character at
all, ZWJ and ZWNJ included, since an invisible character would make an alias
that nobody can type and that looks like another.
"""

from __future__ import annotations

import unicodedata

_REFUSED = frozenset({"Cc", "Cs", "Zl", "Zp", "Cf"})

#: What a user's turn may hold beyond printable text: tabs, line breaks and the
#: zero-width joiner of emoji sequences.
TURN_TEXT_ALLOWED = "\t\n\r\u2028\u2029\u200d"


def first_unprintable(text: str, *, allowed: str = "") -> int | None:
    """The position of the first control character, format character, surrogate
    or line separator of ``text`` that is not in ``allowed`` (a turn's text may
    hold tabs and line breaks), or None."""
    for position, ch in enumerate(text):
        if ch not in allowed and unicodedata.category(ch) in _REFUSED:
            return position
    return None


def printable(text: str) -> bool:
    """True when ``text`` has no control or format character, surrogate or line separator."""
    return first_unprintable(text) is None


def describe_unprintable(text: str, position: int) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE, a bidi/format control, at position 3``."""
    ch = text[position]
    name = unicodedata.name(ch, "")
    kind = ("an invisible format character (bidi control, zero-width or tag)"
            if unicodedata.category(ch) == "Cf" else "a control character or line separator")
    return f"U+{ord(ch):04X}{' ' + name if name else ''}, {kind}, at position {position}"
