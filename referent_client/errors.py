"""The client's exceptions: one root, a branch per kind of failure.

    ReferentError                    anything this client raises on purpose
    ├── ReferentConnectionError      the server could not be reached (after the retries)
    ├── ClarificationRequired        a retriever's turn asked which entity was meant:
    │                                show ``question``, send the answer as the next turn
    └── APIError                     the server answered a problem (application/problem+json):
        │                            ``status``, ``title``, ``detail``, ``field``, ``line``,
        │                            ``request_id``, ``retryable`` and the whole ``problem``
        ├── ClientError              4xx: change the request (``detail`` says how)
        │   ├── BadRequestError          400 malformed JSON
        │   ├── AuthenticationError      401 no key, or not a valid one
        │   ├── PermissionDeniedError    403 a query key on an admin route
        │   ├── NotFoundError            404 unknown kb, entity, session turn or path
        │   ├── ConflictError            409 clashes with what exists, or a session raced
        │   ├── PayloadTooLargeError     413 over the body limit
        │   ├── InvalidInputError        422 a field is invalid (``field`` names it)
        │   └── RateLimitedError         429 (after the retries)
        └── ServerError              5xx
            └── ServiceUnavailableError  503 a store is down (after the retries);
                                         ``retry_after`` and ``dependency``
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from referent_client.models import Clarification, TurnResult


class ReferentError(Exception):
    """Root of every error the client raises on purpose."""


class ReferentConnectionError(ReferentError):
    """The server did not answer: refused, timed out or cut (after the retries)."""


class ClarificationRequired(ReferentError):
    """A turn asked the user which entity they meant instead of retrieving.

    Show ``question`` (or the ``options``) to the user and send their answer as the
    next query of the same session (the retriever keeps it); ``result`` is the turn.
    """

    def __init__(self, result: TurnResult) -> None:
        assert result.clarification is not None
        self.result = result
        self.clarification: Clarification = result.clarification
        self.question = result.clarification.question
        self.options = result.clarification.options
        super().__init__(self.question)


class APIError(ReferentError):
    """The server answered with a problem (RFC 9457)."""

    def __init__(self, status: int, problem: dict[str, Any], *, request_id: str | None = None,
                 retry_after: float | None = None) -> None:
        self.status = status
        self.problem = problem
        self.title: str = str(problem.get("title") or "")
        self.detail: str = str(problem.get("detail") or "")
        self.field: str | None = problem.get("field")
        self.line: int | None = problem.get("line")
        self.request_id: str | None = problem.get("request_id") or request_id
        self.retry_after = retry_after
        #: True for 429 and 503: the same call may succeed later (the client already
        #: retried it ``RetryPolicy.attempts`` times).
        self.retryable = status in (429, 503)
        where = f" (field '{self.field}')" if self.field else ""
        super().__init__(f"{status} {self.title}: {self.detail}{where}"
                         + (f" [request {self.request_id}]" if self.request_id else ""))


class ClientError(APIError):
    """4xx: the request must change; ``detail`` says how."""


class BadRequestError(ClientError):
    pass


class AuthenticationError(ClientError):
    pass


class PermissionDeniedError(ClientError):
    pass


class NotFoundError(ClientError):
    pass


class ConflictError(ClientError):
    pass


class PayloadTooLargeError(ClientError):
    pass


class InvalidInputError(ClientError):
    pass


class RateLimitedError(ClientError):
    pass


class ServerError(APIError):
    """5xx: the server failed; ``request_id`` finds it in the server's log."""


class ServiceUnavailableError(ServerError):
    """503: a store the server needs is down; the turn's session was not advanced."""

    @property
    def dependency(self) -> str | None:
        return self.problem.get("dependency")


_BY_STATUS: dict[int, type[APIError]] = {
    400: BadRequestError, 401: AuthenticationError, 403: PermissionDeniedError,
    404: NotFoundError, 409: ConflictError, 413: PayloadTooLargeError,
    422: InvalidInputError, 429: RateLimitedError, 503: ServiceUnavailableError}


def error_for(status: int, problem: dict[str, Any], *, request_id: str | None = None,
              retry_after: float | None = None) -> APIError:
    """The exception for a problem answer of ``status``."""
    cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else ClientError)
    return cls(status, problem, request_id=request_id, retry_after=retry_after)
