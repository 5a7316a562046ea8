"""One error shape for every HTTP answer (RFC 9457 problem+json), mapped from
Referent's exception tree in one place.

Every problem body carries ``title``, ``status``, ``detail`` (what to change)
and ``request_id`` (the one echoed in ``X-Request-ID``), plus ``field``,
``line`` and the like where they apply. Starlette's own answers (404 for an
unknown path, 405, 413 from the body limit) and unhandled errors (500, from
:mod:`api.middleware`) use the same shape.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from http import HTTPStatus

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import BaseRoute, Match

from api import log
from api.json_body import BodyNestingError
from api.turn_gate import TurnsSaturatedError
from common.errors import (AliasConflictError, AuthenticationError, ConflictError,
                           DependencyError, FormatError, InputError, NotFoundError,
                           PermissionDeniedError, RateLimitedError, ReferencedError,
                           ReferentError, RetryableDependencyError)
from common.jsonl import nesting_message

PROBLEM = "application/problem+json"


def problem(status: int, title: str, detail: str, *, headers: dict[str, str] | None = None,
            **extra) -> JSONResponse:
    headers = dict(headers or {})
    if status == 503:
        headers.setdefault("Retry-After", "5")
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    context = log.current()
    if context is not None:
        extra["request_id"] = context.request_id
    return JSONResponse({"type": "about:blank", "title": title, "status": status,
                         "detail": detail, **extra},
                        status_code=status, media_type=PROBLEM, headers=headers or None)


# Most specific first: NotFoundError is an InputError.
_STATUS: tuple[tuple[type[ReferentError], int, str], ...] = (
    (AuthenticationError, 401, "Unauthorized"),
    (PermissionDeniedError, 403, "Forbidden"),
    (RateLimitedError, 429, "Too many requests"),
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
    async def referent_error(request: Request, exc: ReferentError) -> JSONResponse:
        status, title = _status(exc)
        metrics = getattr(request.app.state, "metrics", None)
        if metrics is not None:
            metrics.observe_error(exc)
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
        headers = None
        if isinstance(exc, RateLimitedError):
            seconds = max(1, math.ceil(exc.retry_after))
            headers = {"Retry-After": str(seconds)}
            extra["retry_after"] = seconds
        return problem(status, title, str(exc), headers=headers, **extra)

    @app.exception_handler(TurnsSaturatedError)
    async def saturated(request: Request, exc: TurnsSaturatedError) -> JSONResponse:
        metrics = getattr(request.app.state, "metrics", None)
        if metrics is not None:
            metrics.observe_saturated()
        return problem(503, "Server busy", str(exc), headers={"Retry-After": "1"},
                       retry_after=1)

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
        return problem(422, "Invalid input",
                       f"{field}: {_message(first)}" if field else _message(first),
                       field=field or None,
                       errors=[{"field": _field(e.get("loc", ())), "message": _message(e)}
                               for e in errors])

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        status = exc.status_code
        phrase = HTTPStatus(status).phrase
        if isinstance(exc, BodyNestingError):
            return problem(400, "Malformed JSON", str(exc.detail), field="body")
        if status == 400 and exc.detail == _FASTAPI_BODY_ERROR:
            return _unreadable_body(exc)
        detail = exc.detail if isinstance(exc.detail, str) and exc.detail != phrase \
            else _HTTP_DETAILS.get(status, phrase)
        headers = dict(exc.headers or {})
        if status == 405:
            # Starlette names the methods of the first route whose path matched; a path
            # served by several routes (GET and POST declared apart) takes all of theirs.
            headers["Allow"] = ", ".join(allowed_methods(request))
        return problem(status, phrase, detail, headers=headers)


def allowed_methods(request: Request) -> list[str]:
    """Every method some route of the app takes on this request's path, sorted."""
    path = request.scope["path"]
    methods: set[str] = set()
    for prefix, route in _leaf_routes(request.app.router.routes):
        if not path.startswith(prefix):
            continue
        match, _ = route.matches({**request.scope, "path": path[len(prefix):]})
        if match is not Match.NONE:
            methods |= set(getattr(route, "methods", None) or ())
    return sorted(methods)


def _leaf_routes(routes, prefix: str = "") -> Iterator[tuple[str, BaseRoute]]:
    """The app's routes with the prefix they were included under. Newer FastAPI keeps
    an included router as one entry (``original_router``) instead of copying its routes."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is None:
            yield prefix, route
        else:
            context = getattr(route, "include_context", None)
            yield from _leaf_routes(inner.routes, prefix + (getattr(context, "prefix", "") or ""))


def _unreadable_body(exc: StarletteHTTPException) -> JSONResponse:
    """FastAPI's answer when the body could not be parsed at all: not text (invalid
    UTF-8), or JSON nested deeper than the parser can follow."""
    if isinstance(exc.__cause__, RecursionError):
        return problem(400, "Malformed JSON", nesting_message("the request body"),
                       field="body")
    return problem(400, "Malformed JSON", "the request body could not be read as JSON "
                   "(is it UTF-8?); send one JSON object with content-type application/json",
                   field="body")


_FASTAPI_BODY_ERROR = "There was an error parsing the body"
# Starlette's own details are one word ("Not Found"); these say what to do.
_HTTP_DETAILS = {
    404: "no route has this path; the API's routes are listed at /docs and /openapi.json",
    405: "this path does not take this method; the Allow header lists the ones it takes",
}


def _message(error: dict) -> str:
    # Pydantic prefixes our validators' messages with "Value error, ".
    return str(error.get("msg", "invalid")).removeprefix("Value error, ")


def _field(loc) -> str:
    """``("body", "aliases", 2)`` → ``aliases.2``; ``("query", "limit")`` → ``limit``."""
    parts = list(loc)
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    return ".".join(str(p) for p in parts)
