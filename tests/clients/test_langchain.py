"""The LangChain retriever against a real API process: a three-turn conversation
with a clarification, synchronously and asynchronously."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("langchain_core", reason="the 'langchain' extra is not installed")

from langchain_core.documents import Document  # noqa: E402

from referent_client.langchain import ClarificationRequired, ReferentRetriever  # noqa: E402
from tests.conftest import QUERY_KEY  # noqa: E402

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]


def test_three_turns_with_a_clarification(demo_server):
    retriever = ReferentRetriever(kb=demo_server.kb, base_url=demo_server.url, api_key=QUERY_KEY)
    try:
        with pytest.raises(ClarificationRequired) as asked:
            retriever.invoke("A产品怎么申请")
        assert {o.id for o in asked.value.options} == {"prod.a.personal", "prod.a.enterprise"}
        assert "A产品" in asked.value.question and asked.value.result.turn == 1

        docs = retriever.invoke("个人版")
        assert docs and all(isinstance(d, Document) for d in docs)
        assert any(d.metadata["doc_id"] == "prod-a-personal-apply" for d in docs)
        first = docs[0]
        assert first.id == first.metadata["chunk_id"] and first.page_content
        assert first.metadata["standalone"] == "A产品（个人版）怎么申请"
        assert first.metadata["session_id"] == retriever.session_id

        follow_up = retriever.invoke("它怎么收费")
        assert follow_up and follow_up[0].metadata["turn"] == 3
        assert follow_up[0].metadata["entities"] == ["prod.a.personal"]
        assert "收费" in retriever.last_result.standalone
    finally:
        retriever.close()


def test_the_async_path_carries_its_own_session(demo_server):
    async def play() -> tuple[list[str], list[Document], list[Document]]:
        retriever = ReferentRetriever(kb=demo_server.kb, base_url=demo_server.url,
                                      api_key=QUERY_KEY, k=3)
        try:
            try:
                await retriever.ainvoke("A产品怎么申请")
            except ClarificationRequired as asked:
                options = [o.id for o in asked.options]
            else:
                raise AssertionError("the first turn should ask which A产品")
            chosen = await retriever.ainvoke("第一个")
            more = await retriever.ainvoke("多少钱")
            return options, chosen, more
        finally:
            await retriever.aclose()

    options, chosen, more = asyncio.run(play())
    assert chosen and {d.metadata["entities"][0] for d in chosen} == {options[0]}
    assert len(chosen) <= 3 and more and more[0].metadata["entities"] == [options[0]]


def test_a_question_the_kb_cannot_answer_is_an_empty_list_not_a_clarification(demo_server):
    retriever = ReferentRetriever(kb=demo_server.kb, base_url=demo_server.url, api_key=QUERY_KEY)
    try:
        assert retriever.invoke("火星上的天气怎么样") == []
        assert retriever.last_result.action == "no_answer"
    finally:
        retriever.close()


QUESTIONS = ["华东区7月的销售额是多少", "那华南区呢", "为什么涨这么多", "A产品企业版怎么收费",
             "它支持哪些功能", "华北区呢", "意外险不保哪些情况", "病假工资怎么算"]


def test_turns_called_at_once_on_one_session_are_played_in_the_order_called(demo_server):
    async def play() -> list[int]:
        retriever = ReferentRetriever(kb=demo_server.kb, base_url=demo_server.url,
                                      api_key=QUERY_KEY, k=1)
        try:
            numbers = []
            for docs in await asyncio.gather(*(retriever.ainvoke(t) for t in QUESTIONS),
                                             return_exceptions=True):
                if isinstance(docs, ClarificationRequired):
                    numbers.append(docs.result.turn)
                else:
                    assert not isinstance(docs, BaseException), docs
                    numbers.append(docs[0].metadata["turn"] if docs else None)
            return numbers
        finally:
            await retriever.aclose()

    # Tasks started in this order get the session's turns in this order.
    assert asyncio.run(play()) == list(range(1, len(QUESTIONS) + 1))


def test_threads_sharing_a_retriever_never_overlap_their_turns(demo_server):
    from concurrent.futures import ThreadPoolExecutor

    retriever = ReferentRetriever(kb=demo_server.kb, base_url=demo_server.url, api_key=QUERY_KEY)

    def turn(text: str) -> int:
        try:
            retriever.invoke(text)
        except ClarificationRequired as asked:
            return asked.result.turn
        return retriever.last_result.turn

    try:
        with ThreadPoolExecutor(8) as pool:
            numbers = list(pool.map(turn, QUESTIONS))
    finally:
        retriever.close()
    assert sorted(numbers) == list(range(1, len(QUESTIONS) + 1))


def test_batch_plays_each_question_in_a_session_of_its_own(demo_server):
    retriever = ReferentRetriever(kb=demo_server.kb, base_url=demo_server.url, api_key=QUERY_KEY)
    try:
        answers = retriever.batch(["华东区7月的销售额是多少", "华南区7月的销售额是多少",
                                   "A产品企业版怎么收费"])
        again = asyncio.run(retriever.abatch(["华东区7月的销售额是多少", "A产品企业版怎么收费"]))
    finally:
        retriever.close()
    for docs in answers + again:
        assert docs and docs[0].metadata["turn"] == 1
    sessions = {docs[0].metadata["session_id"] for docs in answers + again}
    assert len(sessions) == 5 and retriever.session_id not in sessions
    assert answers[1][0].metadata["entities"] == ["region.south"]
    # The retriever's own conversation was not touched.
    assert retriever.last_result is None
