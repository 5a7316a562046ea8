"""Schemathesis against the OpenAPI document, on the real app with real Neo4j,
Milvus Lite and SQLite, with an admin key and with a query key: no server error,
every answer fits the document (status code, content type, body schema, headers),
and a method the document does not give a path answers 405 with an ``Allow`` that
lists exactly the methods it does give (schemathesis' ST205, which its pytest
runner does not send by itself).

Bounded and deterministic: a fixed number of generated cases per operation
(``REFERENT_FUZZ_EXAMPLES``, default 15 with the admin key and 6 with the query
key, which most operations refuse at once) from derandomized Hypothesis, so one
run takes about 3 minutes on 2 shared cores (a third of it loading the scratch kb)
and always sends the same requests. Half of the cases
(by a hash of the generated kb name) are pointed at a scratch kb holding the
demo ontology and corpus, so turns, searches and writes reach the stores
instead of stopping at 404; the kbs the random names created are removed afterwards.
"""

from __future__ import annotations

import json
import os
import re
import uuid
import zlib
from urllib.parse import quote

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import (content_type_conformance, not_a_server_error,
                                 response_headers_conformance, response_schema_conformance,
                                 status_code_conformance)

from fastapi.testclient import TestClient

from api.app import create_app
from tests.conftest import ADMIN, DEMO, QUERY

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

EXAMPLES = int(os.environ.get("REFERENT_FUZZ_EXAMPLES", "15"))
KEYS = {"admin": (ADMIN, EXAMPLES), "query": (QUERY, max(1, EXAMPLES * 2 // 5))}
METHODS = ("GET", "PUT", "POST", "DELETE", "PATCH")
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance, response_headers_conformance]


@schemathesis.serializer("application/x-ndjson")
def _ndjson(ctx, value):
    """The import body is text: send it as UTF-8 bytes. Negative cases make it some
    other JSON value (a number, a list): send that as its JSON text."""
    if isinstance(value, bytes):
        return value
    text = value if isinstance(value, str) else json.dumps(value)
    return text.encode("utf-8", "surrogatepass")


@pytest.fixture(scope="module")
def scratch_kb(neo4j_store, milvus_index):
    """The demo ontology and corpus in a kb the fuzzer may change at will; every kb
    that appeared during the module (random names the fuzzer PUT) is removed after."""
    from kg.aliases import SnapshotCache
    from retrieval.ingest import ingest_corpus

    before = set(neo4j_store.list_kbs())
    name = f"t_fuzz_{uuid.uuid4().hex[:8]}"
    neo4j_store.import_ontology(name, (DEMO / "ontology.jsonl").read_text(encoding="utf-8")
                                .splitlines())
    ingest_corpus(name, (DEMO / "corpus.jsonl").read_text(encoding="utf-8").splitlines(),
                  index=milvus_index, snapshot=SnapshotCache(neo4j_store).get(name))
    yield name
    for kb in set(neo4j_store.list_kbs()) - before:
        neo4j_store.delete_kb(kb)
        milvus_index.drop(kb)


@pytest.fixture(scope="module")
def fuzz_app(runtime, keyring, scratch_kb):
    return create_app(runtime=runtime, keyring=keyring)


@pytest.fixture(scope="module")
def api_schema(fuzz_app):
    return schemathesis.openapi.from_asgi("/openapi.json", fuzz_app)


@pytest.fixture(scope="module")
def method_probe(fuzz_app):
    """Sends the methods the document does not give a path (without the lifespan:
    routing answers 405 before any store is asked)."""
    return TestClient(fuzz_app, raise_server_exceptions=False)


def _documented() -> dict[str, list[str]]:
    """Every path of the document and its methods (building the app connects to nothing)."""
    doc = create_app().openapi()
    return {path: sorted(method.upper() for method in item) for path, item in doc["paths"].items()}


def _operations() -> list[tuple[str, str]]:
    return [(method, path) for path, methods in _documented().items() for method in methods]


def _assert_405_allow(probe: TestClient, case, headers: dict[str, str],
                      documented: list[str]) -> bool:
    """ST205: every method the document does not give the case's path answers 405 with
    ``Allow`` listing the documented ones. False when the generated path does not route
    (an id holding "/", say), so another case is tried."""
    path = re.sub(r"\{([^}]+)\}",
                  lambda m: quote(str((case.path_parameters or {})[m.group(1)]), safe=""),
                  case.operation.path)
    for method in sorted(set(METHODS) - set(documented)):
        resp = probe.request(method, path, headers=headers)
        if resp.status_code == 404:
            return False
        assert resp.status_code == 405, (method, path, resp.status_code, resp.text)
        assert resp.headers.get("allow") == ", ".join(documented), \
            (method, path, resp.headers.get("allow"), documented)
    return True


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize(("method", "path"), _operations(), ids=lambda v: v)
def test_no_server_error_and_answers_fit_the_document(api_schema, scratch_kb, method_probe,
                                                      method, path, key):
    headers, examples = KEYS[key]
    documented = _documented()[path]
    allow_checked = False
    operation = api_schema[path][method]
    # Valid requests, invalid ones (wrong types, out-of-pattern ids, missing fields)
    # and the document's own examples.
    cases = st.one_of(operation.as_strategy(GenerationMode.POSITIVE),
                      operation.as_strategy(GenerationMode.NEGATIVE),
                      *api_schema.get_strategies_from_examples(operation))

    @given(case=cases)
    @settings(max_examples=examples, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    def run(case):
        nonlocal allow_checked
        kb = (case.path_parameters or {}).get("kb")
        if isinstance(kb, str) and zlib.crc32(kb.encode("utf-8", "surrogatepass")) % 2:
            case.path_parameters["kb"] = scratch_kb
        response = case.call(headers=headers)
        case.validate_response(response, checks=CHECKS)
        if not allow_checked:
            allow_checked = _assert_405_allow(method_probe, case, headers, documented)

    run()
    assert allow_checked, f"no generated {path} routed: the 405 check never ran"
