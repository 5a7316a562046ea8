"""`referent serve` as a deployer runs it, in a process of its own, on real Neo4j
and Milvus Lite.

- The CLI and the running server share the embedded Milvus Lite file: the server
  serves it on a loopback port and records it beside the file, the CLI finds it
  there; a file held by another process gets an error saying what to run.
- Requests the HTTP parser refuses (raw non-ASCII in the URL, a malformed header)
  get the problem+json shape with a request id; the README's percent-encoded
  form of the same request works."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import socket

import httpx
import pytest

from devservices.local_milvus import record_path
from tests.conftest import ADMIN, DEMO, QUERY, REPO
from tests.services import ApiServer

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

REFERENT = str(Path(sys.executable).parent / "referent")


def _cli(data_dir: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "REFERENT_DATA_DIR": str(data_dir)}
    env.pop("REFERENT_MILVUS__URI", None)
    return subprocess.run([REFERENT, *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_the_cli_uses_the_milvus_lite_of_a_running_server(tmp_path, neo4j_store):
    kb = f"t_shared_{uuid.uuid4().hex[:8]}"
    # The server opens the Lite file itself (no REFERENT_MILVUS__URI from the suite).
    server = ApiServer(tmp_path, {"REFERENT_MILVUS__URI": None}, cli=True)
    port = server.port
    try:
        record = json.loads(record_path(tmp_path / "milvus.db").read_text())
        assert record["pid"] == server.proc.pid and record["uri"].startswith("http://127.0.0.1:")

        imported = _cli(tmp_path, "ontology", "import", "--kb", kb, str(DEMO / "ontology.jsonl"))
        assert imported.returncode == 0, imported.stderr
        # The file is the server's; the CLI writes through the server instead.
        ingested = _cli(tmp_path, "ingest", "--kb", kb, str(DEMO / "corpus.jsonl"))
        assert ingested.returncode == 0, ingested.stderr
        turn = httpx.post(f"http://127.0.0.1:{port}/v1/kbs/{kb}/sessions/s1/turns",
                          json={"text": "华东区7月的销售额是多少"}, headers=QUERY, timeout=30)
        assert turn.status_code == 200, turn.text
        assert "sales-2025-07-east" in [e["doc_id"] for e in turn.json()["evidence"]]
        deleted = _cli(tmp_path, "delete-doc", "--kb", kb, "sales-2025-07-east")
        assert deleted.returncode == 0, deleted.stderr
    finally:
        server.stop(timeout=30)
        neo4j_store.delete_kb(kb)
    # Stopped: the record is gone and the file opens embedded again, with the chunks.
    assert not record_path(tmp_path / "milvus.db").exists()
    from retrieval.milvus_index import MilvusIndex

    index = MilvusIndex(str(tmp_path / "milvus.db"))
    try:
        docs = {c.doc_id for c in index.iter_chunks(kb)}
        assert "sales-2025-07-south" in docs and "sales-2025-07-east" not in docs
    finally:
        index.close()


def test_a_lite_file_held_by_another_process_gets_an_error_that_says_what_to_run(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from retrieval.milvus_index import MilvusIndex; "
         f"MilvusIndex({str(tmp_path / 'milvus.db')!r}); print('open', flush=True); "
         "time.sleep(120)"], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        result = _cli(tmp_path, "delete-doc", "--kb", "demo", "x")
        assert result.returncode == 1, result
        message = " ".join(result.stderr.split())
        assert "another process has it open" in message
        assert "referent milvus serve --db" in message and "REFERENT_MILVUS__URI" in message
        assert "existing directory" not in message  # the path is not what is wrong
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()


def _raw(port: int, request: bytes) -> tuple[str, dict[str, str], bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    return status, headers, body


def test_requests_the_http_parser_refuses_get_the_problem_shape(tmp_path, neo4j_store):
    kb = f"t_raw_{uuid.uuid4().hex[:8]}"
    neo4j_store.import_ontology(kb, (DEMO / "ontology.jsonl").read_text(encoding="utf-8")
                                .splitlines())
    server = ApiServer(tmp_path, cli=True)
    port = server.port
    try:
        auth = ADMIN["Authorization"]
        raw_chinese = (f"GET /v1/kbs/{kb}/admin/search?q=华东地区&mode=fuzzy HTTP/1.1\r\n"
                       f"Host: x\r\nAuthorization: {auth}\r\n\r\n").encode()
        bad_header = b"GET /healthz HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n"
        for request in (raw_chinese, bad_header):
            status, headers, body = _raw(port, request)
            assert status.startswith("HTTP/1.1 400"), (status, body)
            assert headers["content-type"] == "application/problem+json"
            problem = json.loads(body)
            assert problem["status"] == 400 and problem["request_id"] == headers["x-request-id"]
            assert "percent-encode" in problem["detail"]
        assert "malformed HTTP request answered 400" in server.output()
        # The README's form: curl -G --data-urlencode "q=华东地区" sends it encoded.
        encoded = httpx.get(f"http://127.0.0.1:{port}/v1/kbs/{kb}/admin/search",
                            params={"q": "华东地区", "mode": "fuzzy"}, headers=ADMIN, timeout=30)
        assert encoded.status_code == 200, encoded.text
        assert "%E5%8D%8E" in str(encoded.request.url)
        assert "region.east" in encoded.text
    finally:
        server.stop(timeout=30)
        neo4j_store.delete_kb(kb)
