"""Metrics read from a turn's result and trace, and dependency errors named by their adapter."""

from __future__ import annotations

import socket

import pytest

from api.metrics import Metrics, dependency_of
from common.errors import DependencyError
from dialogue.models import RewriteInfo, TurnResult


def value(metrics: Metrics, name: str, **labels: str) -> float:
    found = metrics.registry.get_sample_value(name, labels)
    return 0.0 if found is None else found


def result(action="retrieve", source="rules", **trace) -> TurnResult:
    return TurnResult(session="s1", turn=2, user="那华南区呢", action=action,
                      standalone="华南区7月的销售额是多少", queries=[], entities=[],
                      rewrite=RewriteInfo(source=source, accepted=source != "original"),
                      latency_ms=42.0, trace=trace)


def test_a_turn_counts_its_action_stages_and_alias_version():
    metrics = Metrics()
    metrics.observe_turn("hr", result(alias_version=7, timings_ms={
        "session_load": 1.0, "link": 2.0, "rewrite": 3.0, "retrieve": 30.0, "session_save": 4.0}))
    metrics.observe_turn("hr", result(action="clarify", alias_version=8,
                                      timings_ms={"link": 2.0}))
    assert value(metrics, "referent_turns_total", kb="hr", action="retrieve") == 1
    assert value(metrics, "referent_turns_total", kb="hr", action="clarify") == 1
    assert value(metrics, "referent_turn_stage_duration_seconds_count", stage="link") == 2
    assert value(metrics, "referent_turn_stage_duration_seconds_count", stage="retrieve") == 1
    assert value(metrics, "referent_turn_stage_duration_seconds_sum", stage="retrieve") == 0.03
    assert value(metrics, "referent_turn_stage_duration_seconds_count", stage="total") == 2
    assert value(metrics, "referent_alias_snapshot_version", kb="hr") == 8


def test_fallbacks_are_counted_from_the_trace():
    metrics = Metrics()
    # The LLM failed (so the rules were used), the embedder and the reranker failed too.
    metrics.observe_turn("hr", result(
        rewrite={"tried": [{"source": "llm", "error": "timed out"}, {"source": "rules"}]},
        retrieval={"queries": [{"dense": "skipped, BM25 only: refused",
                                "cross_encoder": "failed, fused order kept: 500"}]}))
    # The rules rewrite was refused: the user's own words were searched.
    metrics.observe_turn("hr", result(source="original", rewrite={
        "tried": [{"source": "rules", "checks": {"negation_kept": False}}],
        "fallback": "the user's own words"}))
    # A clarification answered with the second option.
    metrics.observe_turn("hr", result(clarification_answer={"kind": "chosen"}))
    assert value(metrics, "referent_rewrite_fallbacks_total", kb="hr", to="rules") == 1
    assert value(metrics, "referent_rewrite_fallbacks_total", kb="hr", to="original") == 1
    for dependency in ("llm", "embedder", "reranker"):
        assert value(metrics, "referent_dependency_errors_total", dependency=dependency) == 1
    assert value(metrics, "referent_clarification_answers_total", kb="hr", kind="chosen") == 1


def test_http_requests_are_labelled_by_template_and_a_fixed_set_of_methods():
    metrics = Metrics()
    metrics.observe_request("/v1/kbs/{kb}/admin", "GET", 200, 0.01)
    metrics.observe_request(None, "GET", 404, 0.001)
    metrics.observe_request(None, "BREW", 405, 0.001)
    assert value(metrics, "referent_http_requests_total", route="/v1/kbs/{kb}/admin",
                 method="GET", status="200") == 1
    assert value(metrics, "referent_http_requests_total", route="unmatched", method="GET",
                 status="404") == 1
    assert value(metrics, "referent_http_requests_total", route="unmatched", method="other",
                 status="405") == 1
    assert b"process_resident_memory_bytes" in metrics.render()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_dependency_error_is_named_by_the_adapter_that_raised_it():
    from dialogue.redis_store import RedisSessionStore
    from kg.neo4j_store import Neo4jOntologyStore

    port = closed_port()
    store = RedisSessionStore(f"redis://127.0.0.1:{port}/0", ttl_seconds=60, timeout=0.5)
    with pytest.raises(DependencyError) as redis_down:
        store.load("hr", "s1")
    neo4j = Neo4jOntologyStore.connect(f"bolt://127.0.0.1:{port}", "neo4j", "x")
    with pytest.raises(DependencyError) as neo4j_down:
        neo4j.verify()
    neo4j.close()
    assert dependency_of(redis_down.value) == "sessions"
    assert dependency_of(neo4j_down.value) == "neo4j"
    assert dependency_of(DependencyError("no adapter")) == "other"
    named = DependencyError("said so")
    named.dependency = "milvus"
    assert dependency_of(named) == "milvus"


def test_turn_stages_that_fell_back_are_counted_by_stage():
    from api.metrics import Metrics
    from dialogue.models import RewriteInfo, TurnResult

    metrics = Metrics()
    trace = {"fallbacks": [{"stage": "retrieve", "error": "KeyError", "fallback": "no answer"},
                           {"stage": "pack", "error": "ValueError", "fallback": "no packed context"}]}
    metrics.observe_turn("hr", TurnResult(session="s", turn=1, user="u", action="no_answer",
                                          standalone="u", queries=[], entities=[],
                                          rewrite=RewriteInfo(source="rules", accepted=True),
                                          trace=trace))
    metrics.observe_turn("hr", TurnResult(session="s", turn=2, user="u", action="retrieve",
                                          standalone="u", queries=[], entities=[],
                                          rewrite=RewriteInfo(source="rules", accepted=True)))
    assert value(metrics, "referent_turn_fallbacks_total", stage="retrieve") == 1
    assert value(metrics, "referent_turn_fallbacks_total", stage="pack") == 1
