"""Re-tagging: when a kb's aliases change, the chunks whose alias-matched entity
tags change get their new tags in the index.

Only chunks tagged by alias matching (``auto_tagged``) are touched; tags given
in the corpus file are the operator's and stay as they are. Every such chunk
is matched again against the current snapshot, a document's chunks together (the
same ``tag_documents`` that ingest used); the ones whose tags differ are upserted
in batches. The alias-tagged chunks are read in full before any is matched, since
a document's chunks come back in no set order.

:class:`BackgroundRetagger` runs this off the request path after admin
writes: one worker thread, requests for a kb coalesced while a pass runs,
and a pass that sees the kb's version move on stops early and starts over
on the newer snapshot, so a slow pass never writes stale tags over a newer one.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from common.errors import ReferentError
from kg.aliases import AliasSnapshot
from understanding.linker import EntityLinker
from retrieval.ingest import tag_documents
from retrieval.index import VectorIndex
from retrieval.models import Chunk

log = logging.getLogger(__name__)

_UPSERT_BATCH = 500


@dataclass(frozen=True)
class RetagReport:
    """What one pass did. ``stale`` is True when it stopped because the kb moved on."""

    kb: str
    version: int
    scanned: int
    changed: int
    stale: bool = False


def retag_kb(kb: str, index: VectorIndex, snapshot: AliasSnapshot, *,
             progress: Callable[[int, int], None] | None = None,
             still_current: Callable[[], bool] | None = None) -> RetagReport:
    """Re-tag the kb's alias-tagged chunks against ``snapshot``.

    Args:
        progress: called with ``(scanned, changed)`` after every batch read.
        still_current: checked before each write; when it returns False the
            pass stops (``stale=True``) without writing that batch.

    Raises:
        NotFoundError: the kb has no collection.
        DependencyError: Milvus failed (what was written so far stays; a new
            pass finishes the job).
    """
    linker = EntityLinker()
    scanned = changed = 0
    pending: list[Chunk] = []

    def flush() -> bool:
        nonlocal pending
        if not pending:
            return True
        if still_current is not None and not still_current():
            return False
        index.set_entity_tags(kb, pending)
        pending = []
        return True

    stored = list(index.iter_chunks(kb, auto_tagged_only=True))
    for chunk, new in zip(stored, tag_documents(stored, snapshot, linker), strict=True):
        scanned += 1
        if new.entity_ids != chunk.entity_ids:
            pending.append(new)
            changed += 1
        if len(pending) >= _UPSERT_BATCH:
            if not flush():
                return RetagReport(kb, snapshot.version, scanned, changed, stale=True)
        if progress is not None and scanned % 100 == 0:
            progress(scanned, changed)
    if not flush():
        return RetagReport(kb, snapshot.version, scanned, changed, stale=True)
    if progress is not None:
        progress(scanned, changed)
    return RetagReport(kb, snapshot.version, scanned, changed)


@dataclass(frozen=True)
class RetagStatus:
    """What the background re-tagger last did for a kb."""

    state: str  # idle | queued | running
    last: RetagReport | None = None
    last_error: str | None = None
    finished_at: float | None = None


class BackgroundRetagger:
    """Re-tags kbs in a worker thread after their aliases change.

    Args:
        index: where the chunks are.
        snapshot_of: the current snapshot of a kb (None: the kb is gone).
        version_of: the kb's stored version, to notice a pass going stale.
    """

    def __init__(self, index: VectorIndex, snapshot_of: Callable[[str], AliasSnapshot | None],
                 version_of: Callable[[str], int | None]) -> None:
        self._index = index
        self._snapshot_of = snapshot_of
        self._version_of = version_of
        self._cond = threading.Condition()
        self._queued: dict[str, None] = {}
        self._running: str | None = None
        self._status: dict[str, RetagStatus] = {}
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="referent-retag", daemon=True)
        self._thread.start()

    def request(self, kb: str) -> None:
        """Queue a pass for ``kb`` (a no-op when one is already queued)."""
        with self._cond:
            self._queued[kb] = None
            self._status[kb] = replace(self._status.get(kb, RetagStatus("queued")), state="queued")
            self._cond.notify()

    def status(self, kb: str) -> RetagStatus:
        with self._cond:
            return self._status.get(kb, RetagStatus("idle"))

    def wait_idle(self, timeout: float) -> bool:
        """Block until nothing is queued or running (tests, shutdown); False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._queued or self._running is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True

    def close(self, timeout: float = 10.0) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queued and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                kb = next(iter(self._queued))
                del self._queued[kb]
                self._running = kb
                self._status[kb] = replace(self._status.get(kb, RetagStatus("running")),
                                           state="running")
            report, error = None, None
            try:
                report = self._pass(kb)
            except ReferentError as exc:
                error = str(exc)
                log.warning("re-tagging %s failed: %s", kb, exc)
            except Exception as exc:  # noqa: BLE001 - the worker must outlive any one pass
                error = f"{type(exc).__name__}: {exc}"
                log.exception("re-tagging %s failed", kb)
            with self._cond:
                self._running = None
                queued = kb in self._queued
                if report is not None and report.stale:
                    # The kb moved on under this pass: start over on the newer snapshot.
                    self._queued[kb] = None
                    queued = True
                self._status[kb] = RetagStatus("queued" if queued else "idle", report, error,
                                               time.time())
                self._cond.notify_all()

    def _pass(self, kb: str) -> RetagReport | None:
        snapshot = self._snapshot_of(kb)
        if snapshot is None or not self._index.has_collection(kb):
            return None
        return retag_kb(kb, self._index, snapshot,
                        still_current=lambda: self._version_of(kb) == snapshot.version)
