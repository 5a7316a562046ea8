"""Rate limits per API key: a token bucket of ``burst`` requests that refills at
``per_key_per_second`` (REFERENT_RATE_LIMIT__*).

With Redis configured the bucket lives there (one Lua script per request, using
Redis's clock), so every API process draws from the same one; otherwise each
process keeps its own. When Redis does not answer, the process counts alone
until it does: a limit that fails closed would turn a Redis hiccup into an outage.

A refused request raises :class:`common.errors.RateLimitedError`, which the API
answers with 429, ``Retry-After`` (whole seconds, at least 1) and a problem body.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

import redis

from api.settings import Settings
from common.errors import RateLimitedError

logger = logging.getLogger(__name__)

# KEYS[1] = the key's bucket; ARGV = rate per second, burst. Returns {allowed, wait seconds}
# (as strings: Redis turns Lua numbers into integers).
_TAKE = """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local v = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(v[1]) or burst
local at = tonumber(v[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local allowed = 0
local wait = 0
if tokens >= 1 - 1e-9 then
  tokens = math.max(0, tokens - 1)
  allowed = 1
else
  wait = (1 - tokens) / rate
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return {allowed, tostring(wait)}
"""

# Buckets one process keeps (a full bucket is forgotten first: forgetting it changes nothing).
_MAX_LOCAL_BUCKETS = 100_000


class RateLimiter(Protocol):
    def check(self, key_id: str) -> None:
        """Take one request from ``key_id``'s bucket.

        Raises:
            RateLimitedError: the bucket is empty; ``retry_after`` says for how long.
        """
        ...

    def close(self) -> None: ...


def refused(key_id: str, wait: float, rate: float) -> RateLimitedError:
    return RateLimitedError(
        f"this key sent more than {rate:g} requests per second; retry after "
        f"{max(1, math.ceil(wait))} s (REFERENT_RATE_LIMIT__PER_KEY_PER_SECOND and "
        "REFERENT_RATE_LIMIT__BURST set the limit)", retry_after=wait)


class LocalRateLimiter:
    """Token buckets in this process's memory."""

    def __init__(self, rate: float, burst: int, *, clock: Callable[[], float] = time.monotonic):
        self._rate = rate
        self._burst = burst
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, key_id: str) -> float:
        """0 when the request may go, else the seconds until it could."""
        now = self._clock()
        with self._lock:
            tokens, at = self._buckets.pop(key_id, (float(self._burst), now))
            tokens = min(self._burst, tokens + max(0.0, now - at) * self._rate)
            wait = 0.0
            if tokens >= 1 - 1e-9:  # float sums of refills fall a hair short of whole tokens
                tokens = max(0.0, tokens - 1)
            else:
                wait = (1 - tokens) / self._rate
            self._buckets[key_id] = (tokens, now)
            if len(self._buckets) > _MAX_LOCAL_BUCKETS:
                self._buckets.popitem(last=False)
        return wait

    def check(self, key_id: str) -> None:
        wait = self.take(key_id)
        if wait > 0:
            raise refused(key_id, wait, self._rate)

    def close(self) -> None:
        pass


class RedisRateLimiter:
    """Token buckets in Redis, shared by every process that uses the same Redis."""

    def __init__(self, url: str, rate: float, burst: int, *,
                 prefix: str = "referent:rate:", timeout: float = 0.5) -> None:
        self._client = redis.Redis.from_url(url, socket_timeout=timeout,
                                            socket_connect_timeout=timeout, decode_responses=True)
        self._take = self._client.register_script(_TAKE)
        self._rate = rate
        self._burst = burst
        self._prefix = prefix
        self._fallback = LocalRateLimiter(rate, burst)
        self._warned_at = float("-inf")

    def check(self, key_id: str) -> None:
        try:
            allowed, wait = self._take(keys=[self._prefix + key_id],
                                       args=[repr(self._rate), self._burst])
        except redis.RedisError as exc:
            now = time.monotonic()
            if now - self._warned_at > 60:
                self._warned_at = now
                logger.warning("the rate limit's Redis does not answer (%s); this process "
                               "counts requests alone until it does", exc)
            self._fallback.check(key_id)
            return
        if int(allowed) != 1:
            raise refused(key_id, float(wait), self._rate)

    def close(self) -> None:
        self._client.close()


def build_limiter(settings: Settings) -> RateLimiter | None:
    """The limiter the settings ask for; None when the limit is off (rate 0)."""
    limits = settings.rate_limit
    if limits.per_key_per_second <= 0:
        return None
    url = limits.redis_url or (settings.sessions.redis_url
                               if settings.sessions.backend == "redis" else None)
    if url:
        return RedisRateLimiter(url, limits.per_key_per_second, limits.burst)
    return LocalRateLimiter(limits.per_key_per_second, limits.burst)
