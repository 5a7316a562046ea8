"""The suggestion pipeline: passages in, a suggested ontology with evidence out.

Each stage is a module of this package, run in this order (later stages read
what earlier ones found): candidate names (names), entities and editions
(entities), structural aliases (aliases), types (types) split by owner (owners), short forms and Latin
names (aliases), short forms cut as another member of the kind is (cuts), the
names families share (families), attributes (types) and those
from the figures a kind's documents state (figures),
relations and editions (relations), confusable pairs (confusables); English names
of English passages (english) right after the Latin names written beside Chinese ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kg.suggest import (aliases, confusables, cuts, english, entities, families, figures, names, owners,
                        relations, types)
from kg.suggest.corpus import Occurrences, Passage
from kg.suggest.model import Suggestion

Progress = Callable[[str, int, int], None]
_SENTENCE_RE = re.compile(r"[^。！？!?\n]+[。！？!?]?")


def suggest(passages: list[Passage], *, progress: Progress | None = None) -> Suggestion:
    """Suggest an ontology from ``passages``; ``progress(stage, done, total)`` follows it."""
    stages: list[tuple[str, Callable[[Suggestion, Occurrences], None]]] = [
        ("names", _names), ("aliases", aliases.add_structural), ("merge", _merge),
        ("shorter names", lambda suggestion, _: entities.fold_label_abbreviations(suggestion)),
        ("types", _types), ("latin names", aliases.add_latin_names),
        ("english names", english.add_english_names),
        ("bracketed names", aliases.add_bracketed_names),
        ("edition forms", aliases.add_edition_forms),
        ("attributes", types.add_attributes), ("figure attributes", figures.add_figure_words),
        ("distinct attributes", owners.add_distinct_words),
        ("relations", relations.add_part_of),
        ("editions", relations.add_editions), ("confusables", confusables.add),
        ("descriptions", _describe),
    ]
    suggestion = Suggestion()
    occurrences = Occurrences(passages)
    for done, (label, stage) in enumerate(stages):
        if progress:
            progress(label, done, len(stages))
        stage(suggestion, occurrences)
    if progress:
        progress("done", len(stages), len(stages))
    return suggestion


def _names(suggestion: Suggestion, occurrences: Occurrences) -> None:
    cands = names.collect(occurrences.passages, occurrences)
    names.split_attribute_titles(cands)
    entities.build(cands, occurrences, suggestion)


def _types(suggestion: Suggestion, occurrences: Occurrences) -> None:
    kinds = types.assign(suggestion)
    types.assign_by_definition(suggestion, occurrences)
    owners.split_by_owner(suggestion, occurrences)
    aliases.add_short_forms(suggestion, occurrences, kinds)
    aliases.add_contractions(suggestion)
    cuts.add_kind_cuts(suggestion, occurrences)
    families.add_family_names(suggestion)
    aliases.add_family_variant_forms(suggestion)


def _merge(suggestion: Suggestion, occurrences: Occurrences) -> None:
    """A suggested name that is an alias of one other entity, or of the editions of one
    thing, is that entity (微信银行 and 青岚银行微信银行; 账户服务收费标准 and its 2024 and
    2025 editions): its aliases join theirs."""
    holders: dict[str, list] = {}
    for e in suggestion.entities.values():
        for alias in e.aliases:
            holders.setdefault(alias, []).append(e)
    for key in sorted(suggestion.entities, key=len):
        entity = suggestion.entities.get(key)
        if entity is None or entity.stem:
            continue
        owners = [e for e in holders.get(key, ()) if e is not entity and e.key in suggestion.entities]
        stems = {e.stem for e in owners}
        if not owners or not (len(owners) == 1 or (len(stems) == 1 and None not in stems)):
            continue
        for owner in owners:
            for alias, evidence in entity.aliases.items():
                owner.add_alias(alias, evidence)
            owner.attribute_words |= entity.attribute_words
            owner.evidence.counts["merged"] = owner.evidence.counts.get("merged", 0) + 1
        suggestion.skipped[key] = f"merged into {', '.join(o.name for o in owners)}"
        del suggestion.entities[key]


def _describe(suggestion: Suggestion, occurrences: Occurrences) -> None:
    """The first sentence that names the entity, as the clarification shows it."""
    for entity in suggestion.entities.values():
        for index in occurrences.passages_of(entity.name)[:3]:
            text = occurrences.passages[index].text
            at = text.find(entity.name)
            if at < 0:
                continue
            sentence = next((m.group(0) for m in _SENTENCE_RE.finditer(text)
                             if m.start() <= at < m.end()), "")
            if sentence:
                entity.description = sentence.strip()[:80]
                break
