"""A name shared by entities of different types, settled by what the turn asks.

星卡晋级要攒多少乘车积分: 星卡 is a gym's prepaid card and a rail operator's membership
tier. The tier's type lists 晋级条件 among its attributes, the card's type does not:
the turn asks about the tier. The linker settles a shared name this way when the turn
says an attribute's whole name; users say a piece of it (晋级 for 晋级条件, 查成绩 for
成绩查询, fee for annual fee).

A piece is two Chinese characters in a row of an attribute's name, or a word of three
letters or more of an English one. The turn's words outside its names are matched
against the pieces of each candidate type's attributes; a piece that the attributes
of several candidates' types share (条件 in 入会条件 and 晋级条件) tells nothing. When
the pieces found belong to exactly one candidate's type, the name settles on that
candidate. Candidates of one type are never told apart this way (两个图书馆 have the same
attributes): that is the clarify gate's question.
"""

from __future__ import annotations

import re

from kg.aliases import AliasSnapshot
from understanding.linker import Link, LinkResult
from understanding.mentions import Detection, MentionKind

_CJK_RUN_RE = re.compile(r"[\u4e00-\u9fff]+")
_WORD_RE = re.compile(r"[A-Za-z]{3,}")


def settle_by_attribute_piece(links: LinkResult, detection: Detection,
                              snapshot: AliasSnapshot) -> LinkResult:
    """Each ambiguous name whose candidates differ in type settled by the pieces of the
    attribute names the turn says (see the module); ``links`` itself when none is."""
    out = list(links.links)
    changed = False
    rest = _outside_names(detection)
    for i, link in enumerate(out):
        if link.mention.kind is not MentionKind.ALIAS or not link.ambiguous:
            continue
        fitting = fitting_candidates([c.entity_id for c in link.candidates], rest, snapshot)
        if len(fitting) != 1:
            continue
        chosen, pieces = fitting[0]
        out[i] = Link(link.mention, link.candidates, (chosen,),
                      f"only its type has the attribute the turn asks ({'/'.join(pieces)})")
        changed = True
    return LinkResult(tuple(out)) if changed else links


def fitting_candidates(candidates: list[str], text: str,
                       snapshot: AliasSnapshot) -> list[tuple[str, list[str]]]:
    """The candidates whose type's attribute pieces ``text`` says and no other candidate's
    type has, with those pieces; empty when the candidates share one type."""
    types = {c: snapshot.entities[c].type for c in candidates if c in snapshot.entities}
    if len(set(types.values())) < 2:
        return []
    pieces = {t: _pieces(snapshot.type_attributes.get(t, ())) for t in set(types.values())}
    low = text.lower()
    found = []
    for candidate, kind in types.items():
        others = set().union(*(p for t, p in pieces.items() if t != kind))
        said = sorted(p for p in pieces[kind] - others if p in low)
        if said:
            found.append((candidate, said))
    return found


def _pieces(attributes) -> set[str]:
    out: set[str] = set()
    for name in attributes:
        for run in _CJK_RUN_RE.findall(name):
            out.update(run[i:i + 2] for i in range(len(run) - 1))
        out.update(w.lower() for w in _WORD_RE.findall(name))
    return out


def _outside_names(detection: Detection) -> str:
    """The turn's text with its names blanked out."""
    chars = list(detection.text)
    for m in detection.of(MentionKind.ALIAS):
        chars[m.start:m.end] = " " * (m.end - m.start)
    return "".join(chars)
