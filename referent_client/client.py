"""Sync and async clients of the Referent HTTP API (httpx).

Both send the API key, retry what is safe to retry and turn problem answers
into exceptions (:mod:`referent_client.errors`):

- 503 (a store is down: the server did not advance the session, nor write) and
  429 are retried after the answer's ``Retry-After`` (capped), else with
  exponential backoff and jitter;
- a connection that could not be made is retried for every call; one cut or
  timed out after the request went out only for calls that are safe to repeat:
  reads, deletes, and turns, which carry an ``Idempotency-Key`` that stays the
  same across the retries of one turn;
- every other problem raises at once.

The retry loop is tenacity's (``Retrying``, ``AsyncRetrying``), configured once for
both clients; what to retry and how long to wait are decided here.

Every call names its operation by the server's ``operationId``
(:data:`OPERATIONS`); a test checks each one against the server's OpenAPI document.
"""

from __future__ import annotations

import email.utils
import os
import random
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from tenacity import AsyncRetrying, RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from referent_client.errors import ReferentConnectionError, ReferentError, error_for
from referent_client.models import AliasSearch, ImportReport, TurnResult

__all__ = ["OPERATIONS", "AsyncReferentClient", "Operation", "ReferentClient", "RetryPolicy"]

VERSION = "0.1.0"
IDEMPOTENCY_HEADER = "Idempotency-Key"
#: The environment the client and its integrations read (not server settings, which the
#: server ignores): the server, a query key, an admin key (the MCP server's alias search),
#: and the kb the README's examples use.
CLIENT_ENV = ("REFERENT_URL", "REFERENT_KEY", "REFERENT_ADMIN_KEY", "REFERENT_KB")


@dataclass(frozen=True)
class Operation:
    """One route of the API, as the OpenAPI document names it."""

    id: str
    method: str
    path: str

    def url(self, **params: Any) -> str:
        return self.path.format(**{k: quote(str(v), safe="") for k, v in params.items()})


OPERATIONS: dict[str, Operation] = {op.id: op for op in (
    Operation("playTurn", "POST", "/v1/kbs/{kb}/sessions/{session_id}/turns"),
    Operation("deleteSession", "DELETE", "/v1/kbs/{kb}/sessions/{session_id}"),
    Operation("getTrace", "GET", "/v1/kbs/{kb}/sessions/{session_id}/turns/{turn}/trace"),
    Operation("searchAliases", "GET", "/v1/kbs/{kb}/admin/search"),
    Operation("importOntology", "POST", "/v1/kbs/{kb}/admin/import"),
    Operation("exportOntology", "GET", "/v1/kbs/{kb}/admin/export"),
    Operation("getFormatSchema", "GET", "/v1/schemas/{name}"),
    Operation("getHealth", "GET", "/healthz"),
)}


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry.

    Attributes:
        attempts: tries in all, the first included (1: never retry).
        backoff: the first wait in seconds; doubled at each retry, with jitter.
        max_backoff: the longest computed wait.
        max_retry_after: the longest wait a ``Retry-After`` header may ask for.
    """

    attempts: int = 4
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 30.0

    def delay(self, retry: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        base = min(self.max_backoff, self.backoff * (2 ** retry))
        return base * (0.5 + random.random() / 2)


_RETRY_STATUSES = {429, 503}
# Methods a retry after a cut connection cannot make happen twice.
_IDEMPOTENT = {"GET", "HEAD", "PUT", "DELETE", "OPTIONS"}


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _problem(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        return body
    return {"title": response.reason_phrase or "Error", "status": response.status_code,
            "detail": response.text[:500]}


class _RetryableAnswer(Exception):
    """A 429 or 503 answer, raised inside the retry loop so that it is retried."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__(response.status_code)
        self.response = response


def _error(response: httpx.Response) -> ReferentError:
    return error_for(response.status_code, _problem(response),
                     request_id=response.headers.get("X-Request-ID"),
                     retry_after=_retry_after(response))


class _Base:
    """What the sync and async clients share: settings, requests, decisions."""

    def __init__(self, base_url: str | None, api_key: str | None, *, timeout: float,
                 retry: RetryPolicy | None, headers: Mapping[str, str] | None) -> None:
        base_url = base_url or os.environ.get("REFERENT_URL")
        if not base_url:
            raise ReferentError("no server URL: pass base_url or set REFERENT_URL "
                                "(e.g. http://127.0.0.1:8000)")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("REFERENT_KEY")
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.headers = {"User-Agent": f"referent-client/{VERSION}", **(headers or {})}
        if self.api_key:
            self.headers["Authorization"] = f"Bearer {self.api_key}"

    def _plan(self, op_id: str, path: Mapping[str, Any], headers: Mapping[str, str] | None
              ) -> tuple[Operation, str, dict[str, str]]:
        op = OPERATIONS[op_id]
        return op, op.url(**path), dict(headers or {})

    def _retrying(self, cls: type[Retrying] | type[AsyncRetrying], repeatable: bool):
        """tenacity's loop: 429 and 503 answers, unsent requests, and requests cut after
        sending when repeating them is safe; waits from :meth:`RetryPolicy.delay`."""
        def retryable(exc: BaseException) -> bool:
            if isinstance(exc, _RetryableAnswer):
                return True
            unsent = isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout))
            return isinstance(exc, httpx.TransportError) and (unsent or repeatable)

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            retry_after = _retry_after(exc.response) if isinstance(exc, _RetryableAnswer) else None
            return self.retry.delay(state.attempt_number - 1, retry_after)

        return cls(stop=stop_after_attempt(self.retry.attempts), wait=wait,
                   retry=retry_if_exception(retryable), reraise=True)

    @staticmethod
    def _answer(response: httpx.Response) -> httpx.Response:
        """The response when it is an answer; raises to retry a 429 or 503, or the
        problem's exception."""
        if response.status_code < 400:
            return response
        if response.status_code in _RETRY_STATUSES:
            raise _RetryableAnswer(response)
        raise _error(response)

    def _failure(self, op: Operation, exc: Exception) -> ReferentError:
        """The exception a call raises once its retries are spent."""
        if isinstance(exc, _RetryableAnswer):
            return _error(exc.response)
        return ReferentConnectionError(f"{op.method} {self.base_url}{op.path}: "
                                       f"{type(exc).__name__}: {exc}")

    @staticmethod
    def _turn_body(text: str, k: int | None) -> dict[str, Any]:
        return {"text": text} if k is None else {"text": text, "k": k}

    @staticmethod
    def _ontology_bytes(data: str | bytes | Path) -> bytes:
        if isinstance(data, Path):
            return data.read_bytes()
        return data.encode("utf-8") if isinstance(data, str) else data


class ReferentClient(_Base):
    """A blocking client. Use it as a context manager, or call :meth:`close`.

    Args:
        base_url: the server, e.g. ``http://127.0.0.1:8000`` (default: ``$REFERENT_URL``).
        api_key: a query key for turns, an admin key for the admin calls
            (default: ``$REFERENT_KEY``).
        timeout: seconds per request.
        retry: how often and how long to retry (:class:`RetryPolicy`).
        headers: sent with every request.
        transport: an httpx transport (tests, proxies).
    """

    def __init__(self, base_url: str | None = None, api_key: str | None = None, *,
                 timeout: float = 30.0, retry: RetryPolicy | None = None,
                 headers: Mapping[str, str] | None = None,
                 transport: httpx.BaseTransport | None = None) -> None:
        super().__init__(base_url, api_key, timeout=timeout, retry=retry, headers=headers)
        self._http = httpx.Client(base_url=self.base_url, headers=self.headers, timeout=timeout,
                                  transport=transport)

    def __enter__(self) -> ReferentClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _call(self, op_id: str, path: Mapping[str, Any] | None = None, *,
              headers: Mapping[str, str] | None = None, **kwargs: Any) -> httpx.Response:
        op, url, extra = self._plan(op_id, path or {}, headers)
        repeatable = op.method in _IDEMPOTENT or IDEMPOTENCY_HEADER in extra
        try:
            for attempt in self._retrying(Retrying, repeatable):
                with attempt:
                    return self._answer(self._http.request(op.method, url, headers=extra,
                                                           **kwargs))
        except (_RetryableAnswer, httpx.TransportError) as exc:
            raise self._failure(op, exc) from exc
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    def turn(self, kb: str, session_id: str, text: str, *, k: int | None = None,
             idempotency_key: str | None = None) -> TurnResult:
        """Send one user turn of a session (``playTurn``).

        The ``Idempotency-Key`` (a new one per call unless given) is sent with every
        retry of this turn, so a retry after a cut connection is the same turn.
        """
        key = idempotency_key or uuid.uuid4().hex
        response = self._call("playTurn", {"kb": kb, "session_id": session_id},
                              json=self._turn_body(text, k), headers={IDEMPOTENCY_HEADER: key})
        return TurnResult.model_validate(response.json())

    def delete_session(self, kb: str, session_id: str) -> None:
        """Forget a session (``deleteSession``); a session that does not exist is fine."""
        self._call("deleteSession", {"kb": kb, "session_id": session_id})

    def trace(self, kb: str, session_id: str, turn: int) -> dict[str, Any]:
        """What each stage of one recent turn saw and decided (``getTrace``)."""
        return self._call("getTrace", {"kb": kb, "session_id": session_id,
                                       "turn": turn}).json()

    def search_aliases(self, kb: str, query: str, *, mode: str = "fuzzy",
                       limit: int = 20) -> AliasSearch:
        """Entities whose aliases match ``query`` (``searchAliases``; admin key)."""
        response = self._call("searchAliases", {"kb": kb},
                              params={"q": query, "mode": mode, "limit": limit})
        return AliasSearch.model_validate(response.json())

    def import_ontology(self, kb: str, data: str | bytes | Path, *,
                        dry_run: bool = False) -> ImportReport:
        """Import an ontology file (``importOntology``; admin key): all of it, or
        nothing and an :class:`~referent_client.errors.InvalidInputError` naming the line."""
        response = self._call("importOntology", {"kb": kb}, params={"dry_run": dry_run},
                              content=self._ontology_bytes(data),
                              headers={"Content-Type": "application/x-ndjson"})
        return ImportReport.model_validate(response.json())

    def export_ontology(self, kb: str) -> str:
        """The kb's ontology in the import format (``exportOntology``; admin key)."""
        return self._call("exportOntology", {"kb": kb}).text

    def format_schema(self, name: str) -> dict[str, Any]:
        """The JSON Schema of one line of ``ontology``, ``corpus``, ``suite`` or
        ``results`` files (``getFormatSchema``)."""
        return self._call("getFormatSchema", {"name": name}).json()

    def health(self) -> dict[str, Any]:
        """Liveness (``getHealth``): ``{"status": "ok"}`` while the server answers."""
        return self._call("getHealth").json()


class AsyncReferentClient(_Base):
    """The same calls as :class:`ReferentClient`, awaitable (``async with`` it)."""

    def __init__(self, base_url: str | None = None, api_key: str | None = None, *,
                 timeout: float = 30.0, retry: RetryPolicy | None = None,
                 headers: Mapping[str, str] | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        super().__init__(base_url, api_key, timeout=timeout, retry=retry, headers=headers)
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=self.headers,
                                       timeout=timeout, transport=transport)

    async def __aenter__(self) -> AsyncReferentClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _call(self, op_id: str, path: Mapping[str, Any] | None = None, *,
                    headers: Mapping[str, str] | None = None, **kwargs: Any) -> httpx.Response:
        op, url, extra = self._plan(op_id, path or {}, headers)
        repeatable = op.method in _IDEMPOTENT or IDEMPOTENCY_HEADER in extra
        try:
            async for attempt in self._retrying(AsyncRetrying, repeatable):
                with attempt:
                    return self._answer(await self._http.request(op.method, url, headers=extra,
                                                                 **kwargs))
        except (_RetryableAnswer, httpx.TransportError) as exc:
            raise self._failure(op, exc) from exc
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    async def turn(self, kb: str, session_id: str, text: str, *, k: int | None = None,
                   idempotency_key: str | None = None) -> TurnResult:
        """See :meth:`ReferentClient.turn`."""
        key = idempotency_key or uuid.uuid4().hex
        response = await self._call("playTurn", {"kb": kb, "session_id": session_id},
                                    json=self._turn_body(text, k),
                                    headers={IDEMPOTENCY_HEADER: key})
        return TurnResult.model_validate(response.json())

    async def delete_session(self, kb: str, session_id: str) -> None:
        await self._call("deleteSession", {"kb": kb, "session_id": session_id})

    async def trace(self, kb: str, session_id: str, turn: int) -> dict[str, Any]:
        return (await self._call("getTrace", {"kb": kb, "session_id": session_id,
                                              "turn": turn})).json()

    async def search_aliases(self, kb: str, query: str, *, mode: str = "fuzzy",
                             limit: int = 20) -> AliasSearch:
        response = await self._call("searchAliases", {"kb": kb},
                                    params={"q": query, "mode": mode, "limit": limit})
        return AliasSearch.model_validate(response.json())

    async def import_ontology(self, kb: str, data: str | bytes | Path, *,
                              dry_run: bool = False) -> ImportReport:
        response = await self._call("importOntology", {"kb": kb}, params={"dry_run": dry_run},
                                    content=self._ontology_bytes(data),
                                    headers={"Content-Type": "application/x-ndjson"})
        return ImportReport.model_validate(response.json())

    async def export_ontology(self, kb: str) -> str:
        return (await self._call("exportOntology", {"kb": kb})).text

    async def format_schema(self, name: str) -> dict[str, Any]:
        return (await self._call("getFormatSchema", {"name": name})).json()

    async def health(self) -> dict[str, Any]:
        return (await self._call("getHealth")).json()

