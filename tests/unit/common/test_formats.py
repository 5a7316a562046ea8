"""docs/formats.md, the JSON Schemas and the parsers describe the same formats:
the same keys, the same files accepted, the same field blamed for a bad line."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from api.cli import app as cli
from api.openapi import _TURN_CLARIFY, _TURN_RETRIEVE, EXAMPLES
from common.errors import FormatError
from common.formats import FORMAT_NAMES, load_schema, schema_error
from dialogue.models import OPTIONAL_RESULTS_KEYS, TurnResult
from evaluation.suites import EXPECT_KEYS, SESSION_KEYS, TURN_KEYS, parse_suite
from kg.aliases import AliasSnapshot
from kg.ontology import RECORD_KEYS, parse_ontology
from retrieval.ingest import CORPUS_KEYS, parse_corpus
from tests.conftest import DEMO, REPO

DOC = REPO / "docs" / "formats.md"
SHARED_DATA = REPO.parent / "shared" / "data"


def doc_keys() -> dict[str, set[str]]:
    """The keys of each table marked ``<!-- keys: NAME -->`` in docs/formats.md."""
    tables: dict[str, set[str]] = {}
    name = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        marker = re.fullmatch(r"<!-- keys: ([\w.]+) -->", line.strip())
        if marker:
            name = marker.group(1)
            tables[name] = set()
        elif name and line.startswith("|"):
            first = line.split("|")[1].strip()
            if first.startswith("`"):
                tables[name].add(first.strip("`"))
        elif name and tables[name]:
            name = None
    return tables


def props(schema: dict) -> set[str]:
    return set(schema["properties"])


def schema_keys() -> dict[str, set[str]]:
    ontology, suite = load_schema("ontology"), load_schema("suite")
    return {
        **{f"ontology.{kind}": props(ontology["$defs"][kind]) for kind in RECORD_KEYS},
        "corpus": props(load_schema("corpus")),
        "suite": props(suite), "suite.turn": props(suite["$defs"]["turn"]),
        "suite.expect": props(suite["$defs"]["expect"]),
        "results": props(load_schema("results")),
    }


def parser_keys() -> dict[str, set[str]]:
    example = TurnResult.model_validate(EXAMPLES[("POST", "/v1/kbs/{kb}/sessions/{session_id}/turns")]
                                        .response)
    return {
        **{f"ontology.{kind}": set(keys) for kind, keys in RECORD_KEYS.items()},
        "corpus": set(CORPUS_KEYS), "suite": set(SESSION_KEYS), "suite.turn": set(TURN_KEYS),
        "suite.expect": set(EXPECT_KEYS),
        "results": set(example.results_line()) | OPTIONAL_RESULTS_KEYS,
    }


def test_the_doc_the_schemas_and_the_parsers_list_the_same_keys():
    documented, schemas, parsers = doc_keys(), schema_keys(), parser_keys()
    assert set(documented) == set(schemas) == set(parsers)
    for name in parsers:
        assert documented[name] == parsers[name], f"docs/formats.md, {name}"
        assert schemas[name] == parsers[name], f"schema, {name}"
    assert "option_index" in documented["suite.expect"]


def test_the_ontology_kinds_are_the_schemas_kinds():
    schema = load_schema("ontology")
    assert set(schema["properties"]["kind"]["enum"]) == set(RECORD_KEYS)
    for kind in RECORD_KEYS:
        assert schema["$defs"][kind]["properties"]["kind"] == {"const": kind}


def _lines(path: Path):
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip() and not line.startswith("#"):
            yield number, json.loads(line)


def _data_files() -> list[tuple[str, Path]]:
    files = [("ontology", DEMO / "ontology.jsonl"), ("corpus", DEMO / "corpus.jsonl"),
             ("suite", DEMO / "suite.jsonl")]
    for folder in sorted(SHARED_DATA.glob("*")) if SHARED_DATA.is_dir() else []:
        files += [(name, folder / f"{name}.jsonl") for name in ("ontology", "corpus", "suite")
                  if (folder / f"{name}.jsonl").exists() and not _empty_ontology(name, folder)]
    return files


def _empty_ontology(name: str, folder: Path) -> bool:
    """An empty ontology file is a kb served without one (a set with no entities): it has
    no line to check. Every other data file must have lines."""
    return name == "ontology" and not any(True for _ in _lines(folder / "ontology.jsonl"))


@pytest.mark.parametrize(("name", "path"), _data_files(),
                         ids=lambda v: str(v.relative_to(REPO.parent)) if isinstance(v, Path) else v)
def test_every_line_of_the_demo_and_the_shared_data_fits_its_schema(name, path):
    checked = 0
    for number, obj in _lines(path):
        assert schema_error(name, obj) is None, f"{path}:{number}: {schema_error(name, obj)}"
        checked += 1
    assert checked > 0


def test_the_shared_data_is_there_to_check():
    """The development sets sit beside the repository (../shared/data) wherever the
    tests run; without them the test above checks the demo files only."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is not here")
    assert len([n for n, _ in _data_files()]) > 3


def test_the_demo_files_parse_and_their_results_lines_fit():
    ontology = parse_ontology((DEMO / "ontology.jsonl").read_text(encoding="utf-8").splitlines())
    snapshot = AliasSnapshot.from_ontology("demo", 1, ontology)
    chunks = parse_corpus((DEMO / "corpus.jsonl").read_text(encoding="utf-8").splitlines(),
                          snapshot).chunks
    suite = parse_suite((DEMO / "suite.jsonl").read_text(encoding="utf-8").splitlines())
    assert ontology.entities and chunks and suite
    for example in (_TURN_CLARIFY, _TURN_RETRIEVE):
        line = TurnResult.model_validate(example).results_line()
        assert schema_error("results", json.loads(json.dumps(line))) is None, example["action"]


# Bad lines: the parser refuses each with its precise message, the schema refuses it
# too, and both blame the same field.
BAD = [
    ("ontology", {"kind": "entity", "id": "x y", "name": "X", "type": "T"}, "id"),
    ("ontology", {"kind": "entity", "id": "x", "name": "", "type": "T"}, "name"),
    ("ontology", {"kind": "entity", "id": "x", "name": "X", "type": "T", "aliases": ["a", ""]},
     "aliases[1]"),
    ("ontology", {"kind": "entity", "id": "x", "name": "X", "type": "T", "colour": "red"}, "colour"),
    ("ontology", {"kind": "entity", "id": "x", "name": "X", "type": "T", "attributes": []},
     "attributes"),
    ("ontology", {"kind": "relation", "from": "x", "type": "PART OF", "to": "x"}, "type"),
    ("ontology", {"kind": "type", "name": "T", "format": 2}, "format"),
    ("corpus", {"doc_id": "d", "text": "   "}, "text"),
    ("corpus", {"doc_id": "d", "text": "t", "entity_ids": ["bad id"]}, "entity_ids[0]"),
    ("corpus", {"doc_id": "d", "text": "t", "metadata": "2025"}, "metadata"),
    ("corpus", {"doc_id": "d", "text": "t", "tags": []}, "tags"),
    ("suite", {"session": "s", "turns": [{"user": "hi", "expect": {"action": "answer"}}]},
     "turns[0].expect.action"),
    ("suite", {"session": "s", "turns": [{"user": "a"}, {"user": "b", "expect": {
        "option_index": -1}}]}, "turns[1].expect.option_index"),
    ("suite", {"session": "s", "turns": [{"user": "a"}, {"user": "b", "expect": {
        "option_index": True}}]}, "turns[1].expect.option_index"),
    ("suite", {"session": "s", "turns": [{"user": "a", "expect": {"entities": ["x y"]}}]},
     "turns[0].expect.entities"),
    ("suite", {"session": "s", "turns": [{"user": "a", "say": "b"}]}, "turns[0].say"),
]


def _parse(name: str, obj: dict) -> None:
    lines = [json.dumps(obj, ensure_ascii=False)]
    if name == "ontology":
        parse_ontology(lines, known_entity_ids={"x"})
    elif name == "corpus":
        empty = AliasSnapshot.from_ontology("t", 1, parse_ontology([]))
        parse_corpus(lines, empty)
    else:
        parse_suite(lines)


@pytest.mark.parametrize(("name", "obj", "field"), BAD, ids=lambda v: v if isinstance(v, str) else "")
def test_a_bad_line_is_refused_by_the_parser_and_the_schema_on_the_same_field(name, obj, field):
    with pytest.raises(FormatError) as refused:
        _parse(name, obj)
    assert refused.value.field == field
    assert refused.value.line == 1
    found = schema_error(name, obj)
    assert found is not None, f"the {name} schema accepts {obj}"
    schema_field = found[0] or ""
    # The schema may point inside the field (entity_ids[0] for entity_ids), never elsewhere.
    assert schema_field == field or schema_field.startswith(field) or field.startswith(
        schema_field), (schema_field, field)


def test_the_first_turn_may_not_answer_a_clarification_by_position():
    line = {"session": "s", "turns": [{"user": "第二个", "expect": {"option_index": 1}}]}
    with pytest.raises(FormatError, match="first turn answers no clarification"):
        _parse("suite", line)
    assert schema_error("suite", line) is not None


def test_a_line_only_the_schema_refuses_is_refused_with_line_and_field(monkeypatch):
    """The schema runs after the parser's checks, so the published contract is the
    last word: here a schema made stricter than the parser refuses a line."""
    import common.formats as formats

    strict = json.loads(json.dumps(load_schema("corpus")))
    strict["properties"]["title"]["maxLength"] = 3
    monkeypatch.setattr(formats, "load_schema", lambda name: strict)
    formats._validator.cache_clear()
    try:
        empty = AliasSnapshot.from_ontology("t", 1, parse_ontology([]))
        with pytest.raises(FormatError) as refused:
            parse_corpus(["# a comment", json.dumps({"doc_id": "d", "title": "long title",
                                                     "text": "t"})], empty, path="c.jsonl")
        assert refused.value.line == 2 and refused.value.field == "title"
        assert "docs/formats.md" in str(refused.value)
    finally:
        formats._validator.cache_clear()


def test_every_format_has_a_schema_with_an_id_and_a_title():
    for name in FORMAT_NAMES:
        schema = load_schema(name)
        assert schema["$schema"].endswith("2020-12/schema")
        assert schema["$id"] == f"urn:referent:format:{name}:1"
        assert name in schema["title"].lower() or name == "suite"


@pytest.mark.parametrize("command", [["ontology", "import", "--help"], ["ingest", "--help"],
                                     ["eval", "--help"]])
def test_the_cli_help_points_at_docs_formats(command):
    out = CliRunner().invoke(cli, command, env={"COLUMNS": "200"}).output
    assert "docs/formats.md" in out
    assert "FORMATS.md §" not in out


def test_nothing_points_at_the_design_note_any_more():
    """docs/formats.md is the one description: code, docs and data name it."""
    skip = {".venv", "var", ".git", "neo4j-launcher", "node_modules", "__pycache__"}
    stale = []
    for root, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in skip and not d.endswith(".egg-info")]
        for name in files:
            path = Path(root) / name
            if path.suffix in (".py", ".md", ".jsonl", ".sh") and path != Path(__file__) \
                    and "FORMATS" in path.read_text(encoding="utf-8", errors="replace"):
                stale.append(str(path.relative_to(REPO)))
    assert not stale
