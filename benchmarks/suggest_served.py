"""Prepare a suite to be served with the ontology suggested from its corpus alone.

    python -m benchmarks.suggest_served SUITE_DIR OUT_DIR

SUITE_DIR holds ``corpus.jsonl`` and ``suite.jsonl`` (docs/formats.md §2, §3).
OUT_DIR receives what a team arriving with documents would have:

* ``corpus.jsonl``: the corpus without its ``entity_ids`` (ingest tags the passages
  with the suggested aliases instead);
* ``ontology.jsonl`` (and its evidence file): the ontology suggested from that
  corpus, to be imported as it is, unedited;
* ``suite.jsonl``: the suite without ``entities``, ``not_entities`` and
  ``clarify_options``, which name the hand ontology's ids; evidence, action and
  ``must_contain`` are scored as written.

Then, for a kb ``KB``::

    referent ontology import --kb KB OUT_DIR/ontology.jsonl
    referent ingest --kb KB --recreate OUT_DIR/corpus.jsonl
    referent eval --kb KB OUT_DIR/suite.jsonl --baseline raw --baseline concat

and, for the confusion against the hand ontology,
``python -m benchmarks.suggest_vs_hand OUT_DIR/ontology.jsonl SUITE_DIR/ontology.jsonl
--corpus OUT_DIR/corpus.jsonl``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kg.suggest import read_corpus, suggest, to_ontology, write

HAND_ID_KEYS = ("entities", "not_entities", "clarify_options")


def _lines(path: Path, edit) -> list[str]:
    """Each JSON line of ``path`` passed through ``edit``; comments and blanks kept."""
    out = []
    for text in path.read_text(encoding="utf-8").splitlines():
        if not text.strip() or text.lstrip().startswith("#"):
            out.append(text)
            continue
        out.append(json.dumps(edit(json.loads(text)), ensure_ascii=False))
    return out


def without_entity_ids(passage: dict) -> dict:
    return {k: v for k, v in passage.items() if k != "entity_ids"}


def without_hand_ids(session: dict) -> dict:
    turns = [{**turn, "expect": {k: v for k, v in turn.get("expect", {}).items() if k not in HAND_ID_KEYS}}
             for turn in session.get("turns", [])]
    return {**session, "turns": turns}


def prepare(suite_dir: Path, out_dir: Path) -> Path:
    """Write the three files into ``out_dir``; returns the ontology file."""
    out_dir.mkdir(parents=True, exist_ok=True)
    corpus = out_dir / "corpus.jsonl"
    corpus.write_text("\n".join(_lines(suite_dir / "corpus.jsonl", without_entity_ids)) + "\n", encoding="utf-8")
    suite = out_dir / "suite.jsonl"
    suite.write_text("\n".join(_lines(suite_dir / "suite.jsonl", without_hand_ids)) + "\n", encoding="utf-8")
    passages = read_corpus(corpus.read_text(encoding="utf-8").splitlines(), path=str(corpus))
    ontology = out_dir / "ontology.jsonl"
    write(to_ontology(suggest(passages)), ontology)
    return ontology


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite_dir", type=Path, help="a folder with corpus.jsonl and suite.jsonl")
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args()
    print(f"wrote {prepare(args.suite_dir, args.out_dir)}, corpus.jsonl and suite.jsonl in {args.out_dir}")


if __name__ == "__main__":
    main()
