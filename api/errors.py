"""One error shape for every HTTP answer (RFC 9457 problem+json), mapped from
Referent's exception tree in one place."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from common.errors import (AliasConflictError, AuthenticationError, ConflictError,
                           DependencyError, FormatError, InputError, NotFoundError,
                           PermissionDeniedError, ReferencedError, ReferentError,
                           RetryableDependencyError)

PROBLEM = "application/problem+json"


def problem(status: int, title: str, detail: str, **extra) -> JSONResponse:
    headers = {"Retry-After": "5"} if status == 503 else None
    if status == 401:
        headers = {"WWW-Authenticate": "Bearer"}
    return JSONResponse({"type": "about:blank", "title": title, "status": status,
                         "detail": detail, **extra},
                        status_code=status, media_type=PROBLEM, headers=headers)


# Most specific first: NotFoundError is an InputError.
_STATUS: tuple[tuple[type[ReferentError], int, str], ...] = (
    (AuthenticationError, 401, "Unauthorized"),
    (PermissionDeniedError, 403, "Forbidden"),
    (NotFoundError, 404, "Not found"),
    (InputError, 422, "Invalid input"),
    (ConflictError, 409, "Conflict"),
    (DependencyError, 503, "Dependency unavailable"),
)


def _status(exc: ReferentError) -> tuple[int, str]:
    for kind, status, title in _STATUS:
        if isinstance(exc, kind):
            return status, title
    return 500, "Server misconfigured"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ReferentError)
    async def referent_error(_: Request, exc: ReferentError) -> JSONResponse:
        status, title = _status(exc)
        extra = {}
        if exc.field is not None:
            extra["field"] = exc.field
        if isinstance(exc, FormatError):
            extra = {"line": exc.line, "field": exc.field}
        if isinstance(exc, AliasConflictError):
            extra.update(alias=exc.alias, entity=exc.entity_id, conflicting=list(exc.other_ids))
        if isinstance(exc, ReferencedError):
            extra["references"] = exc.references
        if isinstance(exc, DependencyError) and exc.service:
            extra["dependency"] = exc.service
        if isinstance(exc, RetryableDependencyError):
            extra["retryable"] = True
        return problem(status, title, str(exc), **extra)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {}
        if first.get("type") == "json_invalid":
            where = (first.get("ctx") or {}).get("error", "")
            return problem(400, "Malformed JSON",
                           f"the request body is not valid JSON ({where}); send one JSON object "
                           "with content-type application/json", field="body")
        field = _field(first.get("loc", ()))
        return problem(422, "Invalid input", f"{field}: {first.get('msg', 'invalid')}",
                       field=field or None,
                       errors=[{"field": _field(e.get("loc", ())), "message": e.get("msg")}
                               for e in errors])


def _field(loc) -> str:
    """``("body", "aliases", 2)`` → ``aliases.2``; ``("query", "limit")`` → ``limit``."""
    parts = list(loc)
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    return ".".join(str(p) for p in parts)
