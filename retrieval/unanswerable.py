"""Questions the knowledge base cannot answer, whatever its search finds.

A weak match is one reason to answer ``no_answer`` (``retrieval/search.py``, coverage
below the threshold). These are others, read from the question and the kb's own word
statistics, where the search finds passages that look relevant but answer something
else:

- a request for the asker's own records (查一下我上学期的GPA, 我的手机号还剩多少话费, check
  my balance): a knowledge base holds documents, not anyone's account;
- whether a thing just named has something the kb never writes of (锦绣卡有没有钻石版,
  安和有宠物险吗), or how many of it (那家支行有几个停车位): the passages found are about
  the card's editions, the insurer's products and the branch's services that do exist. What is asked for counts as unknown when no chunk holds any
  of its Chinese words (two characters in a row), or when it holds a model code (6G)
  no chunk has; in a kb written in English (``TermStats.writes_latin``), when no chunk
  holds any of its English words (does the Riverside Club have a swimming pool?). An
  English word a Chinese kb never writes says nothing.

- what will happen at a later time said relative to now (明年会涨价吗, will it go up next
  year?), when no passage writes of that time: the passages found state what holds
  now, which says nothing of next year. "Now" is the latest year the passages found
  about the turn's entities name (or the calendar year, if they name a later one); a question that says when it may be asked of (能留到明年吗) is no forecast.

(Editions the kb never names, 8.0版 and 2023年, are judged in ``retrieval/novelty.py``.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date

from common.language import cues
from common.language.relative import relative_times, shift_of
from common.language.tokens import tokens
from retrieval.novelty import TermStats

_CJK_RE = re.compile(r"[\u3400-\u9fff]")
_YEAR_RE = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")
# A model code: letters and digits together (6g, x3).
_CODE_RE = re.compile(r"^(?=.*\d)(?=.*[a-z])[a-z0-9]+$")


def own_records(query: str) -> str | None:
    """The words with which ``query`` asks for the asker's own records, if it does."""
    match = cues.OWN_RECORDS_RE.search(query)
    return match.group(0) if match else None


def unknown_things(query: str, stats: TermStats, names: Iterable[str]) -> list[str]:
    """What ``query`` asks whether a named thing has, when the kb never writes of it.

    ``names`` are the names and aliases of the turn's entities: the question must ask
    it of one of them, right after the name (锦绣女性信用卡有没有钻石版). Questions of
    chat (这部电影有没有获过奖, 有耳闻么) name no entity there, and words a kb may phrase
    otherwise (有没有多孩优惠) are not judged when nothing is named before them.
    """
    low = query.lower()
    out: list[str] = []
    for name in {n.lower() for n in names if n.strip()}:
        at = low.find(name)
        while at >= 0:
            rest = low[at + len(name):]
            for regex in cues.EXISTENCE_RES:
                match = regex.match(rest)
                if match and _unknown(match.group("x"), stats):
                    out.append(match.group("x").strip())
            at = low.find(name, at + 1)
    return list(dict.fromkeys(out))


def unknown_future(query: str, passages: Iterable[str], stats: TermStats, *,
                   today: date | None = None) -> list[str]:
    """The later times ``query`` asks what will happen at, when the kb never writes of them.

    A later year said relative to now (明年, next year) in a forecast (会, will) is
    counted from now: the latest year ``passages`` (what the search found about the
    turn's entities, shown before or not) name, or the calendar year when they name a
    later one (a notice of next year's prices is not this year's). It is unknown when no
    chunk names that year nor the relative word itself (明年起调整). Nothing is judged
    when the passages name no year: there is no "now" to count from.
    """
    if not cues.FORECAST_RE.search(query):
        return []
    later = [(word, shift[1]) for word in relative_times(query)
             if (shift := shift_of(word)) is not None and shift[0] == "year" and shift[1] > 0]
    years = [int(y) for text in passages for y in _YEAR_RE.findall(text)]
    if not later or not years:
        return []
    now = min(max(years), (today or date.today()).year)
    out = []
    for word, offset in later:
        year = now + offset
        written = stats.df(f"{year}年") + stats.df(str(year)) + sum(
            stats.df(t) for t in tokens(word) if _CJK_RE.match(t))
        if not written:
            out.append(word)
    return list(dict.fromkeys(out))


def _unknown(asked: str, stats: TermStats) -> bool:
    terms = tokens(asked)
    chinese = [t for t in terms if _CJK_RE.match(t)]
    if chinese and all(stats.df(t) == 0 for t in chinese):
        return True
    # In a kb written in English, English words it never writes say as much.
    latin = [t for t in terms if not _CJK_RE.match(t)]
    if stats.writes_latin and latin and all(stats.df(t) == 0 for t in latin):
        return True
    return any(_CODE_RE.match(t) and stats.df(t) == 0 for t in terms)
