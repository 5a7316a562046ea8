"""The Python client against a real API process: the clarification round trip
(sync and async), retries with one idempotency key, problems as exceptions, the
NDJSON import and export, and the client checked against the OpenAPI document."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

import referent_client.client as client_module
from common.formats import load_schema
from referent_client import (OPERATIONS, APIError, AsyncReferentClient, AuthenticationError,
                             ClientError, InvalidInputError, NotFoundError,
                             PermissionDeniedError, ReferentClient, ReferentConnectionError,
                             ReferentError, RetryPolicy, ServerError, ServiceUnavailableError)
from referent_client import models
from tests.clients.conftest import session_id
from tests.conftest import ADMIN_KEY, DEMO, QUERY_KEY
from tests.services import free_port

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

FAST = RetryPolicy(attempts=3, backoff=0.01, max_backoff=0.05)


def test_a_clarification_round_trip_and_a_follow_up(demo_server):
    sid = session_id()
    with ReferentClient(demo_server.url, QUERY_KEY) as client:
        asked = client.turn(demo_server.kb, sid, "A产品怎么申请")
        assert asked.action == "clarify" and asked.turn == 1 and not asked.evidence
        assert set(asked.clarification.option_ids()) == {"prod.a.personal", "prod.a.enterprise"}
        assert "A产品" in asked.clarification.question

        answered = client.turn(demo_server.kb, sid, "个人版")
        assert answered.action == "retrieve" and answered.turn == 2
        assert answered.entities == ["prod.a.personal"]
        assert answered.standalone == "A产品（个人版）怎么申请"
        assert any(e.doc_id == "prod-a-personal-apply" for e in answered.evidence)
        assert isinstance(answered.evidence[0], models.Evidence)

        follow_up = client.turn(demo_server.kb, sid, "多少钱", k=2)
        assert follow_up.turn == 3 and follow_up.entities == ["prod.a.personal"]
        assert "A产品（个人版）" in follow_up.standalone and len(follow_up.evidence) <= 2

        trace = client.trace(demo_server.kb, sid, 3)
        assert trace["result"]["standalone"] == follow_up.standalone
        client.delete_session(demo_server.kb, sid)
        with pytest.raises(NotFoundError):
            client.trace(demo_server.kb, sid, 3)


def test_the_async_client_plays_the_same_conversation(demo_server):
    async def play() -> list[models.TurnResult]:
        sid = session_id()
        async with AsyncReferentClient(demo_server.url, QUERY_KEY) as client:
            return [await client.turn(demo_server.kb, sid, text)
                    for text in ("A产品怎么申请", "第二个", "它怎么收费")]

    asked, chosen, follow_up = asyncio.run(play())
    assert asked.action == "clarify"
    # "第二个" is the second option in the order the server offered them.
    assert chosen.entities == [asked.clarification.options[1].id]
    assert follow_up.entities == chosen.entities and follow_up.action == "retrieve"


def test_url_and_key_come_from_the_environment(demo_server, monkeypatch):
    monkeypatch.setenv("REFERENT_URL", demo_server.url)
    monkeypatch.setenv("REFERENT_KEY", QUERY_KEY)
    with ReferentClient() as client:
        assert client.turn(demo_server.kb, session_id(), "A产品怎么申请").action == "clarify"
    monkeypatch.delenv("REFERENT_URL")
    with pytest.raises(ReferentError, match="REFERENT_URL"):
        ReferentClient()


class Flaky(httpx.BaseTransport):
    """The real server behind a transport that first fails as told (a 503 with
    Retry-After, a 429, or a connection that cannot be made), recording the headers
    of every attempt."""

    def __init__(self, failures: list[str]) -> None:
        self.failures = list(failures)
        self.real = httpx.HTTPTransport()
        self.seen: list[httpx.Headers] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request.headers)
        if self.failures:
            failure = self.failures.pop(0)
            if failure == "connect":
                raise httpx.ConnectError("connection refused", request=request)
            if failure == "read":
                raise httpx.ReadTimeout("timed out", request=request)
            status, retry_after = {"503": (503, "2"), "429": (429, "1")}[failure]
            return httpx.Response(status, headers={"Retry-After": retry_after,
                                                   "content-type": "application/problem+json"},
                                  json={"type": "about:blank", "title": "Busy", "status": status,
                                        "detail": "try again", "request_id": "r-1",
                                        "dependency": "milvus"})
        return self.real.handle_request(request)

    def close(self) -> None:
        self.real.close()


def test_a_turn_is_retried_after_503_429_and_a_failed_connection_with_one_idempotency_key(
        demo_server, monkeypatch):
    waits: list[float] = []
    monkeypatch.setattr(client_module.time, "sleep", waits.append)
    flaky = Flaky(["503", "429", "connect"])
    sid = session_id()
    with ReferentClient(demo_server.url, QUERY_KEY, transport=flaky,
                        retry=RetryPolicy(attempts=4, backoff=0.25)) as client:
        result = client.turn(demo_server.kb, sid, "A产品怎么申请")
        assert result.action == "clarify" and result.turn == 1  # one turn, not four
        keys = [h["Idempotency-Key"] for h in flaky.seen]
        assert len(keys) == 4 and len(set(keys)) == 1 and len(keys[0]) >= 16
        # Retry-After is honoured (2 s, then 1 s); the connection failure backs off.
        assert waits[:2] == [2.0, 1.0] and 0 < waits[2] <= 1.0
        again = client.turn(demo_server.kb, sid, "个人版")
        assert again.turn == 2
        assert flaky.seen[-1]["Idempotency-Key"] != keys[0]  # every turn has its own key


def test_a_given_idempotency_key_is_sent_as_is(demo_server):
    flaky = Flaky([])
    with ReferentClient(demo_server.url, QUERY_KEY, transport=flaky) as client:
        client.turn(demo_server.kb, session_id(), "A产品怎么申请", idempotency_key="order-17")
    assert flaky.seen[0]["Idempotency-Key"] == "order-17"


def test_a_timed_out_turn_is_retried_but_a_timed_out_import_is_not(demo_server, monkeypatch):
    monkeypatch.setattr(client_module.time, "sleep", lambda s: None)
    flaky = Flaky(["read"])
    with ReferentClient(demo_server.url, QUERY_KEY, transport=flaky) as client:
        assert client.turn(demo_server.kb, session_id(), "A产品怎么申请").action == "clarify"
    flaky = Flaky(["read"])
    with ReferentClient(demo_server.url, ADMIN_KEY, transport=flaky) as client:
        with pytest.raises(ReferentConnectionError, match="ReadTimeout"):
            client.import_ontology(demo_server.kb, DEMO / "ontology.jsonl", dry_run=True)
    assert len(flaky.seen) == 1


def test_503_after_the_last_attempt_raises_service_unavailable(demo_server, monkeypatch):
    monkeypatch.setattr(client_module.time, "sleep", lambda s: None)
    with ReferentClient(demo_server.url, QUERY_KEY, transport=Flaky(["503"] * 3),
                        retry=FAST) as client:
        with pytest.raises(ServiceUnavailableError) as raised:
            client.turn(demo_server.kb, session_id(), "A产品怎么申请")
    error = raised.value
    assert isinstance(error, ServerError) and isinstance(error, APIError)
    assert (error.status, error.title, error.detail, error.request_id) == (503, "Busy",
                                                                          "try again", "r-1")
    assert error.retry_after == 2.0 and error.dependency == "milvus"


def test_no_server_raises_a_connection_error_after_the_retries():
    with ReferentClient(f"http://127.0.0.1:{free_port()}", QUERY_KEY, retry=FAST) as client:
        with pytest.raises(ReferentConnectionError, match="ConnectError"):
            client.turn("demo", "s1", "你好")


def test_problems_become_typed_exceptions_with_title_detail_field_and_request_id(demo_server):
    with ReferentClient(demo_server.url, QUERY_KEY) as client:
        with pytest.raises(InvalidInputError) as invalid:
            client.turn(demo_server.kb, session_id(), "   ")
        assert invalid.value.status == 422 and invalid.value.field == "text"
        assert "blank" in invalid.value.detail and invalid.value.request_id
        with pytest.raises(PermissionDeniedError) as forbidden:
            client.search_aliases(demo_server.kb, "A产品")
        assert forbidden.value.status == 403 and "admin" in forbidden.value.detail
        with pytest.raises(NotFoundError):
            client.turn("no_such_kb", session_id(), "A产品怎么申请")
    with ReferentClient(demo_server.url, "rk_not_a_key") as client:
        with pytest.raises(AuthenticationError) as unauthorized:
            client.turn(demo_server.kb, session_id(), "A产品怎么申请")
    for error in (invalid.value, forbidden.value, unauthorized.value):
        assert isinstance(error, ClientError) and isinstance(error, ReferentError)
        assert error.title and error.request_id and str(error.status) in str(error)


def test_import_export_and_alias_search_with_an_admin_key(demo_server, neo4j_store):
    kb = f"t_client_io_{session_id()[2:10]}"
    try:
        with ReferentClient(demo_server.url, ADMIN_KEY) as client:
            dry = client.import_ontology(kb, DEMO / "ontology.jsonl", dry_run=True)
            assert dry.dry_run and dry.entities_added > 0
            report = client.import_ontology(kb, DEMO / "ontology.jsonl")
            assert report.changed and report.entities_added == dry.entities_added
            exported = client.export_ontology(kb)
            assert client.import_ontology(kb, exported).changed is False
            with pytest.raises(InvalidInputError) as bad:
                client.import_ontology(kb, '{"kind": "entity", "id": "x y", "name": "X", '
                                           '"type": "T"}\n')
            assert (bad.value.line, bad.value.field) == (1, "id")
            found = client.search_aliases(demo_server.kb, "A产品", mode="exact")
            assert {h.id for h in found.hits} >= {"prod.a.personal", "prod.a.enterprise"}
            assert all(h.ambiguous for h in found.hits if h.matched == "a产品")
    finally:
        neo4j_store.delete_kb(kb)


def test_the_schemas_are_served_to_any_key_and_to_no_one_without(demo_server):
    with ReferentClient(demo_server.url, QUERY_KEY) as client:
        for name in ("ontology", "corpus", "suite", "results"):
            assert client.format_schema(name) == load_schema(name)
        with pytest.raises(InvalidInputError):
            client.format_schema("nope")
    listed = httpx.get(f"{demo_server.url}/v1/schemas",
                       headers={"X-API-Key": ADMIN_KEY}).json()["schemas"]
    assert [s["name"] for s in listed] == ["ontology", "corpus", "suite", "results"]
    answer = httpx.get(f"{demo_server.url}/v1/schemas/suite")
    assert answer.status_code == 401


# -- the client and the OpenAPI document cannot drift ----------------------------------------

@pytest.fixture(scope="module")
def openapi(demo_server) -> dict:
    return httpx.get(f"{demo_server.url}/openapi.json").json()


def test_every_route_the_client_calls_exists_with_its_method_and_operation_id(openapi):
    by_id = {op["operationId"]: (method.upper(), path)
             for path, item in openapi["paths"].items() for method, op in item.items()}
    for op in OPERATIONS.values():
        assert by_id.get(op.id) == (op.method, op.path), op


def _resolve(doc: dict, schema: dict) -> dict:
    while "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


@pytest.mark.parametrize(("model", "component"), [
    (models.TurnResult, "TurnResult"), (models.Clarification, "Clarification"),
    (models.ClarifyOption, "ClarifyOption"), (models.Evidence, "EvidenceItem"),
    (models.RewriteInfo, "RewriteInfo")])
def test_the_client_models_have_the_documents_fields(openapi, model, component):
    schema = openapi["components"]["schemas"][component]
    assert set(model.model_fields) == set(schema["properties"])
    assert {n for n, f in model.model_fields.items() if f.is_required()} == set(
        schema.get("required", []))


def _example(doc: dict, op_id: str) -> object:
    for item in doc["paths"].values():
        for op in item.values():
            if op["operationId"] == op_id:
                for code, response in op["responses"].items():
                    if code.startswith("2"):
                        return next(iter(response["content"].values()))["example"]
    raise KeyError(op_id)


@pytest.mark.parametrize(("op_id", "model"), [
    ("playTurn", models.TurnResult), ("searchAliases", models.AliasSearch),
    ("importOntology", models.ImportReport)])
def test_the_client_models_accept_the_documents_examples(openapi, op_id, model):
    example = _example(openapi, op_id)
    parsed = model.model_validate(example)
    assert parsed.model_dump(mode="json", exclude_unset=True).keys() <= set(example)
    # Nothing the example holds is lost, the fields the client knows included.
    assert json.loads(parsed.model_dump_json()).keys() == example.keys()


def test_the_documents_turn_examples_parse_into_a_clarification_and_evidence(openapi):
    from api.openapi import _TURN_CLARIFY

    clarify = models.TurnResult.model_validate(_TURN_CLARIFY)
    assert clarify.clarification.option_ids() == ["prod.a.enterprise", "prod.a.personal"]
    retrieve = models.TurnResult.model_validate(_example(openapi, "playTurn"))
    assert retrieve.evidence and retrieve.evidence[0].chunk_id
