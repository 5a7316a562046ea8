"""What is particular to each real session store (their common contract is
tests/contract/test_session_store_contract.py): SQLite keeps state across a
reopen, an unreachable Redis names its setting, state stays bounded."""

import time
import uuid

import pytest

from common.errors import RetryableDependencyError
from dialogue.memory_store import InMemorySessionStore
from dialogue.redis_store import RedisSessionStore
from dialogue.sqlite_store import SQLiteSessionStore
from dialogue.state import SessionOwner, SessionState, TurnRecord


def test_state_stays_bounded_however_long_the_conversation():
    state = SessionState(kb="kb", session_id="s")
    for i in range(500):
        state.remember(TurnRecord(index=i, user="u" * 50, standalone="q", action="retrieve"),
                       keep_turns=4)
        state.consume([f"c{i}a", f"c{i}b"], window=50)
    assert len(state.recent) == 4 and state.recent[-1].index == 499
    assert len(state.consumed) == 50 and state.consumed[-1] == "c499b"
    assert len(state.model_dump_json()) < 4000


def test_sqlite_state_survives_a_reopen(tmp_path):
    first = SQLiteSessionStore(tmp_path / "s.db", ttl_seconds=60)
    state = first.load("kb", "s1")
    state.focus = ["region.south"]
    first.save(state)
    first.close()
    again = SQLiteSessionStore(tmp_path / "s.db", ttl_seconds=60)
    assert again.load("kb", "s1").focus == ["region.south"]
    again.close()


def test_sqlite_commits_without_waiting_for_the_disk_yet_keeps_the_log(tmp_path):
    """A turn's save must not wait on an fsync (WAL, synchronous=NORMAL), in every
    thread's connection; the write-ahead log keeps the file consistent."""
    import threading

    store = SQLiteSessionStore(tmp_path / "s.db", ttl_seconds=60)
    seen = []

    def read_settings() -> None:
        conn = store._connect()
        seen.append((conn.execute("PRAGMA synchronous").fetchone()[0],
                     conn.execute("PRAGMA journal_mode").fetchone()[0]))

    worker = threading.Thread(target=read_settings)
    worker.start()
    worker.join()
    read_settings()
    store.close()
    assert seen == [(1, "wal"), (1, "wal")]  # 1 = NORMAL (2 = FULL, the default)


@pytest.mark.redis
def test_unreachable_redis_is_a_retryable_error_that_names_the_setting():
    store = RedisSessionStore("redis://127.0.0.1:1/0", ttl_seconds=60, timeout=0.5)
    with pytest.raises(RetryableDependencyError, match="REFERENT_SESSIONS__REDIS_URL"):
        store.load("kb", "s1")
    store.close()


class TestRetentionAndErasure:
    """Trace retention settings and erasing one end user, on SQLite and Redis alike."""

    @pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
    def make(self, request, tmp_path, settings):
        opened = []

        def make(**kwargs):
            if request.param == "memory":
                store = InMemorySessionStore(**kwargs)
            elif request.param == "sqlite":
                store = SQLiteSessionStore(tmp_path / f"s{len(opened)}.sqlite3", **kwargs)
            else:
                store = RedisSessionStore(settings.sessions.redis_url,
                                          prefix=f"test:{uuid.uuid4().hex[:8]}:", **kwargs)
            opened.append(store)
            return store

        yield make
        for store in opened:
            store.close()

    def test_traces_kept_is_a_setting_and_zero_keeps_none(self, make):
        three = make(ttl_seconds=60, traces_kept=3)
        for turn in range(1, 6):
            three.save_trace("kb", "s1", turn, {"turn": turn})
        assert [three.load_trace("kb", "s1", t) is not None for t in range(1, 6)] == \
            [False, False, True, True, True]
        none = make(ttl_seconds=60, traces_kept=0)
        none.save_trace("kb", "s1", 1, {"turn": 1, "user": "我的电话是13800138000"})
        assert none.load_trace("kb", "s1", 1) is None

    def test_a_trace_is_gone_after_its_own_ttl_while_the_session_lives(self, make):
        store = make(ttl_seconds=60, trace_ttl_seconds=1)
        state = store.load("kb", "s1")
        store.save(state)
        store.save_trace("kb", "s1", 1, {"turn": 1})
        assert store.load_trace("kb", "s1", 1) == {"turn": 1}
        time.sleep(1.3)
        assert store.load_trace("kb", "s1", 1) is None
        assert store.load("kb", "s1").version == 1  # the session itself is still there

    def test_erase_subject_removes_that_users_sessions_and_traces_in_that_kb_only(self, make):
        store = make(ttl_seconds=60)
        owners = {"s1": SessionOwner(key="env:app", subject="alice"),
                  "s2": SessionOwner(key="key:k1", subject="alice"),  # another key, same user
                  "s3": SessionOwner(key="env:app", subject="bob"),
                  "s4": SessionOwner(key="env:app")}
        for kb in ("kb", "kb2"):
            for session, owner in owners.items():
                state = store.load(kb, session)
                state.owner = owner
                store.save(state)
                for turn in (1, 2):
                    store.save_trace(kb, session, turn, {"turn": turn,
                                                         "owner": owner.model_dump()})
        erased = store.erase_subject("kb", "alice")
        assert (erased.sessions, erased.traces) == (2, 4)
        assert store.load("kb", "s1").owner is None and store.load("kb", "s1").version == 0
        assert store.load_trace("kb", "s2", 2) is None
        assert store.load("kb", "s3").owner.subject == "bob"
        assert store.load_trace("kb", "s3", 1) is not None
        assert store.load("kb", "s4").owner == owners["s4"]
        assert store.load("kb2", "s1").owner == owners["s1"]  # the other kb keeps hers
        assert store.erase_subject("kb", "alice").sessions == 0


def test_a_session_saved_before_owners_loads_and_goes_to_its_next_caller():
    from dialogue.state import SessionAccess

    old = ('{"kb": "kb", "session_id": "s1", "version": 3, "turn_count": 2, "recent": [], '
           '"focus": ["region.east"], "consumed": []}')
    state = SessionState.model_validate_json(old)
    assert state.owner is None and state.focus == ["region.east"]
    alice = SessionAccess(SessionOwner(key="env:app", subject="alice"))
    bob = SessionAccess(SessionOwner(key="env:app", subject="bob"))
    assert alice.permits(state.owner)
    claimed = state.model_copy(update={"owner": alice.owner})
    assert not bob.permits(claimed.owner)
    assert SessionAccess(bob.owner, sees_all=True).permits(claimed.owner)


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def test_a_turns_frame_and_reading_survive_the_store(backend, tmp_path, settings):
    from kg.aliases import AliasSnapshot
    from kg.ontology import parse_ontology
    from understanding.frame import Intent, TurnFrame, build_frame
    from understanding.linker import EntityLinker
    from understanding.mentions import detect_mentions
    from understanding.reading import reading, snapshot_key, stored

    snapshot = AliasSnapshot.from_ontology("kb", 1, parse_ontology([
        '{"kind": "type", "name": "Region", "attributes": ["销售额"]}',
        '{"kind": "entity", "id": "region.east", "name": "华东区", "type": "Region"}']))
    detection = detect_mentions("华东区7月的销售额是多少", snapshot)
    frame = build_frame(detection, EntityLinker().link(detection, snapshot), intent=Intent.QUESTION,
                        subjects=["region.east"], times=["7月"], attribute=["销售额"])
    store = (SQLiteSessionStore(tmp_path / "s.db", ttl_seconds=60) if backend == "sqlite" else
             RedisSessionStore(settings.sessions.redis_url, ttl_seconds=60,
                               prefix=f"test:{uuid.uuid4().hex[:8]}:"))
    state = store.load("kb", "s1")
    state.remember(TurnRecord(index=1, user=detection.text, standalone=detection.text,
                              action="retrieve", frame=frame.to_stored(),
                              read=[stored(detection, True, snapshot_key(snapshot))]), keep_turns=4)
    store.save(state)
    record = store.load("kb", "s1").recent[0]
    store.close()
    assert TurnFrame.from_stored(record.frame) == frame
    with reading(snapshot, record.read) as kept:
        assert kept.get(detection.text, snapshot) == detection
