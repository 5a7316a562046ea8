"""The readers-writer lock that keeps this process's searches off rows it is rewriting."""

from __future__ import annotations

import threading
import time

from common.rwlock import ReadWriteLock


def test_readers_share_and_a_writer_is_alone():
    lock = ReadWriteLock(timeout=5)
    inside = []
    both_in = threading.Barrier(2, timeout=5)

    def read():
        with lock.reading():
            inside.append("r")
            both_in.wait()  # raises BrokenBarrierError unless the two readers are in at once

    readers = [threading.Thread(target=read) for _ in range(2)]
    for t in readers:
        t.start()
    for t in readers:
        t.join()
    assert inside == ["r", "r"]

    events = []
    with lock.writing():
        reader = threading.Thread(target=lambda: _hold(lock.reading(), events, "read"))
        reader.start()
        time.sleep(0.2)
        events.append("write done")
    reader.join(5)
    assert events == ["write done", "read"]


def test_a_waiting_writer_holds_back_later_readers():
    lock = ReadWriteLock(timeout=5)
    order = []
    first = lock.reading()
    first.__enter__()
    writer = threading.Thread(target=lambda: _hold(lock.writing(), order, "write"))
    writer.start()
    _until(lambda: lock._writers_waiting == 1)
    late = threading.Thread(target=lambda: _hold(lock.reading(), order, "late read"))
    late.start()
    time.sleep(0.2)
    assert order == []  # the writer waits for the first reader, the late reader for the writer
    first.__exit__(None, None, None)
    writer.join(5)
    late.join(5)
    assert order == ["write", "late read"]


def test_back_to_back_writes_let_waiting_readers_in():
    lock = ReadWriteLock(timeout=30)
    stop = threading.Event()

    def write_forever():
        while not stop.is_set():
            with lock.writing():
                time.sleep(0.01)

    writers = [threading.Thread(target=write_forever) for _ in range(2)]
    for t in writers:
        t.start()
    started = time.monotonic()
    for _ in range(20):
        with lock.reading():
            pass
    stop.set()
    for t in writers:
        t.join(5)
    # Twenty reads between writes of 10 ms each: far below the 30 s a starved reader waits.
    assert time.monotonic() - started < 10


def test_a_holder_that_never_lets_go_delays_others_only_by_the_timeout(caplog):
    lock = ReadWriteLock("the test's rows", timeout=0.3)
    stuck = lock.writing()
    stuck.__enter__()
    started = time.monotonic()
    with lock.reading():
        waited = time.monotonic() - started
    assert 0.3 <= waited < 3
    assert "the test's rows" in caplog.text and "going ahead" in caplog.text
    stuck.__exit__(None, None, None)
    with lock.writing():  # the lock is usable afterwards
        pass


def _hold(context, order, name):
    with context:
        order.append(name)


def _until(condition, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)
