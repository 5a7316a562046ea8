"""API keys, their scopes and roles, and who a request speaks for.

Keys are random strings (``rk_`` + 43 URL-safe characters, 256 bits) handed to
callers; only their SHA-256 is kept, so a leaked configuration does not leak a
usable key. A fast hash is enough because the keys are random and long: there
is nothing to guess-and-check. Requests present a key as
``Authorization: Bearer <key>`` (or ``X-API-Key: <key>``); a key is never
logged, echoed or put into an error message.

Two sources of keys:

- ``REFERENT_AUTH__KEYS`` (the environment): each key has one role on every kb.
- keys stored in Neo4j (:mod:`kg.api_keys`), made and revoked while the server
  runs (``/v1/admin/keys``, ``referent keys create|list|revoke``): each lists the
  kbs it may use and its role on each; ``*`` stands for every kb.

Roles per kb: ``admin`` may use every route of the kb, ``query`` only the turn
routes. A key used on a kb it has no scope on gets the same 404 as a kb that
does not exist. Keys are managed only by deployment-wide admin keys (the role
``admin`` on ``*``, which every admin key from the environment has).

A caller may say which end user it speaks for with ``X-Referent-Subject``;
sessions belong to the key and that subject (:mod:`dialogue.state`).
"""

from __future__ import annotations

import hashlib
import secrets
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Annotated, Literal

from fastapi import Depends, Request

from api.settings import ApiKeySetting, Settings, weak_neo4j_password
from common.errors import (AuthenticationError, ConfigurationError, NotFoundError,
                           PermissionDeniedError)
from common.ids import check_subject
from dialogue.engine import no_trace, unknown_kb
from dialogue.state import SessionAccess, SessionOwner
from kg.api_keys import ALL_KBS, KeyTable, StoredKey
from kg.store import Actor

Role = Literal["admin", "query"]

#: Keys shown in the README and docs. Anyone can read them, so production refuses them.
EXAMPLE_KEYS = ("rk_admin_example_do_not_use", "rk_query_example_do_not_use")
SUBJECT_HEADER = "X-Referent-Subject"


def hash_key(key: str) -> str:
    """The stored form of a key."""
    return "sha256:" + hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_key() -> str:
    """A fresh random API key."""
    return "rk_" + secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Caller:
    """Who sent a request: the key (its name is the audit log's "who"), its role per kb,
    and the end user it speaks for, when it said (``X-Referent-Subject``).

    ``key_id`` is ``env:<name>`` for a key from REFERENT_AUTH__KEYS and ``key:<id>``
    for a stored one: sessions and rate limits are counted against it.
    """

    name: str
    scopes: Mapping[str, Role]
    key_id: str
    subject: str | None = None

    @property
    def actor(self) -> Actor:
        return Actor(self.name)

    @property
    def role(self) -> Role:
        """The key's highest role on any kb (what the log and a 403 name)."""
        return "admin" if "admin" in self.scopes.values() else "query"

    @property
    def deployment_admin(self) -> bool:
        """An admin of every kb: may manage keys."""
        return self.scopes.get(ALL_KBS) == "admin"

    def role_in(self, kb: str) -> Role | None:
        """The key's role on ``kb``; None when the key may not use it at all."""
        role = self.scopes.get(kb)
        every = self.scopes.get(ALL_KBS)
        if role == "admin" or every == "admin":
            return "admin"
        return role or every

    def owner(self) -> SessionOwner:
        return SessionOwner(key=self.key_id, subject=self.subject)

    def session_access(self, kb: str) -> SessionAccess:
        """Sessions this caller may use in ``kb``: its own; every one as an admin of the kb."""
        return SessionAccess(owner=self.owner(), sees_all=self.role_in(kb) == "admin")


class KeyRing:
    """The keys from the environment (REFERENT_AUTH__KEYS), looked up by hash.
    Each has its role on every kb."""

    def __init__(self, keys: list[ApiKeySetting]) -> None:
        names = [k.name for k in keys]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ConfigurationError(f"API key names must be unique; {duplicates} appear twice "
                                     "in REFERENT_AUTH__KEYS")
        self._by_hash = {k.hash: Caller(k.name, {ALL_KBS: k.role}, f"env:{k.name}")
                         for k in keys}

    def __len__(self) -> int:
        return len(self._by_hash)

    def roles(self) -> set[str]:
        return {c.role for c in self._by_hash.values()}

    def hashes(self) -> set[str]:
        return set(self._by_hash)

    def names(self) -> set[str]:
        return {c.name for c in self._by_hash.values()}

    def callers(self) -> list[Caller]:
        return sorted(self._by_hash.values(), key=lambda c: c.name)

    def find(self, key_hash: str) -> Caller | None:
        return self._by_hash.get(key_hash)

    def identify(self, key: str | None) -> Caller:
        """The caller a presented key belongs to.

        Raises:
            AuthenticationError: no key, or a key that matches none configured.
        """
        caller = self.find(hash_key(_required(key)))
        if caller is None:
            raise _not_valid()
        return caller


def _required(key: str | None) -> str:
    if not key:
        raise AuthenticationError("this route needs an API key: send "
                                  "'Authorization: Bearer <key>'")
    return key


def _not_valid() -> AuthenticationError:
    return AuthenticationError("the API key is not valid; check it, or ask for a new one "
                               "(`referent keys create`)")


def stored_caller(key: StoredKey) -> Caller:
    return Caller(key.name, dict(key.scopes), f"key:{key.id}")


class Authenticator:
    """Every key of this process: the environment's first, then the stored ones."""

    def __init__(self, ring: KeyRing, stored: KeyTable | None = None) -> None:
        self.ring = ring
        self.stored = stored

    def identify(self, key: str | None) -> Caller:
        key_hash = hash_key(_required(key))
        caller = self.ring.find(key_hash)
        if caller is not None:
            return caller
        found = self.stored.lookup(key_hash) if self.stored is not None else None
        if found is None:
            raise _not_valid()
        return stored_caller(found)

    def close(self) -> None:
        if self.stored is not None:
            self.stored.close()


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
    """Dependency of every ``/v1`` route: a valid key, within its rate limit, with the
    subject it speaks for (``X-Referent-Subject``), when it sent one."""
    caller = request.app.state.auth.identify(_presented_key(request))
    limiter = getattr(request.app.state, "limiter", None)
    if limiter is not None:
        limiter.check(caller.key_id)
    subject = request.headers.get(SUBJECT_HEADER)
    if subject is not None:
        caller = replace(caller, subject=check_subject(subject))
    return caller


def unknown_kb_for_turns(kb: str) -> NotFoundError:
    """What a turn on an unknown kb answers; also a key's answer on a kb it has no scope
    on, so that the answer does not tell whether the kb exists."""
    return unknown_kb(kb)


def unknown_kb_for_admin(kb: str) -> NotFoundError:
    """What an admin route on a kb that does not exist answers (see :func:`unknown_kb_for_turns`)."""
    return NotFoundError(f"knowledge base {kb!r} does not exist; create it with PUT "
                         f"/v1/kbs/{kb}/admin or import an ontology into it")


async def kb_caller(request: Request, caller: Annotated[Caller, Depends(any_caller)]) -> Caller:
    """Dependency of the turn routes: a key with any role on the path's kb (404 otherwise);
    async: it only reads the caller, no thread-pool round trip."""
    kb = request.path_params.get("kb", "")
    if caller.role_in(kb) is None:
        raise unknown_kb_for_turns(kb)
    return caller


def trace_caller(request: Request, caller: Annotated[Caller, Depends(any_caller)]) -> Caller:
    """Dependency of the trace route: like :func:`kb_caller`, and a key with no scope on
    the kb gets the answer of a trace that does not exist."""
    if caller.role_in(request.path_params.get("kb", "")) is None:
        turn = request.path_params.get("turn", "")
        raise no_trace(request.path_params.get("session_id", ""),
                       int(turn) if str(turn).isdigit() else turn)
    return caller


def admin_caller(request: Request, caller: Annotated[Caller, Depends(any_caller)]) -> Caller:
    """Dependency of the kb admin routes: an admin key of the path's kb.

    A key with no scope on the kb gets 404, as if the kb did not exist; a query key of
    the kb gets 403.
    """
    kb = request.path_params.get("kb", "")
    role = caller.role_in(kb)
    if role is None:
        raise unknown_kb_for_admin(kb)
    if role != "admin":
        raise PermissionDeniedError(f"the key {caller.name!r} has the role {role!r}; "
                                    "admin routes need an admin key")
    return caller


def deployment_admin(caller: Annotated[Caller, Depends(any_caller)]) -> Caller:
    """Dependency of the key routes: an admin key of every kb (``*``)."""
    if not caller.deployment_admin:
        raise PermissionDeniedError(f"the key {caller.name!r} is not an admin of every kb; "
                                    "keys are managed with a deployment-wide admin key (an "
                                    "admin key from REFERENT_AUTH__KEYS, or a stored key with "
                                    'the scope {"*": "admin"})')
    return caller
