"""What a turn that links nothing inherits from the turns before it.

With no entity to filter on (nothing linked, or a kb without an ontology), a
follow-up such as "那价格呢" or "白金的" says too little to be searched alone,
while a new question ("审批通过以后多久放款") is hurt by the words of the
previous one. So the turn is searched twice: with its own words, and with its
own words after those of the previous turn (the query that turn searched with:
its words plus what its rewrite carried). The two rankings are fused per
document, the second weighted by how much the turn needs its history
(:func:`carry_weight`):

- an explicit topic switch ("换个话题", "算了，我直接问") carries nothing
  (the dialogue passes no earlier turns);
- a turn that points back by its own words (a pronoun, an ordinal, an
  ellipsis "那…呢") or that has few words of its own that the kb finds rare
  (their IDF over the kb's chunks, summed, below ``own_words`` rare words)
  takes the history at ``follow_up`` weight;
- any other turn asks a question of its own: the history only breaks ties
  (``self_contained`` weight).

BM25 itself weighs the inherited words by their IDF, so the previous turn's
rare words (免息期, 千兆宽带) pull and its common ones (多少, 办理) do not.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from common.language.normalize import Normalization
from common.language.tokens import tokens
from retrieval.models import Hit
from retrieval.novelty import TermStats

# Case, width and script folded, spaces kept (English words stay apart).
_FOLD = Normalization(punctuation=False)

T = TypeVar("T")


@dataclass(frozen=True)
class Carried:
    """The earlier turns a turn may inherit words from, and how it points back.

    Attributes:
        earlier: the queries of the recent turns since the last topic switch, most recent last.
        refers_back: the turn points at the conversation by its own words (a pronoun, an
            ordinal, an ellipsis), so it is a follow-up whatever its other words.
        topic: the conversation's topic phrases, when it keeps them (dialogue/topics.py).
    """

    earlier: tuple[str, ...] = ()
    refers_back: bool = False
    # In a kb without an ontology, the conversation's topic phrases (most salient first):
    # searched before the turn's words instead of the earlier turns' queries.
    topic: tuple[str, ...] = ()


@dataclass(frozen=True)
class CarryConfig:
    """Weights of the history ranking against the turn's own (which weighs 1)."""

    follow_up: float = 1.5
    self_contained: float = 0.7
    # How many rare words (each worth the IDF of a word in one chunk) make a question of its own.
    own_words: float = 1.75
    # How many earlier turns' queries are searched with the turn (most recent first).
    turns: int = 1
    # A follow-up with the conversation's topic phrases (a kb without an ontology): the
    # topic says what the turn is about better than the previous turn's whole query, so
    # it leads; a question of its own keeps ``self_contained`` (its own words lead).
    topic_follow_up: float = 5.0


def own_words(query: str, stats: TermStats) -> float:
    """How much the query says by itself: the IDF of its content words that the kb has,
    summed, in units of the IDF of a word found in a single chunk (so one rare word
    counts about 1, a word in a tenth of the chunks about 0.45, whatever the kb's size)."""
    rare = math.log((stats.n + 1) / 1.5)
    if rare <= 0:
        return 0.0
    return sum(stats.idf(t) for t in tokens(_FOLD.normalize(query)) if stats.df(t) > 0) / rare


def carry_weight(query: str, carried: Carried, stats: TermStats, config: CarryConfig,
                 trace: dict[str, Any]) -> float:
    """The weight of the history ranking for this turn (0: search its own words only)."""
    if not carried.earlier or config.turns <= 0:
        return 0.0
    said = own_words(query, stats)
    follows = carried.refers_back or said < config.own_words
    follow_up = config.topic_follow_up if carried.topic else config.follow_up
    weight = follow_up if follows else config.self_contained
    trace.update({"own_words": round(said, 2), "refers_back": carried.refers_back,
                  "follow_up": follows, "weight": weight})
    return weight


def history_query(query: str, carried: Carried, config: CarryConfig) -> str:
    """The topic's phrases, or else the earlier turns' queries (the oldest first), and
    then the turn's own."""
    if carried.topic:
        return " ".join([*carried.topic, query])
    earlier = [q for q in carried.earlier[-config.turns:] if q.strip()] if config.turns > 0 else []
    return " ".join([*earlier, query])


def fuse_by_document(rankings: Sequence[tuple[Sequence[T], float]],
                     hit_of: Callable[[T], Hit]) -> list[tuple[T, float]]:
    """Weighted sum of the rankings' scores (each ranking's best hit scaled to 1) per
    document, best document first; within a document, its chunks by the same sum per chunk.

    Per document, not per chunk: the two searches often pick different chunks of the
    same right document, and those should add up, not compete; the chunk that both
    searches found beats one that only one did. Every chunk comes once, as the item of the
    ranking where it scored best, scored by its document's sum times its share of the
    document's best chunk, over the weights' sum (so within [0, 1]).
    """
    total = sum(w for _, w in rankings if w > 0) or 1.0
    doc_score: dict[str, float] = defaultdict(float)
    chunk_score: dict[str, float] = defaultdict(float)
    chunk: dict[str, tuple[float, T]] = {}
    for items, weight in rankings:
        if weight <= 0 or not items:
            continue
        top = max(hit_of(x).score for x in items) or 1.0
        per_doc: dict[str, float] = {}
        for item in items:
            hit = hit_of(item)
            part = weight * max(hit.score, 0.0) / top
            per_doc[hit.doc_id] = max(per_doc.get(hit.doc_id, 0.0), part)
            chunk_score[hit.chunk_id] += part
            if hit.chunk_id not in chunk or part > chunk[hit.chunk_id][0]:
                chunk[hit.chunk_id] = (part, item)
        for doc, part in per_doc.items():
            doc_score[doc] += part
    doc_best: dict[str, float] = defaultdict(float)
    for chunk_id, (_, item) in chunk.items():
        doc = hit_of(item).doc_id
        doc_best[doc] = max(doc_best[doc], chunk_score[chunk_id])
    out = []
    for chunk_id, (_, item) in chunk.items():
        doc = hit_of(item).doc_id
        share = chunk_score[chunk_id] / doc_best[doc] if doc_best[doc] > 0 else 0.0
        out.append((item, doc_score[doc] * share / total, doc_score[doc]))
    out.sort(key=lambda x: (-x[2], -x[1], hit_of(x[0]).chunk_id))
    return [(item, score) for item, score, _ in out]
