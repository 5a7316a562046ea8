"""The pinned Milvus Lite must answer filtered searches exactly.

Entity filtering is how a resolved turn ("那华南区呢") stays on its entity, and
the tagged chunks are a small fraction of a kb. milvus-lite 3.x filtered after
an approximate candidate search: asked for the 5 nearest rows tagged "E7", it
returned 2 rows, not the right ones. 2.5.1 is pinned because it is exact;
these tests fail if an upgrade brings the approximate behaviour back.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import numpy as np
import pytest
from pymilvus import DataType, MilvusClient

from retrieval.milvus_index import MilvusIndex
from retrieval.models import Chunk

pytestmark = pytest.mark.milvus

ROWS = 5000
DIM = 32
TAG = "E7"


@pytest.fixture(scope="module")
def uri(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("milvus-exact") / "exact.db")


@pytest.fixture(scope="module")
def tagged_vectors(uri: str) -> Iterator[tuple[MilvusClient, str, np.ndarray, np.ndarray]]:
    """A dense collection of seeded random vectors, about 1.5% of rows tagged TAG."""
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((ROWS, DIM)).astype(np.float32)
    tagged = rng.random(ROWS) < 0.015
    client = MilvusClient(uri)
    name = "exact_dense"
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=DIM)
    schema.add_field("entities", DataType.ARRAY, element_type=DataType.VARCHAR,
                     max_capacity=4, max_length=16)
    index_params = client.prepare_index_params()
    index_params.add_index(field_name="vector", index_type="FLAT", metric_type="L2")
    client.create_collection(name, schema=schema, index_params=index_params,
                             consistency_level="Strong")
    rows = [{"id": i, "vector": vectors[i].tolist(),
             "entities": [TAG, "E1"] if tagged[i] else [f"E{i % 5 + 1}"]} for i in range(ROWS)]
    for start in range(0, ROWS, 1000):
        client.insert(name, rows[start:start + 1000])
    yield client, name, vectors, tagged
    client.drop_collection(name)
    client.close()


def test_filtered_dense_search_is_exact(
        tagged_vectors: tuple[MilvusClient, str, np.ndarray, np.ndarray]) -> None:
    client, name, vectors, tagged = tagged_vectors
    assert 40 <= tagged.sum() <= 110
    rng = np.random.default_rng(11)

    for query in rng.standard_normal((5, DIM)).astype(np.float32):
        result = client.search(name, data=[query.tolist()], anns_field="vector", limit=5,
                               filter=f'array_contains(entities, "{TAG}")',
                               search_params={"metric_type": "L2"})[0]

        distances = ((vectors - query) ** 2).sum(axis=1)
        candidates = np.flatnonzero(tagged)
        expected = candidates[np.argsort(distances[candidates])[:5]]
        assert [hit["id"] for hit in result] == expected.tolist()
        np.testing.assert_allclose([hit["distance"] for hit in result], distances[expected],
                                   rtol=1e-4)


VOCABULARY = (
    "华东区 华南区 华北区 西南区 销售额 利润 毛利 产品 系列 产品线 意外险 综合意外险 医疗险 重疾险 "
    "条款 理赔 住院 门诊 津贴 等待期 保费 保额 门店 渠道 客户 会员 增长 下降 持平 季度 年度 预算 "
    "成本 库存 退货 运费 工资 病假 年假 合同 续保 免赔额 上海 杭州 深圳 广州 北京 成都 目标 完成率 "
    "同比 环比 报告 说明").split()
QUERIES = ["华东区销售额", "意外险理赔", "门店客户增长", "季度利润下降"]
# Larger than the number of chunks, so a search with it returns every match.
ALL = 2000


@pytest.fixture(scope="module")
def bm25_kb(uri: str) -> Iterator[tuple[MilvusIndex, str]]:
    """1,500 chunks of seeded random word sequences in 500 documents, about 2% tagged TAG."""
    rnd = random.Random(3)
    chunks = [
        Chunk(f"d{i // 3}#{i % 3}", f"d{i // 3}", "报告",
              "".join(rnd.choice(VOCABULARY) for _ in range(rnd.randint(15, 60))),
              (TAG,) if rnd.random() < 0.02 else (f"E{rnd.randint(8, 40)}",))
        for i in range(1500)]
    index = MilvusIndex(uri)
    kb = "exact_bm25"
    index.ensure_collection(kb)
    index.upsert(kb, chunks)
    yield index, kb
    index.drop(kb)
    index.close()


# BM25 scores tie often on short random texts, and tied chunks may come back in
# any order. So exactness is checked as: the same scores as the exact ranking,
# position by position, and every hit one that is allowed to hold that score.

@pytest.mark.parametrize("query", QUERIES)
def test_filtered_bm25_search_is_exact(bm25_kb: tuple[MilvusIndex, str], query: str) -> None:
    index, kb = bm25_kb
    everything = index.search(kb, query, limit=ALL, group_by_doc=False)
    assert len(everything) < ALL
    tagged = {hit.chunk_id: hit.score for hit in everything if TAG in hit.entity_ids}
    assert len(tagged) >= 5

    found = index.search(kb, query, limit=5, entity_ids=[TAG], group_by_doc=False)

    assert [hit.score for hit in found] == pytest.approx(sorted(tagged.values(), reverse=True)[:5])
    assert all(tagged.get(hit.chunk_id) == pytest.approx(hit.score) for hit in found)
    assert len({hit.chunk_id for hit in found}) == 5


@pytest.mark.parametrize("query", QUERIES)
def test_filtered_grouped_bm25_search_with_exclusions_is_exact(
        bm25_kb: tuple[MilvusIndex, str], query: str) -> None:
    index, kb = bm25_kb
    everything = index.search(kb, query, limit=ALL, group_by_doc=False)
    assert len(everything) < ALL
    excluded = {hit.chunk_id for hit in everything[:200:3]}
    best_of_doc: dict[str, float] = {}
    for hit in everything:
        if hit.chunk_id not in excluded:
            best_of_doc.setdefault(hit.doc_id, hit.score)

    found = index.search(kb, query, limit=10, exclude_chunk_ids=sorted(excluded))

    assert [hit.score for hit in found] == pytest.approx(
        sorted(best_of_doc.values(), reverse=True)[:10])
    assert all(hit.chunk_id not in excluded for hit in found)
    assert all(best_of_doc[hit.doc_id] == pytest.approx(hit.score) for hit in found)
    assert len({hit.doc_id for hit in found}) == 10
