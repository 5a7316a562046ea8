"""How a kb's BM25 reads text: one analyzer per kb, chosen by the corpus language.

BM25 matches terms, so what counts as one term decides what a query finds. A
Chinese corpus needs word segmentation (Milvus's ``chinese`` analyzer, jieba); an
English one needs case folding, stemming and stop words (Milvus's ``english``
analyzer: the standard tokenizer, then ``lowercase``, the English ``stemmer`` and
the English ``stop`` list), so that "Fees" finds "fee" and "developing countries"
finds "developing country". The Chinese analyzer does neither for English words:
there "Fees" and "fees" are different terms.

The analyzer is fixed when a kb's collection is created and recorded with it; a query
is analyzed by the same one (Milvus applies the field's analyzer to the query). It is
chosen at the first ingest, from the corpus' script (:func:`detect_analyzer`), unless
the ingest names one. A collection keeps its analyzer: to change it, ingest again with
``--recreate``. Collections made before the choice existed use ``chinese``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from common.errors import ConfigurationError
from common.language.normalize import is_cjk

# The analyzer of a collection whose record names none (made before there was a choice).
LEGACY_ANALYZER = "chinese"
# Milvus analyzer parameters by the name Referent records with the collection.
ANALYZER_PARAMS: dict[str, dict[str, Any]] = {
    "chinese": {"type": "chinese"},
    "english": {"type": "english"},
}
ANALYZERS = tuple(ANALYZER_PARAMS)

_LATIN_WORD_RE = re.compile(r"[A-Za-z]+")


def check_analyzer(name: str) -> str:
    """``name`` when it is a known analyzer.

    Raises:
        ConfigurationError: another name, with the ones to choose from.
    """
    if name not in ANALYZER_PARAMS:
        raise ConfigurationError(f"unknown BM25 analyzer {name!r}: use one of "
                                 f"{', '.join(ANALYZERS)}")
    return name


def detect_analyzer(texts: Iterable[str]) -> str:
    """The analyzer for a corpus: ``chinese`` when its CJK characters outnumber twice its
    Latin words (a Chinese corpus quoting English names stays Chinese), else ``english``.

    One CJK character is about half a word, so the comparison is of like with like.
    """
    cjk = words = 0
    for text in texts:
        cjk += sum(1 for c in text if is_cjk(c))
        words += len(_LATIN_WORD_RE.findall(text))
    return "chinese" if cjk > 2 * words else "english"


def analyzer_mismatch(kb: str, recorded: str, wanted: str) -> ConfigurationError:
    """The error for an ingest that names an analyzer other than the collection's."""
    return ConfigurationError(
        f"kb {kb!r} was created with the {recorded!r} BM25 analyzer, not {wanted!r}; a "
        f"collection keeps its analyzer: rebuild it with `referent ingest --kb {kb} "
        f"--recreate --analyzer {wanted} FILE`, or leave --analyzer out")
