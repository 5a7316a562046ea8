"""What every HTTP request goes through, as one plain ASGI middleware.

- **Request id** (asgi-correlation-id's middleware): a valid ``X-Request-ID``
  (1-128 characters from ``A-Z a-z 0-9 . _ : @ / + = -``) is kept, anything else
  is replaced by a fresh one; it is echoed on every response, put into problem
  bodies and into every log line of the request.
- **Body limit**: a body larger than the route's limit is refused with 413
  before it is read to the end (at once when ``Content-Length`` says so).
- **Access log and HTTP metrics**: one line and one observation per request,
  by route template.
- **HEAD**: a HEAD request is answered as the GET of the same path would be, with
  the same status and headers and no body (load balancers and ``curl -I`` use it).
- **Last resort**: an exception nothing else handled becomes a problem+json
  500 that names the request id (the traceback goes to the log, not to the
  caller).
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

from asgi_correlation_id import CorrelationIdMiddleware, correlation_id
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api import log as request_log
from api.errors import problem
from api.metrics import Metrics

REQUEST_ID_HEADER = "X-Request-ID"
REQUEST_ID_RE = re.compile(r"[A-Za-z0-9._:@/+=-]{1,128}")
_PATH_LOGGED = 512

access = logging.getLogger(request_log.ACCESS_LOGGER)
log = logging.getLogger(__name__)


def valid_request_id(presented: str) -> bool:
    """A caller's request id is kept when it is safe to echo and log."""
    return REQUEST_ID_RE.fullmatch(presented) is not None


@dataclass(frozen=True)
class BodyLimit:
    bytes: int
    setting: str  # the environment variable that changes it, for the 413's detail


class BodyTooLargeError(HTTPException):
    """413: the body is over the route's limit (handled like any HTTPException)."""

    def __init__(self, limit: BodyLimit, length: int | None) -> None:
        size = f"{length} bytes" if length is not None else f"more than {limit.bytes} bytes"
        super().__init__(413, f"the request body is {size}; this route takes at most "
                              f"{limit.bytes} bytes ({limit.setting})")


def route_template(scope: Scope) -> str | None:
    """The matched route's path template, or None when no route matched."""
    route = scope.get("route")
    return getattr(route, "path_format", None) or getattr(route, "path", None)


class RequestMiddleware:
    """Request ids, body limits, the access log, HTTP metrics and the last-resort 500.

    Args:
        metrics: where requests are counted.
        default_limit: the body limit of every route not in ``body_limits``.
        body_limits: route template → its own limit (the ontology import's).
    """

    def __init__(self, app: ASGIApp, *, metrics: Metrics, default_limit: BodyLimit,
                 body_limits: Mapping[str, BodyLimit] | None = None) -> None:
        self.app = app
        self._metrics = metrics
        self._default_limit = default_limit
        self._limits = dict(body_limits or {})
        # Outermost: the id is chosen before anything else runs, and echoed on every
        # answer, the last-resort 500 included.
        self._with_request_id = CorrelationIdMiddleware(
            self._handle, header_name=REQUEST_ID_HEADER, validator=valid_request_id,
            generator=lambda: uuid.uuid4().hex)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self._with_request_id(scope, receive, send)

    async def _handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        context = request_log.RequestContext(
            request_id=correlation_id.get() or uuid.uuid4().hex, method=scope["method"],
            path=scope["path"][:_PATH_LOGGED])
        token = request_log.bind(context)
        started = time.perf_counter()
        status = 500
        response_started = False

        async def send_tracked(message: Message) -> None:
            nonlocal status, response_started
            if message["type"] == "http.response.start":
                status = message["status"]
                response_started = True
            await send(message)

        if scope["method"] == "HEAD":
            scope, send_tracked = _as_get(scope, send_tracked)
        try:
            await self.app(scope, self._limited(scope, receive, headers), send_tracked)
        except Exception:  # the last resort: whatever nothing else handled
            log.exception("unhandled error")
            if response_started:
                raise
            response = problem(500, "Internal Server Error",
                               f"the server failed to answer; the log has the details under "
                               f"request id {context.request_id}")
            await response(scope, receive, send_tracked)
        finally:
            self._finish(scope, context, status, time.perf_counter() - started)
            request_log.unbind(token)

    def _limited(self, scope: Scope, receive: Receive, headers: Headers) -> Receive:
        """``receive`` that refuses a body over the matched route's limit.

        The limit is looked up on the first read, after routing, so each route can
        have its own."""
        limit: BodyLimit | None = None
        received = 0

        async def receive_limited() -> Message:
            nonlocal limit, received
            if limit is None:
                limit = self._limits.get(route_template(scope) or "", self._default_limit)
                length = _content_length(headers)
                if length is not None and length > limit.bytes:
                    raise BodyTooLargeError(limit, length)
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit.bytes:
                    raise BodyTooLargeError(limit, None)
            return message

        return receive_limited

    def _finish(self, scope: Scope, context: request_log.RequestContext, status: int,
                seconds: float) -> None:
        context.route = route_template(scope)
        params = scope.get("path_params") or {}
        context.kb = context.kb or params.get("kb")
        context.session = context.session or params.get("session_id")
        self._metrics.observe_request(context.route, context.method, status, seconds)
        access.info("%s %s %s", context.method, context.path, status,
                    extra={"status": status, "latency_ms": round(seconds * 1000, 2),
                           **context.extra})


def _as_get(scope: Scope, send: Send) -> tuple[Scope, Send]:
    """A HEAD request routed as its GET, whose body is not sent (headers, including
    ``Content-Length``, are those of the GET)."""

    async def headers_only(message: Message) -> None:
        if message["type"] == "http.response.body":
            if message.get("more_body", False):
                return
            message = {"type": "http.response.body", "body": b"", "more_body": False}
        await send(message)

    return {**scope, "method": "GET"}, headers_only


def _content_length(headers: Headers) -> int | None:
    try:
        return int(headers["content-length"])
    except (KeyError, ValueError):
        return None
