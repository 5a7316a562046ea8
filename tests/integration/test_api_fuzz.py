"""Schemathesis against the OpenAPI document, on the real app with real Neo4j,
Milvus Lite and SQLite: no server error, and every answer fits the document
(status code, content type, body schema, headers).

Bounded and deterministic: a fixed number of generated cases per operation
(``REFERENT_FUZZ_EXAMPLES``, default 25) from derandomized Hypothesis, so one
run takes 20-60 s on 2 shared cores and always sends the same requests. Half of the cases
(by a hash of the generated kb name) are pointed at a scratch kb holding the
demo ontology and corpus, so turns, searches and writes reach the stores
instead of stopping at 404; the kbs the random names created are removed afterwards.
"""

from __future__ import annotations

import json
import os
import uuid
import zlib

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import (content_type_conformance, not_a_server_error,
                                 response_headers_conformance, response_schema_conformance,
                                 status_code_conformance)

from api.app import create_app
from tests.conftest import ADMIN, DEMO

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

EXAMPLES = int(os.environ.get("REFERENT_FUZZ_EXAMPLES", "25"))
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
def api_schema(runtime, keyring, scratch_kb):
    app = create_app(runtime=runtime, keyring=keyring)
    return schemathesis.openapi.from_asgi("/openapi.json", app)


def _operations() -> list[tuple[str, str]]:
    """Every operation of the document (building the app connects to nothing)."""
    doc = create_app().openapi()
    return [(method.upper(), path) for path, item in doc["paths"].items() for method in item]


@pytest.mark.parametrize(("method", "path"), _operations(), ids=lambda v: v)
def test_no_server_error_and_answers_fit_the_document(api_schema, scratch_kb, method, path):
    operation = api_schema[path][method]
    # Valid requests, invalid ones (wrong types, out-of-pattern ids, missing fields)
    # and the document's own examples.
    cases = st.one_of(operation.as_strategy(GenerationMode.POSITIVE),
                      operation.as_strategy(GenerationMode.NEGATIVE),
                      *api_schema.get_strategies_from_examples(operation))

    @given(case=cases)
    @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    def run(case):
        kb = (case.path_parameters or {}).get("kb")
        if isinstance(kb, str) and zlib.crc32(kb.encode("utf-8", "surrogatepass")) % 2:
            case.path_parameters["kb"] = scratch_kb
        response = case.call(headers=ADMIN)
        case.validate_response(response, checks=CHECKS)

    run()
