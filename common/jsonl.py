"""Reading the interchange files (docs/formats.md): UTF-8 JSON Lines.

Blank lines and lines starting with ``#`` are skipped; every other line must
be one JSON object. Errors name the file and the 1-based line.

Every JSON text from outside (a line of a file, a request body, an LLM's answer)
goes through :func:`loads`, which refuses values nested deeper than
:data:`MAX_NESTING` arrays and objects before parsing them: Python's parser and
every recursive walk after it (validation, storing, masking) would otherwise
fail on a deep enough value with a RecursionError instead of a clear error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from common.errors import FormatError
from common.text import printable as is_printable

#: The deepest nesting of arrays and objects a JSON value from outside may have.
MAX_NESTING = 64

# A string (skipped whole: brackets inside it do not count) or a bracket.
_NESTING_TOKENS = {str: re.compile(r'"(?:[^"\\]++|\\.)*+"|[\[\]{}]'),
                   bytes: re.compile(rb'"(?:[^"\\]++|\\.)*+"|[\[\]{}]')}


class NestingError(ValueError):
    """A JSON text nested deeper than :data:`MAX_NESTING`."""


def nesting_message(what: str = "the value") -> str:
    return (f"{what} is nested too deeply (more than {MAX_NESTING} levels of arrays and "
            "objects); flatten it")


def nested_too_deeply(text: str | bytes, limit: int = MAX_NESTING) -> bool:
    """Whether the JSON text opens more than ``limit`` arrays or objects inside one
    another. Linear, without recursion, and nearly free for texts with few brackets."""
    opening = ("[", "{") if isinstance(text, str) else (b"[", b"{")
    if text.count(opening[0]) + text.count(opening[1]) <= limit:
        return False
    depth = 0
    for token in _NESTING_TOKENS[type(text)].finditer(text):
        mark = token.group()
        if mark in opening:
            depth += 1
            if depth > limit:
                return True
        elif len(mark) == 1:
            depth -= 1
    return False


def loads(text: str | bytes, what: str = "the value") -> Any:
    """``json.loads`` for text from outside.

    Raises:
        NestingError: nested deeper than :data:`MAX_NESTING` (a ValueError).
        json.JSONDecodeError: not JSON.
    """
    if nested_too_deeply(text):
        raise NestingError(nesting_message(what))
    return json.loads(text)


# A \uD800-\uDFFF escape: only these can put a lone surrogate into parsed JSON.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def unpaired_surrogate(value: Any, where: str = "") -> str | None:
    """Where in a parsed JSON value a string holds an unpaired UTF-16 surrogate
    (``"\\ud800"`` alone: valid JSON, but not text, and no store can encode it):
    a path like ``attributes.价格[2]`` (``""`` for the value itself), or None."""
    if isinstance(value, str):
        return None if _encodable(value) else where
    if isinstance(value, dict):
        for key, item in value.items():
            # The path is shown to the caller, so a bad key is shown escaped.
            name = key if _encodable(key) else key.encode("utf-8", "backslashreplace").decode()
            path = f"{where}.{name}" if where else name
            if not _encodable(key):
                return path
            found = unpaired_surrogate(item, path)
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = unpaired_surrogate(item, f"{where}[{i}]")
            if found is not None:
                return found
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def surrogate_message(where: str) -> str:
    return (f"{where or 'the value'} holds an unpaired UTF-16 surrogate (a lone \\ud800-\\udfff "
            "escape), which is not text; send valid Unicode")


def iter_jsonl(lines: Iterable[str], path: str | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for every data line."""
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            obj = loads(line, "the line")
        except NestingError as exc:
            raise FormatError(str(exc), line=number, path=path) from exc
        except json.JSONDecodeError as exc:
            raise FormatError(f"not valid JSON ({exc.msg} at column {exc.colno}); "
                              "each line must be one JSON object", line=number, path=path) from exc
        if not isinstance(obj, dict):
            raise FormatError("expected a JSON object ({...})", line=number, path=path)
        if _SURROGATE_ESCAPE.search(line) and (where := unpaired_surrogate(obj)) is not None:
            raise FormatError(surrogate_message(f"field '{where}'"), line=number, path=path)
        yield number, obj


def read_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Read a whole JSON Lines file; a non-UTF-8 file is a FormatError."""
    try:
        with open(path, encoding="utf-8") as fh:
            return list(iter_jsonl(fh, str(path)))
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 text (byte {exc.start}); save the file as UTF-8",
                          path=str(path)) from exc


_NOT_PRINTABLE = ("contains a control character, line break or invisible format character (bidi "
                  "control, zero-width space or joiner); remove it")


class Fields:
    """Typed access to one JSON object's fields, with errors naming line and field."""

    def __init__(self, obj: dict[str, Any], line: int, path: str | None) -> None:
        self.obj = obj
        self.line = line
        self.path = path

    def error(self, field: str | None, message: str) -> FormatError:
        return FormatError(message, line=self.line, field=field, path=self.path)

    def reject_unknown(self, allowed: set[str] | frozenset[str]) -> None:
        unknown = sorted(set(self.obj) - allowed)
        if unknown:
            raise self.error(unknown[0], f"unknown field; allowed fields are {sorted(allowed)}")

    def string(self, field: str, *, required: bool = True, max_len: int | None = None,
               allow_empty: bool = False, printable: bool = False) -> str | None:
        """The field's string. ``printable``: refuse control characters and line
        breaks (names and aliases, as the admin API does)."""
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
        if printable and not is_printable(value):
            raise self.error(field, _NOT_PRINTABLE)
        return value

    def string_list(self, field: str, *, max_len: int | None = None,
                    printable: bool = False) -> list[str]:
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
            if printable and not is_printable(item):
                raise self.error(f"{field}[{i}]", _NOT_PRINTABLE)
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
