"""Both sides named: a shared name qualified by two of its readings at once.

北校区和南校区的图书馆哪个周日开放, 选课指南2024版和2025版有什么区别, the 2024 and 2025
Starter training plan: the name alone (图书馆, 选课指南) is shared by several entities, but the turn
names right beside it, joined by 和 / 、 / and / or, words that each pick out one of
them. The user compares them; asking "which one?" would ask what the turn already
says. The name resolves to every side picked, and the qualifiers that are names of
their own (北校区, 南校区) are taken into it: they say which, they are not the subject.

A qualifier picks a candidate when it is one of the words that tell that candidate
apart from the others sharing the name (its aliases less the shared part:
:meth:`AliasSnapshot.distinguishing_words`), or when it names an entity that
candidate is related to in the ontology (the campus a department is part of). It
must pick exactly one. The sides must stand together (only a joining word between
them) and right beside the name (的 / the between, or words of the candidates'
own names: 入门版私教课2024版和2025版); a qualifier elsewhere in the turn proves
nothing. One side alone settles the name the same way (the 2025 Starter training plan, North
Campus library), where the linker's own words did not. A name that says its own
edition and has other edition numbers joined to it, after it (学生手册2023版和2024版) or
before it (2023版和2024版学生手册, the 2023 and 2024 terms), means those editions too.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from common.language import cues
from dialogue.policy.counterparts import edition_counterpart
from dialogue.policy.versions import edition_key, number_said
from kg.aliases import AliasSnapshot
from understanding.linker import Candidate, Link, LinkResult
from understanding.mentions import Detection, Mention, MentionKind

REASON = "the turn names which of the shared name's readings it means, beside it"


@dataclass(frozen=True)
class _Side:
    start: int
    end: int
    entity_id: str  # the candidate it picks


def resolve_named_sides(links: LinkResult, detection: Detection,
                        snapshot: AliasSnapshot) -> LinkResult:
    """``links`` with each shared name whose sides the turn names resolved to them all,
    the qualifiers that are names taken into it; ``links`` itself when none is."""
    out = list(links.links)
    changed = False
    for link in list(out):
        if link.mention.kind is not MentionKind.ALIAS:
            continue
        if link.ambiguous:
            chain = _named_sides(link, out, detection, snapshot)
        elif len(link.entity_ids) == 1:
            chain = _editions_beside(link, detection, snapshot)
        else:
            chain = None
        if chain is None:
            continue
        start = min(chain[0].start, link.mention.start)
        end = max(chain[-1].end, link.mention.end)
        absorbed = [other for other in out if other is not link
                    and start <= other.mention.start and other.mention.end <= end]
        picked = tuple(dict.fromkeys(side.entity_id for side in chain))
        if link.entity_ids and not link.ambiguous:
            # In the order said: 2023版和2024版学生手册 puts the name's own edition last.
            placed = sorted([*((side.start, side.entity_id) for side in chain),
                             *((link.mention.start, e) for e in link.entity_ids)])
            picked = tuple(dict.fromkeys(e for _, e in placed))
        mention = replace(link.mention, text=detection.text[start:end], start=start, end=end,
                          entity_ids=picked)
        candidates = (*(c for c in link.candidates if c.entity_id in picked),
                      *(Candidate(e, 1.0, "edition named beside it") for e in picked
                        if e not in {c.entity_id for c in link.candidates}))
        resolved = Link(mention, candidates, picked, REASON)
        out = [resolved if other is link else other for other in out if other not in absorbed]
        changed = True
    return LinkResult(tuple(out)) if changed else links


def _named_sides(link: Link, links: list[Link], detection: Detection,
                 snapshot: AliasSnapshot) -> list[_Side] | None:
    """The run of qualifiers beside ``link`` that pick at least two of its candidates, in
    the order said; None when there is none."""
    sides = sorted(_qualifiers(link, links, detection, snapshot), key=lambda s: s.start)
    text = detection.text
    runs: list[list[_Side]] = []
    for side in sides:
        if runs and cues.SIDE_GAP_RE.match(text[runs[-1][-1].end:side.start]):
            runs[-1].append(side)
        else:
            runs.append([side])
    for run in runs:
        if len(run) != len({side.entity_id for side in run}):
            continue
        if _beside(link, run, text, snapshot):
            return run
    return None


def _editions_beside(link: Link, detection: Detection,
                     snapshot: AliasSnapshot) -> list[_Side] | None:
    """学生手册2023版和2024版, 2023版和2024版学生手册: a name that says its own edition, with
    other edition numbers joined to it after or before it: those editions of the same
    thing, in the order said. None when the turn names none."""
    times = sorted(detection.of(MentionKind.TIME), key=lambda m: m.start)
    after = _edition_run(link, [m for m in times if m.start >= link.mention.end], detection,
                         snapshot, forward=True)
    before = _edition_run(link, [m for m in reversed(times) if m.end <= link.mention.start],
                          detection, snapshot, forward=False)
    return [*reversed(before), *after] or None


def _edition_run(link: Link, times: list[Mention], detection: Detection, snapshot: AliasSnapshot,
                 *, forward: bool) -> list[_Side]:
    """The edition numbers of ``times`` (nearest first) that stand joined to the name, one
    after the other, each naming an edition of the name's entity."""
    text, edge = detection.text, (link.mention.end if forward else link.mention.start)
    sides: list[_Side] = []
    for m in times:
        gap = text[edge:m.start] if forward else text[m.end:edge]
        number = number_said(m.text)
        other = (edition_counterpart(link.entity_ids[0], number, 0, snapshot)
                 if number is not None and cues.SIDE_GAP_RE.match(gap) else None)
        if other is None:
            break
        sides.append(_Side(m.start, m.end, other))
        edge = m.end if forward else m.start
    return sides


def _beside(link: Link, run: list[_Side], text: str, snapshot: AliasSnapshot) -> bool:
    """The run stands right before the name (北校区和南校区的图书馆) or right after it, with at
    most words of the picked candidates' names between (入门版私教课2024版和2025版)."""
    if run[-1].end <= link.mention.start:
        return bool(cues.SIDE_LINK_RE.match(text[run[-1].end:link.mention.start]))
    if run[0].start >= link.mention.end:
        gap = text[link.mention.end:run[0].start]
        names = [snapshot.name(side.entity_id) for side in run]
        return not gap.strip() or all(all(c in name for c in gap) for name in names)
    return False


def _qualifiers(link: Link, links: list[Link], detection: Detection,
                snapshot: AliasSnapshot) -> list[_Side]:
    """The turn's names and times outside the shared name that each pick exactly one of
    its candidates."""
    candidates = [c.entity_id for c in link.candidates]
    shared = snapshot.normalize(link.mention.text)
    words = {c: snapshot.distinguishing_words(c, shared) for c in candidates}
    spans: list[tuple[Mention, tuple[str, ...]]] = [
        (other.mention, other.entity_ids) for other in links
        if other is not link and other.mention.kind is MentionKind.ALIAS and other.entity_ids]
    spans += [(m, ()) for m in detection.of(MentionKind.TIME)]
    found = []
    for mention, named in spans:
        if mention.start < link.mention.end and link.mention.start < mention.end:
            continue
        said = snapshot.normalize(mention.text)
        number = number_said(mention.text)
        picks = [c for c in candidates
                 if any(said == w or (len(said) >= 2 and said in w) for w in words[c])
                 or any(e in snapshot.related.get(c, ()) for e in named)
                 or (number is not None and edition_key(c, snapshot) == number)]
        if len(picks) == 1:
            found.append(_Side(mention.start, mention.end, picks[0]))
    return found

