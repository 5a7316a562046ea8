"""The OpenAPI document: examples everywhere, and every example fits its schema."""

from __future__ import annotations

import re

import jsonschema_rs
import pytest

from api.app import create_app
from api.openapi import EXAMPLES
from api.settings import Settings


@pytest.fixture(scope="module")
def doc():
    # Building the app connects to nothing; the lifespan (not run here) would.
    return create_app(Settings(limits={"max_text_chars": 500})).openapi()


def operations(doc):
    for path, item in doc["paths"].items():
        for method, op in item.items():
            yield method.upper(), path, op


def check(doc, schema, instance, where):
    validator = jsonschema_rs.validator_for({**schema, "components": doc["components"]})
    errors = [e.message for e in validator.iter_errors(instance)]
    assert not errors, f"{where}: {errors}"


def test_every_operation_has_examples_and_no_example_is_stale(doc):
    assert {(m, p) for m, p, _ in operations(doc)} == set(EXAMPLES)


def test_every_request_and_success_example_fits_its_schema(doc):
    for method, path, op in operations(doc):
        if "requestBody" in op:
            (media, content), = op["requestBody"]["content"].items()
            assert content.get("example") is not None, f"{method} {path}: no request example"
            check(doc, content["schema"], content["example"], f"{method} {path} request")
        success = [code for code in op["responses"] if code.startswith("2")]
        assert success, f"{method} {path}"
        for code in success:
            response = op["responses"][code]
            assert "X-Request-ID" in response["headers"]
            for media, content in response.get("content", {}).items():
                if "example" in content:
                    check(doc, content["schema"], content["example"], f"{method} {path} {code}")
        assert any("example" in c for code in success
                   for c in op["responses"][code].get("content", {}).values()) \
            or op["responses"].get("204"), f"{method} {path}: no response example"


def test_every_error_is_a_problem_with_a_fitting_example(doc):
    problem = {"$ref": "#/components/schemas/Problem"}
    for method, path, op in operations(doc):
        errors = {code: r for code, r in op["responses"].items() if code[0] in "45"}
        assert "500" in errors
        for code, response in errors.items():
            content = response["content"]["application/problem+json"]
            assert content["schema"] == problem
            assert content["example"]["status"] == int(code)
            check(doc, problem, content["example"], f"{method} {path} {code}")
            assert "X-Request-ID" in response["headers"]
        if path.startswith("/v1/"):
            # The schemas are files shipped with the server: no store can be down for them.
            assert ({"401", "422"} if path.startswith("/v1/schemas") else
                    {"401", "422", "503"}) <= set(errors)
            assert op["security"]
            assert "503" not in errors or "Retry-After" in errors["503"]["headers"]
        if "requestBody" in op:
            assert "413" in errors


def test_the_turn_text_limit_in_the_document_is_the_configured_one(doc):
    turn = doc["components"]["schemas"]["TurnRequest"]["properties"]["text"]
    assert turn["maxLength"] == 500


def test_the_import_body_is_the_ontology_file(doc):
    body = doc["paths"]["/v1/kbs/{kb}/admin/import"]["post"]["requestBody"]["content"]
    assert list(body) == ["application/x-ndjson"]
    assert body["application/x-ndjson"]["example"].count("\n") == 2


def test_every_operation_has_a_short_unique_stable_operation_id(doc):
    ids = [op.get("operationId") for _, _, op in operations(doc)]
    assert all(ids), [(m, p) for m, p, op in operations(doc) if not op.get("operationId")]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    for op_id in ids:
        # lowerCamelCase verb + noun, nothing generated from the path
        assert re.fullmatch(r"[a-z]+(?:[A-Z][a-z]+)+", op_id) and len(op_id) <= 24, op_id
    named = {(m, p): op["operationId"] for m, p, op in operations(doc)}
    assert named[("POST", "/v1/kbs/{kb}/sessions/{session_id}/turns")] == "playTurn"
    assert named[("DELETE", "/v1/kbs/{kb}/sessions/{session_id}")] == "deleteSession"
    assert named[("GET", "/v1/kbs/{kb}/sessions/{session_id}/turns/{turn}/trace")] == "getTrace"
    assert named[("GET", "/v1/kbs/{kb}/admin/search")] == "searchAliases"
