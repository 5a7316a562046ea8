"""A readers-writer lock: many readers at once, or one writer.

A writer that is waiting holds back readers that arrive after it, so a steady stream
of readers (searches) cannot keep a writer (a re-tagging batch) out; and the readers
waiting when a write ends go before the next writer, so back-to-back writes cannot
keep readers out.
Both sides give up waiting after ``timeout`` seconds and go ahead anyway: the lock
orders work that would otherwise overlap, it must never turn a slow call into a
stuck one. Not reentrant: a thread that holds it must not take it again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

log = logging.getLogger(__name__)


class ReadWriteLock:
    """See the module docstring. ``name`` is only used in the log line of a timeout."""

    def __init__(self, name: str = "", timeout: float = 30.0) -> None:
        self._name = name
        self._timeout = timeout
        self._cond = threading.Condition()
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0
        self._readers_waiting = 0
        # Set when a writer finishes with readers waiting: they go before the next writer,
        # so back-to-back writes cannot keep readers out either.
        self._readers_turn = False

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._cond:
            self._readers_waiting += 1
            try:
                self._wait(lambda: not self._writing
                           and (not self._writers_waiting or self._readers_turn), "read")
            finally:
                self._readers_waiting -= 1
                if not self._readers_waiting:
                    self._readers_turn = False
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        with self._cond:
            self._writers_waiting += 1
            try:
                held = self._wait(lambda: not self._writing and not self._readers
                                  and not self._readers_turn, "write")
            finally:
                self._writers_waiting -= 1
            if held:
                self._writing = True
        try:
            yield
        finally:
            with self._cond:
                if held:
                    self._writing = False
                    self._readers_turn = self._readers_waiting > 0
                self._cond.notify_all()

    def _wait(self, ready: Callable[[], bool], what: str) -> bool:
        """Wait (holding the condition) until ``ready()``; False when it timed out."""
        deadline = time.monotonic() + self._timeout
        while not ready():
            left = deadline - time.monotonic()
            if left <= 0:
                log.warning("waited %.0f s to %s %s; going ahead without the lock",
                            self._timeout, what, self._name or "a locked resource")
                return False
            self._cond.wait(left)
        return True
