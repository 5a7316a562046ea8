import json

import pytest

from common.errors import FormatError
from kg.ontology import dump_ontology, parse_ontology

from .conftest import ONTOLOGY


def lines(*objs):
    return [json.dumps(o, ensure_ascii=False) for o in objs]


def test_round_trip_through_dump_is_stable():
    parsed = parse_ontology(ONTOLOGY.splitlines())
    dumped = list(dump_ontology(parsed))
    assert list(dump_ontology(parse_ontology(dumped))) == dumped
    assert len(parsed.entities) == 8


@pytest.mark.parametrize("obj, field, words", [
    ({"kind": "entity", "id": "bad id!", "name": "x", "type": "T"}, "id", "A-Z"),
    ({"kind": "entity", "id": "x", "type": "T"}, "name", "missing"),
    ({"kind": "entity", "id": "x", "name": "x", "type": "T", "aliases": [""]}, "aliases[0]", "non-empty"),
    ({"kind": "entity", "id": "x", "name": "x", "type": "T", "aliases": ["长" * 129]}, "aliases[0]", "128"),
    ({"kind": "entity", "id": "x", "name": "x", "type": "T", "alias": ["y"]}, "alias", "unknown field"),
    ({"kind": "relation", "from": "x", "type": "PART OF", "to": "x"}, "type", "letters"),
    ({"kind": "widget"}, "kind", "unknown kind"),
])
def test_bad_lines_name_line_and_field(obj, field, words):
    good = {"kind": "entity", "id": "ok", "name": "好", "type": "T"}
    with pytest.raises(FormatError) as info:
        parse_ontology(lines(good, obj))
    assert info.value.line == 2
    assert info.value.field == field
    assert words in str(info.value)


def test_malformed_json_names_the_line():
    with pytest.raises(FormatError) as info:
        parse_ontology(['{"kind": "type", "name": "T"}', "# a comment", "", '{"kind": '])
    assert info.value.line == 4
    assert "not valid JSON" in str(info.value)


def test_unknown_reference_and_parent_cycle_are_rejected():
    with pytest.raises(FormatError, match="unknown entity 'ghost'"):
        parse_ontology(lines({"kind": "relation", "from": "ghost", "type": "IS_A", "to": "ghost"}))
    with pytest.raises(FormatError, match="parent cycle"):
        parse_ontology(lines(
            {"kind": "entity", "id": "a", "name": "A", "type": "T", "parent": "b"},
            {"kind": "entity", "id": "b", "name": "B", "type": "T", "parent": "a"}))


def test_references_to_stored_entities_are_valid():
    parsed = parse_ontology(lines({"kind": "confusable", "a": "x", "b": "y"}),
                            known_entity_ids={"x", "y"})
    assert parsed.confusables[0].a == "x"


def test_names_may_hold_any_space_but_no_control_character():
    from common.errors import FormatError
    from kg.ontology import parse_ontology

    head = '{"kind": "type", "name": "Place", "attributes": []}'
    ok = parse_ontology([head, '{"kind": "entity", "id": "p1", "name": "ONE\\u00a0STUDIO\\u3000画室", '
                               '"type": "Place", "aliases": ["ONE\\u00a0STUDIO"]}'])
    assert ok.entities[0].name == "ONE\u00a0STUDIO\u3000画室"
    for bad in ("A\\nB", "A\\u0007B", "A\\u2028B"):
        with pytest.raises(FormatError, match="line 2, field 'name'"):
            parse_ontology([head, f'{{"kind": "entity", "id": "p1", "name": "{bad}", '
                                  '"type": "Place"}'])
