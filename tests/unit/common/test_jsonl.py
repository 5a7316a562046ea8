"""The JSON reader every outside text goes through: its nesting limit."""

from __future__ import annotations

import json

import pytest

from common.errors import FormatError
from common.jsonl import MAX_NESTING, NestingError, iter_jsonl, loads, nested_too_deeply


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("text", [_nested(MAX_NESTING), '{"a": ' + _nested(MAX_NESTING - 1) + "}",
                                  json.dumps({"t": "[" * 500}), json.dumps({"t": '\\"[[[' * 100})])
def test_within_the_limit_or_brackets_inside_strings_are_read(text):
    assert not nested_too_deeply(text) and not nested_too_deeply(text.encode())
    assert loads(text) == json.loads(text)


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 10_000, 1_000_000])
def test_deeper_is_refused_before_parsing_without_a_recursion_error(depth):
    with pytest.raises(NestingError, match="nested too deeply"):
        loads(_nested(depth))
    with pytest.raises(NestingError):
        loads(("{\"a\": " * depth + "1" + "}" * depth).encode())


def test_a_file_line_nested_too_deeply_is_a_format_error_naming_it():
    lines = ['{"ok": 1}', "", '{"deep": ' + _nested(10_000) + "}"]
    with pytest.raises(FormatError) as refused:
        list(iter_jsonl(lines, "f.jsonl"))
    assert refused.value.line == 3 and "nested too deeply" in str(refused.value)
