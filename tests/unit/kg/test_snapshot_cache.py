"""The snapshot cache when the store is down, hangs or is slow: turns keep linking
with the snapshot held, no turn waits longer than the check timeout, failures are
counted, reported and logged once, and everything recovers."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from common.errors import RetryableDependencyError
from common.language.normalize import DEFAULT
from kg.aliases import SnapshotCache
from kg.ontology import parse_ontology
from kg.store import KbState, LinkingData


def _data(version: int, alias: str) -> LinkingData:
    ontology = parse_ontology([
        '{"kind": "entity", "id": "e1", "name": "甲", "type": "T", "aliases": ["%s"]}' % alias])
    return LinkingData(version=version, uid="u1", normalization=DEFAULT, ontology=ontology,
                       alias_norms={})


class FakeStore:
    """kb_state / linking_data that can answer, fail like an unreachable Neo4j, or hang."""

    def __init__(self) -> None:
        self.version = 1
        self.mode = "ok"
        self.release = threading.Event()
        self.calls = 0

    def _gate(self) -> None:
        self.calls += 1
        if self.mode == "down":
            raise RetryableDependencyError("Neo4j is unreachable", service="neo4j")
        if self.mode == "hang":
            self.release.wait(10)

    def kb_state(self, kb: str) -> KbState | None:
        self._gate()
        if self.mode == "absent":
            return None
        return KbState(version=self.version, uid="u1")

    def linking_delta(self, kb: str, since: int, uid: str):
        return None

    def linking_data(self, kb: str) -> LinkingData:
        return _data(self.version, f"别名{self.version}")


@pytest.fixture
def store() -> FakeStore:
    return FakeStore()


def _alias(snapshot) -> str:
    return next(a for a in snapshot.by_norm if a.startswith("别名"))


def test_store_down_keeps_the_held_snapshot_counts_and_logs_once(store, caplog):
    cache = SnapshotCache(store, check_interval=0.01, check_timeout=1.0)
    assert cache.get("kb").version == 1
    store.mode = "down"
    with caplog.at_level(logging.WARNING, logger="kg.aliases"):
        for _ in range(5):
            time.sleep(0.02)
            assert cache.get("kb").version == 1
    assert cache.check_failures["kb"] >= 3
    stale = cache.stale("kb")
    assert stale is not None and stale["stale_seconds"] > 0 and "unreachable" in stale["error"]
    failed = [r for r in caplog.records if "failed; linking with the snapshot held" in r.message]
    assert len(failed) == 1

    store.mode, store.version = "ok", 2
    time.sleep(0.02)
    with caplog.at_level(logging.WARNING, logger="kg.aliases"):
        assert _alias(cache.get("kb")) == "别名2"
    assert cache.stale("kb") is None
    assert any("works again" in r.message for r in caplog.records)


def test_a_kb_never_loaded_cannot_be_linked_while_the_store_is_down(store):
    store.mode = "down"
    cache = SnapshotCache(store, check_timeout=1.0)
    with pytest.raises(RetryableDependencyError):
        cache.get("kb")


def test_a_hanging_store_costs_one_turn_the_timeout_and_the_others_nothing(store):
    cache = SnapshotCache(store, check_interval=0.01, check_timeout=0.2)
    cache.get("kb")
    store.mode, store.version = "hang", 2
    time.sleep(0.02)
    started = time.monotonic()
    assert cache.get("kb").version == 1
    assert 0.15 < time.monotonic() - started < 1.0
    calls = store.calls
    for _ in range(5):
        time.sleep(0.02)
        started = time.monotonic()
        assert cache.get("kb").version == 1
        assert time.monotonic() - started < 0.1
    assert store.calls == calls, "one check at a time while the store hangs"
    assert cache.stale("kb") is not None

    store.release.set()  # the store answers: the check that hung installs version 2
    deadline = time.monotonic() + 5
    while cache.get("kb").version != 2:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert cache.stale("kb") is None


def test_a_check_hanging_too_long_is_given_up_for_a_new_one(store):
    cache = SnapshotCache(store, check_interval=0.01, check_timeout=0.05, abandon_after=0.3)
    cache.get("kb")
    store.mode = "hang"
    time.sleep(0.02)
    cache.get("kb")
    calls = store.calls
    time.sleep(0.35)
    cache.get("kb")
    assert store.calls == calls + 1
    store.release.set()


def test_after_its_own_write_a_process_waits_for_a_check_begun_after_it(store):
    cache = SnapshotCache(store, check_interval=60, check_timeout=0.05)
    cache.get("kb")
    store.version = 2
    cache.invalidate("kb")
    # Even with a short timeout: the writer must link with what it wrote.
    assert _alias(cache.get("kb")) == "别名2"


def test_a_kb_without_ontology_is_asked_about_once_per_interval(store):
    # Every turn of a kb served without an ontology asked the store, and waited.
    now = [100.0]
    cache = SnapshotCache(store, check_interval=1.0, clock=lambda: now[0])
    store.mode = "absent"
    assert [cache.get("kb") for _ in range(5)] == [None] * 5
    assert store.calls == 1
    now[0] += 1.5  # an ontology imported meanwhile by another process is seen
    store.mode = "ok"
    assert _alias(cache.get("kb")) == "别名1"
    assert store.calls == 2


def test_a_write_of_its_own_ends_what_was_known_of_a_kb_without_ontology(store):
    cache = SnapshotCache(store, check_interval=60)
    store.mode = "absent"
    assert cache.get("kb") is None
    store.mode = "ok"
    cache.invalidate("kb")  # this process imported an ontology
    assert _alias(cache.get("kb")) == "别名1"
