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

from referent_client.conversation import Conversation, answered, evidence_metadata
from referent_client.errors import ClarificationRequired
from referent_client.models import TurnResult

try:
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("the LlamaIndex retriever needs the 'llamaindex' extra: pip install "
                      "'referent-client[llamaindex]'") from exc

__all__ = ["ClarificationRequired", "ReferentRetriever", "nodes_of"]


def nodes_of(result: TurnResult) -> list[NodeWithScore]:
    """A turn's evidence as LlamaIndex nodes, or raise when the turn asked back."""
    return [NodeWithScore(score=e.score, node=TextNode(
        id_=e.chunk_id, text=e.text, metadata=evidence_metadata(result, e, score=False)))
        for e in answered(result).evidence]


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
        self._conversation = Conversation(base_url, api_key, timeout)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        self.last_result = self._conversation.turn(self.kb, self.session_id,
                                                   query_bundle.query_str, self.k)
        return nodes_of(self.last_result)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        self.last_result = await self._conversation.aturn(self.kb, self.session_id,
                                                          query_bundle.query_str, self.k)
        return nodes_of(self.last_result)

    def close(self) -> None:
        """Close the HTTP connections (the async one is closed by :meth:`aclose`)."""
        self._conversation.close()

    async def aclose(self) -> None:
        await self._conversation.aclose()
