"""A turn is one SQLite transaction: the session and its trace are written together,
so a saved turn always has its trace and a failed write leaves the session as it was.
Real SQLite (its own file), the demo kb's real engine."""

from __future__ import annotations

import sqlite3

import pytest

from common.errors import DependencyError
from dialogue.engine import EngineConfig, TurnEngine
from dialogue.sqlite_store import SQLiteSessionStore

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]


@pytest.fixture
def sqlite_engine(runtime, tmp_path):
    store = SQLiteSessionStore(tmp_path / "sessions.sqlite3", ttl_seconds=600)
    engine = TurnEngine(runtime.snapshots, runtime.retriever, store, EngineConfig(),
                        facts=runtime.facts)
    yield engine, store
    store.close()


def _statements(store: SQLiteSessionStore) -> list[str]:
    """Every statement the calling thread's connection runs from now on (a turn runs on
    the calling thread, so on this connection)."""
    seen: list[str] = []
    store._connect().set_trace_callback(seen.append)
    return seen


def test_a_turn_writes_its_session_and_trace_in_one_transaction(sqlite_engine, demo_kb):
    engine, store = sqlite_engine
    engine.handle(demo_kb, "s1", "A产品怎么申请")
    seen = _statements(store)
    result = engine.handle(demo_kb, "s1", "个人版")
    words = [s.split()[0].upper() for s in seen]
    writes = [i for i, w in enumerate(words) if w in ("INSERT", "UPDATE", "DELETE")]
    assert words.count("BEGIN") == 1 and words.count("COMMIT") == 1, seen
    assert words.index("BEGIN") < min(writes) and max(writes) < words.index("COMMIT"), seen
    assert store.load_trace(demo_kb, "s1", result.turn)["turn"] == result.turn == 2


def test_a_trace_that_cannot_be_written_fails_the_turn_and_saves_nothing(sqlite_engine,
                                                                          demo_kb, tmp_path):
    engine, store = sqlite_engine
    engine.handle(demo_kb, "s1", "A产品怎么申请")
    with sqlite3.connect(tmp_path / "sessions.sqlite3") as other:  # a real write failure
        other.execute("CREATE TRIGGER refuse BEFORE INSERT ON traces "
                      "BEGIN SELECT RAISE(ABORT, 'disk refused the trace'); END")
    with pytest.raises(DependencyError, match="not saved"):
        engine.handle(demo_kb, "s1", "个人版")
    state = store.load(demo_kb, "s1")
    assert state.version == 1 and state.turn_count == 1
    assert store.load_trace(demo_kb, "s1", 2) is None
