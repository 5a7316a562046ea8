"""A LangChain retriever backed by Referent (extra ``langchain``).

It carries one conversation: every query is a turn of ``session_id``, so "那华南区呢"
after "华东区7月的销售额是多少" searches for 华南区 in July. When the server asks
which entity was meant, the retriever raises :class:`ClarificationRequired`
(never an empty list): show its ``question`` to the user and pass their answer
("个人版", "第二个") as the next query; that turn returns the documents of the
original question.

    retriever = ReferentRetriever(kb="demo")          # REFERENT_URL, REFERENT_KEY
    try:
        docs = retriever.invoke("A产品怎么申请")
    except ClarificationRequired as asked:
        print(asked.question)                          # 您说的“A产品”指的是哪一个？…
        docs = retriever.invoke("个人版")

A query the kb has nothing good for returns ``[]`` (``last_result.action`` is
``no_answer``).

Turns of the retriever's session are played one at a time, in the order they were
called, even when called from several threads or tasks. ``batch()`` and
``abatch()`` take independent questions: each is played in a fresh session of its
own, in parallel, and the retriever's own session is left as it was.
"""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import Field, PrivateAttr, SecretStr

from referent_client.conversation import Conversation, answered, evidence_metadata
from referent_client.errors import ClarificationRequired
from referent_client.models import TurnResult

try:
    from langchain_core.callbacks import (AsyncCallbackManagerForRetrieverRun,
                                          CallbackManagerForRetrieverRun)
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import RunnableConfig, RunnableLambda
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("the LangChain retriever needs the 'langchain' extra: pip install "
                      "'referent-client[langchain]'") from exc

__all__ = ["ClarificationRequired", "ReferentRetriever", "documents_of"]


def documents_of(result: TurnResult) -> list[Document]:
    """A turn's evidence as LangChain documents, or raise when the turn asked back."""
    return [Document(id=e.chunk_id, page_content=e.text, metadata=evidence_metadata(result, e))
            for e in answered(result).evidence]


class ReferentRetriever(BaseRetriever):
    """Each query is the next user turn of one Referent session.

    Attributes:
        kb: the knowledge base.
        session_id: the conversation (a new random one by default); set another to
            start or continue a different conversation.
        k: evidence items per turn (the server's default when None).
        base_url, api_key: the server and a query key (default: ``$REFERENT_URL``,
            ``$REFERENT_KEY``).
        last_result: the last turn's whole result (action, standalone query, trace).
    """

    kb: str
    session_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    k: int | None = None
    base_url: str | None = None
    api_key: SecretStr | None = None
    timeout: float = 30.0
    last_result: TurnResult | None = None
    _conversation: Conversation | None = PrivateAttr(default=None)

    def _turns(self) -> Conversation:
        if self._conversation is None:
            key = self.api_key.get_secret_value() if self.api_key is not None else None
            self._conversation = Conversation(self.base_url, key, self.timeout)
        return self._conversation

    def _get_relevant_documents(self, query: str, *,
                                run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        self.last_result = self._turns().turn(self.kb, self.session_id, query, self.k)
        return documents_of(self.last_result)

    async def _aget_relevant_documents(
            self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        self.last_result = await self._turns().aturn(self.kb, self.session_id, query, self.k)
        return documents_of(self.last_result)

    def _alone(self) -> ReferentRetriever:
        """A retriever like this one, in a fresh session, with clients of its own."""
        return self.model_copy(update={"session_id": uuid.uuid4().hex, "last_result": None})

    def _each_alone(self, count: int) -> tuple[list[ReferentRetriever], RunnableLambda]:
        copies = [self._alone() for _ in range(count)]
        for copy in copies:
            copy._conversation = None  # noqa: SLF001 - its own clients and turn order

        def one(pair: tuple[int, str], config: RunnableConfig) -> list[Document]:
            return copies[pair[0]].invoke(pair[1], config)

        async def aone(pair: tuple[int, str], config: RunnableConfig) -> list[Document]:
            return await copies[pair[0]].ainvoke(pair[1], config)

        return copies, RunnableLambda(one, afunc=aone, name="ReferentRetriever.batch")

    def batch(self, inputs: list[str], config: RunnableConfig | list[RunnableConfig] | None = None,
              *, return_exceptions: bool = False, **kwargs: Any) -> list[list[Document]]:
        """Independent questions in parallel, each in a fresh session of its own (played
        as turns of one session they would be read against each other, in no set order)."""
        copies, each = self._each_alone(len(inputs))
        try:
            return each.batch(list(enumerate(inputs)), config, return_exceptions=return_exceptions,
                              **kwargs)
        finally:
            for copy in copies:
                copy.close()

    async def abatch(self, inputs: list[str],
                     config: RunnableConfig | list[RunnableConfig] | None = None, *,
                     return_exceptions: bool = False, **kwargs: Any) -> list[list[Document]]:
        """See :meth:`batch`."""
        copies, each = self._each_alone(len(inputs))
        try:
            return await each.abatch(list(enumerate(inputs)), config,
                                     return_exceptions=return_exceptions, **kwargs)
        finally:
            for copy in copies:
                await copy.aclose()

    def close(self) -> None:
        """Close the HTTP connections (the async one is closed by :meth:`aclose`)."""
        if self._conversation is not None:
            self._conversation.close()

    async def aclose(self) -> None:
        if self._conversation is not None:
            await self._conversation.aclose()

    def __del__(self) -> Any:  # best effort; an explicit close() is better
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
