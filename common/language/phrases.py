"""Topic phrases: the noun-phrase-like stretches of a text, by rule, in every language.

A kb without an ontology has no names to link, so what a conversation is about is
said in its own words: "climate change", "developing countries", "essential oils",
"信用卡年费". These are found without a tagger or a downloaded model, as the runs of
words between the words that never carry a topic:

- English (and any language written with spaces): runs of words split at stop words,
  at the language's ``TOPIC_BREAKS`` (talk about the talk, light verbs, vague nouns),
  at contractions ("they're", "aren't") and at punctuation; a ``TOPIC_JOINERS`` word
  ("of") stays inside a run between two content words ("Conference of Parties").
- Chinese (written without spaces): runs of Han characters split at the stop words,
  the ``TOPIC_BREAKS`` words, the pronouns and the stop characters (的, 了, 吗…).

What a phrase is worth is not decided here: the caller weighs it by how rare its
words are in the kb (:mod:`dialogue.topics`). Limits: a verb between two nouns stays
inside the run ("Glasgow hosting COP26"); a phrase that crosses a stop word
("the cost of living" keeps "cost" and "living" apart unless "of" joins them) is
split; Chinese runs are not segmented into words.
"""

from __future__ import annotations

import re

from common.language import cues

# Longest phrase kept, in words (English) and characters (Chinese): longer runs are
# clauses the rules failed to break, and only their last words are kept (the head).
MAX_WORDS = 5
MAX_CHARS = 8

_CLAUSE_RE = re.compile(r"[.,;:!?()\[\]{}\"“”‘«»…，。；：！？（）【】、《》「」/]+")
_HAN_RE = re.compile(r"[\u3400-\u9fff]+")
_WORD_RE = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+|-[A-Za-z0-9]+)*")
_POSSESSIVE_RE = re.compile(r"'s$", re.IGNORECASE)

_BREAKS = frozenset(w.lower() for w in cues._all("TOPIC_BREAKS") if w.isascii())
_BREAK_ENDING_RE = re.compile(f"(?:{'|'.join(cues._all('TOPIC_BREAK_ENDINGS'))})$") \
    if cues._all("TOPIC_BREAK_ENDINGS") else None
_JOINERS = frozenset(w.lower() for w in cues._all("TOPIC_JOINERS"))
_SPACED_STOP = cues.STOP_WORDS | frozenset(w.lower() for w in cues._all("PRONOUNS") if w.isascii())
_HAN_BREAK_RE = re.compile("|".join(sorted(
    {re.escape(w) for w in [*cues._all("TOPIC_BREAKS"), *cues._all("PRONOUNS"),
                            *cues._all("POINTERS")] if not w.isascii()}, key=len, reverse=True)))
_HAN_STOP_CHARS = frozenset(cues.STOP_CHARS)


def topic_phrases(text: str) -> list[str]:
    """The text's topic phrases in the order they occur, each once (case-insensitively),
    as written (case kept, a possessive "'s" dropped)."""
    found: dict[str, str] = {}
    for clause in _CLAUSE_RE.split(text.replace("’", "'")):
        for phrase in [*_spaced_phrases(_HAN_RE.sub(" , ", clause)), *_han_phrases(clause)]:
            found.setdefault(phrase.lower(), phrase)
    return list(found.values())


def _spaced_phrases(clause: str) -> list[str]:
    phrases: list[str] = []
    run: list[str] = []
    words = [_POSSESSIVE_RE.sub("", w) for w in _WORD_RE.findall(clause)]
    for i, word in enumerate(words):
        low = word.lower()
        joins = low in _JOINERS and run and i + 1 < len(words) and _content(words[i + 1])
        if _content(word) or joins:
            run.append(word)
            continue
        phrases.extend(_closed(run))
        run = []
    phrases.extend(_closed(run))
    return phrases


def _content(word: str) -> bool:
    low = word.lower()
    if low in _SPACED_STOP or low in _BREAKS or low in _JOINERS or "'" in low:
        return False
    if _BREAK_ENDING_RE is not None and word.islower() and _BREAK_ENDING_RE.fullmatch(word):
        return False
    return len(low) > 1 and not low.isdigit()


def _closed(run: list[str]) -> list[str]:
    while run and run[-1].lower() in _JOINERS:
        run = run[:-1]
    return [" ".join(run[-MAX_WORDS:])] if run else []


def _han_phrases(clause: str) -> list[str]:
    phrases: list[str] = []
    for run in _HAN_RE.findall(clause):
        for piece in _HAN_BREAK_RE.split(run) if _HAN_BREAK_RE.pattern else [run]:
            for part in re.split(f"[{''.join(_HAN_STOP_CHARS)}]+", piece) if _HAN_STOP_CHARS \
                    else [piece]:
                if len(part) >= 2:
                    phrases.append(part[-MAX_CHARS:])
    return phrases
