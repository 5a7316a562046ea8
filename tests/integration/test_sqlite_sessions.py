"""Session state in a real SQLite file: optimistic concurrency, TTL, bounded size."""

import threading

import pytest

from common.errors import ConflictError
from dialogue.sqlite_store import SQLiteSessionStore
from dialogue.state import SessionState, TurnRecord


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(tmp_path, clock):
    s = SQLiteSessionStore(tmp_path / "sessions.sqlite3", ttl_seconds=60, clock=clock)
    yield s
    s.close()


def test_state_survives_a_reopen(tmp_path, clock):
    first = SQLiteSessionStore(tmp_path / "s.db", ttl_seconds=60, clock=clock)
    state = first.load("kb", "s1")
    state.focus = ["region.south"]
    first.save(state)
    first.close()
    again = SQLiteSessionStore(tmp_path / "s.db", ttl_seconds=60, clock=clock)
    assert again.load("kb", "s1").focus == ["region.south"]
    again.close()


def test_a_stale_save_is_refused_and_loses_nothing(store):
    a = store.load("kb", "s1")
    b = store.load("kb", "s1")
    a.focus = ["x"]
    store.save(a)
    b.focus = ["y"]
    with pytest.raises(ConflictError, match="reload it and retry"):
        store.save(b)
    assert store.load("kb", "s1").focus == ["x"]


def test_concurrent_first_saves_let_exactly_one_win(store):
    outcomes: list[str] = []
    barrier = threading.Barrier(8)

    def write(n: int) -> None:
        state = SessionState(kb="kb", session_id="race")
        state.focus = [f"e{n}"]
        barrier.wait()
        try:
            store.save(state)
            outcomes.append("ok")
        except ConflictError:
            outcomes.append("conflict")

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("ok") == 1 and outcomes.count("conflict") == 7


def test_idle_sessions_expire(store, clock):
    state = store.load("kb", "s1")
    state.focus = ["x"]
    store.save(state)
    clock.now += 61
    expired = store.load("kb", "s1")
    assert expired.focus == [] and expired.turn_count == 0
    expired.focus = ["new"]
    store.save(expired)  # a fresh start over an expired row is a normal save
    assert store.load("kb", "s1").focus == ["new"]


def test_state_stays_bounded():
    state = SessionState(kb="kb", session_id="s")
    for i in range(500):
        state.remember(TurnRecord(index=i, user="u" * 50, standalone="q", action="retrieve"),
                       keep_turns=4)
        state.consume([f"c{i}a", f"c{i}b"], window=50)
    assert len(state.recent) == 4 and state.recent[-1].index == 499
    assert len(state.consumed) == 50 and state.consumed[-1] == "c499b"


def test_delete(store):
    store.save(store.load("kb", "s1"))
    assert store.delete("kb", "s1") is True
    assert store.delete("kb", "s1") is False
