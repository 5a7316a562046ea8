"""English names an English passage gives the things the Chinese passages describe.

An English FAQ beside Chinese documents names a product in English only (the
"Aurora Family Plan"), with no Chinese name beside it to pair it with. What the
passage states tells which thing it is: a passage that names one thing states the
prices, sizes and hours the Chinese passages of one entity state too (199, 150,
1000). Its name becomes that entity's alias when the two share three figures or
more, and more than the passage shares with any other entity. A passage naming two
things or more (a comparison, a list) gives none: its figures cannot be told apart.
"""

from __future__ import annotations

import re

from common.language import documents as words
from kg.suggest.corpus import Occurrences
from kg.suggest.evidence import Evidence, cite, confidence
from kg.suggest.model import Suggestion

MIN_SHARED_FIGURES = 3
MIN_TOKENS = 2
_TOKEN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")
_FIGURE_RE = re.compile(r"\d[\d,]*(?:\.\d+)?")
_CJK_RE = re.compile(r"[\u4e00-\u9fff]")


def add_english_names(suggestion: Suggestion, occurrences: Occurrences) -> None:
    """Give each English name an English passage alone gives the entity whose passages
    state the most of the same figures, when that entity is clear."""
    figures_of = {key: _entity_figures(entity.name, occurrences)
                  for key, entity in suggestion.entities.items()}
    for passage in occurrences.passages:
        if _CJK_RE.search(passage.text):
            continue
        names = set(capitalised_names(passage.text))
        if len(names) != 1:
            continue
        figures = _figures(passage.text)
        ranked = sorted(((len(figures & f), key) for key, f in figures_of.items()), reverse=True)
        if not ranked:
            continue
        (best, key), second = ranked[0], (ranked[1][0] if len(ranked) > 1 else 0)
        if best >= MIN_SHARED_FIGURES and best > second:
            [name] = names
            for form in _forms(name):
                suggestion.entities[key].add_alias(form, Evidence(
                    confidence(0.3 * best), {"shared_figures": best}, cite(occurrences, name),
                    "named by an English passage that states the same figures"))


def capitalised_names(text: str) -> list[str]:
    """Runs of two capitalised words or more (5G Family Plan), without a leading
    question or function word (What, The)."""
    runs: list[list[str]] = []
    end = -1
    for m in _TOKEN_RE.finditer(text):
        token = m.group(0)
        if not (token[0].isupper() or (token[0].isdigit() and token[-1].isalpha())):
            end = -1
            continue
        if runs and end >= 0 and text[end:m.start()] == " ":
            runs[-1].append(token)
        else:
            runs.append([token])
        end = m.end()
    names = []
    for run in runs:
        while run and run[0].lower() in words.LATIN_STOP:
            run.pop(0)
        if sum(1 for token in run if not _code(token)) >= MIN_TOKENS:
            names.append(" ".join(run))
    return names


def _code(token: str) -> bool:
    """A letter or a code (B, T1, C18) marks a place inside something, not a name's word."""
    return len(token) == 1 or (any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
                               and token[0].isalpha())


def _forms(name: str) -> list[str]:
    """The name, and without the codes at its end (Harbor Point for Harbor Point T2):
    users drop them as they drop a bracketed qualifier."""
    tokens = name.split()
    while tokens and _code(tokens[-1]):
        tokens.pop()
    short = " ".join(tokens)
    return [name] if short == name else [name, short]


def _figures(text: str) -> set[str]:
    """The numbers a passage states, of two digits or more (prices, sizes, hours)."""
    found = {m.group(0).replace(",", "").lstrip("0") for m in _FIGURE_RE.finditer(text)}
    return {f for f in found if len(f.split(".")[0]) >= 2}


def _entity_figures(name: str, occurrences: Occurrences) -> set[str]:
    """The figures of the Chinese passages that name it (an English one would pair a
    name with the English passages themselves)."""
    found: set[str] = set()
    for index in occurrences.passages_of(name):
        text = occurrences.passages[index].text
        if _CJK_RE.search(text):
            found |= _figures(text)
    return found
