"""The OpenAPI document: FastAPI's, finished with what it cannot know by itself.

- the ``Problem`` schema (RFC 9457) as the answer of every error status an
  operation can give, each with an example, in place of FastAPI's own 422 shape;
- request and response examples for every operation (:data:`EXAMPLES`), and
  response schemas for the admin routes that return plain dicts;
- the ``X-Request-ID`` request and response header, ``Retry-After`` on 503,
  ``WWW-Authenticate`` on 401, and the two ways to send an API key;
- the raw bodies FastAPI does not see: the ontology file of ``.../import``
  (JSON Lines), the export (JSON Lines) and ``/metrics`` (Prometheus text).

Which errors an operation lists follows from what it is: every ``/v1`` route
can answer 401, 422, 429 and 503, admin routes 403, routes with a kb 404, routes
with a body 400 and 413, turns and admin writes 409, and everything 500.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from dialogue.trace import openapi_schemas as trace_schemas

PROBLEM = "application/problem+json"
NDJSON = "application/x-ndjson"
A = "/v1/kbs/{kb}/admin"
SESSION = "/v1/kbs/{kb}/sessions/{session_id}"
SCHEMA = "/v1/schemas/{name}"
KEYS = "/v1/admin/keys"

DESCRIPTION = """\
Conversational retrieval that links each turn to canonical entities before it searches.

**Keys.** Every `/v1` route needs an API key, as `Authorization: Bearer <key>` or
`X-API-Key: <key>`. A key has a role per knowledge base: `admin` may use every route of
the kb, `query` only the turn routes and `/v1/schemas`. Keys from `REFERENT_AUTH__KEYS` have their role on
every kb; keys made with `POST /v1/admin/keys` list their kbs (`*`: every kb). A key used
on a kb it has no scope on gets 404, the same answer as a kb that does not exist. Keys
are managed by deployment-wide admin keys (`admin` on every kb). `/healthz`, `/readyz`
and `/metrics` need none.

**Sessions** belong to the key that made them and, when the caller sends
`X-Referent-Subject: <end user id>` (1-128 characters from `A-Z a-z 0-9 _ . : @ + -`),
to that end user: another key or subject gets 404 for the session's turns, traces and
delete. Admin keys of the kb may use every session of it.

**Rate limits.** Each key may send `REFERENT_RATE_LIMIT__PER_KEY_PER_SECOND` requests per
second (default 30) with bursts of `REFERENT_RATE_LIMIT__BURST` (default 60), counted
across every API process when Redis is configured: above that, 429 with `Retry-After`.

**Operation ids** are short and stable (`playTurn`, `deleteSession`, `searchAliases`, ...):
generated clients may name their functions after them.

**Formats.** The ontology, corpus, suite and results files are described in `docs/formats.md`;
`GET /v1/schemas/{name}` gives the JSON Schema every line of them is checked against.

**Errors** have one shape, `application/problem+json`: `title`, `status`, `detail` (what to
change), `request_id`, and `field` (the input at fault), `line`, `errors` where they apply.
That includes 404 for a path no route has, 405 for a method a path does not take (the
`Allow` header lists the ones it does), 413 for a body over the limit and 500.

**Request ids.** Send `X-Request-ID` (1-128 characters from `A-Z a-z 0-9 . _ : @ / + = -`)
to follow a request through the logs; anything else is replaced by a fresh id. Every
answer carries the id in `X-Request-ID`, and problem bodies in `request_id`.

**Limits.** A JSON body may be at most `REFERENT_LIMITS__MAX_BODY_BYTES` (default 1 MiB),
the ontology file of an import `REFERENT_LIMITS__MAX_IMPORT_BYTES` (default 128 MiB):
larger ones get 413 before they are read. A turn's text may be at most
`REFERENT_LIMITS__MAX_TEXT_CHARS` characters (the `maxLength` of `TurnRequest.text`),
printable (tabs and line breaks allowed): 422 otherwise.
"""

REQUEST_ID = {"description": "the request's id: the caller's `X-Request-ID` when valid, "
                             "else a new one", "schema": {"type": "string"}}

PROBLEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "Problem",
    "description": "RFC 9457 problem details: every error answer of the API.",
    "required": ["type", "title", "status", "detail"],
    "properties": {
        "type": {"type": "string", "examples": ["about:blank"]},
        "title": {"type": "string", "description": "the kind of error"},
        "status": {"type": "integer", "description": "the HTTP status, again"},
        "detail": {"type": "string", "description": "what was wrong and what to do"},
        "request_id": {"type": "string", "description": "as in the X-Request-ID header"},
        "field": {"type": ["string", "null"], "description": "the input field at fault"},
        "line": {"type": ["integer", "null"], "description": "the line of an imported file"},
        "errors": {"type": "array", "description": "every invalid field (422)",
                   "items": {"type": "object", "properties": {
                       "field": {"type": "string"}, "message": {"type": "string"}}}},
        "alias": {"type": "string"}, "entity": {"type": "string"},
        "conflicting": {"type": "array", "items": {"type": "string"}},
        "references": {"type": "object"},
        "retryable": {"type": "boolean"},
        "retry_after": {"type": "integer", "description": "seconds, as in Retry-After (429)"},
        "checks": {"type": "object", "description": "per dependency (503 from /readyz)"},
    },
}

# Schemas of the admin answers that FastAPI only knows as ``dict``.
_WRITE = {
    "type": "object", "title": "WriteResult",
    "description": "What a write did; some writes add fields (`alias`, `removed`, ...).",
    "required": ["changed", "version", "audit_seq"],
    "properties": {
        "changed": {"type": "boolean", "description": "false: nothing needed changing"},
        "version": {"type": ["integer", "null"], "description": "the alias table version now"},
        "audit_seq": {"type": ["integer", "null"], "description": "the write's audit entry"},
    },
}
_NORMALIZATION = {"type": "object", "properties": {
    k: {"type": "boolean"} for k in ("width", "case", "punctuation", "traditional_to_simplified")}}
_KB = {
    "type": "object", "title": "KbInfo",
    "required": ["kb", "version", "entities", "aliases", "types", "normalization"],
    "properties": {"kb": {"type": "string"}, "version": {"type": ["integer", "null"]},
                   "entities": {"type": "integer"}, "aliases": {"type": "integer"},
                   "types": {"type": "integer"}, "created_at": {"type": ["string", "null"]},
                   "normalization": {"$ref": "#/components/schemas/Normalization"}},
}
_ENTITY = {
    "type": "object", "title": "EntityView",
    "required": ["id", "name", "type", "aliases", "children", "relations", "confusables"],
    "properties": {
        "id": {"type": "string"}, "name": {"type": "string"}, "type": {"type": "string"},
        "aliases": {"type": "array", "items": {"type": "string"}},
        "description": {"type": "string"}, "parent": {"type": ["string", "null"]},
        "attributes": {"type": "object"},
        "children": {"type": "array", "items": {"type": "string"}},
        "relations": {"type": "object", "properties": {
            "out": {"type": "array", "items": {"type": "object"}},
            "in": {"type": "array", "items": {"type": "object"}}}},
        "confusables": {"type": "array", "items": {"type": "object"}},
    },
}
_WITH_ENTITY = {"allOf": [{"$ref": "#/components/schemas/WriteResult"},
                          {"type": "object", "required": ["entity"],
                           "properties": {"entity": {"$ref": "#/components/schemas/EntityView"}}}]}
_READY = {
    "type": "object", "title": "Readiness", "required": ["status", "checks"],
    "properties": {"status": {"type": "string", "enum": ["ready", "degraded"]},
                   "checks": {"type": "object", "additionalProperties": {
                       "type": "object", "required": ["status", "required"],
                       "properties": {"status": {"type": "string",
                                                 "enum": ["ok", "down", "timeout"]},
                                      "required": {"type": "boolean"},
                                      "ms": {"type": "number"}, "error": {"type": "string"}}}}},
}
SCHEMAS = {"Problem": PROBLEM_SCHEMA, "WriteResult": _WRITE, "Normalization": _NORMALIZATION,
           "KbInfo": _KB, "EntityView": _ENTITY, "Readiness": _READY}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


@dataclass(frozen=True)
class Examples:
    """One operation's examples: its request body, its success answer (``status``),
    further success statuses it may answer, its response schema when FastAPI has
    none, and problem examples of its own for some error statuses."""

    response: Any
    status: int = 200
    request: Any = None
    also: dict[int, str] = field(default_factory=dict)
    schema: dict[str, Any] | None = None
    errors: dict[int, dict[str, Any]] = field(default_factory=dict)


def _p(status: int, title: str, detail: str, **extra: Any) -> dict[str, Any]:
    return {"type": "about:blank", "title": title, "status": status, "detail": detail,
            **extra, "request_id": "4bf92f3577b34da6a3ce929d0e0e4736"}


GENERIC_ERRORS: dict[int, tuple[str, dict[str, Any]]] = {
    400: ("the body is not valid JSON",
          _p(400, "Malformed JSON", "the request body is not valid JSON (Expecting value); send "
             "one JSON object with content-type application/json", field="body")),
    401: ("no API key, or one that is not valid",
          _p(401, "Unauthorized", "this route needs an API key: send 'Authorization: Bearer "
             "<key>'")),
    403: ("a query key on an admin route",
          _p(403, "Forbidden", "the key 'assistant' has the role 'query'; admin routes need an "
             "admin key")),
    404: ("the kb (or the entity, session, turn, type named in the path) does not exist, "
          "the key has no scope on the kb (the same answer), or the session is another "
          "caller's",
          _p(404, "Not found", "knowledge base 'hr' does not exist; create it with PUT "
             "/v1/kbs/hr/admin or import an ontology into it")),
    409: ("the write clashes with what exists, or the session kept changing",
          _p(409, "Conflict", "entity 'prod.c' already exists in 'demo'; update it with PATCH "
             ".../entities/prod.c or pick another id", field="id")),
    413: ("the body is over the limit",
          _p(413, "Request Entity Too Large", "the request body is 2000000 bytes; this route "
             "takes at most 1048576 bytes (REFERENT_LIMITS__MAX_BODY_BYTES)")),
    422: ("a field, path or query parameter is invalid; `field` names it",
          _p(422, "Invalid input", "invalid entity id 'x y': use 1-128 characters from A-Z "
             "a-z 0-9 _ . : -", field="id")),
    429: ("the key sent more requests than its rate limit allows; retry after Retry-After "
          "seconds",
          _p(429, "Too many requests", "this key sent more than 30 requests per second; retry "
             "after 1 s (REFERENT_RATE_LIMIT__PER_KEY_PER_SECOND and REFERENT_RATE_LIMIT__BURST "
             "set the limit)", retry_after=1)),
    500: ("an unexpected failure; the log has it under the request id",
          _p(500, "Internal Server Error", "the server failed to answer; the log has the "
             "details under request id 4bf92f3577b34da6a3ce929d0e0e4736")),
    503: ("Neo4j, Milvus or the session store is down; retry after Retry-After seconds "
          "(a turn's session is not advanced)",
          _p(503, "Dependency unavailable", "Milvus could not search for kb 'demo' (transient, "
             "retry): connection refused", retryable=True)),
}

_TURN_CLARIFY = {
    "session": "s1", "turn": 1, "user": "A产品怎么申请", "action": "clarify",
    "standalone": "A产品怎么申请", "queries": [], "entities": [],
    "clarification": {
        "question": "您说的“A产品”指的是哪一个？1. A产品（企业版）（面向企业客户的A产品版本……）；"
                    "2. A产品（个人版）（面向个人用户的A产品版本……）",
        "mention": "A产品",
        "options": [{"id": "prod.a.enterprise", "name": "A产品（企业版）",
                     "description": "面向企业客户的A产品版本：以企业营业执照开户申请，按席位计费。"},
                    {"id": "prod.a.personal", "name": "A产品（个人版）",
                     "description": "面向个人用户的A产品版本：个人实名注册即可申请，按月或按年订阅。"}]},
    "evidence": [], "rewrite": {"source": "original", "accepted": False, "checks": {}},
    "context": "", "context_tokens": 0, "latency_ms": 25.0,
    "trace": {"alias_version": 1, "classification": "needs_clarification",
              "timings_ms": {"session_load": 0.4, "link": 0.5, "session_save": 3.1}}}
_EVIDENCE = {"chunk_id": "prod-a-personal-apply#1", "doc_id": "prod-a-personal-apply",
             "score": 1.167, "title": "A产品（个人版）申请流程",
             "text": "A产品个人版申请常见问题：每个身份证号只能申请1个个人版账号；未满18周岁不能申请。",
             "entity_ids": ["prod.a.personal"], "query": "A产品（个人版）怎么申请",
             "seen_in_turn": None}
_SEEN_EVIDENCE = {"chunk_id": "prod-a-overview#2", "doc_id": "prod-a-overview", "score": 0.912,
                  "title": "A产品概览", "text": "A产品个人版可在官网或App内申请，实名认证后即时开通。",
                  "entity_ids": ["prod.a", "prod.a.personal"], "query": "A产品（个人版）怎么申请",
                  "seen_in_turn": 1}
_TURN_RETRIEVE = {
    "session": "s1", "turn": 2, "user": "个人版", "action": "retrieve",
    "standalone": "A产品（个人版）怎么申请", "queries": ["A产品（个人版）怎么申请"],
    "entities": ["prod.a.personal"], "clarification": None,
    "evidence": [_EVIDENCE, _SEEN_EVIDENCE],
    "rewrite": {"source": "rules", "accepted": True,
                "checks": {"entities_known": True, "entities_present": True,
                           "negation_kept": True, "time_kept": True}},
    "context": "[prod-a-personal-apply#1] A产品（个人版）申请流程\nA产品个人版申请常见问题：……",
    "context_tokens": 221, "latency_ms": 69.2, "replayed": False, "warnings": [],
    "trace": {"alias_version": 1, "classification": "answer",
              "timings_ms": {"session_load": 0.2, "link": 0.5, "rewrite": 0.7,
                             "retrieve": 64.4, "session_save": 3.1}}}
_KB_INFO = {"kb": "demo", "version": 12, "entities": 42, "aliases": 163, "types": 11,
            "created_at": "2026-11-29T21:08:58.472000000+00:00",
            "normalization": {"width": True, "case": True, "punctuation": True,
                              "traditional_to_simplified": True}}
_ENTITY_VIEW = {
    "id": "prod.a.personal", "name": "A产品（个人版）", "type": "Product",
    "aliases": ["A产品", "A产品个人版", "A个人版"],
    "description": "面向个人用户的A产品版本：个人实名注册即可申请，按月或按年订阅，单人使用。",
    "parent": "prod.a", "attributes": {"价格": "月付29元，年付299元", "上市时间": "2024-03"},
    "children": [], "relations": {"out": [{"type": "PART_OF", "to": "prod.a"}],
                                  "in": [{"from": "prod.a.enterprise", "type": "UPGRADE_OF"}]},
    "confusables": [{"with": "prod.a.enterprise", "note": "都被叫作A产品；个人版面向个人，企业版面向企业"}]}
_NEW_ENTITY = {"id": "prod.c", "name": "C产品", "type": "Product", "aliases": ["C品"],
               "description": "第三个产品", "parent": None, "attributes": {"上市时间": "2025-01"}}
_NEW_VIEW = {**_NEW_ENTITY, "aliases": ["C品", "C产品"], "children": [],
             "relations": {"out": [], "in": []}, "confusables": []}


def _write(version: int = 13, seq: int | None = 13, changed: bool = True, **extra: Any) -> dict:
    return {"changed": changed, "version": version, "audit_seq": seq, **extra}


_ALIAS_CLASH = _p(409, "Conflict", "alias '華東' already names region.east (华东区); adding it to "
                  "'region.south' would make it ambiguous. Send it as ambiguous (\"ambiguous\": "
                  "true, or list it in \"ambiguous_aliases\") if both entities should answer to "
                  "it, or remove it from 'region.east' first", field="alias", alias="華東",
                  entity="region.south", conflicting=["region.east"])
_READY_BODY = {"status": "ready", "checks": {
    "milvus": {"required": True, "uri": "lite", "status": "ok", "ms": 1.35},
    "sessions": {"required": True, "backend": "redis", "status": "ok", "ms": 0.43},
    "neo4j": {"required": False, "status": "ok", "ms": 4.35}}}
_ONTOLOGY_LINES = (
    '{"kind": "type", "name": "Product", "attributes": ["价格", "申请流程"], "parent": null}\n'
    '{"kind": "entity", "id": "prod.a.personal", "name": "A产品（个人版）", "type": "Product", '
    '"aliases": ["A产品", "A个人版"], "description": "面向个人用户", "parent": null, '
    '"attributes": {"价格": "月付29元"}}\n')
_IMPORT_REPORT = {"types_written": 11, "entities_added": 42, "entities_changed": 0,
                  "entities_unchanged": 0, "relations": 38, "confusables": 16, "version": 1,
                  "changed": True, "dry_run": False}

_STORED_KEY = {"id": "k0c4e1f2a9b3d5e7", "name": "faq-assistant", "scopes": {"faq": "query"},
               "source": "stored", "created_at": "2026-12-01T14:58:40.1Z", "created_by": "ops",
               "revoked_at": None, "revoked_by": None}

#: (method, path template) → its examples. A test checks every operation has one.
EXAMPLES: dict[tuple[str, str], Examples] = {
    ("GET", "/healthz"): Examples({"status": "ok"}),
    ("GET", "/readyz"): Examples(_READY_BODY, schema=_ref("Readiness"), errors={503: _p(
        503, "Not ready", "required dependencies do not answer: milvus (timeout)",
        checks={"milvus": {"required": True, "uri": "server", "status": "timeout",
                           "error": "no answer within 2 s"},
                "sessions": {"required": True, "backend": "redis", "status": "ok", "ms": 0.5},
                "neo4j": {"required": False, "status": "ok", "ms": 3.9}})}),
    ("GET", "/metrics"): Examples(
        "# HELP referent_turns_total Turns answered, by kb and action\n"
        "# TYPE referent_turns_total counter\n"
        'referent_turns_total{action="retrieve",kb="demo"} 1842.0\n'
        'referent_turns_total{action="clarify",kb="demo"} 97.0\n'),
    ("POST", f"{SESSION}/turns"): Examples(
        _TURN_RETRIEVE, request={"text": "个人版", "k": 5, "used": ["prod-a-overview#1"]},
        errors={422: _p(422, "Invalid input", "text: String should have at most 2000 characters",
                        field="text", errors=[{"field": "text", "message":
                                               "String should have at most 2000 characters"}]),
                409: _p(409, "Conflict", "session 's1' changed under this turn 3 times; send the "
                        "turn again")}),
    ("DELETE", SESSION): Examples(None, status=204),
    ("GET", f"{SESSION}/turns/{{turn}}/trace"): Examples({
        "turn": 2, "user": "个人版",
        "stages": {**_TURN_RETRIEVE["trace"],
                   "clarification_answer": {"kind": "chosen", "entity_ids": ["prod.a.personal"],
                                            "how": "distinguishing word",
                                            "pending_question": "A产品怎么申请"},
                   "retrieval": {"queries": [{"query": "A产品（个人版）怎么申请", "filtered_docs": 5,
                                              "entity_filter": "applied", "bm25": 8, "hits": 8}],
                                 "entity_filter": ["prod.a.personal"], "fusion": "bm25",
                                 "no_answer": {"strength": 0.75, "threshold": 0.15,
                                               "abstained": False}}},
        "result": {"session": "s1", "turn": 2, "action": "retrieve",
                   "standalone": "A产品（个人版）怎么申请", "entities": ["prod.a.personal"]}},
        errors={404: _p(404, "Not found", "no trace of turn 9 in session 's1': only the last "
                        "turns of a live session are kept, and only for the caller that made "
                        "them")},
        schema={"type": "object", "required": ["turn", "user", "stages", "result"], "properties": {
            "turn": {"type": "integer"}, "user": {"type": "string"},
            "stages": _ref("TurnTrace"),
            "result": {"type": "object", "description": "the turn's results line (docs/formats.md §4)"}}}),
    ("GET", A): Examples(_KB_INFO, schema=_ref("KbInfo")),
    ("PUT", A): Examples(_write(12, 12, kb=_KB_INFO), status=200, also={201: "the kb was created"},
                         request={"normalization": {"case": False}},
                         schema={"allOf": [_ref("WriteResult"), {"type": "object", "properties": {
                             "kb": _ref("KbInfo")}}]}),
    ("GET", f"{A}/version"): Examples({"kb": "demo", "version": 12, "snapshot_version": 12}),
    ("GET", f"{A}/search"): Examples({"query": "华东地区", "mode": "fuzzy", "version": 12, "hits": [
        {"id": "region.east", "name": "华东区", "type": "SalesRegion", "matched": "华东",
         "score": 90.0, "ambiguous": False}]}),
    ("POST", f"{A}/entities"): Examples(
        _write(entity=_NEW_VIEW), status=201, request=_NEW_ENTITY, schema=_WITH_ENTITY,
        errors={409: _ALIAS_CLASH}),
    ("GET", f"{A}/entities/{{entity_id}}"): Examples(_ENTITY_VIEW, schema=_ref("EntityView")),
    ("PATCH", f"{A}/entities/{{entity_id}}"): Examples(
        _write(entity={**_NEW_VIEW, "name": "C产品（新）", "aliases": ["C品", "C产品", "C产品（新）"]}),
        request={"name": "C产品（新）"}, schema=_WITH_ENTITY),
    ("DELETE", f"{A}/entities/{{entity_id}}"): Examples(
        _write(removed={"relations": 1, "confusables": 0}), schema=_ref("WriteResult"),
        errors={409: _p(409, "Conflict", "entity 'prod.a' is still referenced (2 children); "
                        "remove those first or delete with force=true, which removes the "
                        "relations and confusable pairs and leaves the children without a parent",
                        references={"children": ["prod.a.enterprise", "prod.a.personal"]})}),
    ("POST", f"{A}/entities/{{entity_id}}/aliases"): Examples(
        _write(), status=201, also={200: "the entity already had the alias"},
        request={"alias": "A个人版", "ambiguous": False}, schema=_ref("WriteResult"),
        errors={409: _ALIAS_CLASH}),
    ("DELETE", f"{A}/entities/{{entity_id}}/aliases"): Examples(
        _write(alias="A个人版"), schema=_ref("WriteResult")),
    ("POST", f"{A}/relations"): Examples(
        _write(), status=201, also={200: "the relation existed"},
        request={"from": "prod.a.personal", "type": "PART_OF", "to": "prod.a"},
        schema=_ref("WriteResult")),
    ("DELETE", f"{A}/relations"): Examples(_write(), schema=_ref("WriteResult")),
    ("GET", f"{A}/clarifications"): Examples({
        "kb": "demo", "since": None, "min_answers": 5, "dominance": 0.8, "asked": 12,
        "groups": [{
            "kind": "alias", "alias": "a产品", "mentions": ["A产品"], "matches": ["exact"],
            "candidates": [{"id": "prod.a.enterprise", "name": "A产品（企业版）", "exists": True},
                           {"id": "prod.a.personal", "name": "A产品（个人版）", "exists": True}],
            "asked": 12, "answers": {"chosen": 11, "both": 0, "neither": 0, "new_question": 1,
                                     "open": 0},
            "chosen": {"prod.a.personal": 10, "prod.a.enterprise": 1},
            "last_asked": "2026-11-29T21:40:00+00:00",
            "suggestion": {
                "action": "point_alias", "answered": 11, "entity": "prod.a.personal",
                "reason": {"en": "10 of 11 answers chose A产品（个人版）: let 'A产品' mean it; "
                                 "the other keeps its own names",
                           "zh": "11 次回答中 10 次选择 A产品（个人版）：可让“A产品”只指它"},
                "changes": [{"op": "remove_alias", "entity": "prod.a.enterprise",
                             "alias": "A产品"}]}}],
        "recent": [{"asked_at": "2026-11-29T21:40:00+00:00", "kind": "alias", "mention": "A产品",
                    "alias": "a产品", "match": "exact",
                    "candidates": ["prod.a.enterprise", "prod.a.personal"], "answer": "chosen",
                    "chosen": ["prod.a.personal"], "how": "ordinal"}]}),
    ("GET", f"{A}/confusables"): Examples({"pairs": [
        {"a": "region.east", "b": "region.south", "note": "华东区与华南区只差一个字"}]}),
    ("POST", f"{A}/confusables"): Examples(
        _write(), status=201, also={200: "the pair was marked already"},
        request={"a": "ins.accident", "b": "ins.accident.traffic", "note": "名字相近"},
        schema=_ref("WriteResult")),
    ("DELETE", f"{A}/confusables"): Examples(_write(), schema=_ref("WriteResult")),
    ("GET", f"{A}/types"): Examples({"types": [
        {"name": "Product", "attributes": ["价格", "申请流程"], "parent": None}]}),
    ("PUT", f"{A}/types/{{name}}"): Examples(
        _write(), request={"attributes": ["价格", "申请流程"], "parent": None},
        schema=_ref("WriteResult")),
    ("DELETE", f"{A}/types/{{name}}"): Examples(_write(), schema=_ref("WriteResult")),
    ("POST", f"{A}/import"): Examples(
        _IMPORT_REPORT, request=_ONTOLOGY_LINES,
        errors={422: _p(422, "Invalid input", "request body, line 2, field 'id': invalid entity "
                        "id 'x y': use 1-128 characters from A-Z a-z 0-9 _ . : -",
                        field="id", line=2),
                413: _p(413, "Request Entity Too Large", "the request body is 200000000 bytes; "
                        "this route takes at most 134217728 bytes "
                        "(REFERENT_LIMITS__MAX_IMPORT_BYTES)")}),
    ("GET", f"{A}/export"): Examples(_ONTOLOGY_LINES),
    ("POST", f"{A}/suggest"): Examples({
        "ontology": '{"kind": "type", "name": "套餐", "attributes": ["月费"]}\n'
                    '{"kind": "entity", "id": "qing-chun-tao-can", "name": "青春套餐", "type": "套餐", '
                    '"aliases": ["青春卡"], "description": "青春套餐面向在校学生。"}\n',
        "evidence": [{"kind": "entity", "id": "qing-chun-tao-can", "name": "青春套餐", "confidence": 0.84,
                      "reason": "the subject of 1 document title(s)",
                      "counts": {"documents": 1, "passages": 3},
                      "passages": [{"passage_id": "campus:1", "doc_id": "campus",
                                    "snippet": "青春套餐面向在校学生，月费39元"}],
                      "aliases": {}}],
        "known": []}),
    ("GET", f"{A}/audit"): Examples({"entries": [
        {"seq": 9, "at": "2026-11-29T21:09:11.047Z", "who": "ops", "action": "alias.add",
         "target": "prod.a.personal", "before": None, "after": {"alias": "A个人版"}, "version": 9}],
        "next_before_seq": 9}),
    ("GET", f"{A}/retag"): Examples({"state": "idle", "error": None,
                                     "finished_at": 1795986553.49,
                                     "last": {"version": 9, "scanned": 21, "changed": 2,
                                              "stale": False}}),
    ("POST", f"{A}/retag"): Examples({"state": "queued"}, status=202),
    ("GET", "/v1/schemas"): Examples({"schemas": [
        {"name": "suite", "title": "Referent conversation suite line (format 1)",
         "id": "urn:referent:format:suite:1", "href": "/v1/schemas/suite"}]}),
    ("GET", SCHEMA): Examples({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:referent:format:corpus:1", "title": "Referent corpus line (format 1)",
        "type": "object", "required": ["doc_id", "text"], "additionalProperties": False,
        "properties": {"doc_id": {"type": "string", "minLength": 1, "maxLength": 256}}}),
    ("GET", f"{A}/clarify"): Examples({"kb": "demo", "source": "kb", "threshold": 0.41,
                                       "fitted_at": "2026-12-01T15:40:00Z",
                                       "report": {"records": 64, "usable": 60}}),
    ("POST", f"{A}/clarify/recalibrate"): Examples(
        {"kb": "demo", "records": 64, "usable": 60, "needed": 41,
         "before": {"threshold": 0.33, "asked": 60, "needed_asked": 41, "precision": 0.683,
                    "recall": 1.0, "f1": 0.812, "wrong_resolves": 0},
         "after": {"threshold": 0.41, "asked": 47, "needed_asked": 40, "precision": 0.851,
                   "recall": 0.976, "f1": 0.909, "wrong_resolves": 1},
         "changed": True, "note": "threshold raised: fewer questions, the same or better F1 on "
         "the kb's answers", "stored": True},
        errors={422: _p(422, "Invalid input", "kb 'demo' has 7 answered clarifications with a "
                        "recorded decision; recalibration needs at least 20")}),
    ("DELETE", f"{A}/clarify"): Examples({"kb": "demo", "removed": True}),
    ("DELETE", f"{A}/sessions"): Examples({"kb": "demo", "sessions": 3, "traces": 17}),
    ("POST", KEYS): Examples(
        {**_STORED_KEY, "key": "rk_Jq3v0mW5yB1c8xLzK4pT9sRfA2eHdG7uN6oQiVbXwYs"}, status=201,
        request={"name": "faq-assistant", "scopes": {"faq": "query"}},
        errors={409: _p(409, "Conflict", "an active key is already named 'faq-assistant'; pick "
                        "another name or revoke that key first", field="name"),
                403: _p(403, "Forbidden", "the key 'hr-admin' is not an admin of every kb; keys "
                        "are managed with a deployment-wide admin key (an admin key from "
                        "REFERENT_AUTH__KEYS, or a stored key with the scope {\"*\": \"admin\"})")}),
    ("GET", KEYS): Examples({"keys": [
        {"id": "env:ops", "name": "ops", "scopes": {"*": "admin"}, "source": "environment",
         "created_at": None, "created_by": None, "revoked_at": None, "revoked_by": None},
        _STORED_KEY]}),
    ("DELETE", f"{KEYS}/{{key_id}}"): Examples(
        {**_STORED_KEY, "revoked_at": "2026-12-01T15:02:11.5Z", "revoked_by": "ops"},
        errors={404: _p(404, "Not found", "no active stored key has the id 'k0c4e1f2a9b3d5e7'; "
                        "`GET /v1/admin/keys` lists them"),
                409: _p(409, "Conflict", "'env:ops' is set in REFERENT_AUTH__KEYS; remove it "
                        "there and restart the API processes")}),
}


def install_openapi(app: FastAPI) -> None:
    """Make ``app.openapi()`` return the finished document (built once, then cached)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = finish(get_openapi(
                title=app.title, version=app.version, description=DESCRIPTION, routes=app.routes))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def finish(doc: dict[str, Any]) -> dict[str, Any]:
    """Add problems, examples, headers and raw bodies to FastAPI's document."""
    components = doc.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    for generated in ("HTTPValidationError", "ValidationError"):
        schemas.pop(generated, None)
    schemas.update(SCHEMAS)
    # The turn's trace, declared by dialogue.trace, instead of a bare object.
    schemas.update(trace_schemas())
    for name in ("TurnResult", "TurnRecord"):
        props = schemas.get(name, {}).get("properties", {})
        if "trace" in props:
            props["trace"] = {"$ref": "#/components/schemas/TurnTrace",
                              "description": "what every stage saw and decided"}
    components["securitySchemes"] = {
        "bearer": {"type": "http", "scheme": "bearer", "description": "an API key"},
        "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"}}
    for path, item in doc["paths"].items():
        for method, op in item.items():
            _finish_operation(method.upper(), path, op)
    return doc


def _finish_operation(method: str, path: str, op: dict[str, Any]) -> None:
    examples = EXAMPLES[(method, path)]
    op.setdefault("parameters", []).append({
        "name": "X-Request-ID", "in": "header", "required": False,
        "description": "your id for this request, echoed back and written to the logs; "
                       "replaced when not 1-128 characters from A-Z a-z 0-9 . _ : @ / + = -",
        "schema": {"type": "string"}})
    responses = op["responses"]
    responses.pop("422", None)  # FastAPI's validation shape; ours is a Problem (below)
    if path.startswith("/v1/"):
        op["security"] = [{"bearer": []}, {"apiKey": []}]
    if path.startswith(SESSION):
        op["parameters"].append({
            "name": "X-Referent-Subject", "in": "header", "required": False,
            "description": "the end user this request is for (1-128 characters from A-Z a-z "
                           "0-9 _ . : @ + -): the session belongs to the key and this subject",
            "schema": {"type": "string", "pattern": "^[A-Za-z0-9_.:@+-]{1,128}$"},
            "example": "user-4711"})
    _success(method, path, op, examples)
    for status in _error_statuses(method, path, op):
        description, example = GENERIC_ERRORS[status]
        if path == "/readyz":
            description = "a required dependency (Milvus, the session store) does not answer"
        headers = {"X-Request-ID": REQUEST_ID}
        if status in (429, 503):
            headers["Retry-After"] = {"description": "seconds to wait", "schema": {"type": "string"}}
        if status == 401:
            headers["WWW-Authenticate"] = {"schema": {"type": "string"}}
        responses[str(status)] = {
            "description": description, "headers": headers,
            "content": {PROBLEM: {"schema": _ref("Problem"),
                                  "example": examples.errors.get(status, example)}}}


def _success(method: str, path: str, op: dict[str, Any], examples: Examples) -> None:
    responses = op["responses"]
    status = str(examples.status)
    generated = responses.pop("200", None) or responses.get(status) or {}
    if path.endswith("/import"):
        op["requestBody"] = {"required": True, "description": "the ontology file (docs/formats.md §1), "
                             "UTF-8 JSON Lines", "content": {NDJSON: {
                                 "schema": {"type": "string"}, "example": examples.request}}}
    elif examples.request is not None:
        content = op["requestBody"]["content"]["application/json"]
        content["example"] = examples.request
    if examples.status == 204:
        responses[status] = {"description": generated.get("description", "done"),
                             "headers": {"X-Request-ID": REQUEST_ID}}
        return
    if path == "/metrics":
        media, schema = "text/plain", {"type": "string"}
    elif path == SCHEMA:
        media, schema = "application/schema+json", {"type": "object"}
    elif path.endswith("/export"):
        media, schema = NDJSON, {"type": "string"}
    else:
        media = "application/json"
        schema = examples.schema or generated.get("content", {}).get(media, {}).get("schema", {})
    responses[status] = {
        "description": generated.get("description", "Successful Response"),
        "headers": {"X-Request-ID": REQUEST_ID},
        "content": {media: {"schema": schema, "example": examples.response}}}
    for other, description in examples.also.items():
        responses[str(other)] = {"description": description,
                                 "headers": {"X-Request-ID": REQUEST_ID},
                                 "content": {media: {"schema": schema}}}


# Routes without a kb that still answer 404: revoking a key that is not there.
_ALSO_404 = {("DELETE", f"{KEYS}/{{key_id}}")}


def _error_statuses(method: str, path: str, op: dict[str, Any]) -> list[int]:
    statuses = [500]
    if path == "/readyz":
        statuses.append(503)
    if path.startswith("/v1/schemas"):
        statuses += [401, 422, 429]  # files shipped with the server: no store to be down
    elif path.startswith("/v1/"):
        statuses += [401, 422, 429, 503]
        if "/admin" in path:
            statuses.append(403)
        if "{kb}" in path or (method, path) in _ALSO_404:
            statuses.append(404)
        if (method == "POST" and path.endswith("/turns")) or (
                "/admin" in path and method != "GET" and not path.endswith("/retag")):
            statuses.append(409)
        if "requestBody" in op:
            statuses += [400, 413] if not path.endswith("/import") else [413]
    return sorted(set(statuses))
