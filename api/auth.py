"""API keys and roles.

Keys are random strings (``rk_`` + 43 URL-safe characters, 256 bits) handed to
callers; the settings keep only their SHA-256, so a leaked configuration does
not leak a usable key. A fast hash is enough because the keys are random and
long: there is nothing to guess-and-check. Requests present a key as
``Authorization: Bearer <key>`` (or ``X-API-Key: <key>``); a key is never
logged, echoed or put into an error message.

Roles: ``admin`` may use every route; ``query`` only the turn routes.
"""

from __future__ import annotations

import hashlib
import secrets
import sys
from dataclasses import dataclass
from typing import Annotated, Literal

from fastapi import Depends, Request

from api.settings import ApiKeySetting, Settings, weak_neo4j_password
from common.errors import AuthenticationError, ConfigurationError, PermissionDeniedError
from kg.store import Actor

Role = Literal["admin", "query"]

#: Keys shown in the README and docs. Anyone can read them, so production refuses them.
EXAMPLE_KEYS = ("rk_admin_example_do_not_use", "rk_query_example_do_not_use")


def hash_key(key: str) -> str:
    """The stored form of a key."""
    return "sha256:" + hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_key() -> str:
    """A fresh random API key."""
    return "rk_" + secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Caller:
    """Who sent a request: the key's name (the audit log's "who") and role."""

    name: str
    role: Role

    @property
    def actor(self) -> Actor:
        return Actor(self.name)


class KeyRing:
    """The configured keys, looked up by hash."""

    def __init__(self, keys: list[ApiKeySetting]) -> None:
        names = [k.name for k in keys]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ConfigurationError(f"API key names must be unique; {duplicates} appear twice "
                                     "in REFERENT_AUTH__KEYS")
        self._by_hash = {k.hash: Caller(k.name, k.role) for k in keys}

    def __len__(self) -> int:
        return len(self._by_hash)

    def roles(self) -> set[str]:
        return {c.role for c in self._by_hash.values()}

    def hashes(self) -> set[str]:
        return set(self._by_hash)

    def identify(self, key: str | None) -> Caller:
        """The caller a presented key belongs to.

        Raises:
            AuthenticationError: no key, or a key that matches none configured.
        """
        if not key:
            raise AuthenticationError("this route needs an API key: send "
                                      "'Authorization: Bearer <key>'")
        caller = self._by_hash.get(hash_key(key))
        if caller is None:
            raise AuthenticationError("the API key is not valid; check it, or ask for a new one "
                                      "(`referent keys new`)")
        return caller


def build_keyring(settings: Settings, *, announce=None) -> KeyRing:
    """The keys of this process, after the start-up checks.

    Production refuses to start without an admin and a query key, with an
    example key from the docs, or with a weak Neo4j password
    (:func:`api.settings.weak_neo4j_password`). Development
    without keys makes one of each role for this process only and prints them
    once (``announce``, default stderr) with a warning.

    Raises:
        ConfigurationError: naming the setting to change.
    """
    keys = list(settings.auth.keys)
    if settings.mode == "production":
        problems = []
        roles = {k.role for k in keys}
        if "admin" not in roles or "query" not in roles:
            problems.append("REFERENT_AUTH__KEYS must hold at least one admin and one query key "
                            "(make them with `referent keys new --name NAME --role admin|query`)")
        example_hashes = {hash_key(k) for k in EXAMPLE_KEYS}
        public = [k.name for k in keys if k.hash in example_hashes]
        if public:
            problems.append(f"REFERENT_AUTH__KEYS uses a key published in the docs ({public}); "
                            "replace it with one from `referent keys new`")
        weak = weak_neo4j_password(settings.neo4j.password, settings.neo4j.user)
        if weak is not None:
            problems.append(f"REFERENT_NEO4J__PASSWORD {weak}; set a long random one (and "
                            "the same on the Neo4j server), e.g. `openssl rand -base64 24`")
        if problems:
            raise ConfigurationError("production mode refuses to start: " + "; ".join(problems))
        return KeyRing(keys)
    if keys:
        return KeyRing(keys)
    admin, query = new_key(), new_key()
    write = announce or (lambda text: print(text, file=sys.stderr, flush=True))
    write("WARNING: development mode and no API keys configured (REFERENT_AUTH__KEYS). "
          "Generated for this process only, shown once:\n"
          f"  admin key: {admin}\n  query key: {query}\n"
          "Set REFERENT_AUTH__KEYS (see `referent keys new`) to keep keys across restarts; "
          "production mode refuses to start without them.")
    return KeyRing([ApiKeySetting(name="dev-admin", role="admin", hash=hash_key(admin)),
                    ApiKeySetting(name="dev-query", role="query", hash=hash_key(query))])


def _presented_key(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if header:
        scheme, _, value = header.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
        raise AuthenticationError("the Authorization header must be 'Bearer <key>'")
    return request.headers.get("x-api-key") or None


def any_caller(request: Request) -> Caller:
    """Dependency of the turn routes: any valid key (admin or query)."""
    return request.app.state.keyring.identify(_presented_key(request))


def admin_caller(caller: Annotated[Caller, Depends(any_caller)]) -> Caller:
    """Dependency of the admin routes: an admin key."""
    if caller.role != "admin":
        raise PermissionDeniedError(f"the key {caller.name!r} has the role {caller.role!r}; "
                                    "admin routes need an admin key")
    return caller
