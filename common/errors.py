"""Referent's exception tree.

Every error the domain packages raise derives from :class:`ReferentError`;
vendor errors (neo4j, pymilvus, redis, openai) are translated at the adapter
with ``raise ... from exc`` so callers never see a driver's exception type.
The API maps this tree onto HTTP status codes in one place (``api/errors.py``).

    ReferentError
    ├── InputError                    bad input from a user or a file (→ 4xx)
    │   ├── FormatError               a line of an interchange file does not fit FORMATS.md
    │   ├── InvalidIdError            an id or kb name outside its allowed pattern
    │   └── NotFoundError             a kb, entity, session or turn that does not exist
    ├── ConflictError                 a concurrent write or an alias clash (→ 409)
    ├── ConfigurationError            a setting is missing or wrong; says which one
    └── DependencyError               Neo4j, Milvus, Redis or the LLM failed (→ 503)
        └── RetryableDependencyError  transient: the same call may succeed later
"""

from __future__ import annotations


class ReferentError(Exception):
    """Root of every error Referent raises on purpose."""


class InputError(ReferentError):
    """The caller sent something we cannot accept; the message says what to fix."""


class FormatError(InputError):
    """A line of an interchange file (FORMATS.md) is malformed.

    Attributes:
        path: the file, when known.
        line: 1-based line number in the file.
        field: the JSON field at fault, or None for the whole line.
    """

    def __init__(self, message: str, *, line: int | None = None, field: str | None = None,
                 path: str | None = None) -> None:
        self.line = line
        self.field = field
        self.path = path
        where = []
        if path:
            where.append(str(path))
        if line is not None:
            where.append(f"line {line}")
        if field:
            where.append(f"field '{field}'")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)
        self.reason = message


class InvalidIdError(InputError):
    """An identifier does not match its allowed pattern."""


class NotFoundError(InputError):
    """A referenced kb, entity, session or turn does not exist."""


class ConflictError(ReferentError):
    """A write lost a race or clashes with existing data; retry or change the request."""


class ConfigurationError(ReferentError):
    """A setting is missing or invalid; the message names the setting."""


class DependencyError(ReferentError):
    """A backing service (Neo4j, Milvus, Redis, LLM endpoint) failed."""


class RetryableDependencyError(DependencyError):
    """A transient failure of a backing service; the same call may succeed later."""
