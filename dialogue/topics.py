"""The topic of a conversation in a kb without an ontology: its own phrases, carried.

With an ontology, a follow-up inherits the focus entity. Without one there is nothing
to link, so the subject is kept as the conversation's own topic phrases
(:func:`common.language.phrases.topic_phrases`): those of the user's turns and of the
evidence the user was shown, weighed by how rare their words are in the kb (the IDF
over its chunks, in units of a word found in one chunk, as
:func:`retrieval.history.own_words` counts them), so "climate change" and "essential
oils" count and "effects" or "the first step" hardly do.

The topic moves like the focus does:

- a follow-up inherits it: the turn is searched after the topic's phrases (the history
  ranking of :mod:`retrieval.history`), so "Are they meeting them?" or "那它的有效期呢"
  keeps what the conversation is about however many turns ago it was named;
- a turn's own phrases go first in the topic it leaves behind; the inherited ones
  follow, each worth ``carried`` of what it was worth, and what falls below
  ``min_weight`` or past ``size`` phrases leaves, so a new subject replaces the old one
  within a few turns;
- an explicit switch ("by the way", "换个话题") replaces it with the turn's own phrases;
- a pronoun (it, they, 它, 这个) points at the topic's first phrase: the trace says which.

Limits: phrases come from rules, not a parser (see :mod:`common.language.phrases`); a
turn that changes the subject without a cue and without rare words of its own keeps the
old topic in its history ranking, where its own words still rank first
(:func:`retrieval.history.carry_weight`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from common.language.phrases import topic_phrases
from common.language.tokens import tokens
from retrieval.history import own_words
from retrieval.novelty import Shown, TermStats


@dataclass(frozen=True)
class TopicConfig:
    # Phrases kept in the topic, most salient first.
    size: int = 4
    # What an inherited phrase keeps of its worth at each turn that does not say it again.
    carried: float = 0.6
    # Below this worth (in rare words) a phrase says too little of the kb to be a topic.
    min_weight: float = 0.35
    # What a phrase of the shown evidence is worth beside the user's own (which weigh 1).
    evidence: float = 0.5
    # Evidence phrases considered per turn (the most repeated in the best passage first).
    evidence_phrases: int = 2


@dataclass(frozen=True)
class TopicPhrase:
    text: str
    weight: float


def weighed(phrases: Sequence[str], stats: TermStats, factor: float = 1.0) -> list[TopicPhrase]:
    """The phrases with their worth in the kb (``factor`` times the rare words they hold),
    each cut at the words the kb never uses (no passage can be found by them)."""
    return [TopicPhrase(part, factor * own_words(part, stats))
            for p in phrases for part in _known_parts(p, stats)]


def _known_parts(phrase: str, stats: TermStats) -> list[str]:
    """The runs of a phrase's words that the kb holds ("climate change" of "climate change
    hurting farming" in a kb without the last two); a Chinese run is kept whole."""
    if " " not in phrase:
        return [phrase]
    parts: list[list[str]] = [[]]
    for word in phrase.split(" "):
        own = tokens(word)
        if all(stats.df(t) > 0 for t in own):  # a joiner ("of") has no tokens: it stays
            parts[-1].append(word)
        elif parts[-1]:
            parts.append([])
    return [" ".join(p) for p in map(_trimmed, parts) if p]


def _trimmed(words: list[str]) -> list[str]:
    while words and not tokens(words[-1]):
        words = words[:-1]
    while words and not tokens(words[0]):
        words = words[1:]
    return words


def next_topic(previous: Sequence[TopicPhrase], said: str, shown: Sequence[str],
               stats: TermStats, config: TopicConfig = TopicConfig(), *,
               switched: bool = False) -> list[TopicPhrase]:
    """The topic a turn leaves behind: its own phrases (``said``), the inherited ones
    (none after an explicit switch) worth ``config.carried`` of what they were, and the
    most repeated phrases of the evidence it showed (``shown``), best first."""
    own = weighed(topic_phrases(said), stats)
    # The shown passage speaks for the topic only when it is about what was asked.
    asked = {t for p in [*own, *previous[:1]] for t in tokens(p.text) if stats.df(t) > 0}
    grounded = [p for p in shown[:1] if asked & set(tokens(p))]
    candidates = [*own, *weighed(_repeated(grounded, config.evidence_phrases), stats,
                                 config.evidence)]
    if not switched:
        # Only a turn that says something of its own moves the topic on: "Tell me more"
        # or "Why?" keeps it as it was.
        carried = config.carried if own else 1.0
        candidates += [TopicPhrase(p.text, p.weight * carried) for p in previous]
    # Said again, a phrase adds up: what the conversation keeps coming back to stays.
    best: dict[str, TopicPhrase] = {}
    for phrase in candidates:
        key = phrase.text.lower()
        kept = best.get(key)
        best[key] = phrase if kept is None else TopicPhrase(kept.text, kept.weight + phrase.weight)
    kept = [p for p in best.values() if p.weight >= config.min_weight]
    return sorted(kept, key=lambda p: -p.weight)[:config.size]


def _repeated(passages: Sequence[str], limit: int) -> list[str]:
    """The phrases the best shown passage says more than once, most often first: what
    it is about rather than what it mentions."""
    if not passages or limit <= 0:
        return []
    counts: dict[str, int] = {}
    for sentence in passages[0].split("."):
        for phrase in topic_phrases(sentence):
            counts[phrase.lower()] = counts.get(phrase.lower(), 0) + 1
    ranked = sorted((p for p, n in counts.items() if n > 1), key=lambda p: -counts[p])
    return ranked[:limit]


def answers_read(shown: Sequence[Shown], said: str, texts: Mapping[str, str],
                 stats: TermStats) -> list[Shown]:
    """Of the chunks a conversation was shown, those that count as read for a turn that
    says ``said``: each turn's first (what it was answered with), and any other whose
    text (``texts``, by chunk id) holds none of the words the turn asks that the query
    which showed it did not.

    Without an ontology no entity tells a passage about the subject from one that only
    shares words with it, so the passages below an answer were offered rather than read;
    a follow-up may take one as its answer ("Tell me more" after a list whose third
    passage goes on with the subject) without the novelty test keeping it out. One that
    holds nothing of what is newly asked ("那价格呢" after the broadband's opening
    passage) stays shown: it would only repeat."""
    asked = {t for t in tokens(said) if stats.df(t) > 0}
    first: dict[int, Shown] = {}
    for record in shown:
        first.setdefault(record.turn, record)
    answers = {id(r) for r in first.values()}

    def offered_and_answering(record: Shown) -> bool:
        new = asked - set(tokens(record.query))
        return id(record) not in answers and (not new or bool(
            new & set(tokens(texts.get(record.chunk_id, "")))))
    return [r for r in shown if not offered_and_answering(r)]


def refers_to(topic: Sequence[TopicPhrase]) -> str | None:
    """What a pronoun of a turn that names nothing points at: the topic's first phrase."""
    return topic[0].text if topic else None
