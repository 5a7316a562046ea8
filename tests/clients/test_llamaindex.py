"""The LlamaIndex retriever against a real API process: a three-turn conversation
with a clarification, synchronously and asynchronously."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("llama_index.core", reason="the 'llamaindex' extra is not installed")

from llama_index.core.schema import NodeWithScore  # noqa: E402

from referent_client.llamaindex import ClarificationRequired, ReferentRetriever  # noqa: E402
from tests.conftest import QUERY_KEY  # noqa: E402

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]


def test_three_turns_with_a_clarification(demo_server):
    retriever = ReferentRetriever(demo_server.kb, base_url=demo_server.url, api_key=QUERY_KEY)
    try:
        with pytest.raises(ClarificationRequired) as asked:
            retriever.retrieve("A产品怎么申请")
        assert {o.id for o in asked.value.options} == {"prod.a.personal", "prod.a.enterprise"}

        nodes = retriever.retrieve("个人版")
        assert nodes and all(isinstance(n, NodeWithScore) for n in nodes)
        assert any(n.node.metadata["doc_id"] == "prod-a-personal-apply" for n in nodes)
        first = nodes[0]
        assert first.node.node_id == first.node.metadata["chunk_id"] and first.node.get_content()
        assert first.score == retriever.last_result.evidence[0].score
        assert first.node.metadata["standalone"] == "A产品（个人版）怎么申请"

        follow_up = retriever.retrieve("它怎么收费")
        assert follow_up and follow_up[0].node.metadata["turn"] == 3
        assert follow_up[0].node.metadata["entities"] == ["prod.a.personal"]
    finally:
        retriever.close()


def test_the_async_path_carries_its_own_session(demo_server):
    async def play():
        retriever = ReferentRetriever(demo_server.kb, base_url=demo_server.url,
                                      api_key=QUERY_KEY, k=2)
        try:
            with pytest.raises(ClarificationRequired) as asked:
                await retriever.aretrieve("A产品怎么申请")
            chosen = await retriever.aretrieve("企业版")
            more = await retriever.aretrieve("多少钱")
            return asked.value, chosen, more
        finally:
            await retriever.aclose()

    asked, chosen, more = asyncio.run(play())
    assert "prod.a.enterprise" in asked.clarification.option_ids()
    assert chosen and len(chosen) <= 2
    assert {n.node.metadata["entities"][0] for n in chosen + more} == {"prod.a.enterprise"}


def test_turns_retrieved_at_once_are_played_in_the_order_called(demo_server):
    questions = ["华东区7月的销售额是多少", "那华南区呢", "为什么涨这么多", "华北区呢"]

    async def play() -> list[int | None]:
        retriever = ReferentRetriever(demo_server.kb, base_url=demo_server.url,
                                      api_key=QUERY_KEY, k=1)
        try:
            answers = await asyncio.gather(*(retriever.aretrieve(q) for q in questions),
                                           return_exceptions=True)
        finally:
            await retriever.aclose()
        numbers = []
        for nodes in answers:
            if isinstance(nodes, ClarificationRequired):
                numbers.append(nodes.result.turn)
            else:
                assert not isinstance(nodes, BaseException), nodes
                numbers.append(nodes[0].node.metadata["turn"] if nodes else None)
        return numbers

    assert asyncio.run(play()) == [1, 2, 3, 4]
