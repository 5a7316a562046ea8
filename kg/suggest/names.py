"""Candidate entity names: what documents are about.

A title says it best once its dates, its kind of document (使用说明, FAQ) and
its revision note are taken off: 晨星信用卡标准版产品说明（2025年3月修订） is about
晨星信用卡标准版. A year or version on a title that names a kind of document
(资费说明（2024版）, App 3.2版使用说明) dates that document, not the thing: the thing
stays one entity and the edition is recorded as its attribute. A year or version
on a title that is the name itself (收费标准（2024版）, 体检套餐（2025版）) makes an
edition of its own. Quoted names (“里程商城”, 《账户服务收费标准》) add the things a
passage names without a document of their own. A title that is another name
followed by a few words (A产品（个人版）价格) is about that name, and the words
are an attribute of it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import NamedTuple

from common.language import documents as words
from kg.suggest import labels, questions
from kg.suggest.corpus import Occurrences, Passage
from kg.suggest.segment import common_word

_QUOTED_RE = re.compile(r"[“《「『]([^”》」』\s]{2,24})[”》」』]")
_CJK_RE = re.compile(r"[\u4e00-\u9fff]")
MIN_LEN, MAX_LEN = 2, 40


@dataclass
class Candidate:
    """A name some documents are about, with where it was seen."""

    name: str
    title_docs: set[str] = field(default_factory=set)
    whole_title: bool = False  # some title is this name and nothing else
    quoted: int = 0
    labelled: int = 0  # passages that label a listed item with it
    asked: int = 0  # FAQ questions asking about it
    edition: str | None = None  # the edition number the title gave (2024), if any
    attributes: set[str] = field(default_factory=set)
    documented_editions: set[str] = field(default_factory=set)  # editions of documents about it


class TitleName(NamedTuple):
    """What a title is about: the name, the edition it gives, and whether the title names a
    kind of document (a guide, a price sheet) about the name."""

    name: str
    edition: str | None
    document: bool


def _strip_brackets(title: str) -> tuple[str, str | None]:
    """The title without revision notes; an edition bracket is taken off and returned."""
    edition = None

    def replace(m: re.Match[str]) -> str:
        nonlocal edition
        inner = m.group(1)
        found = words.EDITION_RE.fullmatch(inner.strip())
        if found:
            edition = re.search(r"(?:19|20)\d{2}|\d+(?:\.\d+)+|\d+", inner).group(0)
            return ""
        if words.REVISION_RE.search(inner):
            return ""
        return m.group(0)

    return words.BRACKET_RE.sub(replace, title).strip(), edition


def _strip_genre(name: str) -> str:
    changed = True
    while changed:
        changed = False
        for lead in words.TITLE_LEADS:
            if name.startswith(lead) and len(name) > len(lead) + 1:
                name, changed = name[len(lead):], True
        for suffix in words.GENRE_SUFFIXES:
            if name.endswith(suffix) and len(name) > len(suffix) + 1:
                name, changed = name[: -len(suffix)].rstrip(" -—:："), True
                break
    return name


def _inline_version(name: str) -> tuple[str, str | None]:
    """康宁就医App 6.0版 → (康宁就医App, 6.0)."""
    m = words.DOTTED_VERSION_TAIL_RE.search(name)
    if m and m.start() > 1:
        return name[: m.start()].strip(), m.group(1)
    return name, None


def read_title(title: str) -> TitleName | None:
    """What a title is about, or None when it names nothing."""
    name, edition = _strip_brackets(title)
    name = words.DATE_RE.sub("", name).strip()
    subject = _strip_genre(name)
    document = subject != name
    name, version = _inline_version(subject)
    subject = _strip_genre(name)
    document |= subject != name
    name = subject.strip(" -—:：")
    if (not MIN_LEN <= len(name) <= MAX_LEN or words.NOT_A_NAME_RE.search(name)
            or name.endswith(words.NOT_NAME_ENDINGS)):
        return None
    if not _CJK_RE.search(name) and not re.search(r"[A-Za-z]{2}", name):
        return None
    return TitleName(name, edition or version, document)


def clean_title(title: str) -> tuple[str, str | None] | None:
    """The name a title is about and its edition, or None when it names nothing."""
    found = read_title(title)
    return (found.name, found.edition) if found else None


def is_organisation(name: str) -> bool:
    return any(name.endswith(head) and len(name) > len(head) for head in words.ORG_HEADS)


def collect(passages: list[Passage], occurrences: Occurrences) -> dict[str, Candidate]:
    """Every candidate name of the corpus, before merging and filtering."""
    found: dict[str, Candidate] = {}
    for p in passages:
        read = read_title(p.title) if p.title else None
        if read:
            name, edition = read.name, None if read.document else read.edition
            key = f"{name}\u0001{edition or ''}"
            cand = found.setdefault(key, Candidate(name, edition=edition))
            cand.title_docs.add(p.doc_id)
            cand.whole_title |= name == p.title.strip() or (read.edition is not None and p.title.startswith(name))
            if read.document and read.edition:
                cand.documented_editions.add(read.edition)
    quoted: dict[str, int] = defaultdict(int)
    for p in passages:
        for m in _QUOTED_RE.finditer(p.text):
            inner = m.group(1)
            if not words.NOT_A_NAME_RE.search(inner) and _CJK_RE.search(inner):
                quoted[inner] += 1
    for inner, n in quoted.items():
        stripped, edition = _quoted_subject(inner)
        if len(stripped) >= MIN_LEN and (n >= 2 or occurrences.count(stripped) >= 3) \
                and not common_word(stripped):
            key = f"{stripped}\u0001{edition or ''}"
            found.setdefault(key, Candidate(stripped, edition=edition)).quoted += n
    known = {c.name for c in found.values()}
    for name, n in labels.names(passages, occurrences, known).items():
        found.setdefault(f"{name}\u0001", Candidate(name)).labelled += n
    known = {c.name for c in found.values()}
    for name, n in questions.names(passages, occurrences, known).items():
        found.setdefault(f"{name}\u0001", Candidate(name)).asked += n
    return found


def _quoted_subject(inner: str) -> tuple[str, str | None]:
    """What a quoted name is about, and its edition: a quoted document (《X利率公告》,
    “X使用说明”) is about X, as its title would be, so it adds no thing of its own
    beside X; any other quoted name is itself, revision notes off."""
    stripped, edition = _strip_brackets(inner)
    read = read_title(inner)
    if read and read.document:
        return read.name, None
    return stripped, edition


def split_attribute_titles(cands: dict[str, Candidate]) -> None:
    """A candidate that is another one followed by a short phrase (A产品（个人版）价格) is
    that one; the phrase's words become its attributes."""
    by_name: dict[str, list[str]] = defaultdict(list)
    for key, cand in cands.items():
        by_name[cand.name].append(key)
    for key in sorted(cands, key=lambda k: len(cands[k].name)):
        cand = cands[key]
        for n in range(len(cand.name) - 2, 1, -1):
            targets = [cands[k] for k in by_name.get(cand.name[:n], ()) if k in cands and k != key]
            rest = cand.name[n:]
            if targets and len(rest) <= 8 and _CJK_RE.match(rest) and targets[0].name.endswith(("）", ")")):
                target = targets[0]
                target.title_docs |= cand.title_docs
                target.attributes.update(a for a in words.ATTRIBUTE_LIST_SPLIT_RE.split(rest) if len(a) >= 2)
                del cands[key]
                break
