"""A LlamaIndex retriever backed by Referent (extra ``llamaindex``).

It carries one conversation: every query is a turn of ``session_id``. When the
server asks which entity was meant, :meth:`retrieve` raises
:class:`ClarificationRequired` (never an empty list): show its ``question``
and pass the user's answer ("个人版", "第二个") as the next query.

    retriever = ReferentRetriever(kb="demo")          # REFERENT_URL, REFERENT_KEY
    try:
        nodes = retriever.retrieve("A产品怎么申请")
    except ClarificationRequired as asked:
        print(asked.question)
        nodes = retriever.retrieve("个人版")

Each node is a ``TextNode`` whose id is the chunk id, with the chunk's doc id,
title and entities, and the turn's standalone query, in its metadata.
"""

from __future__ import annotations

import uuid
from typing import Any

from referent_client.client import AsyncReferentClient, ReferentClient
from referent_client.errors import ClarificationRequired
from referent_client.models import TurnResult

try:
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("the LlamaIndex retriever needs the 'llamaindex' extra: pip install "
                      "'referent-server[llamaindex]'") from exc

__all__ = ["ClarificationRequired", "ReferentRetriever", "nodes_of"]


def nodes_of(result: TurnResult) -> list[NodeWithScore]:
    """A turn's evidence as LlamaIndex nodes, or raise when the turn asked back."""
    if result.action == "clarify":
        raise ClarificationRequired(result)
    return [NodeWithScore(score=e.score, node=TextNode(id_=e.chunk_id, text=e.text, metadata={
        "chunk_id": e.chunk_id, "doc_id": e.doc_id, "title": e.title,
        "entity_ids": e.entity_ids, "query": e.query, "session_id": result.session,
        "turn": result.turn, "standalone": result.standalone, "entities": result.entities}))
        for e in result.evidence]


class ReferentRetriever(BaseRetriever):
    """Each query is the next user turn of one Referent session.

    Args:
        kb: the knowledge base.
        session_id: the conversation (a new random one by default).
        k: evidence items per turn (the server's default when None).
        base_url, api_key: the server and a query key (default: ``$REFERENT_URL``,
            ``$REFERENT_KEY``).
    """

    def __init__(self, kb: str, *, session_id: str | None = None, k: int | None = None,
                 base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 30.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.kb = kb
        self.session_id = session_id or uuid.uuid4().hex
        self.k = k
        self.last_result: TurnResult | None = None
        self._settings = (base_url, api_key, timeout)
        self._client: ReferentClient | None = None
        self._aclient: AsyncReferentClient | None = None

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if self._client is None:
            url, key, timeout = self._settings
            self._client = ReferentClient(url, key, timeout=timeout)
        self.last_result = self._client.turn(self.kb, self.session_id, query_bundle.query_str,
                                             k=self.k)
        return nodes_of(self.last_result)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if self._aclient is None:
            url, key, timeout = self._settings
            self._aclient = AsyncReferentClient(url, key, timeout=timeout)
        self.last_result = await self._aclient.turn(self.kb, self.session_id,
                                                    query_bundle.query_str, k=self.k)
        return nodes_of(self.last_result)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    async def aclose(self) -> None:
        self.close()
        if self._aclient is not None:
            await self._aclient.aclose()
            self._aclient = None
