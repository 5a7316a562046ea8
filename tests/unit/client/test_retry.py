"""The client's retry decisions, without a network: how long to wait, what to retry."""

from __future__ import annotations

import email.utils
import time

import httpx
import pytest

from referent_client import (ConflictError, ReferentClient, ReferentConnectionError,
                             RetryPolicy, ServiceUnavailableError)
from referent_client.client import _retry_after


def test_backoff_doubles_with_jitter_up_to_the_cap():
    policy = RetryPolicy(backoff=0.5, max_backoff=2.0)
    for retry, base in ((0, 0.5), (1, 1.0), (2, 2.0), (5, 2.0)):
        waits = [policy.delay(retry, None) for _ in range(50)]
        assert all(base / 2 <= w <= base for w in waits)
        assert len(set(waits)) > 1  # jitter: clients do not retry in step


def test_retry_after_wins_but_is_capped():
    policy = RetryPolicy(max_retry_after=10)
    assert policy.delay(0, 3.0) == 3.0
    assert policy.delay(3, 120.0) == 10.0


def test_retry_after_as_seconds_or_as_an_http_date():
    assert _retry_after(httpx.Response(503, headers={"Retry-After": "7"})) == 7.0
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= _retry_after(httpx.Response(503, headers={"Retry-After": later})) <= 31
    assert _retry_after(httpx.Response(503, headers={"Retry-After": "soon"})) is None
    assert _retry_after(httpx.Response(503)) is None


def _client(handler, attempts: int = 3) -> ReferentClient:
    return ReferentClient("http://referent.test", "rk_x", transport=httpx.MockTransport(handler),
                          retry=RetryPolicy(attempts=attempts, backoff=0.001, max_backoff=0.002))


def test_a_conflict_is_not_retried(monkeypatch):
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(409, json={"title": "Conflict", "status": 409,
                                         "detail": "the session kept changing"})

    with _client(handler) as client, pytest.raises(ConflictError, match="kept changing") as raised:
        client.turn("demo", "s1", "你好")
    assert len(calls) == 1 and not raised.value.retryable


def test_attempts_bound_the_retries(monkeypatch):
    monkeypatch.setattr(time, "sleep", lambda s: None)
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(503, text="upstream down")  # not even a problem body

    with _client(handler, attempts=3) as client, pytest.raises(ServiceUnavailableError) as raised:
        client.delete_session("demo", "s1")
    assert len(calls) == 3 and raised.value.detail == "upstream down"
    assert raised.value.retryable


def test_a_post_cut_after_sending_is_not_repeated_without_an_idempotency_key():
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        raise httpx.RemoteProtocolError("server disconnected", request=request)

    with _client(handler) as client, pytest.raises(ReferentConnectionError):
        client.import_ontology("demo", "")
    assert len(calls) == 1
    calls.clear()
    with _client(handler) as client, pytest.raises(ReferentConnectionError):
        client.turn("demo", "s1", "你好")  # a turn carries its key: repeated, to the limit
    assert len(calls) == 3 and len({c.headers["Idempotency-Key"] for c in calls}) == 1


def test_the_async_client_retries_alike_and_honours_retry_after(monkeypatch):
    import asyncio

    from referent_client import AsyncReferentClient

    waits: list[float] = []

    async def no_sleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", no_sleep)
    answers = iter([httpx.Response(429, headers={"Retry-After": "2"}, json={"title": "Too Many"}),
                    httpx.Response(503, json={"title": "Unavailable", "status": 503}),
                    httpx.Response(204)])
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return next(answers)

    async def run() -> None:
        async with AsyncReferentClient("http://referent.test", "rk_x",
                                       transport=httpx.MockTransport(handler),
                                       retry=RetryPolicy(attempts=3, backoff=0.25)) as client:
            await client.delete_session("demo", "s1")

    asyncio.run(run())
    assert len(calls) == 3
    assert waits[0] == 2.0 and 0.125 <= waits[1] <= 0.5  # Retry-After, then backoff with jitter
