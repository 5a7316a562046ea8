"""The per-key token bucket: a burst, then one request per 1/rate seconds, and a
Retry-After that says when the next one would go."""

from __future__ import annotations

import pytest

from api.ratelimit import LocalRateLimiter, RedisRateLimiter, build_limiter
from api.settings import Settings
from common.errors import RateLimitedError


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_then_the_sustained_rate_and_a_truthful_wait():
    clock = Clock()
    limiter = LocalRateLimiter(rate=10, burst=3, clock=clock)
    for _ in range(3):
        limiter.check("key:a")
    with pytest.raises(RateLimitedError) as refused:
        limiter.check("key:a")
    assert refused.value.retry_after == pytest.approx(0.1)
    assert "REFERENT_RATE_LIMIT__PER_KEY_PER_SECOND" in str(refused.value)
    limiter.check("key:b")  # another key has its own bucket
    clock.now += 0.1
    limiter.check("key:a")  # one token refilled
    with pytest.raises(RateLimitedError):
        limiter.check("key:a")
    clock.now += 60
    for _ in range(3):  # refilled to the burst, not beyond
        limiter.check("key:a")
    with pytest.raises(RateLimitedError):
        limiter.check("key:a")


def test_seventy_requests_a_second_for_two_seconds_get_about_the_rate_through():
    clock = Clock()
    limiter = LocalRateLimiter(rate=30, burst=60, clock=clock)
    accepted = 0
    for i in range(140):
        clock.now = 100 + i / 70
        try:
            limiter.check("key:a")
            accepted += 1
        except RateLimitedError:
            pass
    # 60 at once plus 30 per second for the 2 seconds.
    assert 60 + 59 <= accepted <= 60 + 61


def test_an_unreachable_redis_counts_in_the_process_instead():
    limiter = RedisRateLimiter("redis://127.0.0.1:1/0", rate=1, burst=2, timeout=0.2)
    limiter.check("key:a")
    limiter.check("key:a")
    with pytest.raises(RateLimitedError):
        limiter.check("key:a")
    limiter.close()


def test_the_settings_choose_the_limiter():
    assert build_limiter(Settings(rate_limit={"per_key_per_second": 0})) is None
    assert isinstance(build_limiter(Settings()), LocalRateLimiter)
    shared = build_limiter(Settings(sessions={"backend": "redis"}))
    assert isinstance(shared, RedisRateLimiter)
    shared.close()
    own = build_limiter(Settings(rate_limit={"redis_url": "redis://127.0.0.1:1/0"}))
    assert isinstance(own, RedisRateLimiter)
    own.close()
