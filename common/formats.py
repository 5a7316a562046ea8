"""The JSON Schemas of the four interchange formats (``docs/formats.md``).

They ship inside the package (``common/schemas/*.schema.json``), are served by
the API at ``GET /v1/schemas/{name}``, and check every line the parsers read:
a parser's own checks run first, because they say precisely what is wrong and
what to do; the schema runs after them on the same line, so that a line the
parsers let through but the published schema refuses is refused too, with its
line and field. A test keeps the keys each parser accepts, the schemas'
properties and ``docs/formats.md`` the same.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs

from common.errors import FormatError

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
#: The formats, in the order of ``docs/formats.md``.
FORMAT_NAMES = ("ontology", "corpus", "suite", "results")


def schema_path(name: str) -> Path:
    if name not in FORMAT_NAMES:
        raise KeyError(f"unknown format {name!r}; use one of {', '.join(FORMAT_NAMES)}")
    return SCHEMA_DIR / f"{name}.schema.json"


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one line of the format ``name``."""
    return json.loads(schema_path(name).read_text(encoding="utf-8"))


@cache
def _validator(name: str) -> Any:
    return jsonschema_rs.Draft202012Validator(load_schema(name))


def schema_error(name: str, obj: Any) -> tuple[str | None, str] | None:
    """The first place ``obj`` does not fit the schema: ``(field, message)``, the
    field written as the parsers write it (``turns[2].expect.action``), or None."""
    validator = _validator(name)
    if validator.is_valid(obj):  # a quarter of the time of iter_errors on a valid line
        return None
    for error in validator.iter_errors(obj):
        return _field(error.instance_path), error.message
    return None


def check_line(name: str, obj: Any, *, line: int | None, path: str | None) -> None:
    """Refuse a line the published schema refuses.

    Raises:
        FormatError: naming the line and the field, and where the format is described.
    """
    found = schema_error(name, obj)
    if found is not None:
        field, message = found
        raise FormatError(f"does not fit the {name} schema: {message} (see docs/formats.md)",
                          line=line, field=field, path=path)


def _field(instance_path: Any) -> str | None:
    out = ""
    for part in instance_path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or None
