"""Key management: ``/v1/admin/keys``, deployment-wide admin keys only.

A key made here is stored hashed in Neo4j with its scopes (kb → role, ``*`` for
every kb), shown once in the answer, and works on every API process within
``REFERENT_AUTH__KEY_REFRESH_SECONDS`` (1 s); revoking it takes as long. The
keys of REFERENT_AUTH__KEYS are listed too (``source: environment``) but are
changed only there.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from api.auth import Caller, deployment_admin, hash_key, new_key
from api.json_body import CheckedJsonRoute
from common.errors import ConflictError, NotFoundError
from kg.api_keys import Neo4jKeyStore, StoredKey, check_scopes

logger = logging.getLogger(__name__)
router = APIRouter(route_class=CheckedJsonRoute, prefix="/v1/admin/keys", tags=["keys"])

KeyName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.:-]{1,64}$", examples=["faq-assistant"],
                               description="who the audit log names for this key's writes")]


class KeyCreate(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: KeyName
    scopes: dict[str, Literal["admin", "query"]] = Field(
        min_length=1, max_length=200, examples=[{"faq": "query", "hr": "admin"}],
        description='kb id → role on it; "*" means every kb ({"*": "admin"}: a deployment-'
                    "wide admin, who may also manage keys)")


def _store(request: Request) -> Neo4jKeyStore:
    return request.app.state.key_store


StoreDep = Annotated[Neo4jKeyStore, Depends(_store)]
AdminDep = Annotated[Caller, Depends(deployment_admin)]


def key_json(key: StoredKey) -> dict[str, Any]:
    return {"id": key.id, "name": key.name, "scopes": dict(key.scopes), "source": "stored",
            "created_at": key.created_at, "created_by": key.created_by,
            "revoked_at": key.revoked_at, "revoked_by": key.revoked_by}


def _env_json(caller: Caller) -> dict[str, Any]:
    return {"id": caller.key_id, "name": caller.name, "scopes": dict(caller.scopes),
            "source": "environment", "created_at": None, "created_by": None,
            "revoked_at": None, "revoked_by": None}


@router.post("", operation_id="createKey", status_code=201, summary="Make a key scoped to knowledge bases")
def create_key(body: KeyCreate, request: Request, store: StoreDep,
               caller: AdminDep) -> JSONResponse:
    """Makes a random key, stores its hash with its scopes and answers with the key
    itself, once: it cannot be shown again. 409 when a key (stored and active, or from
    REFERENT_AUTH__KEYS) already has the name."""
    scopes = check_scopes(body.scopes)
    auth = request.app.state.auth
    if body.name in auth.ring.names():
        raise ConflictError(f"the key {body.name!r} is set in REFERENT_AUTH__KEYS; pick "
                            "another name", field="name")
    key = new_key()
    stored = store.create(name=body.name, key_hash=hash_key(key), scopes=scopes,
                          created_by=caller.name)
    if auth.stored is not None:
        auth.stored.forget_now()
    logger.info("API key created", extra={"key_id": stored.id, "key_name": stored.name,
                                          "scopes": dict(stored.scopes), "who": caller.name})
    return JSONResponse({**key_json(stored), "key": key}, status_code=201)


@router.get("", operation_id="listKeys", summary="The keys: stored ones and those from the environment")
def list_keys(request: Request, store: StoreDep, _: AdminDep,
              revoked: Annotated[bool, Query(description="list revoked keys too")] = False
              ) -> dict[str, Any]:
    """Every key's id, name, scopes and history; never a key or its hash."""
    env = [_env_json(c) for c in request.app.state.auth.ring.callers()]
    return {"keys": env + [key_json(k) for k in store.list(revoked=revoked)]}


@router.delete("/{key_id}", operation_id="revokeKey", summary="Revoke a stored key")
def revoke_key(key_id: Annotated[str, Path(pattern=r"^[A-Za-z0-9_.:-]{1,80}$")],
               request: Request, store: StoreDep, caller: AdminDep) -> dict[str, Any]:
    """The key stops working on every process within the key refresh interval (1 s by
    default). Keys from REFERENT_AUTH__KEYS cannot be revoked here (409): remove them
    from the setting."""
    if key_id.startswith("env:"):
        raise ConflictError(f"{key_id!r} is set in REFERENT_AUTH__KEYS; remove it there and "
                            "restart the API processes")
    revoked = store.revoke(key_id.removeprefix("key:"), revoked_by=caller.name)
    if revoked is None:
        raise NotFoundError(f"no active stored key has the id {key_id!r}; `GET /v1/admin/keys` "
                            "lists them")
    auth = request.app.state.auth
    if auth.stored is not None:
        auth.stored.forget_now()
    logger.info("API key revoked", extra={"key_id": revoked.id, "key_name": revoked.name,
                                          "who": caller.name})
    return key_json(revoked)

