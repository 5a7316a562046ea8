"""One contract for every session store, run against the in-memory store, real
SQLite and a real Redis: optimistic concurrency, TTL expiry, delete, traces."""

import threading
import time
import uuid

import pytest

from common.errors import ConflictError
from dialogue.memory_store import InMemorySessionStore
from dialogue.redis_store import RedisSessionStore
from dialogue.session_store import TRACES_KEPT
from dialogue.sqlite_store import SQLiteSessionStore


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def make_store(request, tmp_path, settings):
    opened = []

    def make(ttl_seconds: int = 60):
        if request.param == "memory":
            store = InMemorySessionStore(ttl_seconds=ttl_seconds)
        elif request.param == "sqlite":
            store = SQLiteSessionStore(tmp_path / "sessions.sqlite3", ttl_seconds=ttl_seconds)
        else:
            store = RedisSessionStore(settings.sessions.redis_url, ttl_seconds=ttl_seconds,
                                      prefix=f"test:{uuid.uuid4().hex[:8]}:")
            store.ping()
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def store(make_store):
    return make_store()


class TestSessionStoreContract:
    def test_a_new_session_is_empty(self, store):
        state = store.load("kb", "new")
        assert state.version == 0 and state.turn_count == 0 and state.focus == []

    def test_saved_state_comes_back(self, store):
        state = store.load("kb", "s1")
        state.focus = ["region.south"]
        state.turn_count = 3
        saved = store.save(state)
        assert saved.version == 1
        again = store.load("kb", "s1")
        assert again.focus == ["region.south"] and again.turn_count == 3 and again.version == 1

    def test_a_loaded_state_changed_but_not_saved_changes_nothing(self, store):
        saved = store.save(store.load("kb", "s1").model_copy(update={"focus": ["a"]}))
        loaded = store.load("kb", "s1")
        loaded.focus.append("b")
        saved.focus.append("c")
        assert store.load("kb", "s1").focus == ["a"]

    def test_sessions_of_two_kbs_do_not_mix(self, store):
        state = store.load("kb_a", "same")
        state.focus = ["a"]
        store.save(state)
        assert store.load("kb_b", "same").focus == []

    def test_a_stale_save_is_refused_and_loses_nothing(self, store):
        a = store.load("kb", "s1")
        b = store.load("kb", "s1")
        a.focus = ["x"]
        store.save(a)
        b.focus = ["y"]
        with pytest.raises(ConflictError, match="reload it and retry"):
            store.save(b)
        assert store.load("kb", "s1").focus == ["x"]

    def test_concurrent_saves_let_exactly_one_win(self, store):
        base = store.save(store.load("kb", "race"))
        outcomes: list[str] = []
        barrier = threading.Barrier(8)

        def write(n: int) -> None:
            state = base.model_copy(update={"focus": [f"e{n}"]})
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
        assert store.load("kb", "race").version == base.version + 1

    def test_idle_sessions_expire_and_start_fresh(self, make_store):
        store = make_store(ttl_seconds=1)
        state = store.load("kb", "s1")
        state.focus = ["x"]
        store.save(state)
        deadline = time.monotonic() + 5
        while store.load("kb", "s1").focus and time.monotonic() < deadline:
            time.sleep(0.2)
        expired = store.load("kb", "s1")
        assert expired.focus == [] and expired.turn_count == 0
        expired.focus = ["new"]
        store.save(expired)  # starting over an expired session is a normal save
        assert store.load("kb", "s1").focus == ["new"]

    def test_delete(self, store):
        store.save(store.load("kb", "s1"))
        store.save_trace("kb", "s1", 1, {"turn": 1})
        assert store.delete("kb", "s1") is True
        assert store.delete("kb", "s1") is False
        assert store.load("kb", "s1").version == 0
        assert store.load_trace("kb", "s1", 1) is None


class TestTraceContract:
    def test_traces_are_kept_for_the_recent_turns_only(self, store):
        for turn in range(1, TRACES_KEPT + 6):
            store.save_trace("kb", "s1", turn, {"turn": turn, "links": ["华南区"]})
        assert store.load_trace("kb", "s1", TRACES_KEPT + 5) == {"turn": TRACES_KEPT + 5,
                                                                  "links": ["华南区"]}
        assert store.load_trace("kb", "s1", 5) is None
        assert store.load_trace("kb", "s1", 6) is not None
        assert store.load_trace("kb", "other", 6) is None

    def test_a_session_named_like_anothers_traces_keeps_both(self, store):
        # ':' is allowed in session ids: "s1:traces" is a session of its own, not the
        # place where the traces of "s1" live.
        state = store.load("kb", "s1:traces").model_copy(update={"focus": ["a"]})
        store.save(state)
        store.save_trace("kb", "s1", 1, {"turn": 1})
        assert store.load("kb", "s1:traces").focus == ["a"]
        assert store.load_trace("kb", "s1", 1) == {"turn": 1}
        assert store.delete("kb", "s1") is False
        assert store.load("kb", "s1:traces").focus == ["a"]
        assert store.load_trace("kb", "s1", 1) is None

    def test_a_trace_is_stored_as_json(self, store):
        trace = {"turn": 1, "scores": [0.5], "nested": {"链接": None}}
        store.save_trace("kb", "s1", 1, trace)
        trace["turn"] = 99
        assert store.load_trace("kb", "s1", 1) == {"turn": 1, "scores": [0.5],
                                                    "nested": {"链接": None}}

    def test_a_trace_saved_with_the_state_comes_back_and_a_lost_save_keeps_neither(self, store):
        first = store.load("kb", "s1").model_copy(update={"turn_count": 1})
        store.save(first, trace={"turn": 1, "links": ["华南区"]})
        assert store.load_trace("kb", "s1", 1) == {"turn": 1, "links": ["华南区"]}
        # A save over a version another turn already moved on: the state and its trace
        # are both refused.
        stale = first.model_copy(update={"turn_count": 2})
        with pytest.raises(ConflictError):
            store.save(stale, trace={"turn": 2})
        assert store.load_trace("kb", "s1", 2) is None
        assert store.load("kb", "s1").turn_count == 1
