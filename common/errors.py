"""Referent's exception tree.

Every error the domain packages raise derives from :class:`ReferentError`;
vendor errors (neo4j, pymilvus, redis, openai) are translated at the adapter
with ``raise ... from exc`` so callers never see a driver's exception type.
The API maps this tree onto HTTP status codes in one place (``api/errors.py``).

    ReferentError                     ``field``: the input field at fault, when there is one
    ├── InputError                    bad input from a user or a file (→ 422)
    │   ├── FormatError               a line of an interchange file does not fit docs/formats.md
    │   ├── InvalidIdError            an id or kb name outside its allowed pattern
    │   └── NotFoundError             a kb, entity, session or turn that does not exist (→ 404)
    ├── ConflictError                 a concurrent write or an alias clash (→ 409)
    │   ├── AliasConflictError        the alias already names another entity
    │   └── ReferencedError           a delete refused: other records still point at it
    ├── AccessError                   the caller may not do this
    │   ├── AuthenticationError       no API key or an unknown one (→ 401)
    │   ├── PermissionDeniedError     a valid key whose role does not allow it (→ 403)
    │   └── RateLimitedError          the key sent more requests than its rate allows (→ 429
    │                                 with Retry-After)
    ├── ConfigurationError            a setting is missing or wrong; says which one
    └── DependencyError               Neo4j, Milvus, Redis or the LLM failed (→ 503 with
        │                             Retry-After; ``service`` names which)
        └── RetryableDependencyError  transient: the same call may succeed later
"""

from __future__ import annotations


class ReferentError(Exception):
    """Root of every error Referent raises on purpose.

    Attributes:
        field: the input field at fault (``aliases[2]``, ``parent``), when one is;
            the API reports it beside the message.
    """

    def __init__(self, message: str = "", *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class InputError(ReferentError):
    """The caller sent something we cannot accept; the message says what to fix."""


class FormatError(InputError):
    """A line of an interchange file (docs/formats.md) is malformed.

    Attributes:
        path: the file, when known.
        line: 1-based line number in the file.
        field: the JSON field at fault, or None for the whole line.
    """

    def __init__(self, message: str, *, line: int | None = None, field: str | None = None,
                 path: str | None = None) -> None:
        self.line = line
        self.path = path
        where = []
        if path:
            where.append(str(path))
        if line is not None:
            where.append(f"line {line}")
        if field:
            where.append(f"field '{field}'")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message, field=field)
        self.reason = message


class InvalidIdError(InputError):
    """An identifier does not match its allowed pattern."""


class NotFoundError(InputError):
    """A referenced kb, entity, session or turn does not exist."""


class ConflictError(ReferentError):
    """A write lost a race or clashes with existing data; retry or change the request."""


class AliasConflictError(ConflictError):
    """An alias (compared by its normalized form) already names other entities.

    Attributes:
        alias: the alias as sent.
        entity_id: the entity it was to be added to.
        other_ids: the entities it already names.
    """

    def __init__(self, message: str, *, alias: str, entity_id: str, other_ids: tuple[str, ...],
                 field: str | None = "alias") -> None:
        super().__init__(message, field=field)
        self.alias = alias
        self.entity_id = entity_id
        self.other_ids = other_ids


class ReferencedError(ConflictError):
    """A delete was refused because other records refer to the target.

    Attributes:
        references: what refers to it, by kind (``children``, ``relations``, ...).
    """

    def __init__(self, message: str, *, references: dict[str, list]) -> None:
        super().__init__(message)
        self.references = references


class AccessError(ReferentError):
    """The caller is not allowed to do this."""


class AuthenticationError(AccessError):
    """No API key, or one that matches no configured key."""


class PermissionDeniedError(AccessError):
    """The API key is valid but its role does not allow this route."""


class RateLimitedError(AccessError):
    """The key sent more requests than its rate limit allows.

    Attributes:
        retry_after: seconds until the next request would be accepted.
    """

    def __init__(self, message: str, *, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ConfigurationError(ReferentError):
    """A setting is missing or invalid; the message names the setting."""


class DependencyError(ReferentError):
    """A backing service (Neo4j, Milvus, Redis, LLM endpoint) failed.

    Attributes:
        service: which one (``neo4j``, ``milvus``, ``redis``, ``sqlite``, ``llm``), when
            the adapter that translated the failure knows; the API names it in the 503.
    """

    def __init__(self, message: str = "", *, field: str | None = None,
                 service: str | None = None) -> None:
        super().__init__(message, field=field)
        self.service = service


class RetryableDependencyError(DependencyError):
    """A transient failure of a backing service; the same call may succeed later."""
