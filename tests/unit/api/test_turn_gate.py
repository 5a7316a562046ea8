"""The turn gate alone: slots, arrival order, refusal beyond the queue."""

from __future__ import annotations

import threading
import time

import anyio
import pytest

from api.turn_gate import TurnGate, TurnsSaturatedError, default_concurrency


def test_waiting_turns_start_in_arrival_order_one_slot_at_a_time():
    started: list[int] = []
    inside = [0, 0]  # now, most
    lock = threading.Lock()

    def work(n: int) -> int:
        with lock:
            started.append(n)
            inside[0] += 1
            inside[1] = max(inside)
        time.sleep(0.01)
        with lock:
            inside[0] -= 1
        return n

    async def main() -> list[int]:
        gate = TurnGate(1, 10)
        done: list[int] = []

        async def one(n: int) -> None:
            done.append(await gate.run(lambda: work(n)))

        async with anyio.create_task_group() as tg:
            for n in range(6):
                tg.start_soon(one, n)
                await anyio.sleep(0.001)  # arrive in this order
        return done

    done = anyio.run(main)
    assert started == done == list(range(6))
    assert inside[1] == 1


def test_a_turn_beyond_the_queue_is_refused_while_the_slots_are_busy():
    release = threading.Event()

    async def main() -> tuple[str, int]:
        gate = TurnGate(1, 1)
        results: list[str] = []

        async def one(tag: str) -> None:
            results.append(await gate.run(lambda: (release.wait(5), tag)[1]))

        async with anyio.create_task_group() as tg:
            tg.start_soon(one, "running")
            tg.start_soon(one, "queued")
            while gate.state() != (1, 1):
                await anyio.sleep(0.001)
            with pytest.raises(TurnsSaturatedError) as refused:
                await gate.run(lambda: "refused")
            release.set()
        assert refused.value.running == 1 and refused.value.waiting == 1
        return ",".join(results), gate.state()[0]

    assert anyio.run(main) == ("running,queued", 0)


def test_the_default_is_one_slot_more_than_the_usable_cores():
    assert default_concurrency() >= 2
    with pytest.raises(ValueError):
        TurnGate(0, 1)
