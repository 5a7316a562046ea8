"""Suggest an ontology from a corpus: entities, aliases, types, editions,
relations and confusable pairs, each with its evidence and a confidence.

Rules and corpus statistics only (no LLM, nothing downloaded): see
docs/ontology-suggest.md. :func:`suggest` runs the pipeline (engine.py);
:func:`to_ontology` and :func:`write` turn its result into an ontology file the
existing import reads, with the evidence beside it (output.py).
"""

from kg.suggest.corpus import Passage, passages_from_chunks, read_corpus
from kg.suggest.engine import suggest
from kg.suggest.output import evidence_path, to_ontology, write

__all__ = ["Passage", "evidence_path", "passages_from_chunks", "read_corpus", "suggest",
           "to_ontology", "write"]
