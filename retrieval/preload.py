"""Preloading: every kb a process serves is searchable before its first turn.

Milvus Lite loads a collection on its first search (about 45 s at 100,000
chunks on 2 cores) and a Milvus server cannot search a released one, so a
process that loaded lazily made its first user wait, or time out. A
:class:`Preloader` runs, in one background thread, each kb's warm-up steps
(loading its collection, then the per-kb caches a turn reads: term
statistics, the alias snapshot, entity facts, the embedder the kb was built
with) and says at any moment which kbs are still loading. ``/readyz`` answers
503 until none is (``api/health.py``), and a turn on a kb still loading is
refused at once with a retryable 503 instead of waiting on the load
(:meth:`Preloader.require`).

A preloader that was never started (CLI commands, tests that build their own
runtime) loads nothing and holds nothing back. The kbs preloaded are the ones
with a collection when the process starts. A
kb created later is created loaded (its first ingest makes the collection
and loads it), so its turns never wait either; :meth:`Preloader.add` queues
one explicitly.

When the queue runs dry, ``on_loaded`` runs in the same thread before the last kb
counts as loaded (the server settles its heap there, ``api/heap.py``, so the
collection's pause falls before ``/readyz`` says ready).

A step that fails is retried (``attempts``, with a pause); a kb whose load
still fails is reported ``failed`` and no longer holds readiness back: its
turns then fail on their own, with the store's error, while other kbs serve.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from common.errors import RetryableDependencyError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Step:
    """One warm-up step of a kb: ``run(kb)``; ``required`` steps must succeed for the kb
    to count as loaded (an optional cache that fails is only logged)."""

    name: str
    run: Callable[[str], Any]
    required: bool = True


class Preloader:
    """Loads kbs in the background, one at a time, and reports their state.

    Args:
        list_kbs: the kbs to preload at :meth:`start` (those with a collection).
        steps: what loading one kb means, in order.
        attempts: tries per required step before the kb is reported ``failed``.
        retry_pause: seconds between tries.
        on_loaded: called when the last queued kb has loaded (or failed), before it
            counts as such (a failure of the hook is logged).
    """

    def __init__(self, list_kbs: Callable[[], Sequence[str]], steps: Sequence[Step], *,
                 attempts: int = 3, retry_pause: float = 2.0,
                 on_loaded: Callable[[], Any] | None = None) -> None:
        self._list_kbs = list_kbs
        self._steps = tuple(steps)
        self._on_loaded = on_loaded
        self._attempts = attempts
        self._retry_pause = retry_pause
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._queue: list[str] = []
        # kb -> {"state": queued|loading|loaded|failed, "ms": ..., "error": ...}
        self._kbs: dict[str, dict[str, Any]] = {}
        # What keeps the kb list unknown (None: known, or nothing asked to preload yet).
        self._listing: str | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    def start(self) -> None:
        """List the kbs and start loading them in the background (once)."""
        with self._lock:
            if self._thread is not None:
                return
            self._listing = "listing the kbs"
            self._thread = threading.Thread(target=self._run, name="preload", daemon=True)
            self._thread.start()

    def add(self, kb: str) -> None:
        """Queue ``kb`` for loading (again), e.g. after its first ingest."""
        with self._lock:
            self._enqueue(kb)
            self._wake.notify()

    def loading(self) -> list[str]:
        """The kbs not yet searchable without a wait (queued or loading), in queue order."""
        with self._lock:
            return [kb for kb, s in self._kbs.items() if s["state"] in ("queued", "loading")]

    def status(self) -> dict[str, Any]:
        """For ``/readyz``: whether all is loaded, and each kb's state."""
        with self._lock:
            kbs = {kb: dict(s) for kb, s in self._kbs.items()}
            listing = self._listing
        waiting = [kb for kb, s in kbs.items() if s["state"] in ("queued", "loading")]
        out: dict[str, Any] = {"ready": not waiting and listing is None, "loading": waiting,
                               "loaded": sum(s["state"] == "loaded" for s in kbs.values())}
        failed = {kb: s.get("error") for kb, s in kbs.items() if s["state"] == "failed"}
        if failed:
            out["failed"] = failed
        if listing is not None:
            out["listing"] = listing
        return out

    def require(self, kb: str) -> None:
        """Raise a retryable error (503, Retry-After) when ``kb`` is still loading, so the
        request is refused at once rather than waiting on the load."""
        with self._lock:
            state = self._kbs.get(kb, {}).get("state")
            listing = self._listing is not None
        if state in ("queued", "loading") or (listing and state is None):
            raise RetryableDependencyError(
                f"knowledge base {kb!r} is still loading after the server started; retry in a "
                "few seconds (GET /readyz says when every kb is loaded)", service="milvus")

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._wake.notify_all()

    # -- the background thread -------------------------------------------------------

    def _enqueue(self, kb: str) -> None:
        if kb not in self._queue:
            self._queue.append(kb)
        self._kbs[kb] = {"state": "queued"}

    def _run(self) -> None:
        self._list()
        while True:
            with self._lock:
                while not self._queue and not self._closed:
                    self._wake.wait()
                if self._closed:
                    return
                kb = self._queue.pop(0)
                self._kbs[kb] = {"state": "loading"}
            self._load(kb)

    def _queue_drained(self) -> None:
        """The ``on_loaded`` hook once the queue is empty (a kb loaded or failed); it never
        stops the preloader."""
        with self._lock:
            last = not self._queue
        if self._on_loaded is None or not last:
            return
        try:
            self._on_loaded()
        except Exception:  # noqa: BLE001 - the kbs are loaded; only the hook failed
            log.exception("preload: the after-load hook failed")

    def _list(self) -> None:
        """The kbs to load; a store that does not answer is asked again until it does."""
        while True:
            try:
                kbs = list(self._list_kbs())
                break
            except Exception as exc:  # noqa: BLE001 - reported by /readyz, retried
                log.warning("preload: cannot list the kbs, retrying: %s", exc)
                with self._lock:
                    self._listing = f"cannot list the kbs: {type(exc).__name__}"
                    if self._closed or self._wake.wait(self._retry_pause) or self._closed:
                        return
        with self._lock:
            for kb in kbs:
                self._enqueue(kb)
            self._listing = None
        log.info("preload: %d kb(s) to load", len(kbs))

    def _load(self, kb: str) -> None:
        started = time.perf_counter()
        took: dict[str, int] = {}
        for step in self._steps:
            began = time.perf_counter()
            error = self._attempt(kb, step)
            took[step.name] = round((time.perf_counter() - began) * 1000)
            if error is not None and step.required:
                self._queue_drained()
                with self._lock:
                    self._kbs[kb] = {"state": "failed", "step": step.name, "error": error}
                return
        ms = round((time.perf_counter() - started) * 1000)
        log.info("preload: kb %r loaded in %d ms (%s)", kb, ms,
                 ", ".join(f"{name} {step_ms} ms" for name, step_ms in took.items()))
        self._queue_drained()  # before the kb counts as loaded: its pause precedes readiness
        with self._lock:
            if self._kbs.get(kb, {}).get("state") == "loading":
                self._kbs[kb] = {"state": "loaded", "ms": ms}

    def _attempt(self, kb: str, step: Step) -> str | None:
        """Run one step, retrying a required one; the error's kind when it still fails."""
        tries = self._attempts if step.required else 1
        for attempt in range(1, tries + 1):
            try:
                step.run(kb)
                return None
            except Exception as exc:  # noqa: BLE001 - a failed load is reported, not raised
                log.warning("preload: %s of kb %r failed (try %d of %d): %s",
                            step.name, kb, attempt, tries, exc)
                error = type(exc).__name__
                if attempt < tries:
                    time.sleep(self._retry_pause)
        return error
