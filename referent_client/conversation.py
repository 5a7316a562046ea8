"""What the framework retrievers share: one conversation's clients and the
metadata each evidence item carries into a framework's document type.

The LangChain and LlamaIndex retrievers differ only in the type they return; the
session, the lazily opened sync and async clients and their closing live here.

A conversation plays its turns one at a time, in the order they were called: a
turn is read against the turns before it, so two turns of one session sent at
once would be read against each other in whatever order the server got them.
Calls from several threads wait on a lock, and calls from several tasks of one
event loop on an asyncio lock that also waits for the thread lock.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
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


class TurnOrder:
    """One turn at a time: threads queue on a lock, tasks on an asyncio lock (one per
    event loop) and then take the thread lock without blocking the loop."""

    def __init__(self) -> None:
        self._thread = threading.Lock()
        self._tasks: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None

    @contextmanager
    def one_at_a_time(self) -> Iterator[None]:
        with self._thread:
            yield

    @asynccontextmanager
    async def one_at_a_time_async(self) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()
        if self._tasks is None or self._tasks[0] is not loop:
            self._tasks = (loop, asyncio.Lock())
        async with self._tasks[1]:
            while not self._thread.acquire(blocking=False):
                await asyncio.sleep(0.005)  # a sync turn of the same session is in flight
            try:
                yield
            finally:
                self._thread.release()


class Conversation:
    """The turns of one session of one kb, over clients opened on first use, played
    one at a time (:class:`TurnOrder`)."""

    def __init__(self, base_url: str | None, api_key: str | None, timeout: float) -> None:
        self._settings = (base_url, api_key, timeout)
        self._client: ReferentClient | None = None
        self._aclient: AsyncReferentClient | None = None
        self._order = TurnOrder()

    def turn(self, kb: str, session_id: str, text: str, k: int | None) -> TurnResult:
        with self._order.one_at_a_time():
            if self._client is None:
                url, key, timeout = self._settings
                self._client = ReferentClient(url, key, timeout=timeout)
            return self._client.turn(kb, session_id, text, k=k)

    async def aturn(self, kb: str, session_id: str, text: str, k: int | None) -> TurnResult:
        async with self._order.one_at_a_time_async():
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
