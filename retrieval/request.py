"""What one search is asked: :class:`SearchRequest`, the whole input of
:meth:`retrieval.search.Retriever.search`.

Every field is a retrieval notion (queries, a filter, exclusions, chunks that
may come back, queries searched for context). The dialogue decides them from
its own notions (intents, sessions, turns) and retrieval never sees those.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from retrieval.history import Carried
from retrieval.novelty import Intent, Shown

# What becomes of the ``readmittable`` chunks:
# - ``novel``: each comes back only when it answers what is new in the queries
#   (``retrieval/novelty.py``);
# - ``all``: all compete again and go first, and the search never abstains (a request
#   for what was found before);
# - ``none``: all stay out, like the excluded ones (a request for further results).
Readmit = Literal["novel", "all", "none"]

# The novelty module's name for each.
_NOVELTY_INTENT: dict[str, Intent] = {"novel": "new", "all": "revisit", "none": "more"}


@dataclass(frozen=True)
class SearchRequest:
    """One search: the best ``k`` chunks for ``queries``, each chunk once.

    Attributes:
        queries: searched each; the first is the one the evidence is judged against.
        k: chunks returned at most.
        entity_ids: a filter on the chunks' entity tags, relaxed to a boost when it
            leaves too few documents.
        exclude_chunk_ids / exclude_doc_ids: never returned.
        readmittable: chunks returned before that may come back (see ``readmit``);
            a found one carries ``Found.seen_in_turn``.
        readmit: what becomes of them: ``novel``, ``all`` or ``none`` (see ``Readmit``).
        known_words: queries whose words are not new in this search (a chunk found for
            them does not come back for them); None: the last of ``context.earlier``.
        context: earlier queries the first query is also searched after when no entity
            filter is given, that ranking weighted by how much the query needs them
            (``retrieval/history.py``).
        names: entity → its names and aliases: the names in a script the query does not
            name the entity in join the keyword query.
        linked: whether the queries were linked to entities (default: whether
            ``entity_ids`` is given); decides which rules of readmission apply.
        confusable: entity → confusable siblings, for the entity-aware rerank.
        rerank: False keeps the fused order (one chunk per document).
        abstain: False never answers ``no_answer`` for weak evidence.
    """

    queries: tuple[str, ...]
    k: int
    entity_ids: tuple[str, ...] = ()
    exclude_chunk_ids: tuple[str, ...] = ()
    exclude_doc_ids: tuple[str, ...] = ()
    readmittable: tuple[Shown, ...] = ()
    readmit: Readmit = "novel"
    known_words: tuple[str, ...] | None = None
    context: Carried | None = None
    names: Mapping[str, Sequence[str]] | None = field(default=None, compare=False)
    linked: bool | None = None
    confusable: Mapping[str, frozenset[str]] | None = field(default=None, compare=False)
    rerank: bool = True
    abstain: bool = True

    def __post_init__(self) -> None:
        for name in ("queries", "entity_ids", "exclude_chunk_ids", "exclude_doc_ids",
                     "readmittable"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.known_words is not None:
            object.__setattr__(self, "known_words", tuple(self.known_words))
        if self.readmit not in _NOVELTY_INTENT:
            raise ValueError(f"readmit must be one of {sorted(_NOVELTY_INTENT)}, "
                             f"not {self.readmit!r}")
        if self.k < 1:
            raise ValueError(f"k must be at least 1, not {self.k}")

    @property
    def known(self) -> tuple[str, ...]:
        """``known_words``, or the last earlier query of the context."""
        if self.known_words is not None:
            return self.known_words
        return tuple(self.context.earlier[-1:]) if self.context is not None else ()

    @property
    def intent(self) -> Intent:
        """``readmit`` in the novelty module's terms."""
        return _NOVELTY_INTENT[self.readmit]

    def with_queries(self, queries: Sequence[str], **changes) -> SearchRequest:
        """The same request for other queries (``changes``: other fields to replace)."""
        return replace(self, queries=tuple(queries), **changes)
