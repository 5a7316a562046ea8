"""One turn's run: stage timings, the trace, and stages that fall back instead of failing.

A stage that raises anything but a :class:`DependencyError` (a store is down:
the turn is not answered and the session not advanced) falls back to what the
caller gives, and the trace says so::

    trace["fallbacks"] = [{"stage": "retrieve", "error": "KeyError", "fallback": "no answer"}]
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from common.errors import DependencyError
from dialogue.events import FallbackTaken, TurnEvent
from dialogue.trace import FallbackTrace

logger = logging.getLogger("dialogue.engine")

T = TypeVar("T")


class TurnRun:
    """The trace of one turn being played, with its stage timer."""

    def __init__(self, trace: dict[str, Any]) -> None:
        self.trace = trace
        # Stage timings (ms): detect, link, rewrite (decide, clarify or rewrite,
        # validate), retrieve, pack; the engine's handle() adds session_load and session_save.
        self.timings: dict[str, float] = trace.setdefault("timings_ms", {})
        # What the stages tell beside the trace (dialogue/events.py), fallbacks included.
        self.events: list[TurnEvent] = []
        self._mark = time.perf_counter()

    def lap(self, stage: str) -> None:
        """Add the time since the last lap to ``stage``."""
        now = time.perf_counter()
        self.timings[stage] = round(self.timings.get(stage, 0.0) + (now - self._mark) * 1000, 3)
        self._mark = now

    def guarded(self, stage: str, work: Callable[[], T], fallback: Callable[[], T], says: str) -> T:
        """``work()``, or ``fallback()`` when it raises (a store being down excepted)."""
        try:
            return work()
        except DependencyError:
            raise
        except Exception as exc:  # noqa: BLE001 - a turn never raises: fall back, say so
            logger.exception("turn stage %r failed; fell back to %s", stage, says)
            self.fell_back(stage, type(exc).__name__, says)
            return fallback()

    def fell_back(self, stage: str, error: str, says: str) -> None:
        self.events.append(FallbackTaken(stage, error, says))
        self.trace.setdefault("fallbacks", []).append(
            FallbackTrace(stage=stage, error=error, fallback=says).dump())
