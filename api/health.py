"""Readiness: can this process answer turns now? (``GET /readyz``)

One cheap probe per dependency, all run at once and bounded together by
:data:`READY_TIMEOUT_SECONDS`:

===========  ========  =============================================================
dependency   required  probe
===========  ========  =============================================================
milvus       yes       ``has_collection`` of a probe name (one round trip)
sessions     yes       loading a probe session (SQLite read or Redis GET)
collections  yes       every kb's collection and caches loaded (``retrieval/preload.py``):
                       ``loading`` names the kbs still loading, ``failed`` those that
                       could not be; read from the preloader, not probed
neo4j        no        the driver's connectivity check (a Bolt handshake)
llm          no        ``GET {base_url}/models`` when ``REFERENT_LLM__BASE_URL`` is set
embedder     no        ``GET {base_url}/models`` when ``REFERENT_EMBED__BASE_URL`` is set
reranker     no        ``GET {base_url}/`` when ``REFERENT_RERANK__BASE_URL`` is set
===========  ========  =============================================================

Without Milvus or the session store no turn can be answered, and until a kb's
collection is loaded its first turn would wait on the load (tens of seconds
at 100,000 chunks), so the process is not ready (503) and a load balancer
should send turns elsewhere. The others
have fallbacks: turns link with the alias snapshot already loaded while Neo4j
is away (only admin writes fail), the rules rewriter stands in for the LLM,
BM25 for the embedder, the entity-aware order for the reranker. Their failure
makes the answer ``degraded`` but still 200, so one failing shared dependency
does not take every instance out of the balancer at once.

A probe that hangs is not started again while it runs (each dependency has
at most one probe in flight), so frequent probing cannot pile up threads.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

import httpx
from fastapi import Request

from api.runtime import Runtime

log = logging.getLogger(__name__)

READY_TIMEOUT_SECONDS = 2.0
_PROBE_KB = "readyz_probe"


@dataclass(frozen=True)
class Probe:
    name: str
    required: bool
    run: Callable[[], None]
    detail: dict[str, Any]


def probes(runtime: Runtime) -> list[Probe]:
    """The probes of the dependencies this process is configured with."""
    settings = runtime.settings
    found = [
        Probe("milvus", True, lambda: runtime.index.has_collection(_PROBE_KB),
              {"uri": "lite" if "://" not in settings.milvus_uri else "server"}),
        Probe("sessions", True, lambda: runtime.sessions.load(_PROBE_KB, "probe"),
              {"backend": settings.sessions.backend}),
        Probe("neo4j", False, runtime.ontology.verify, {}),
    ]
    endpoints = (("llm", settings.llm.base_url, settings.llm.api_key, "/models"),
                 ("embedder", settings.embed.base_url if settings.embed.resolved_backend == "openai"
                  else None, settings.embed.api_key, "/models"),
                 ("reranker", settings.rerank.base_url, settings.rerank.api_key, "/"))
    for name, base_url, key, path in endpoints:
        if base_url:
            found.append(Probe(name, False, _http_probe(base_url.rstrip("/") + path, key), {}))
    return found


def _http_probe(url: str, key: str | None) -> Callable[[], None]:
    def run() -> None:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        status = httpx.get(url, headers=headers, timeout=READY_TIMEOUT_SECONDS).status_code
        # Any answer but a server error or a refused key means the endpoint is there.
        if status >= 500 or status in (401, 403):
            raise ConnectionError(f"answered HTTP {status}")
    return run


class Readiness:
    """Runs the probes of one process (:func:`probes`), at most one in flight per dependency."""

    def __init__(self, checks: list[Probe], timeout: float = READY_TIMEOUT_SECONDS, *,
                 loading: Callable[[], dict[str, Any]] | None = None) -> None:
        self._probes = checks
        # The preloader's status (``Preloader.status``): read, not probed, so never slow.
        self._loading = loading
        self._timeout = timeout
        self._pool = ThreadPoolExecutor(max_workers=len(self._probes),
                                        thread_name_prefix="readyz")
        self._running: dict[str, Future] = {}
        self._lock = threading.Lock()

    def check(self) -> tuple[bool, dict[str, Any]]:
        """Returns (ready, what each probe found)."""
        started = time.perf_counter()
        with self._lock:
            futures = {}
            for probe in self._probes:
                future = self._running.get(probe.name)
                if future is None or future.done():
                    future = self._running[probe.name] = self._pool.submit(_timed, probe.run)
                futures[probe.name] = future
        wait(futures.values(), timeout=self._timeout)
        checks: dict[str, Any] = {}
        for probe in self._probes:
            future = futures[probe.name]
            entry: dict[str, Any] = {"required": probe.required, **probe.detail}
            if not future.done():
                entry.update(status="timeout",
                             error=f"no answer within {self._timeout:g} s")
            elif (error := future.exception()) is not None:
                # The reason goes to the log; the unauthenticated answer names only its kind.
                log.warning("readiness probe %s failed: %s", probe.name, error)
                entry.update(status="down", error=type(error).__name__)
            else:
                entry.update(status="ok", ms=future.result())
            checks[probe.name] = entry
        if self._loading is not None:
            checks["collections"] = _collections(self._loading())
        ready = all(c["status"] == "ok" for c in checks.values() if c["required"])
        log.debug("readiness checked in %.1f ms", (time.perf_counter() - started) * 1000)
        return ready, checks

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _collections(status: dict[str, Any]) -> dict[str, Any]:
    """The readiness entry of the preloaded collections: ``loading`` until all are."""
    entry = {key: value for key, value in status.items() if key != "ready"}
    return {"required": True, "status": "ok" if status["ready"] else "loading", **entry}


def not_ready_detail(checks: dict[str, Any]) -> str:
    """Why the process is not ready: each required dependency that is not ok, with the
    kbs still loading named."""
    down = []
    for name, check in checks.items():
        if check["required"] and check["status"] != "ok":
            loading = check.get("loading")
            down.append(f"{name} ({check['status']}: {', '.join(loading)})" if loading
                        else f"{name} ({check['status']})")
    return "required dependencies are not ready: " + ", ".join(down)


async def loaded_kb(kb: str, request: Request) -> None:
    """Route dependency: refuse a turn on a kb still loading at once (503, Retry-After)
    rather than let it wait on the load."""
    request.app.state.runtime.preloader.require(kb)


def _timed(run: Callable[[], None]) -> float:
    started = time.perf_counter()
    run()
    return round((time.perf_counter() - started) * 1000, 2)
