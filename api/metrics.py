"""Prometheus metrics of one API process, served at ``GET /metrics``.

What is counted, and from where:

- ``referent_http_requests_total{route,method,status}`` and
  ``referent_http_request_duration_seconds{route,method}``: every answer, by
  route *template* (``/v1/kbs/{kb}/sessions/{session_id}/turns``), so session
  ids never become labels; a path that matches no route is ``unmatched``.
Turn counts come from the typed events the engine emits beside each turn
(dialogue/events.py), never from paths in its trace.

- ``referent_turn_stage_duration_seconds{stage}``: the stage timings of each
  turn (``session_load``, ``link``,
  ``rewrite`` — classifying, clarifying and rewriting —, ``retrieve``,
  ``session_save``) and the whole turn (``total``).
- ``referent_turns_total{kb,action}``: turns by action; clarification
  questions are ``action="clarify"``, abstentions ``action="no_answer"``.
- ``referent_clarification_answers_total{kb,kind}``: how the turn after a
  question answered it (``option``, ``both``, ``neither``, ``not_an_answer``).
- ``referent_rewrite_fallbacks_total{kb,to}``: the LLM rewrite failed or was
  refused and the rules rewrite was used (``to="rules"``), or the rules
  rewrite was refused too and the user's own words were searched
  (``to="original"``).
- ``referent_turn_fallbacks_total{stage}``: turn stages that failed and fell
  back (``detect``, ``link``, ``policy``, ``rewrite``, ``retrieve``, ``pack``,
  ``apply``), one per ``FallbackTaken`` event; the turn was still answered.
- ``referent_dependency_errors_total{dependency}``: failures of ``neo4j``,
  ``milvus``, ``sessions`` (SQLite or Redis), ``llm``, ``embedder`` and
  ``reranker``: those that failed a request (answered 503) and those a turn
  survived by falling back (the rules rewriter, BM25 only, the entity order).
- ``referent_turns_in_progress`` and ``referent_turns_waiting``: turns running on
  the gate's worker threads and turns queued for one (api/turn_gate.py);
  ``referent_turns_refused_total``: turns answered 503 because the queue was full.
- ``referent_alias_snapshot_version{kb}``: the alias table version this
  process linked its last turn of the kb with.
- the standard ``process_*`` (memory, CPU, open files) and ``python_gc_*`` series.

Labels are only route templates, methods from a fixed list, status codes,
kb names of kbs that answered a turn, and fixed words: no session id, no
user text, no key or key name. That is why ``/metrics`` needs no API key
(Prometheus scrapes it without one); kb names are the one thing it tells,
so keep the port off the public internet as for any metrics endpoint.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from prometheus_client import (CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram,
                               generate_latest)
from prometheus_client import gc_collector, platform_collector, process_collector

from common.errors import DependencyError
from dialogue.events import (ClarificationAnswered, DependencyDegraded, FallbackTaken,
                             RewriteFellBack, StagesTimed)
from dialogue.models import TurnResult

log = logging.getLogger(__name__)

CONTENT_TYPE = CONTENT_TYPE_LATEST

STAGES = ("session_load", "detect", "link", "rewrite", "retrieve", "pack", "session_save")
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"

# Where a DependencyError was raised (the adapter that translated the driver's
# error) says which dependency failed.
_ADAPTERS = {
    "kg.neo4j_store": "neo4j", "kg.neo4j_admin": "neo4j", "kg.neo4j_queries": "neo4j",
    "retrieval.milvus_index": "milvus",
    "dialogue.sqlite_store": "sessions", "dialogue.redis_store": "sessions",
    "dialogue.llm_rewriter": "llm",
    "retrieval.embedders": "embedder",
    "retrieval.cross_encoder": "reranker",
}
DEPENDENCIES = ("neo4j", "milvus", "sessions", "llm", "embedder", "reranker", "other")

# 1 ms to 10 s: a turn stage is a few ms, an LLM rewrite up to its timeout.
_SECONDS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def dependency_of(exc: BaseException) -> str:
    """Which dependency a DependencyError is about: the ``dependency`` attribute when
    the raiser set one, else the module of the adapter that raised it."""
    named = getattr(exc, "dependency", None)
    if isinstance(named, str) and named in DEPENDENCIES:
        return named
    found = "other"
    tb = exc.__traceback__
    while tb is not None:
        module = tb.tb_frame.f_globals.get("__name__", "")
        found = _ADAPTERS.get(module, found)
        tb = tb.tb_next
    return found


class Metrics:
    """The metrics of one app, in a registry of their own (so several apps, as in the
    tests, never share or clash)."""

    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.http_requests = Counter(
            "referent_http_requests", "HTTP requests answered, by route template, method and status",
            ["route", "method", "status"], registry=r)
        self.http_seconds = Histogram(
            "referent_http_request_duration_seconds", "Time to answer an HTTP request",
            ["route", "method"], buckets=_SECONDS, registry=r)
        self.stage_seconds = Histogram(
            "referent_turn_stage_duration_seconds",
            "Time a turn spent in each stage (total: the whole turn)",
            ["stage"], buckets=_SECONDS, registry=r)
        self.turns = Counter("referent_turns", "Turns answered, by kb and action",
                             ["kb", "action"], registry=r)
        self.clarification_answers = Counter(
            "referent_clarification_answers",
            "Turns that followed a clarification question, by how they answered it",
            ["kb", "kind"], registry=r)
        self.rewrite_fallbacks = Counter(
            "referent_rewrite_fallbacks",
            "Rewrites refused or failed: to=rules after the LLM, to=original after the rules",
            ["kb", "to"], registry=r)
        self.turn_fallbacks = Counter(
            "referent_turn_fallbacks",
            "Turn stages that failed and fell back (the turn was still answered)",
            ["stage"], registry=r)
        self.dependency_errors = Counter(
            "referent_dependency_errors",
            "Dependency failures: those that failed a request and those a turn fell back from",
            ["dependency"], registry=r)
        self.alias_version = Gauge(
            "referent_alias_snapshot_version",
            "Alias table version this process linked the kb's last turn with",
            ["kb"], registry=r)
        self.turns_refused = Counter(
            "referent_turns_refused", "Turns refused with 503: every slot busy, the queue full",
            registry=r)
        self.turns_in_progress = Gauge(
            "referent_turns_in_progress", "Turns running now", registry=r)
        self.turns_waiting = Gauge(
            "referent_turns_waiting", "Turns queued for a free slot now", registry=r)
        process_collector.ProcessCollector(registry=r)
        platform_collector.PlatformCollector(registry=r)
        gc_collector.GCCollector(registry=r)

    def render(self) -> bytes:
        return generate_latest(self.registry)

    def observe_request(self, route: str | None, method: str, status: int, seconds: float) -> None:
        route = route or UNMATCHED
        method = method if method in METHODS else "other"
        self.http_requests.labels(route, method, str(status)).inc()
        self.http_seconds.labels(route, method).observe(seconds)

    def observe_turn(self, kb: str, result: TurnResult) -> None:
        """Count one answered turn from its result and the events it told (dialogue/events.py)."""
        self.turns.labels(kb, result.action).inc()
        self.stage_seconds.labels("total").observe(result.latency_ms / 1000)
        for event in result.events:
            match event:
                case StagesTimed(timings_ms=timings, alias_version=version):
                    for stage, ms in timings.items():
                        if stage in STAGES:
                            self.stage_seconds.labels(stage).observe(ms / 1000)
                    if isinstance(version, int):
                        self.alias_version.labels(kb).set(version)
                case ClarificationAnswered(kind=kind):
                    self.clarification_answers.labels(kb, kind).inc()
                case RewriteFellBack(to=to):
                    self.rewrite_fallbacks.labels(kb, to).inc()
                case FallbackTaken(stage=stage):
                    self.turn_fallbacks.labels(stage).inc()
                case DependencyDegraded(dependency=dependency):
                    self.dependency_errors.labels(dependency).inc()

    def watch_gate(self, state: Callable[[], tuple[int, int]]) -> None:
        """Read the turns running and waiting from ``state`` at each scrape."""
        self.turns_in_progress.set_function(lambda: state()[0])
        self.turns_waiting.set_function(lambda: state()[1])

    def observe_saturated(self) -> None:
        """Count a turn refused because every slot was busy and the queue full."""
        self.turns_refused.inc()

    def observe_error(self, exc: BaseException) -> None:
        """Count a request that failed because a dependency did."""
        if isinstance(exc, DependencyError):
            self.dependency_errors.labels(dependency_of(exc)).inc()


