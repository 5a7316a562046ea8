"""The admin API: ``/v1/kbs/{kb}/admin/...``, admin keys only.

Routes translate HTTP to calls of :class:`kg.neo4j_admin.Neo4jOntologyAdmin`
and back; every check (alias clashes, unknown entities, cycles, references)
is made there, inside the write's transaction. Every write answers with
``changed``, the new alias table ``version`` and the ``audit_seq`` of its
audit entry; the process that made it uses the new version at once, every
other process within the snapshot check interval (1 s).
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, Path, Query, Request, Response
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field, model_validator
from starlette.concurrency import run_in_threadpool

from api.auth import Caller, admin_caller
from api.json_body import CheckedJsonRoute
from api.runtime import Runtime
from common.errors import FormatError, InputError, NotFoundError
from common.jsonl import surrogate_message, unpaired_surrogate
from common.language.normalize import Normalization
from kg.admin import AuditQuery, EntityView, KbInfo, WriteResult, entity_json
from kg.neo4j_admin import Neo4jOntologyAdmin
from kg.ontology import ConfusableDef, EntityDef, RelationDef, TypeDef, dump_ontology

logger = logging.getLogger(__name__)

Kb = Annotated[str, Path(pattern=r"^[A-Za-z0-9_]{1,64}$", description="knowledge base id")]
# Neo4j and SQLite integers are 64-bit: a larger number is refused (422), not a driver error.
INT64_MAX = 2**63 - 1


class _Body(BaseModel):
    # Strict: a JSON value of the declared type only (true is not 1, "2" is not 2).
    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _valid_unicode(cls, data: Any) -> Any:
        # JSON may carry "\ud800" alone; no store can encode it, so refuse it here (422).
        where = unpaired_surrogate(data)
        if where is not None:
            raise ValueError(surrogate_message(where))
        return data


class NormalizationBody(_Body):
    """Which normalization steps the kb uses (all true by default)."""

    width: bool = True
    case: bool = True
    punctuation: bool = True
    traditional_to_simplified: bool = True


class KbPut(_Body):
    normalization: NormalizationBody | None = None


class EntityCreate(_Body):
    id: str = Field(examples=["prod.a.personal"])
    name: str = Field(examples=["A产品（个人版）"])
    type: str = Field(examples=["Product"])
    aliases: list[str] = Field(default_factory=list, examples=[["A产品个人版", "A个人版"]])
    description: str = ""
    parent: str | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)
    ambiguous_aliases: list[str] = Field(
        default_factory=list, description="aliases meant to be shared with other entities")


class EntityPatch(_Body):
    name: str | None = None
    type: str | None = None
    description: str | None = None
    parent: str | None = None
    attributes: dict[str, Any] | None = None
    ambiguous_aliases: list[str] = Field(default_factory=list)


class AliasAdd(_Body):
    alias: str = Field(examples=["A个人版"])
    ambiguous: bool = Field(default=False,
                            description="true: the alias may also name other entities")


class RelationBody(_Body):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    from_: str = Field(alias="from", examples=["prod.a.personal"])
    type: str = Field(examples=["PART_OF"])
    to: str = Field(examples=["prod.a"])


class ConfusableBody(_Body):
    a: str
    b: str
    note: str = ""


class TypePut(_Body):
    attributes: list[str] = Field(default_factory=list, examples=[["价格", "申请流程"]])
    parent: str | None = None


def _runtime(request: Request) -> Runtime:
    return request.app.state.runtime


def _admin(runtime: Annotated[Runtime, Depends(_runtime)]) -> Neo4jOntologyAdmin:
    return runtime.admin


AdminDep = Annotated[Neo4jOntologyAdmin, Depends(_admin)]
CallerDep = Annotated[Caller, Depends(admin_caller)]
RuntimeDep = Annotated[Runtime, Depends(_runtime)]


def _write_json(result: WriteResult, **extra: Any) -> dict[str, Any]:
    return {"changed": result.changed, "version": result.version,
            "audit_seq": result.audit_seq, **result.details, **extra}


def _view_json(view: EntityView) -> dict[str, Any]:
    return {**entity_json(view.entity),
            "children": list(view.children),
            "relations": {"out": [{"type": r.type, "to": r.to_id} for r in view.relations_out],
                          "in": [{"from": r.from_id, "type": r.type} for r in view.relations_in]},
            "confusables": [{"with": c.b, "note": c.note} for c in view.confusables]}


def _kb_json(info: KbInfo) -> dict[str, Any]:
    return {"kb": info.kb, "version": info.version, "entities": info.entities,
            "aliases": info.aliases, "types": info.types, "created_at": info.created_at,
            "normalization": NormalizationBody(**info.normalization.__dict__).model_dump()}


router = APIRouter(route_class=CheckedJsonRoute, prefix="/v1/kbs/{kb}/admin", tags=["admin"])


@router.get("", operation_id="getKb", summary="The kb: version, sizes, normalization")
def get_kb(kb: Kb, admin: AdminDep, _: CallerDep) -> dict[str, Any]:
    return _kb_json(admin.kb_info(kb))


@router.put("", operation_id="putKb", summary="Create the kb, or change its normalization")
def put_kb(kb: Kb, admin: AdminDep, caller: CallerDep,
           body: Annotated[KbPut | None, Body()] = None) -> JSONResponse:
    """Creates an empty kb (201), or with ``normalization`` changes how its aliases
    are keyed: every alias is re-keyed in the same transaction (200)."""
    normalization = (Normalization(**body.normalization.model_dump())
                     if body is not None and body.normalization is not None else None)
    created, result = admin.create_kb(kb, caller.actor, normalization)
    payload = _write_json(result, kb=_kb_json(admin.kb_info(kb)))
    return JSONResponse(payload, status_code=201 if created else 200)


@router.get("/version", operation_id="getAliasVersion", summary="The alias table version")
def get_version(kb: Kb, runtime: RuntimeDep, _: CallerDep) -> dict[str, Any]:
    """``version``: the kb's version in Neo4j; ``snapshot_version``: the one this
    process links with (equal within a second of a write)."""
    state = runtime.ontology.kb_state(kb)
    if state is None:
        raise NotFoundError(f"knowledge base {kb!r} does not exist")
    held = runtime.snapshots.peek(kb)
    return {"kb": kb, "version": state.version,
            "snapshot_version": held.version if held is not None and held.uid == state.uid else None}


@router.get("/search", operation_id="searchAliases",
            summary="Find entities by alias: exact, prefix or fuzzy")
def search(kb: Kb, runtime: RuntimeDep, _: CallerDep,
           q: Annotated[str, Query(min_length=1, max_length=128, description="alias text")],
           mode: Literal["exact", "prefix", "fuzzy"] = "exact",
           limit: Annotated[int, Query(ge=1, le=100)] = 20) -> dict[str, Any]:
    """Matches the query, normalized like the kb's aliases, against the alias
    table the linker uses; one hit per entity with the alias key that matched."""
    runtime.snapshots.invalidate(kb)
    snapshot = runtime.snapshots.get(kb)
    if snapshot is None:
        raise NotFoundError(f"knowledge base {kb!r} does not exist")
    hits = []
    for match in snapshot.search(q, mode, limit=limit):
        entity = snapshot.entities[match.entity_id]
        hits.append({"id": entity.id, "name": entity.name, "type": entity.type,
                     "matched": match.alias, "score": match.score,
                     "ambiguous": len(snapshot.by_norm.get(match.alias, ())) > 1})
    return {"query": q, "mode": mode, "version": snapshot.version, "hits": hits}


# -- entities ----------------------------------------------------------------------------

@router.post("/entities", operation_id="createEntity", status_code=201, summary="Create an entity")
def create_entity(kb: Kb, body: EntityCreate, admin: AdminDep, caller: CallerDep) -> dict[str, Any]:
    """409 when the id exists, or when an alias already names another entity and
    is not listed in ``ambiguous_aliases`` (the answer names both entities)."""
    result = admin.create_entity(
        kb, EntityDef(id=body.id, name=body.name, type=body.type, aliases=tuple(body.aliases),
                      description=body.description, parent=body.parent,
                      attributes=body.attributes),
        caller.actor, ambiguous_aliases=body.ambiguous_aliases)
    return _write_json(result, entity=_view_json(admin.get_entity(kb, body.id)))


@router.get("/entities/{entity_id}", operation_id="getEntity",
            summary="Read an entity and what refers to it")
def get_entity(kb: Kb, entity_id: str, admin: AdminDep, _: CallerDep) -> dict[str, Any]:
    return _view_json(admin.get_entity(kb, entity_id))


@router.patch("/entities/{entity_id}", operation_id="patchEntity",
              summary="Change some fields of an entity")
def patch_entity(kb: Kb, entity_id: str, body: EntityPatch, admin: AdminDep,
                 caller: CallerDep) -> dict[str, Any]:
    """Only the fields sent change (``"parent": null`` clears the parent). A new
    name becomes an alias and the old name stays one."""
    sent = body.model_fields_set - {"ambiguous_aliases"}
    changes = {name: getattr(body, name) for name in sent}
    for required in ("name", "type"):
        if required in changes and changes[required] is None:
            raise InputError(f"{required} cannot be null; leave it out to keep it", field=required)
    if "description" in changes and changes["description"] is None:
        changes["description"] = ""
    if "attributes" in changes and changes["attributes"] is None:
        changes["attributes"] = {}
    result = admin.update_entity(kb, entity_id, caller.actor,
                                 ambiguous_aliases=body.ambiguous_aliases, **changes)
    return _write_json(result, entity=_view_json(admin.get_entity(kb, entity_id)))


@router.delete("/entities/{entity_id}", operation_id="deleteEntity", summary="Delete an entity")
def delete_entity(kb: Kb, entity_id: str, admin: AdminDep, caller: CallerDep,
                  force: bool = False) -> dict[str, Any]:
    """409 listing every reference (children, relations, confusable pairs) unless
    ``force=true``, which removes them too; the answer says what was removed."""
    return _write_json(admin.delete_entity(kb, entity_id, caller.actor, force=force))


@router.post("/entities/{entity_id}/aliases", operation_id="addAlias",
             summary="Add an alias to an entity")
def add_alias(kb: Kb, entity_id: str, body: AliasAdd, admin: AdminDep,
              caller: CallerDep) -> JSONResponse:
    """201 when added, 200 when the entity already had it. 409 naming both
    entities when the alias already names another one, unless ``ambiguous``."""
    result = admin.add_alias(kb, entity_id, body.alias, caller.actor, ambiguous=body.ambiguous)
    return JSONResponse(_write_json(result), status_code=201 if result.changed else 200)


@router.delete("/entities/{entity_id}/aliases", operation_id="removeAlias",
               summary="Remove an alias from an entity")
def remove_alias(kb: Kb, entity_id: str, admin: AdminDep, caller: CallerDep,
                 alias: Annotated[str, Query(min_length=1, max_length=128)]) -> dict[str, Any]:
    return _write_json(admin.remove_alias(kb, entity_id, alias, caller.actor))


# -- relations, confusable pairs, types ------------------------------------------------------

@router.post("/relations", operation_id="addRelation",
             summary="Add a relation (PART_OF, IS_A or custom)")
def add_relation(kb: Kb, body: RelationBody, admin: AdminDep, caller: CallerDep) -> JSONResponse:
    result = admin.add_relation(kb, RelationDef(body.from_, body.type, body.to), caller.actor)
    return JSONResponse(_write_json(result), status_code=201 if result.changed else 200)


@router.delete("/relations", operation_id="removeRelation", summary="Remove a relation")
def remove_relation(kb: Kb, admin: AdminDep, caller: CallerDep,
                    from_: Annotated[str, Query(alias="from")], type: str, to: str) -> dict[str, Any]:
    return _write_json(admin.remove_relation(kb, RelationDef(from_, type, to), caller.actor))


@router.get("/confusables", operation_id="listConfusables",
            summary="Every confusable pair of the kb")
def list_confusables(kb: Kb, admin: AdminDep, _: CallerDep) -> dict[str, Any]:
    return {"pairs": [{"a": c.a, "b": c.b, "note": c.note} for c in admin.list_confusables(kb)]}


@router.post("/confusables", operation_id="addConfusable",
             summary="Mark two entities as confusable")
def add_confusable(kb: Kb, body: ConfusableBody, admin: AdminDep, caller: CallerDep) -> JSONResponse:
    result = admin.add_confusable(kb, ConfusableDef(body.a, body.b, body.note), caller.actor)
    return JSONResponse(_write_json(result), status_code=201 if result.changed else 200)


@router.delete("/confusables", operation_id="removeConfusable", summary="Unmark a confusable pair")
def remove_confusable(kb: Kb, a: str, b: str, admin: AdminDep, caller: CallerDep) -> dict[str, Any]:
    return _write_json(admin.remove_confusable(kb, a, b, caller.actor))


@router.get("/types", operation_id="listTypes", summary="The type schema")
def list_types(kb: Kb, admin: AdminDep, _: CallerDep) -> dict[str, Any]:
    return {"types": [{"name": t.name, "attributes": list(t.attributes), "parent": t.parent}
                      for t in admin.list_types(kb)]}


@router.put("/types/{name}", operation_id="putType", summary="Create or replace a type")
def put_type(kb: Kb, name: str, body: TypePut, admin: AdminDep, caller: CallerDep) -> dict[str, Any]:
    return _write_json(admin.put_type(kb, TypeDef(name, tuple(body.attributes), body.parent),
                                      caller.actor))


@router.delete("/types/{name}", operation_id="deleteType", summary="Delete a type no entity uses")
def delete_type(kb: Kb, name: str, admin: AdminDep, caller: CallerDep) -> dict[str, Any]:
    return _write_json(admin.delete_type(kb, name, caller.actor))


# -- bulk ---------------------------------------------------------------------------------

@router.post("/import", operation_id="importOntology",
             summary="Import an ontology file (docs/formats.md §1)")
async def import_ontology(kb: Kb, request: Request, runtime: RuntimeDep, caller: CallerDep,
                          dry_run: bool = False) -> dict[str, Any]:
    """The body is the JSON Lines file itself. All of it or nothing: a bad line
    answers 422 naming the line and the field. Creates the kb if needed.
    ``dry_run=true`` checks the file and reports what would change."""
    raw = await request.body()
    try:
        lines = raw.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise FormatError(f"the body is not UTF-8 text (byte {exc.start}); send the file as "
                          "UTF-8", field="body") from exc
    report = await run_in_threadpool(runtime.ontology.import_ontology, kb, lines,
                                     path="request body", actor=caller.actor, dry_run=dry_run)
    if report.changed and not dry_run:
        runtime.on_ontology_change(kb, report.version)
    return {**report.__dict__, "changed": report.changed, "dry_run": dry_run}


@router.get("/export", operation_id="exportOntology",
            summary="Export the ontology (docs/formats.md §1)",
            response_class=PlainTextResponse)
def export_ontology(kb: Kb, runtime: RuntimeDep, _: CallerDep) -> Response:
    lines = dump_ontology(runtime.ontology.export_ontology(kb))
    return Response("".join(line + "\n" for line in lines), media_type="application/x-ndjson")


@router.post("/suggest", operation_id="suggestOntology",
             summary="Suggest an ontology from the kb's ingested passages (docs/ontology-suggest.md)")
def suggest_ontology(kb: Kb, runtime: RuntimeDep, _: CallerDep) -> dict[str, Any]:
    """Reads what the kb has ingested and answers the suggested ontology (the import
    format, only what the kb does not hold yet) with the evidence of every line. Nothing
    is written: review it, keep the lines you accept and send them to ``/import``, which
    imports all of them or none."""
    from kg.suggest import passages_from_chunks, suggest, to_ontology

    if not runtime.index.has_collection(kb):
        raise NotFoundError(f"knowledge base {kb!r} has no chunks: ingest a corpus first")
    suggestion = suggest(passages_from_chunks(runtime.index.iter_chunks(kb)))
    written = to_ontology(suggestion, runtime.ontology.export_ontology(kb, missing_ok=True))
    return {"ontology": "".join(line + "\n" for line in dump_ontology(written.ontology)),
            "evidence": written.evidence, "known": written.known}


# -- audit and re-tagging ---------------------------------------------------------------------

@router.get("/audit", operation_id="listAudit", summary="The audit log, newest first")
def audit(kb: Kb, admin: AdminDep, _: CallerDep,
          who: str | None = None,
          action: Annotated[str | None, Query(description="e.g. alias or alias.add")] = None,
          target: Annotated[str | None, Query(description="an entity id, type name, ...")] = None,
          since: datetime | None = None, until: datetime | None = None,
          before_seq: Annotated[int | None, Query(ge=1, le=INT64_MAX,
                                                  description="page: entries older than this")] = None,
          limit: Annotated[int, Query(ge=1, le=500)] = 50) -> dict[str, Any]:
    page = admin.audit(kb, AuditQuery(who=who, action=action, target=target,
                                      since=_in_utc(since, "since"), until=_in_utc(until, "until"),
                                      before_seq=before_seq, limit=limit))
    return {"entries": [e.__dict__ for e in page.entries], "next_before_seq": page.next_before_seq}


def _in_utc(value: datetime | None, field: str) -> datetime | None:
    """A time with an offset, in UTC: Python takes offsets up to ±24 h, Neo4j only ±18 h."""
    if value is None or value.tzinfo is None:
        return value
    try:
        return value.astimezone(timezone.utc)
    except OverflowError as exc:  # 0001-01-01T00:00+01:00 is before year 1 in UTC
        raise InputError(f"{field} is out of range once in UTC; use a later time",
                         field=field) from exc


@router.get("/retag", operation_id="getRetagStatus", summary="What background re-tagging last did")
def retag_status(kb: Kb, runtime: RuntimeDep, _: CallerDep) -> dict[str, Any]:
    status = runtime.retagger.status(kb)
    last = status.last
    return {"state": status.state, "error": status.last_error, "finished_at": status.finished_at,
            "last": None if last is None else {"version": last.version, "scanned": last.scanned,
                                               "changed": last.changed, "stale": last.stale}}


@router.post("/retag", operation_id="requestRetag",
             status_code=202, summary="Queue a re-tagging pass")
def retag_request(kb: Kb, runtime: RuntimeDep, _: CallerDep) -> dict[str, Any]:
    if runtime.ontology.kb_state(kb) is None:
        raise NotFoundError(f"knowledge base {kb!r} does not exist")
    runtime.retagger.request(kb)
    return {"state": runtime.retagger.status(kb).state}


@router.delete("/sessions", operation_id="eraseSubject", summary="Erase one end user's sessions and traces")
def erase_subject(kb: Kb, runtime: RuntimeDep, caller: CallerDep,
                  subject: Annotated[str, Query(
                      pattern=r"^[A-Za-z0-9_.:@+-]{1,128}$",
                      description="the end user, as callers sent it in X-Referent-Subject")]
                  ) -> dict[str, Any]:
    """Deletes every session of the kb made for ``subject`` (by any key) and every trace
    of its turns, from the session store (SQLite or Redis). The clarification log keeps
    only hashed session ids and is not touched."""
    erased = runtime.sessions.erase_subject(kb, subject)
    logger.info("erased the sessions of a subject", extra={
        "who": caller.name, "sessions": erased.sessions, "traces": erased.traces})
    return {"kb": kb, "sessions": erased.sessions, "traces": erased.traces}
