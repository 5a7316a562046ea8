"""Which version the user means when a name stands for several editions of one thing.

"那现在用的条款呢" when the kb holds 安心医疗险条款（2023版） and （2024版）, "the current
fee schedule" beside the 2024 and 2025 ones: the name alone is ambiguous and the
clarify-or-resolve decision would ask, but the turn says which one, the edition in
force now. A careful annotator writes that one, and so does :func:`settle_by_current`.

Editions are told apart by their canonical names alone, so that any kb's ontology has
them without a relation of its own ("SUCCEEDS", "SUPERSEDES"): names that are the same
once one year (2024) or version number (7.0, v2) is taken out, and differ in it. The
current one is the latest edition not dated after the calendar year. Without a cue
(现在, 目前, 最新, current, now, latest) the link is left to the decision.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import date

from common.language import cues
from kg.aliases import AliasSnapshot
from understanding.linker import Link, LinkResult

# A year or a version number inside a name: 2024, 7.0, 6.5.1, v2 (not inside a longer number).
_EDITION_IN_NAME_RE = re.compile(
    r"(?<![0-9.])(?:(?P<year>(?:19|20)\d{2})|(?P<dotted>\d+(?:\.\d+)+)|[vV](?P<v>\d+))(?![0-9])")

CURRENT_REASON = "the edition in force now (the turn says current)"


def edition(name: str) -> tuple[str, tuple[int, ...], bool] | None:
    """The name without its one edition number, the number as a sortable key, and
    whether it is a year; None when the name holds no such number or more than one."""
    found = list(_EDITION_IN_NAME_RE.finditer(name))
    if len(found) != 1:
        return None
    m = found[0]
    number = m.group("year") or m.group("dotted") or m.group("v")
    key = tuple(int(part) for part in number.split("."))
    return name[:m.start()] + "#" + name[m.end():], key, m.group("year") is not None


_NUMBER_SAID_RE = re.compile(r"(?<![0-9.])((?:19|20)\d{2}|\d+(?:\.\d+)+)(?![0-9])")


def number_said(text: str) -> tuple[int, ...] | None:
    """The year or version number ``text`` says, as an edition's sortable key (2025版 →
    (2025,), 6.0 → (6, 0)); None when it says none."""
    found = _NUMBER_SAID_RE.search(text)
    return tuple(int(p) for p in found.group(1).split(".")) if found else None


def edition_key(entity_id: str, snapshot: AliasSnapshot) -> tuple[int, ...] | None:
    """The edition number in the entity's canonical name; None when it has none."""
    entity = snapshot.entities.get(entity_id)
    found = edition(entity.name) if entity is not None else None
    return found[1] if found is not None else None


def _editions(ids: Sequence[str], snapshot: AliasSnapshot
              ) -> list[tuple[str, tuple[int, ...], bool]] | None:
    """Each id with its edition number and whether it is a year, when every one is an
    edition of one thing (the same name apart from a year or a version number, each
    different); None otherwise."""
    editions = []
    for eid in ids:
        entity = snapshot.entities.get(eid)
        found = edition(entity.name) if entity is not None else None
        if found is None:
            return None
        editions.append((eid, *found))
    keys = [key for _, _, key, _ in editions]
    if len(editions) < 2 or len({stem for _, stem, _, _ in editions}) != 1 \
            or len(set(keys)) != len(keys):
        return None
    return [(eid, key, is_year) for eid, _, key, is_year in editions]


def _in_force(editions: Sequence[tuple[str, tuple[int, ...], bool]], today: date | None
              ) -> tuple[str, tuple[int, ...], bool] | None:
    year = (today or date.today()).year
    in_force = [e for e in editions if not (e[2] and e[1][0] > year)]
    return max(in_force, key=lambda e: e[1]) if in_force else None


def current_edition(ids: Sequence[str], snapshot: AliasSnapshot, *,
                    today: date | None = None) -> str | None:
    """The id among ``ids`` that is the edition in force now, when every one is an edition
    of one thing (the same name apart from a year or a version number, each different);
    None otherwise. A year after the calendar year is announced, not in force."""
    editions = _editions(ids, snapshot)
    found = _in_force(editions, today) if editions is not None else None
    return found[0] if found is not None else None


def relative_edition(ids: Sequence[str], step: int, snapshot: AliasSnapshot, *,
                     today: date | None = None) -> str | None:
    """Among editions of one thing, the one a word for older (``step`` -1) or newer (+1)
    means: the edition just before the one in force, or the newest (announced ones
    included). None when they are not editions of one thing, or none is older."""
    editions = _editions(ids, snapshot)
    if editions is None:
        return None
    if step > 0:
        return max(editions, key=lambda e: e[1])[0]
    now = _in_force(editions, today)
    older = [e for e in editions if now is not None and e[1] < now[1]]
    return max(older, key=lambda e: e[1])[0] if older else None


def _settle_each(links: LinkResult, pick: Callable[[Link], tuple[str, str] | None]
                 ) -> LinkResult:
    """Each ambiguous link for which ``pick`` names an entity (and why) goes to it alone;
    ``links`` itself when none does."""
    out = list(links.links)
    changed = False
    for i, link in enumerate(out):
        picked = pick(link) if link.ambiguous else None
        if picked is not None:
            out[i] = Link(link.mention, link.candidates, (picked[0],), picked[1])
            changed = True
    return LinkResult(tuple(out)) if changed else links


def settle_by_current(links: LinkResult, text: str, snapshot: AliasSnapshot, *,
                      today: date | None = None) -> LinkResult:
    """Each ambiguous link whose candidates are editions of one thing goes to the edition
    in force now when the turn says it means the current one (现在用的条款, the current
    terms). Returns ``links`` itself when nothing changes."""
    if not cues.CURRENT_RE.search(text):
        return links

    def pick(link: Link) -> tuple[str, str] | None:
        chosen = current_edition([c.entity_id for c in link.candidates], snapshot, today=today)
        return (chosen, CURRENT_REASON) if chosen is not None else None

    return _settle_each(links, pick)


def _step_before(text: str, start: int) -> int:
    """-1 when a word for an older edition (旧版, 以前的, the older) ends right before
    ``start``, +1 for a newer one (新版, the new), else 0."""
    for regex, step in ((cues.OLDER_CHOICE_RE, -1), (cues.NEWER_CHOICE_RE, 1)):
        if any(not text[m.end():start].strip() for m in regex.finditer(text, 0, start)):
            return step
    return 0


def settle_by_relative_word(links: LinkResult, text: str, snapshot: AliasSnapshot, *,
                            today: date | None = None) -> LinkResult:
    """Each ambiguous link whose candidates are editions of one thing, with a word for an
    older or newer edition right before its name (旧版条款, the older terms, 新版收费标准),
    goes to that edition (:func:`relative_edition`). Returns ``links`` itself when nothing
    changes."""

    def pick(link: Link) -> tuple[str, str] | None:
        step = _step_before(text, link.mention.start)
        chosen = relative_edition([c.entity_id for c in link.candidates], step, snapshot,
                                  today=today) if step else None
        which = "older" if step < 0 else "newer"
        return (chosen, f"the {which} edition (the turn says {which} beside the name)"
                ) if chosen is not None else None

    return _settle_each(links, pick)


def unknown_edition(links: LinkResult, text: str, snapshot: AliasSnapshot) -> str | None:
    """2026年的进阶版私教课多少钱, 入门版2023版多少钱 when the kb holds the 2024 and 2025
    editions only: the turn says an edition number that none of the editions a shared
    name stands for has. Asking which of the others is meant would ask about something
    the user did not say; the kb has no answer. Returns the number as said, else None."""
    said = [m.group(0) for m in cues.EDITION_SAID_RE.finditer(text)]
    if not said:
        return None
    for link in links.links:
        if not link.ambiguous:
            continue
        found = [edition(snapshot.name(c.entity_id)) for c in link.candidates]
        if any(f is None for f in found) or len({f[0] for f in found}) != 1:
            continue
        keys = {f[1] for f in found}
        for word in said:
            number = number_said(word)
            if number is not None and number not in keys and len(number) == len(next(iter(keys))):
                return word
    return None