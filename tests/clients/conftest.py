"""The client, the retrievers and the MCP server, each against a real API process
(``uvicorn``) serving the demo kb from the suite's Neo4j and a Milvus Lite file of
its own: one server for the whole directory."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import pytest

from tests.conftest import ADMIN_KEY, DEMO, QUERY_KEY
from tests.services import ApiServer, ingest

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]


@dataclass(frozen=True)
class DemoServer:
    url: str
    kb: str
    server: ApiServer

    def env(self) -> dict[str, str]:
        """What a user sets before running the README's examples."""
        return {"REFERENT_URL": self.url, "REFERENT_KEY": QUERY_KEY,
                "REFERENT_ADMIN_KEY": ADMIN_KEY, "REFERENT_KB": self.kb}


@pytest.fixture(scope="session")
def demo_server(tmp_path_factory, neo4j_store):
    kb = f"t_clients_{uuid.uuid4().hex[:8]}"
    neo4j_store.import_ontology(kb, (DEMO / "ontology.jsonl").read_text(encoding="utf-8")
                                .splitlines())
    data_dir = tmp_path_factory.mktemp("clients-server")
    try:
        ingest(data_dir, kb, DEMO / "corpus.jsonl")
        server = ApiServer(data_dir)
        try:
            yield DemoServer(server.url, kb, server)
        finally:
            server.stop()
    finally:
        neo4j_store.delete_kb(kb)


def session_id() -> str:
    return f"s-{uuid.uuid4().hex[:12]}"
