"""The entity a follow-up puts in place of one in focus, through the ontology.

An ellipsis or a correction changes one slot of the previous question and keeps
the rest. What it says is not always of the focus entity's type:

- 那北校区的呢 after 南校区自习室几点关, 不是北校区，是南校区 after a question about 北校区图书馆,
  and the South Campus one?: the turn names a campus while the focus is a department.
  The department meant is the focus's counterpart: of the focus's type, related to
  the campus named the way the focus is related to its own campus (``PART_OF``).
- 老版本呢, 那2023版呢, 不是2023，是2024版的, the previous version?: the turn names an
  edition while the focus is one edition of a thing. The entity meant is the edition
  of the same thing (same canonical name apart from its year or version number) with
  that number, or the one just before / after it.
- 新版改了什么 while two editions are in focus (after a comparison of both): the newer.

A correction also takes what it says was wrong (不是北校区, not A) out of the turn:
that entity is corrected away, not a subject. Each counterpart link says so in its
reason and is marked by its candidate's source, so the rewrite writes the new name in
place of the old one's (dialogue/rewrite.py) instead of pasting both.

Limits: one relation step, and only a counterpart that is the single entity of the
focus's type so related; editions are recognized by name (dialogue/policy/versions.py),
not by a ``SUCCEEDS`` chain.
"""

from __future__ import annotations

from collections.abc import Sequence

from common.language import cues
from dialogue.classify import (TurnKind, comparison_spans, corrected_spans, is_ellipsis,
                               is_short_correction)
from dialogue.policy.versions import edition, number_said
from kg.aliases import AliasSnapshot
from understanding.linker import Candidate, Link, LinkResult
from understanding.mentions import Detection, Mention, MentionKind

#: The candidate source of a link this module put in place of a focus entity.
SOURCE = "counterpart"


def is_counterpart(link: Link) -> bool:
    """Whether ``link`` names the counterpart of a focus entity (it replaces that one)."""
    return bool(link.entity_ids) and bool(link.candidates) and link.candidates[0].source == SOURCE


def corrected_by_counterpart(kind: TurnKind, detection: Detection, links: LinkResult) -> TurnKind:
    """说错了，我想问西城: a turn opening with a correction's cue that names nothing a
    link could read is classified a continuation; once a resolver has read what it says
    as the counterpart of the focus entity, it is the correction it said it was, and is
    rewritten as one (the last question, of the counterpart)."""
    if (kind is TurnKind.CONTINUATION and is_short_correction(detection.text)
            and any(is_counterpart(link) for link in links.links)):
        return TurnKind.CORRECTION
    return kind


def swap_counterparts(kind: TurnKind, links: LinkResult, detection: Detection,
                      focus: Sequence[str], snapshot: AliasSnapshot) -> LinkResult:
    """The turn's links with what a correction says was wrong taken out, and each name or
    edition that stands for a focus entity's counterpart linked to that counterpart.
    Returns ``links`` itself when nothing changes."""
    if not focus or kind not in (TurnKind.CORRECTION, TurnKind.CONTINUATION):
        return links
    swapping = kind is TurnKind.CORRECTION or is_ellipsis(detection, links)
    wrong = corrected_spans(detection.text) if kind is TurnKind.CORRECTION else []
    out = [link for link in links.links if not _inside(link.mention, wrong)]
    if swapping:
        out = [_by_relation(link, focus, snapshot) for link in out]
    named = any(link.mention.kind is MentionKind.ALIAS and link.entity_ids
                and link.entity_ids[0] not in focus for link in out if not is_counterpart(link))
    if not named:
        out = _by_edition(out, detection, wrong, focus, snapshot, swapping=swapping)
    if len(out) == len(links.links) and all(a is b for a, b in zip(out, links.links)):
        return links
    return LinkResult(tuple(out))


def _by_relation(link: Link, focus: Sequence[str], snapshot: AliasSnapshot) -> Link:
    """A name of another type than the focus's (北校区 after 南校区自习室) stands for the focus
    entity's counterpart related to it."""
    if link.mention.kind is not MentionKind.ALIAS or len(link.entity_ids) != 1:
        return link
    named = link.entity_ids[0]
    kind = _type(named, snapshot)
    if named in focus or any(_type(f, snapshot) == kind for f in focus):
        return link  # the same type: the rewrite swaps it for the focus entity itself
    for old in focus:
        new = related_counterpart(old, named, snapshot)
        if new is not None:
            return Link(link.mention, (Candidate(new, 1.0, SOURCE),), (new,),
                        f"“{link.mention.text}” in place of {old}: its counterpart related "
                        f"to {named}")
    return link


def related_counterpart(old: str, named: str, snapshot: AliasSnapshot) -> str | None:
    """The one entity of ``old``'s type related to ``named`` the way ``old`` is related to
    an entity of ``named``'s type (the department of another campus), among several the
    one that shares an alias with ``old`` (图书馆); None when there is none or several."""
    kind, own = _type(named, snapshot), _type(old, snapshot)
    for relation, other in snapshot.relations.get(old, ()):
        if other == named:
            return None  # already related to it: nothing to swap
        if other == old or _type(other, snapshot) != kind:
            continue
        found = {e for r, e in snapshot.relations.get(named, ())
                 if r == relation and e != old and _type(e, snapshot) == own}
        if len(found) > 1:
            # Several (a campus's departments): the one that shares a name with ``old``.
            found &= _kin(old, snapshot)
        if len(found) == 1:
            return found.pop()
    return None


def _by_edition(out: list[Link], detection: Detection, wrong: list[tuple[int, int]],
                focus: Sequence[str], snapshot: AliasSnapshot, *, swapping: bool) -> list[Link]:
    """An edition said (2023版, 老版本, the previous version) stands for that edition of the
    focus entity: in place of it on an ellipsis or a correction, beside it where the turn
    compares with it (比前一版多收多少), alone among several in focus (新版改了什么)."""
    said = _edition_said(detection, wrong)
    if said is None:
        return out
    mention, number, step = said
    compared = _inside(mention, comparison_spans(detection.text))
    editions = [f for f in focus if edition(snapshot.name(f)) is not None]
    if not editions:
        return out
    if len(editions) > 1 and not swapping and not compared:
        chosen = _among(editions, number, step, snapshot)
        if chosen is None:
            return out
        return [_narrowed(link, chosen, editions) for link in out]
    # 新版改了什么 / what changed in the new edition?: a word for the newer or older
    # edition names that edition of the one in focus, whatever the turn asks of it; a
    # number (2025年) may be a date, and stands for an edition only in an ellipsis.
    stepped = number is None and step != 0
    if not (swapping or compared or stepped):
        return out
    new = next((e for f in editions if (e := edition_counterpart(f, number, step, snapshot))
                and e not in focus), None)
    if new is None:
        return out
    reason = (f"“{mention.text}”: the edition compared with" if compared
              else f"“{mention.text}” in place of {editions[0]}: that edition of it")
    if compared:
        return [*out, Link(mention, (Candidate(new, 1.0, "focus"),), (new,), reason)]
    replaced = next(f for f in editions if edition_counterpart(f, number, step, snapshot) == new)
    kept = [_without(link, replaced) for link in out]
    return [*(link for link in kept if link is not None),
            Link(mention, (Candidate(new, 1.0, SOURCE),), (new,), reason)]


def _without(link: Link, entity_id: str) -> Link | None:
    """A link that carries the focus (an implicit one) without the entity replaced; None
    when nothing is left of it."""
    if link.mention.kind is not MentionKind.IMPLICIT or entity_id not in link.entity_ids:
        return link
    kept = tuple(e for e in link.entity_ids if e != entity_id)
    if not kept:
        return None
    return Link(link.mention, tuple(c for c in link.candidates if c.entity_id in kept), kept,
                link.reason)


def _edition_said(detection: Detection, wrong: list[tuple[int, int]]
                  ) -> tuple[Mention, tuple[int, ...] | None, int] | None:
    """The turn's edition outside what it corrects: its mention, its number (None for
    旧版 / 新版) and which way it steps (-1 older, +1 newer, 0 by number)."""
    for m in detection.of(MentionKind.TIME):
        if _inside(m, wrong):
            continue
        number = number_said(m.text)
        if number is not None:
            return m, number, 0
    for regex, step in ((cues.OLDER_EDITION_RE, -1), (cues.NEWER_EDITION_RE, 1)):
        for found in regex.finditer(detection.text):
            m = Mention(MentionKind.TIME, found.group(0), found.start(), found.end())
            if not _inside(m, wrong):
                return m, None, step
    return None


def edition_counterpart(entity_id: str, number: tuple[int, ...] | None, step: int,
                        snapshot: AliasSnapshot) -> str | None:
    """The edition of the same thing as ``entity_id`` with ``number``, or the one just
    before (``step`` -1) or after (+1) it; None when the kb has none."""
    own = edition(snapshot.name(entity_id))
    if own is None:
        return None
    family = [(key, e) for e in _kin(entity_id, snapshot)
              if (found := edition(snapshot.name(e))) is not None and found[0] == own[0]
              for key in (found[1],)]
    if number is not None:
        return next((e for key, e in family if key == number and e != entity_id), None)
    older = sorted((k, e) for k, e in family if k < own[1])
    newer = sorted((k, e) for k, e in family if k > own[1])
    pick = older[-1:] if step < 0 else newer[:1]
    return pick[0][1] if pick else None


def _kin(entity_id: str, snapshot: AliasSnapshot) -> set[str]:
    """Entities that may be other editions of ``entity_id``: those it shares an alias
    with and those it is related to."""
    entity = snapshot.entities.get(entity_id)
    kin = set(snapshot.related.get(entity_id, ()))
    for alias in entity.all_aliases if entity is not None else ():
        kin.update(snapshot.by_norm.get(snapshot.normalize(alias), ()))
    return kin


def _among(editions: Sequence[str], number: tuple[int, ...] | None, step: int,
           snapshot: AliasSnapshot) -> str | None:
    """The one with ``number``, else the oldest (``step`` -1) or newest (+1), of several
    editions of one thing."""
    found = [(edition(snapshot.name(e)), e) for e in editions]
    if len({f[0] for f, _ in found}) != 1:
        return None
    if number is not None:
        return next((e for f, e in found if f[1] == number), None)
    ordered = sorted(found, key=lambda pair: pair[0][1])
    return (ordered[0] if step < 0 else ordered[-1])[1]


def _narrowed(link: Link, chosen: str, editions: Sequence[str]) -> Link:
    if chosen not in link.entity_ids or not set(link.entity_ids) & (set(editions) - {chosen}):
        return link
    kept = tuple(e for e in link.entity_ids if e == chosen or e not in editions)
    return Link(link.mention, tuple(c for c in link.candidates if c.entity_id in kept), kept,
                f"{link.reason}; the turn says which edition: {chosen}")


def _type(entity_id: str, snapshot: AliasSnapshot) -> str | None:
    entity = snapshot.entities.get(entity_id)
    return entity.type if entity is not None else None


def _inside(mention: Mention, spans: Sequence[tuple[int, int]]) -> bool:
    return any(start <= mention.start and mention.end <= end for start, end in spans)
