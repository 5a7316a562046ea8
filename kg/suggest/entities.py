"""From candidate names to suggested entities: keep the names the corpus uses,
make editions of names that differ by a year or version, and mark organisations.

The editions of the documents about a thing (its price sheet of 2024 and of 2025)
are not editions of the thing: it stays one entity, whose 版本 attribute lists them,
so that a turn naming it is not asked which edition."""

from __future__ import annotations

import math
from collections import defaultdict

from common.language import documents
from kg.suggest.corpus import Occurrences
from kg.suggest.evidence import Evidence, cite, confidence
from kg.suggest.model import SuggestedEntity, Suggestion
from kg.suggest.names import Candidate, is_organisation
from kg.suggest.segment import common_word, words_of

ORG_TYPE = "Organization"
LABEL_REASON = "the label of listed items"
ASKED_REASON = "the subject of FAQ questions"
MAX_FAMILY = 3  # names a shared shorter name may stand for


def edition_name(stem: str, edition: str) -> str:
    """基础版验光套餐 + 2025 → 基础版验光套餐（2025版）; a dotted version reads 康宁就医App 6.0版."""
    return (documents.EDITION_NAME if "." not in edition
            else documents.DOTTED_EDITION_NAME).format(stem=stem, edition=edition)


def _used(cand: Candidate, occurrences: Occurrences) -> int:
    """Passages whose text (not only the title) uses the name."""
    return sum(1 for i in occurrences.passages_of(cand.name)
               if cand.name in occurrences.passages[i].text)


def build(cands: dict[str, Candidate], occurrences: Occurrences, suggestion: Suggestion) -> None:
    """Fill ``suggestion.entities`` from the candidates the corpus supports."""
    by_name: dict[str, list[Candidate]] = defaultdict(list)
    names = {c.name for c in cands.values()}
    title_names: dict[str, str] = {}  # a name → the title's, before its everyday last word went
    for cand in cands.values():
        if cand.title_docs and not cand.edition and not is_organisation(cand.name):
            full, cand.name = cand.name, _without_everyday_tail(cand.name, occurrences, names)
            if cand.name != full:
                title_names[cand.name] = full
        by_name[cand.name].append(cand)
    for name, group in sorted(by_name.items(), key=lambda kv: (len(kv[0]), kv[0])):
        used = max(_used(c, occurrences) for c in group)
        docs = set().union(*(c.title_docs for c in group))
        quoted = sum(c.quoted for c in group)
        labelled = sum(c.labelled for c in group)
        asked = sum(c.asked for c in group)
        if common_word(name):
            suggestion.skipped[name] = "an everyday word, not a name"
            continue
        editions = sorted({c.edition for c in group if c.edition}, key=_edition_key)
        if used < 1 and not quoted and len(editions) < 2 and not any(c.whole_title for c in group):
            suggestion.skipped[name] = "only in titles, never in a passage's text"
            continue
        plain = [c for c in group if not c.edition]
        signals = (0.6 * min(len(docs), 3), 0.3 * math.log1p(used), 0.4 * min(quoted, 2),
                   0.3 * min(labelled, 2), 0.3 * min(asked, 2))
        if len(editions) >= 2:
            for edition in editions:
                _add(suggestion, occurrences, edition_name(name, edition), docs, used, signals,
                     edition=edition, stem=name)
        if plain or len(editions) < 2:
            entity = _add(suggestion, occurrences, name, docs, used, signals,
                          attributes=set().union(*(c.attributes for c in group)))
            entity.title_name = title_names.get(name)
            documented = set().union(*(c.documented_editions for c in group))
            if documented:
                entity.attributes[documents.EDITIONS] = "、".join(sorted(documented, key=_edition_key))
        else:
            for c in group:
                for entity in suggestion.entities.values():
                    if entity.stem == name:
                        entity.attribute_words.update(c.attributes)


def _without_everyday_tail(name: str, occurrences: Occurrences, names: set[str]) -> str:
    """华东区销售 (from 华东区2025年5月销售月报) → 华东区: a title's last word that is
    everyday language goes when the passages use the rest more often than the name,
    outside the other names that hold it (星悦 inside 星悦关爱卡 does not make 星悦分期 星悦)."""
    parts = words_of(name)
    rest = name[: len(name) - len(parts[-1])] if len(parts) >= 2 else ""
    if len(rest) < 2 or len(parts[-1]) < 2 or not common_word(parts[-1]) or common_word(rest):
        return name
    longer = [n for n in names if rest in n and n not in (rest, name)]
    alone = occurrences.standalone_count(rest, longer, enough=occurrences.count(name) + 1)
    return rest if alone > occurrences.count(name) else name


def _edition_key(edition: str) -> tuple[int, ...]:
    return tuple(int(p) for p in edition.split(".") if p.isdigit())


def _add(suggestion: Suggestion, occurrences: Occurrences, name: str, docs: set[str], used: int,
         signals: tuple[float, ...], *, edition: str | None = None, stem: str | None = None,
         attributes: set[str] = frozenset()) -> SuggestedEntity:
    reason = (f"the subject of {len(docs)} document title(s)" if docs
              else "quoted as a name" if signals[2] else LABEL_REASON if signals[3] else ASKED_REASON)
    evidence = Evidence(confidence(*signals), {"documents": len(docs), "passages": used},
                        cite(occurrences, name) or cite(occurrences, stem or name), reason)
    entity = SuggestedEntity(key=name, name=name, evidence=evidence, edition=edition, stem=stem)
    entity.attribute_words.update(attributes)
    if is_organisation(name) and not any(
            name.startswith(o.name) for o in suggestion.entities.values() if o.type == ORG_TYPE):
        entity.type = ORG_TYPE
    suggestion.entities[name] = entity
    return entity




def fold_label_abbreviations(suggestion: Suggestion) -> None:
    """A name no title gave (only labels or quotes) that shortens one other name (车贷 of
    汽车消费贷款, 万兆 of 万兆光纤宽带), or is made of its words in another order (厦门贵宾厅
    of 晴川贵宾厅（厦门高崎）: the place its bracket gives, then its head), is that entity's
    alias. One that starts two or three names (星悦 of 星悦分期 and 星悦关爱卡) is the name
    their family shares: an ambiguous alias of them, asked about when said alone. One
    that shortens more is a brand word, no thing of its own."""
    untitled = sorted((k for k, e in suggestion.entities.items() if not e.evidence.counts.get("documents")),
                      key=len)
    for key in untitled:
        entity = suggestion.entities[key]
        longer = [o for o in suggestion.entities.values()
                  if len(o.name) > len(entity.name) and _shortens(entity.name, o.name)]
        if not longer:  # 厦门贵宾厅 of the one name its words are all words of
            reordered = [o for o in suggestion.entities.values()
                         if len(o.name) > len(entity.name) and _reorders(entity.name, o.name)]
            longer = reordered if len(reordered) == 1 else []
        family = [o for o in longer if o.name.startswith(entity.name)]
        if len(longer) == 1 or (len(family) == len(longer) and 2 <= len(family) <= MAX_FAMILY):
            for owner in longer:
                owner.add_alias(entity.name, entity.evidence)
            suggestion.skipped[key] = f"a shorter name of {'、'.join(o.name for o in longer)}"
        elif entity.evidence.reason == LABEL_REASON and longer:
            suggestion.skipped[key] = "the start of several names, no thing of its own"
        else:
            continue
        del suggestion.entities[key]


def _reorders(short: str, name: str) -> bool:
    """厦门贵宾厅 of 晴川贵宾厅（厦门高崎）: every word of it a word of ``name``, in another
    order (the place its bracket gives before the head), two words at least."""
    parts = words_of(short)
    return len(parts) >= 2 and set(parts) <= set(words_of(name))


def _shortens(short: str, name: str) -> bool:
    """Its characters occur in order in ``name`` and it starts it or ends in its last word."""
    if name.startswith(short):
        return True
    it = iter(name)
    if not all(ch in it for ch in short):
        return False
    return short[-1] in words_of(name)[-1]
