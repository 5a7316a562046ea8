"""Metrics read from a turn's result and its typed events, and dependency errors named by
their adapter."""

from __future__ import annotations

import socket

import pytest

from api.metrics import Metrics, dependency_of
from common.errors import DependencyError
from dialogue.events import (ClarificationAnswered, DependencyDegraded, FallbackTaken,
                             RewriteFellBack, StagesTimed)
from dialogue.models import RewriteInfo, TurnResult


def value(metrics: Metrics, name: str, **labels: str) -> float:
    found = metrics.registry.get_sample_value(name, labels)
    return 0.0 if found is None else found


def result(action="retrieve", *events) -> TurnResult:
    out = TurnResult(session="s1", turn=2, user="那华南区呢", action=action,
                     standalone="华南区7月的销售额是多少", queries=[], entities=[],
                     rewrite=RewriteInfo(source="rules", accepted=True), latency_ms=42.0)
    out.events.extend(events)
    return out


def test_a_turn_counts_its_action_stages_and_alias_version():
    metrics = Metrics()
    metrics.observe_turn("hr", result("retrieve", StagesTimed({
        "session_load": 1.0, "link": 2.0, "rewrite": 3.0, "retrieve": 30.0, "session_save": 4.0}, 7)))
    metrics.observe_turn("hr", result("clarify", StagesTimed({"link": 2.0}, 8)))
    assert value(metrics, "referent_turns_total", kb="hr", action="retrieve") == 1
    assert value(metrics, "referent_turns_total", kb="hr", action="clarify") == 1
    assert value(metrics, "referent_turn_stage_duration_seconds_count", stage="link") == 2
    assert value(metrics, "referent_turn_stage_duration_seconds_count", stage="retrieve") == 1
    assert value(metrics, "referent_turn_stage_duration_seconds_sum", stage="retrieve") == 0.03
    assert value(metrics, "referent_turn_stage_duration_seconds_count", stage="total") == 2
    assert value(metrics, "referent_alias_snapshot_version", kb="hr") == 8


def test_fallbacks_are_counted_from_the_events_the_stages_tell():
    from dialogue.rewrite_chain import RewriteOutcome
    from dialogue.rewriter import Proposal
    from retrieval.search import degraded_dependencies

    words = Proposal("rules", ("q",), "q", (), "rules")
    # The LLM failed (so the rules were used), the embedder and the reranker failed too.
    llm_failed = RewriteOutcome(words, RewriteInfo(source="rules", accepted=True), {
        "how": "rules", "tried": [{"source": "llm", "error": "timed out"}, {"source": "rules"}]})
    assert llm_failed.events == (DependencyDegraded("llm"), RewriteFellBack("rules"))
    searched = {"queries": [{"dense": "skipped, BM25 only: refused",
                             "cross_encoder": "failed, fused order kept: 500"}, {"bm25": 3}]}
    assert degraded_dependencies(searched) == ["embedder", "reranker"]
    # The rules rewrite was refused: the user's own words were searched.
    refused = RewriteOutcome(words, RewriteInfo(source="original", accepted=False), {
        "how": "rules", "tried": [{"source": "rules", "checks": {"negation_kept": False}}],
        "fallback": "the user's own words"})
    assert refused.events == (RewriteFellBack("original"),)
    metrics = Metrics()
    metrics.observe_turn("hr", result("retrieve", *llm_failed.events,
                                      *(DependencyDegraded(d) for d in degraded_dependencies(searched))))
    metrics.observe_turn("hr", result("retrieve", *refused.events))
    metrics.observe_turn("hr", result("retrieve", ClarificationAnswered("chosen", ("x",), "ordinal")))
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
    metrics = Metrics()
    metrics.observe_turn("hr", result("no_answer", FallbackTaken("retrieve", "KeyError", "no answer"),
                                      FallbackTaken("pack", "ValueError", "no packed context")))
    metrics.observe_turn("hr", result("retrieve"))
    assert value(metrics, "referent_turn_fallbacks_total", stage="retrieve") == 1
    assert value(metrics, "referent_turn_fallbacks_total", stage="pack") == 1
