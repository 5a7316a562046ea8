"""Times said relative to the one a conversation is about.

"跟上个月比呢" after "2025年5月二套利率是多少" compares with April 2025, and a careful
annotator writes that month, not "上个月": the standalone must be searchable without the
turn before it. :func:`anchored` turns a relative time (上个月, 去年, last month) into the
explicit one it stands for, said in the form of the explicit time it is relative to.
"""

from __future__ import annotations

import re

from common.language import cues

# English month names, the form an English time is written back in.
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]

_SHIFTS: dict[str, tuple[str, int]] = {
    word.lower(): shift for module in cues.LANGUAGES.values()
    for word, shift in module.RELATIVE_TIME.items()}

_ZH_MONTH_RE = re.compile(r"(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月")
_ZH_YEAR_RE = re.compile(r"(\d{4})\s*年")
_EN_MONTH_RE = re.compile(rf"\b({'|'.join(MONTHS)})\b(?:\s+((?:19|20)\d{{2}})\b)?", re.IGNORECASE)
_EN_YEAR_RE = re.compile(r"\b((?:19|20)\d{2})\b")
_MONTH_NUMBER = {name.lower(): i for i, name in enumerate(MONTHS, start=1)}


_RELATIVE_RE = re.compile("|".join(
    rf"\b{re.escape(w)}\b" if w.isascii() else re.escape(w)
    for w in sorted(_SHIFTS, key=len, reverse=True)), re.IGNORECASE)


def relative_times(text: str) -> list[str]:
    """The relative times ``text`` says (明年, next year), in order, as written."""
    return [m.group(0) for m in _RELATIVE_RE.finditer(text)]


def shift_of(text: str) -> tuple[str, int] | None:
    """The unit and offset of a relative time (上个月 → ("month", -1)), None otherwise."""
    return _SHIFTS.get(" ".join(text.lower().split()))


def anchored(relative: str, context: str) -> str | None:
    """The explicit time ``relative`` stands for, against the first explicit time of
    ``context`` it can be counted from (上个月 against 2025年5月 → 2025年4月; 去年 against
    2025年5月 → 2024年5月; last month against May 2025 → April 2025). None when
    ``relative`` is not a relative time or ``context`` names no time to count from."""
    shift = shift_of(relative)
    if shift is None:
        return None
    unit, offset = shift
    m = _ZH_MONTH_RE.search(context)
    if m is not None and 1 <= int(m.group(2)) <= 12:
        year = int(m.group(1)) if m.group(1) else None
        month = int(m.group(2))
        if unit == "year":
            return None if year is None else f"{year + offset}年{month}月"
        year, month = _add_months(year, month, offset)
        return f"{year}年{month}月" if year is not None else f"{month}月"
    m = _ZH_YEAR_RE.search(context)
    if m is not None:
        return f"{int(m.group(1)) + offset}年" if unit == "year" else None
    m = _EN_MONTH_RE.search(context)
    if m is not None:
        year = int(m.group(2)) if m.group(2) else None
        month = _MONTH_NUMBER[m.group(1).lower()]
        if unit == "year":
            return None if year is None else f"{MONTHS[month - 1]} {year + offset}"
        year, month = _add_months(year, month, offset)
        name = MONTHS[month - 1]
        return f"{name} {year}" if year is not None else name
    m = _EN_YEAR_RE.search(context)
    if m is not None and unit == "year":
        return str(int(m.group(1)) + offset)
    return None


def _add_months(year: int | None, month: int, offset: int) -> tuple[int | None, int]:
    index = month - 1 + offset
    carried, month0 = divmod(index, 12)
    return (year + carried if year is not None else None), month0 + 1
