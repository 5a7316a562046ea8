"""A Python client of the Referent API, and integrations built on it.

- :class:`ReferentClient` / :class:`AsyncReferentClient`: typed calls with retries
  and problem answers as exceptions (:mod:`referent_client.errors`);
- :mod:`referent_client.langchain`: a LangChain retriever (extra ``langchain``);
- :mod:`referent_client.llamaindex`: a LlamaIndex retriever (extra ``llamaindex``);
- :mod:`referent_client.mcp_server`: an MCP server, ``referent-mcp`` (extra ``mcp``).

Nothing here is imported by the server, and the integrations import their
frameworks only when used.
"""

from referent_client.client import (OPERATIONS, AsyncReferentClient, Operation, ReferentClient,
                                    RetryPolicy)
from referent_client.errors import (APIError, AuthenticationError, BadRequestError,
                                    ClarificationRequired, ClientError, ConflictError,
                                    InvalidInputError, NotFoundError, PayloadTooLargeError,
                                    PermissionDeniedError, RateLimitedError,
                                    ReferentConnectionError, ReferentError, ServerError,
                                    ServiceUnavailableError)
from referent_client.models import (AliasHit, AliasSearch, Clarification, ClarifyOption, Evidence,
                                    ImportReport, RewriteInfo, TurnResult)

__all__ = [
    "OPERATIONS", "APIError", "AliasHit", "AliasSearch", "AsyncReferentClient",
    "AuthenticationError", "BadRequestError", "Clarification", "ClarificationRequired",
    "ClarifyOption", "ClientError", "ConflictError", "Evidence", "ImportReport",
    "InvalidInputError", "NotFoundError", "Operation", "PayloadTooLargeError",
    "PermissionDeniedError", "RateLimitedError", "ReferentClient", "ReferentConnectionError",
    "ReferentError", "RetryPolicy", "RewriteInfo", "ServerError", "ServiceUnavailableError",
    "TurnResult",
]
