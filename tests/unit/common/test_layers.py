"""The packages stack in one direction: common → kg → understanding → retrieval → dialogue →
(evaluation, analytics) → api, with the development services beside api. Nothing imports
upward: understanding (mentions, links) never knows of retrieval, sessions or the API."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

# What each package may import of the server's own packages (itself always).
MAY_IMPORT = {
    "common": set(),
    "kg": {"common"},
    "understanding": {"common", "kg"},
    "retrieval": {"common", "kg", "understanding"},
    "dialogue": {"common", "kg", "understanding", "retrieval"},
    "evaluation": {"common", "kg", "understanding", "retrieval", "dialogue"},
    "analytics": {"common", "kg", "understanding", "retrieval", "dialogue"},
    "devservices": {"common"},
}
SERVER = set(MAY_IMPORT) | {"api", "referent_client"}


def _top_level_imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            out.update(alias.name.split(".")[0] for alias in node.names)
    return out


@pytest.mark.parametrize("package", sorted(MAY_IMPORT))
def test_a_package_imports_nothing_above_it(package):
    allowed = MAY_IMPORT[package] | {package}
    upward = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        for name in (_top_level_imports(path) & SERVER) - allowed:
            upward.setdefault(path.relative_to(ROOT).as_posix(), []).append(name)
    assert upward == {}


@pytest.mark.parametrize("package", ["kg", "understanding", "retrieval", "dialogue", "evaluation", "analytics",
                                     "devservices"])
def test_only_the_api_imports_fastapi(package):
    found = [path.relative_to(ROOT).as_posix() for path in sorted((ROOT / package).rglob("*.py"))
             if {"fastapi", "starlette"} & _top_level_imports(path)]
    assert found == []
