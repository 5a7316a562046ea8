"""How many turns run at once, and how many may wait.

A turn is mostly Python (mentions, rewrite, rerank, serialization) plus a few
Milvus and session-store round trips. Python runs one thread at a time, so
16 turns started together on 16 threads do not finish sooner than 2 or 3
would: they take turns at the interpreter lock. The gate runs at most
``concurrent`` turns at a time on worker threads and queues the rest in
arrival order. Measured at 100k chunks with 16 clients on 2 shared cores, it
changed neither the throughput nor the p99 beyond the spread between runs
(docs/benchmarks.md): what it buys is a bound.

A queue that only grows helps nobody: above ``queued`` waiting turns the
next one is refused at once with 503 and ``Retry-After`` (the client backs
off or goes to another instance), instead of hanging until its timeout, and
a flood of requests no longer becomes a thread each.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread

T = TypeVar("T")

# A turn waits on Milvus and the session store for about half its time: one turn
# more than there are cores keeps the interpreter busy while another waits.
IO_SHARE_SLOTS = 1


def default_concurrency() -> int:
    """Turns at once when the setting is 0: the cores this process may use, plus one."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cores = os.cpu_count() or 1
    return cores + IO_SHARE_SLOTS


class TurnsSaturatedError(Exception):
    """Every slot is busy and the queue is full: the caller should retry shortly.

    Attributes:
        running: turns in progress.
        waiting: turns already queued.
    """

    def __init__(self, running: int, waiting: int) -> None:
        super().__init__(f"the server is answering {running} turns with {waiting} more "
                         "queued; retry after Retry-After seconds, or send turns to "
                         "another instance")
        self.running = running
        self.waiting = waiting


class TurnGate:
    """Runs a turn's blocking work on a worker thread, at most ``concurrent`` at a time.

    Args:
        concurrent: turns that run at once (at least 1).
        queued: turns that may wait for a slot; the next one is refused.
    """

    def __init__(self, concurrent: int, queued: int) -> None:
        if concurrent < 1 or queued < 0:
            raise ValueError("concurrent must be at least 1 and queued at least 0")
        self._limiter = anyio.CapacityLimiter(concurrent)
        self._queued = queued

    @property
    def concurrent(self) -> int:
        return int(self._limiter.total_tokens)

    def state(self) -> tuple[int, int]:
        """(turns running, turns waiting) now."""
        stats = self._limiter.statistics()
        return stats.borrowed_tokens, stats.tasks_waiting

    async def run(self, work: Callable[[], T]) -> T:
        """``work()`` on a worker thread once a slot is free (in arrival order).

        Raises:
            TurnsSaturatedError: every slot is busy and ``queued`` turns already wait.
        """
        running, waiting = self.state()
        if running >= self.concurrent and waiting >= self._queued:
            raise TurnsSaturatedError(running, waiting)
        return await anyio.to_thread.run_sync(work, limiter=self._limiter)
