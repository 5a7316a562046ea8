"""How a suggested ontology compares with a hand-written one of the same corpus.

    python -m benchmarks.suggest_vs_hand SUGGESTED.jsonl HAND.jsonl

Prints the confusion of entities and of ambiguous aliases. Names and aliases
are compared after the kb's default normalisation (width, case, traditional
forms, punctuation). A hand entity is found when a suggested entity's name is
one of its names, or its name is one of the suggested entity's names; a
suggested entity is right when it finds some hand entity. A hand ambiguous
alias (shared by two hand entities or more) is found when the suggestion has it
shared by two or more entities too.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from common.language.normalize import normalize
from kg.ontology import Ontology, parse_ontology


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
    args = parser.parse_args()
    result = compare(load(args.suggested), load(args.hand))
    print(f"entities: hand {result['hand_entities']}, suggested {result['suggested_entities']}; "
          f"recall {result['entity_recall']:.2f}, precision {result['entity_precision']:.2f}")
    print(f"ambiguous aliases: hand {result['hand_ambiguous_aliases']}, "
          f"recall {result['ambiguous_alias_recall']:.2f}")
    for key in ("missed_entities", "unmatched_suggestions", "missed_ambiguous"):
        print(f"{key}: {', '.join(result[key]) or '-'}")


if __name__ == "__main__":
    main()
