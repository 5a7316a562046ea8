"""How a suggested ontology compares with a hand-written one of the same corpus.

    python -m benchmarks.suggest_vs_hand SUGGESTED.jsonl HAND.jsonl [--corpus CORPUS.jsonl]

Prints the confusion of entities and of ambiguous aliases. Names and aliases
are compared after the kb's default normalisation (width, case, traditional
forms, punctuation). A hand entity is found when a suggested entity's name is
one of its names, or its name is one of the suggested entity's names; a
suggested entity is right when it finds some hand entity. A hand ambiguous
alias (shared by two hand entities or more) is found when the suggestion has it
shared by two or more entities too.

With ``--corpus`` (the corpus the suggestion was made from) it also says how
many of the hand ontology's entities and ambiguous aliases the documents never
write: a hand entity none of whose names occurs in a title or a passage, or a
hand ambiguous alias that occurs nowhere on its own, only inside longer names
(a family's everyday name, "App"), cannot be suggested from the corpus. The recall over what the corpus writes
(reachable) is printed beside the recall over everything. "On its own" means outside
the longer names of both ontologies and at word boundaries: 标准票 inside 标准票价 is
not written on its own. Each missed ambiguous alias is then put in one class: never
written on its own, written but proposed for no entity, or proposed for one entity
only (not marked ambiguous).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from common.language.normalize import normalize
from kg.ontology import Ontology, parse_ontology
from kg.suggest import read_corpus
from kg.suggest.segment import words_of

_EDGE_WINDOW = 12  # characters segmented on either side of an occurrence


def load(path: Path) -> Ontology:
    return parse_ontology(path.read_text(encoding="utf-8").splitlines(), path=str(path))


def _names(entity) -> set[str]:
    return {normalize(a) for a in entity.all_aliases}


def _ambiguous(ontology: Ontology) -> set[str]:
    holders: dict[str, int] = {}
    for entity in ontology.entities:
        for alias in _names(entity):
            holders[alias] = holders.get(alias, 0) + 1
    return {a for a, n in holders.items() if n > 1}


def corpus_text(path: Path) -> str:
    """The corpus' titles and passages, normalized like names, as one text to search."""
    passages = read_corpus(path.read_text(encoding="utf-8").splitlines(), path=str(path))
    return "\n".join(normalize(f"{p.title}\n{p.text}") for p in passages)


def reachable(result: dict, hand: Ontology, suggested: Ontology, text: str) -> dict:
    """Recall counted over the hand entities and ambiguous aliases the corpus writes,
    and the class of each missed ambiguous alias."""
    missed = set(result["missed_entities"])
    written = [h for h in hand.entities if h.name not in missed or any(n and n in text for n in _names(h))]
    hit = [h for h in written if h.name not in missed]
    amb = _ambiguous(hand)
    names = {n for o in (hand, suggested) for e in o.entities for n in _names(e)}
    amb_written = {a for a in amb if a not in result["missed_ambiguous"] or _on_its_own(a, names, text)}
    amb_hit = amb_written - set(result["missed_ambiguous"])
    holders = {a: sum(1 for s in suggested.entities if a in _names(s)) for a in result["missed_ambiguous"]}
    proposed_once = {a for a, n in holders.items() if n == 1}
    return {
        "unwritten_entities": sorted(h.name for h in hand.entities if h not in written),
        "reachable_entity_recall": len(hit) / max(1, len(written)),
        "unwritten_ambiguous": sorted(amb - amb_written),
        "reachable_ambiguous_recall": len(amb_hit) / max(1, len(amb_written)),
        # Each missed ambiguous alias in one class, the first that fits.
        "missed_ambiguous_proposed_not_shared": sorted(proposed_once),
        "missed_ambiguous_never_written": sorted(a for a in holders if a not in amb_written | proposed_once),
        "missed_ambiguous_written_not_proposed": sorted(a for a, n in holders.items() if n == 0 and a in amb_written),
    }


def _on_its_own(alias: str, names: set[str], text: str) -> bool:
    """True when ``alias`` occurs in ``text`` outside the longer names that hold it
    (畅行信用卡 only inside 畅行信用卡标准版 is not written on its own)."""
    longer = [(n, n.find(alias)) for n in names if alias in n and n != alias]
    at = text.find(alias)
    while alias and at >= 0:
        if not any(text.startswith(n, at - shift) for n, shift in longer if at >= shift) \
                and _at_word_edges(text, at, at + len(alias)):
            return True
        at = text.find(alias, at + 1)
    return False


def _at_word_edges(text: str, start: int, end: int) -> bool:
    """True when ``text[start:end]`` starts and ends where words do (jieba over a window
    around it). Latin always passes: normalisation took the spaces out of the text."""
    if text[start:end].isascii():
        return True
    left = max(0, start - _EDGE_WINDOW)
    window = text[left:end + _EDGE_WINDOW]
    edges, at = {0}, 0
    for word in words_of(window):
        at = window.find(word, at) + len(word)
        edges.add(at)
    edges.add(len(window))
    return start - left in edges and end - left in edges


def compare(suggested: Ontology, hand: Ontology) -> dict:
    def same(s, h) -> bool:
        return normalize(s.name) in _names(h) or normalize(h.name) in _names(s)

    found = [h for h in hand.entities if any(same(s, h) for s in suggested.entities)]
    right = [s for s in suggested.entities if any(same(s, h) for h in hand.entities)]
    hand_amb, sugg_amb = _ambiguous(hand), _ambiguous(suggested)
    return {
        "hand_entities": len(hand.entities), "suggested_entities": len(suggested.entities),
        "entity_recall": len(found) / max(1, len(hand.entities)),
        "entity_precision": len(right) / max(1, len(suggested.entities)),
        "hand_ambiguous_aliases": len(hand_amb),
        "ambiguous_alias_recall": len(hand_amb & sugg_amb) / max(1, len(hand_amb)),
        "missed_entities": sorted(h.name for h in hand.entities if h not in found),
        "unmatched_suggestions": sorted(s.name for s in suggested.entities if s not in right),
        "missed_ambiguous": sorted(hand_amb - sugg_amb),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suggested", type=Path)
    parser.add_argument("hand", type=Path)
    parser.add_argument("--corpus", type=Path, help="the corpus the suggestion was made from")
    args = parser.parse_args()
    hand = load(args.hand)
    suggested = load(args.suggested)
    result = compare(suggested, hand)
    if args.corpus:
        result |= reachable(result, hand, suggested, corpus_text(args.corpus))
    print(f"entities: hand {result['hand_entities']}, suggested {result['suggested_entities']}; "
          f"recall {result['entity_recall']:.2f}, precision {result['entity_precision']:.2f}")
    print(f"ambiguous aliases: hand {result['hand_ambiguous_aliases']}, "
          f"recall {result['ambiguous_alias_recall']:.2f}")
    if args.corpus:
        print(f"written in the corpus: {result['hand_entities'] - len(result['unwritten_entities'])} entities "
              f"(recall {result['reachable_entity_recall']:.2f}), "
              f"{result['hand_ambiguous_aliases'] - len(result['unwritten_ambiguous'])} ambiguous aliases on their own "
              f"(recall {result['reachable_ambiguous_recall']:.2f})")
    keys = ("missed_entities", "unmatched_suggestions", "missed_ambiguous", "unwritten_entities",
            "unwritten_ambiguous", "missed_ambiguous_proposed_not_shared", "missed_ambiguous_never_written",
            "missed_ambiguous_written_not_proposed")
    for key in keys:
        if key in result:
            print(f"{key}: {', '.join(result[key]) or '-'}")


if __name__ == "__main__":
    main()
