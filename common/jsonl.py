"""Reading the interchange files (FORMATS.md): UTF-8 JSON Lines.

Blank lines and lines starting with ``#`` are skipped; every other line must
be one JSON object. Errors name the file and the 1-based line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from common.errors import FormatError


def iter_jsonl(lines: Iterable[str], path: str | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for every data line."""
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FormatError(f"not valid JSON ({exc.msg} at column {exc.colno}); "
                              "each line must be one JSON object", line=number, path=path) from exc
        if not isinstance(obj, dict):
            raise FormatError("expected a JSON object ({...})", line=number, path=path)
        yield number, obj


def read_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Read a whole JSON Lines file; a non-UTF-8 file is a FormatError."""
    try:
        with open(path, encoding="utf-8") as fh:
            return list(iter_jsonl(fh, str(path)))
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 text (byte {exc.start}); save the file as UTF-8",
                          path=str(path)) from exc


class Fields:
    """Typed access to one JSON object's fields, with errors naming line and field."""

    def __init__(self, obj: dict[str, Any], line: int, path: str | None) -> None:
        self.obj = obj
        self.line = line
        self.path = path

    def error(self, field: str | None, message: str) -> FormatError:
        return FormatError(message, line=self.line, field=field, path=self.path)

    def reject_unknown(self, allowed: set[str]) -> None:
        unknown = sorted(set(self.obj) - allowed)
        if unknown:
            raise self.error(unknown[0], f"unknown field; allowed fields are {sorted(allowed)}")

    def string(self, field: str, *, required: bool = True, max_len: int | None = None,
               allow_empty: bool = False) -> str | None:
        value = self.obj.get(field)
        if value is None:
            if required:
                raise self.error(field, "required field is missing")
            return None
        if not isinstance(value, str):
            raise self.error(field, f"must be a string, got {type(value).__name__}")
        if not allow_empty and not value.strip():
            raise self.error(field, "must not be empty")
        if max_len is not None and len(value) > max_len:
            raise self.error(field, f"is {len(value)} characters long; the limit is {max_len}")
        return value

    def string_list(self, field: str, *, max_len: int | None = None) -> list[str]:
        value = self.obj.get(field)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(field, f"must be a list of strings, got {type(value).__name__}")
        out = []
        for i, item in enumerate(value):
            if not isinstance(item, str) or not item.strip():
                raise self.error(f"{field}[{i}]", "must be a non-empty string")
            if max_len is not None and len(item) > max_len:
                raise self.error(f"{field}[{i}]",
                                 f"is {len(item)} characters long; the limit is {max_len}")
            out.append(item)
        return out

    def mapping(self, field: str) -> dict[str, Any]:
        value = self.obj.get(field)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(field, f"must be a JSON object, got {type(value).__name__}")
        return value

    def check_format_version(self) -> None:
        version = self.obj.get("format", 1)
        if version != 1:
            raise self.error("format", f"format {version!r} is not supported; this server reads format 1")
