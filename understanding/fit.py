"""Context fit: how well each candidate entity fits the words around a mention.

"Which instruments did Richard Hill play?" names two Richard Hills; only one
is a composer. The words of the question (minus the mention and question
words) are compared with each candidate's profile: its type, its type's
attributes, its description, and what its attributes say beyond its type's
schema (a classification the kb's source gave it). Words are weighted by how
rare they are across the kb's profiles (IDF), so "river" says more than "the".

The linker resolves a shared alias or a pronoun by fit only when the best
candidate beats the next by a clear margin; otherwise it asks. The margin was
tuned on the CLAQUA dev sets (see docs/linking.md).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from common.language.tokens import tokens

if TYPE_CHECKING:  # pragma: no cover
    from kg.aliases import AliasSnapshot

class ContextFit:
    """Scores candidates against a question; built lazily, once per snapshot."""

    def __init__(self, snapshot: AliasSnapshot) -> None:
        self._snapshot = snapshot
        self._profiles: dict[str, frozenset[str]] = {}
        df: Counter[str] = Counter()
        for entity_id in snapshot.entities:
            profile = self._profile(entity_id)
            self._profiles[entity_id] = profile
            df.update(profile)
        n = max(len(snapshot.entities), 1)
        self._idf = {t: math.log((n + 1) / (c + 0.5)) for t, c in df.items()}

    def _profile(self, entity_id: str) -> frozenset[str]:
        entity = self._snapshot.entities[entity_id]
        parts = [entity.type.replace(".", " ").replace("_", " "), entity.description]
        parts.extend(self._snapshot.type_attributes.get(entity.type, ()))
        # What the entity's attributes say beyond its type's schema (a classification the
        # kb's source gave it, a list of what it is) describes it as its description does.
        declared = set(self._snapshot.type_attributes.get(entity.type, ()))
        attributes = entity.attributes if hasattr(entity.attributes, "items") else {}
        parts.extend(value.replace(".", " ").replace("_", " ") for key, value in attributes.items()
                     if key not in declared and isinstance(value, str))
        names = set(tokens(" ".join(entity.all_aliases)))
        return frozenset(t for t in tokens(" ".join(parts)) if t not in names)

    def scores(self, question: str, candidates: Sequence[str], *,
               ignore: Iterable[str] = ()) -> dict[str, float]:
        """IDF-weighted overlap of the question's content words with each profile.

        Args:
            question: the user's words (or the question being resumed).
            candidates: entity ids to score.
            ignore: text spans to leave out (the mention itself).
        """
        skip = set(tokens(" ".join(ignore)))
        words = {t for t in tokens(question) if t not in skip}
        return {c: round(sum(self._idf.get(t, 0.0) for t in words if t in self._profiles.get(c, ())), 4)
                for c in candidates}


def context_fit(snapshot: AliasSnapshot) -> ContextFit:
    """The :class:`ContextFit` of ``snapshot``, built once on first use and kept with it."""
    fit = snapshot._derived.get("fit")
    if fit is None:
        fit = snapshot._derived["fit"] = ContextFit(snapshot)
    return fit


def decide(scores: dict[str, float], *, margin: float) -> str | None:
    """The candidate that fits clearly best, or None when two remain plausible."""
    if len(scores) < 2:
        return next(iter(scores), None)
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    (best, top), (_, second) = ranked[0], ranked[1]
    return best if top - second >= margin and top > 0 else None
