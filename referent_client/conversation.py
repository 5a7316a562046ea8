"""What the framework retrievers share: one conversation's clients and the
metadata each evidence item carries into a framework's document type.

The LangChain and LlamaIndex retrievers differ only in the type they return; the
session, the lazily opened sync and async clients and their closing live here.
"""

from __future__ import annotations

from typing import Any

from referent_client.client import AsyncReferentClient, ReferentClient
from referent_client.errors import ClarificationRequired
from referent_client.models import Evidence, TurnResult

__all__ = ["Conversation", "evidence_metadata", "answered"]


def answered(result: TurnResult) -> TurnResult:
    """The result itself, or raise :class:`ClarificationRequired` when the turn asked back."""
    if result.action == "clarify":
        raise ClarificationRequired(result)
    return result


def evidence_metadata(result: TurnResult, evidence: Evidence, *,
                      score: bool = True) -> dict[str, Any]:
    """The metadata a framework document gets for one evidence item of a turn
    (``score=False`` where the framework keeps the score beside the document)."""
    meta: dict[str, Any] = {
        "chunk_id": evidence.chunk_id, "doc_id": evidence.doc_id, "title": evidence.title,
        "entity_ids": evidence.entity_ids, "query": evidence.query,
        "session_id": result.session, "turn": result.turn,
        "standalone": result.standalone, "entities": result.entities}
    if score:
        meta["score"] = evidence.score
    return meta


class Conversation:
    """The turns of one session of one kb, over clients opened on first use."""

    def __init__(self, base_url: str | None, api_key: str | None, timeout: float) -> None:
        self._settings = (base_url, api_key, timeout)
        self._client: ReferentClient | None = None
        self._aclient: AsyncReferentClient | None = None

    def turn(self, kb: str, session_id: str, text: str, k: int | None) -> TurnResult:
        if self._client is None:
            url, key, timeout = self._settings
            self._client = ReferentClient(url, key, timeout=timeout)
        return self._client.turn(kb, session_id, text, k=k)

    async def aturn(self, kb: str, session_id: str, text: str, k: int | None) -> TurnResult:
        if self._aclient is None:
            url, key, timeout = self._settings
            self._aclient = AsyncReferentClient(url, key, timeout=timeout)
        return await self._aclient.turn(kb, session_id, text, k=k)

    def close(self) -> None:
        """Close the sync client's connections (the async one needs :meth:`aclose`)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    async def aclose(self) -> None:
        self.close()
        if self._aclient is not None:
            await self._aclient.aclose()
            self._aclient = None
