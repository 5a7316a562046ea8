"""What is particular to each real session store (their common contract is
tests/contract/test_session_store_contract.py): SQLite keeps state across a
reopen, an unreachable Redis names its setting, state stays bounded."""

import pytest

from common.errors import RetryableDependencyError
from dialogue.redis_store import RedisSessionStore
from dialogue.sqlite_store import SQLiteSessionStore
from dialogue.state import SessionState, TurnRecord


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


@pytest.mark.redis
def test_unreachable_redis_is_a_retryable_error_that_names_the_setting():
    store = RedisSessionStore("redis://127.0.0.1:1/0", ttl_seconds=60, timeout=0.5)
    with pytest.raises(RetryableDependencyError, match="REFERENT_SESSIONS__REDIS_URL"):
        store.load("kb", "s1")
    store.close()
