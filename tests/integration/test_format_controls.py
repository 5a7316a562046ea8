"""Bidi and other invisible format characters (Unicode category Cf) are refused in
turn text, entity names and aliases with a 422 naming the field and the character,
on the real app with real Neo4j, Milvus Lite and SQLite. The one allowed: the
zero-width joiner of emoji sequences, in turn text only."""

from __future__ import annotations

import json
import uuid

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from tests.conftest import ADMIN, QUERY

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

# Right-to-left override, isolates, marks, BOM, zero-width space and non-joiner,
# soft hyphen, Arabic letter mark, a tag character (hidden text for an LLM).
FORMAT = {"\u202e": "202E", "\u202a": "202A", "\u2066": "2066", "\u2069": "2069",
          "\u200e": "200E", "\u200f": "200F", "\ufeff": "FEFF", "\u200b": "200B",
          "\u200c": "200C", "\u00ad": "00AD", "\u061c": "061C", "\U000e0041": "E0041"}


@pytest.fixture(scope="module")
def client(runtime, keyring):
    with TestClient(create_app(runtime=runtime, keyring=keyring), headers=ADMIN) as c:
        yield c


def _problem(resp, field: str) -> dict:
    assert resp.status_code == 422, resp.text
    assert resp.headers["content-type"] == "application/problem+json"
    body = resp.json()
    assert body["field"] == field, body
    return body


@pytest.mark.parametrize("char", list(FORMAT))
def test_turn_text_with_a_format_control_is_refused_and_plays_nothing(client, demo_kb, char):
    session = f"fc-{uuid.uuid4().hex[:8]}"
    text = f"年假{char}有几天"
    body = _problem(client.post(f"/v1/kbs/{demo_kb}/sessions/{session}/turns",
                                json={"text": text}, headers=QUERY), "text")
    assert f"U+{FORMAT[char]}" in body["detail"] and "position 2" in body["detail"]
    # Nothing was played: the next turn is turn 1.
    ok = client.post(f"/v1/kbs/{demo_kb}/sessions/{session}/turns", json={"text": "年假有几天"},
                     headers=QUERY)
    assert ok.status_code == 200 and ok.json()["turn"] == 1


def test_the_bidi_override_message_names_it(client, demo_kb):
    body = _problem(client.post(f"/v1/kbs/{demo_kb}/sessions/s1/turns",
                                json={"text": "pay \u202eevil"}, headers=QUERY), "text")
    assert "RIGHT-TO-LEFT OVERRIDE" in body["detail"]


def test_an_emoji_sequence_with_a_zero_width_joiner_is_a_turn(client, demo_kb):
    text = "年假有几天👩\u200d💻"
    resp = client.post(f"/v1/kbs/{demo_kb}/sessions/fc-{uuid.uuid4().hex[:8]}/turns",
                       json={"text": text}, headers=QUERY)
    assert resp.status_code == 200, resp.text
    assert resp.json()["user"] == text and "hr.leave.annual" in resp.json()["entities"]


@pytest.mark.parametrize("char", ["\u202e", "\u2066", "\u200d", "\u200c", "\u200b"])
def test_names_and_aliases_refuse_every_format_character(client, kb, char):
    admin = f"/v1/kbs/{kb}/admin"
    assert client.put(admin).status_code == 201
    assert client.put(f"{admin}/types/Product", json={}).status_code in (200, 201)
    body = _problem(client.post(f"{admin}/entities", json={
        "id": "p1", "name": f"A产品{char}", "type": "Product"}), "name")
    assert f"U+{ord(char):04X}" in body["detail"]
    _problem(client.post(f"{admin}/entities", json={
        "id": "p1", "name": "A产品", "type": "Product", "aliases": ["ok", f"A{char}品"]}),
        "aliases[1]")
    created = client.post(f"{admin}/entities", json={"id": "p1", "name": "A产品", "type": "Product"})
    assert created.status_code == 201, created.text
    _problem(client.post(f"{admin}/entities/p1/aliases", json={"alias": f"{char}A货"}), "alias")
    _problem(client.patch(f"{admin}/entities/p1", json={"name": f"A{char}"}), "name")
    assert client.get(f"{admin}/entities/p1").json()["aliases"] == []


def test_an_ontology_file_with_a_bidi_alias_is_refused_whole(client, kb):
    lines = [{"kind": "type", "name": "Product", "attributes": []},
             {"kind": "entity", "id": "p1", "name": "A产品", "type": "Product", "aliases": ["A品"]},
             {"kind": "entity", "id": "p2", "name": "B产品", "type": "Product",
              "aliases": ["B\u2067品"]}]
    resp = client.post(f"/v1/kbs/{kb}/admin/import",
                       content="\n".join(json.dumps(x, ensure_ascii=False) for x in lines).encode(),
                       headers={"content-type": "application/x-ndjson"})
    assert resp.status_code == 422, resp.text
    assert resp.json()["line"] == 3 and resp.json()["field"] == "aliases[0]"
    assert "format character" in resp.json()["detail"]
