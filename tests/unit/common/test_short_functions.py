"""No function in dialogue/ or understanding/ is over 60 lines: a newcomer reads one
mechanism at a time."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
LIMIT = 60


def _lengths() -> dict[tuple[str, str], int]:
    out = {}
    for package in ("dialogue", "understanding"):
        for path in sorted((ROOT / package).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    length = node.end_lineno - node.lineno + 1
                    out[(name, node.name)] = max(length, out.get((name, node.name), 0))
    return out


def test_no_function_in_dialogue_or_understanding_is_over_60_lines():
    lengths = _lengths()
    assert lengths, "no function found under dialogue/ or understanding/"
    too_long = {key: n for key, n in lengths.items() if n > LIMIT}
    assert too_long == {}
