"""The admin API against the real Neo4j: every route, the alias clash rules,
references on delete, the audit log, search, import/export and bad input."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from tests.conftest import ADMIN, DEMO, QUERY

pytestmark = pytest.mark.neo4j


@pytest.fixture
def client(runtime, keyring):
    with TestClient(create_app(runtime=runtime, keyring=keyring), headers=ADMIN) as c:
        yield c


@pytest.fixture
def base(client, kb):
    """A kb with two types and three entities; returns the admin URL prefix."""
    url = f"/v1/kbs/{kb}/admin"
    assert client.put(url).status_code == 201
    assert client.put(f"{url}/types/Product", json={"attributes": ["价格", "申请流程"]}).status_code == 200
    assert client.put(f"{url}/types/Region", json={"attributes": ["销售额"]}).status_code == 200
    for body in ({"id": "prod.a", "name": "A产品线", "type": "Product"},
                 {"id": "prod.a.personal", "name": "A产品（个人版）", "type": "Product",
                  "aliases": ["A个人版"], "parent": "prod.a"},
                 {"id": "region.east", "name": "华东区", "type": "Region", "aliases": ["华东"]}):
        assert client.post(f"{url}/entities", json=body).status_code == 201, body
    return url


def audit(client, url, **params):
    resp = client.get(f"{url}/audit", params=params)
    assert resp.status_code == 200, resp.text
    return resp.json()["entries"]


def version(client, url) -> int:
    return client.get(f"{url}/version").json()["version"]


def seed_collection(index, kb):
    """A collection with one chunk: BM25 over an empty Lite collection fails (NaN)."""
    from retrieval.models import Chunk

    index.ensure_collection(kb)
    index.upsert(kb, [Chunk("seed#0", "seed", "说明", "通用说明文本")])


def turn(client, kb, text, session="s1"):
    resp = client.post(f"/v1/kbs/{kb}/sessions/{session}/turns", json={"text": text}, headers=QUERY)
    assert resp.status_code in (200, 404), resp.text
    return resp


# -- kb, entities ---------------------------------------------------------------------------

def test_kb_is_created_once_and_reports_its_size(client, kb):
    url = f"/v1/kbs/{kb}/admin"
    assert client.get(url).status_code == 404
    first = client.put(url)
    assert first.status_code == 201 and first.json()["changed"]
    again = client.put(url)
    assert again.status_code == 200 and not again.json()["changed"]
    info = client.get(url).json()
    assert info["entities"] == 0 and info["normalization"]["case"] is True
    assert [e["action"] for e in audit(client, url)] == ["kb.create"]


def test_entity_create_read_update_delete_with_audit(client, base, kb):
    created = client.post(f"{base}/entities", json={
        "id": "prod.b", "name": "B产品", "type": "Product", "aliases": ["B品"],
        "description": "第二个产品", "attributes": {"上市时间": "2025-01"}})
    assert created.status_code == 201
    body = created.json()
    assert body["changed"] and body["entity"]["aliases"] == ["B品"]
    assert body["entity"]["attributes"] == {"上市时间": "2025-01"}

    got = client.get(f"{base}/entities/prod.b").json()
    assert got["name"] == "B产品" and got["description"] == "第二个产品"

    renamed = client.patch(f"{base}/entities/prod.b", json={"name": "B产品（新）", "parent": "prod.a"})
    assert renamed.status_code == 200, renamed.text
    entity = renamed.json()["entity"]
    assert entity["name"] == "B产品（新）" and entity["parent"] == "prod.a"
    # The old name stays an alias, so users who say it are still understood.
    assert "B产品" in entity["aliases"]
    assert "prod.b" in client.get(f"{base}/entities/prod.a").json()["children"]

    cleared = client.patch(f"{base}/entities/prod.b", json={"parent": None})
    assert cleared.json()["entity"]["parent"] is None
    unchanged = client.patch(f"{base}/entities/prod.b", json={"parent": None})
    assert unchanged.json()["changed"] is False

    deleted = client.delete(f"{base}/entities/prod.b")
    assert deleted.status_code == 200 and deleted.json()["changed"]
    assert client.get(f"{base}/entities/prod.b").status_code == 404

    entries = audit(client, base, target="prod.b")
    assert [e["action"] for e in entries] == ["entity.delete", "entity.update", "entity.update",
                                             "entity.create"]
    assert all(e["who"] == "test-admin" for e in entries)
    delete, clear, rename, create = entries
    assert create["before"] is None and create["after"]["name"] == "B产品"
    assert rename["before"]["name"] == "B产品" and rename["after"]["name"] == "B产品（新）"
    assert clear["before"]["parent"] == "prod.a" and clear["after"]["parent"] is None
    assert delete["before"]["id"] == "prod.b" and delete["after"] is None
    assert [e["version"] for e in entries] == sorted((e["version"] for e in entries), reverse=True)


def test_existing_id_is_a_conflict_on_the_id_field(client, base):
    resp = client.post(f"{base}/entities", json={"id": "prod.a", "name": "另一个", "type": "Product"})
    assert resp.status_code == 409 and resp.json()["field"] == "id"
    assert client.get(f"{base}/entities/prod.a").json()["name"] == "A产品线"


# -- aliases --------------------------------------------------------------------------------

def test_alias_naming_another_entity_is_refused_naming_both(client, base, kb):
    before = version(client, base)
    # 華東 normalizes to 华东, which already names region.east.
    resp = client.post(f"{base}/entities/prod.a/aliases", json={"alias": "華東"})
    assert resp.status_code == 409
    problem = resp.json()
    assert resp.headers["content-type"].startswith("application/problem+json")
    assert problem["entity"] == "prod.a" and problem["conflicting"] == ["region.east"]
    assert "region.east" in problem["detail"] and "prod.a" in problem["detail"]
    assert "ambiguous" in problem["detail"] and problem["field"] == "alias"
    assert version(client, base) == before
    assert "華東" not in client.get(f"{base}/entities/prod.a").json()["aliases"]


def test_ambiguous_alias_on_purpose_makes_a_mention_ask(client, base, kb, runtime, milvus_index):
    resp = client.post(f"{base}/entities/prod.a/aliases", json={"alias": "A个人版", "ambiguous": True})
    assert resp.status_code == 201 and resp.json()["shared_with"] == ["prod.a.personal"]
    entry = audit(client, base, action="alias.add")[0]
    assert entry["after"]["shared_with"] == ["prod.a.personal"]
    hits = client.get(f"{base}/search", params={"q": "A个人版"}).json()["hits"]
    assert {h["id"] for h in hits} == {"prod.a", "prod.a.personal"}
    assert all(h["ambiguous"] for h in hits)
    # The linker sees the shared alias at once in this process.
    seed_collection(milvus_index, kb)
    asked = turn(client, kb, "A个人版怎么申请", session="amb").json()
    assert asked["action"] == "clarify"
    assert {o["id"] for o in asked["clarification"]["options"]} == {"prod.a", "prod.a.personal"}


def test_alias_add_is_idempotent_and_remove_undoes_it(client, base):
    url = f"{base}/entities/region.east/aliases"
    first = client.post(url, json={"alias": "东部大区"})
    assert first.status_code == 201 and first.json()["changed"]
    again = client.post(url, json={"alias": "东部大区"})
    assert again.status_code == 200 and not again.json()["changed"]
    assert again.json()["version"] == first.json()["version"]
    assert len(audit(client, base, action="alias.add", target="region.east")) == 1

    removed = client.delete(url, params={"alias": "东部大区"})
    assert removed.status_code == 200
    assert "东部大区" not in client.get(f"{base}/entities/region.east").json()["aliases"]
    assert client.get(f"{base}/search", params={"q": "东部大区"}).json()["hits"] == []
    entry = audit(client, base, action="alias.remove")[0]
    assert entry["before"]["aliases"] == ["华东", "东部大区"] and entry["after"]["aliases"] == ["华东"]

    missing = client.delete(url, params={"alias": "东部大区"})
    assert missing.status_code == 404 and missing.json()["field"] == "alias"
    name = client.delete(url, params={"alias": "华东区"})
    assert name.status_code == 422 and "rename" in name.json()["detail"]


def test_create_with_a_clashing_alias_names_the_field_and_writes_nothing(client, base):
    body = {"id": "region.east2", "name": "华东二区", "type": "Region", "aliases": ["华二", "华东"]}
    resp = client.post(f"{base}/entities", json=body)
    assert resp.status_code == 409 and resp.json()["field"] == "aliases[1]"
    assert client.get(f"{base}/entities/region.east2").status_code == 404
    ok = client.post(f"{base}/entities", json={**body, "ambiguous_aliases": ["华东"]})
    assert ok.status_code == 201 and ok.json()["shared_aliases"] == {"华东": ["region.east"]}


# -- delete with references, relations, confusables, types -----------------------------------

def test_delete_says_what_references_the_entity(client, base):
    assert client.post(f"{base}/relations", json={"from": "region.east", "type": "SELLS",
                                                   "to": "prod.a"}).status_code == 201
    assert client.post(f"{base}/confusables", json={"a": "prod.a", "b": "prod.a.personal",
                                                    "note": "同名"}).status_code == 201
    refused = client.delete(f"{base}/entities/prod.a")
    assert refused.status_code == 409
    refs = refused.json()["references"]
    assert refs == {"children": ["prod.a.personal"],
                    "relations_in": [{"from": "region.east", "type": "SELLS"}],
                    "confusables": [{"with": "prod.a.personal", "note": "同名"}]}
    assert client.get(f"{base}/entities/prod.a").status_code == 200

    forced = client.delete(f"{base}/entities/prod.a", params={"force": "true"})
    assert forced.status_code == 200 and forced.json()["removed_references"] == refs
    child = client.get(f"{base}/entities/prod.a.personal").json()
    assert child["parent"] is None and child["confusables"] == []
    assert client.get(f"{base}/entities/region.east").json()["relations"]["out"] == []
    assert audit(client, base, action="entity.delete")[0]["before"]["references"] == refs


def test_relations_and_confusables_round_trip(client, base):
    rel = {"from": "prod.a.personal", "type": "PART_OF", "to": "prod.a"}
    assert client.post(f"{base}/relations", json=rel).status_code == 201
    assert client.post(f"{base}/relations", json=rel).status_code == 200  # already there
    view = client.get(f"{base}/entities/prod.a").json()
    assert view["relations"]["in"] == [{"from": "prod.a.personal", "type": "PART_OF"}]
    params = {"from": "prod.a.personal", "type": "PART_OF", "to": "prod.a"}
    assert client.delete(f"{base}/relations", params=params).status_code == 200
    assert client.delete(f"{base}/relations", params=params).status_code == 404
    unknown = client.post(f"{base}/relations", json={**rel, "to": "nowhere"})
    assert unknown.status_code == 422 and unknown.json()["field"] == "to"
    bad_type = client.post(f"{base}/relations", json={**rel, "type": "PART OF"})
    assert bad_type.status_code == 422 and bad_type.json()["field"] == "type"

    pair = {"a": "prod.a", "b": "prod.a.personal", "note": "都叫A产品"}
    assert client.post(f"{base}/confusables", json=pair).status_code == 201
    [listed] = client.get(f"{base}/confusables").json()["pairs"]
    assert {listed["a"], listed["b"]} == {"prod.a", "prod.a.personal"}
    assert listed["note"] == "都叫A产品"
    renote = client.post(f"{base}/confusables", json={**pair, "note": "新备注"})
    assert renote.status_code == 201
    assert audit(client, base, action="confusable.add")[0]["before"]["note"] == "都叫A产品"
    same = client.post(f"{base}/confusables", json={"a": "prod.a", "b": "prod.a"})
    assert same.status_code == 422 and same.json()["field"] == "b"
    # Either order names the same pair.
    assert client.delete(f"{base}/confusables",
                         params={"a": "prod.a.personal", "b": "prod.a"}).status_code == 200
    assert client.get(f"{base}/confusables").json()["pairs"] == []


def test_type_schema(client, base):
    types = client.get(f"{base}/types").json()["types"]
    assert [t["name"] for t in types] == ["Product", "Region"]
    assert client.put(f"{base}/types/Insurance", json={"attributes": ["保障范围"],
                                                       "parent": "Product"}).status_code == 200
    cycle = client.put(f"{base}/types/Product", json={"attributes": [], "parent": "Insurance"})
    assert cycle.status_code == 422 and cycle.json()["field"] == "parent"
    unknown = client.put(f"{base}/types/X", json={"parent": "Nope"})
    assert unknown.status_code == 422 and unknown.json()["field"] == "parent"
    used = client.delete(f"{base}/types/Product")
    assert used.status_code == 409
    assert used.json()["references"]["child_types"] == ["Insurance"]
    assert used.json()["references"]["entity_count"] == 2
    assert client.delete(f"{base}/types/Insurance").status_code == 200
    assert client.delete(f"{base}/types/Insurance").status_code == 404
    assert [e["action"] for e in audit(client, base, action="type")][:2] == ["type.delete", "type.put"]


# -- import / export, search, version ---------------------------------------------------------

def test_an_import_line_nested_too_deeply_is_a_422_naming_the_line(client, kb):
    deep = "[" * 10_000 + "]" * 10_000
    text = ('{"kind": "entity", "id": "ok", "name": "好", "type": "T"}\n'
            f'{{"kind": "entity", "id": "deep", "name": "深", "type": "T", "attributes": {{"a": {deep}}}}}\n')
    for params in ({"dry_run": "true"}, {}):
        resp = client.post(f"/v1/kbs/{kb}/admin/import", params=params, content=text.encode())
        assert resp.status_code == 422, resp.text
        body = resp.json()
        assert body["line"] == 2 and "nested too deeply" in body["detail"], body
    assert client.get(f"/v1/kbs/{kb}/admin").status_code == 404  # nothing written


def test_import_and_export_in_the_file_format(client, kb):
    url = f"/v1/kbs/{kb}/admin"
    text = (DEMO / "ontology.jsonl").read_text(encoding="utf-8")
    dry = client.post(f"{url}/import", params={"dry_run": "true"}, content=text.encode())
    assert dry.status_code == 200 and dry.json()["entities_added"] > 20
    assert client.get(url).status_code == 404  # a dry run writes nothing, not even the kb
    done = client.post(f"{url}/import", content=text.encode())
    assert done.status_code == 200 and done.json()["changed"]
    again = client.post(f"{url}/import", content=text.encode()).json()
    assert not again["changed"] and again["version"] == done.json()["version"]
    exported = client.get(f"{url}/export")
    assert exported.headers["content-type"].startswith("application/x-ndjson")
    from kg.ontology import dump_ontology, parse_ontology

    assert exported.text.splitlines() == list(dump_ontology(parse_ontology(text.splitlines())))
    entry = audit(client, url, action="ontology.import")[0]
    assert entry["who"] == "test-admin" and entry["after"]["entities_added"] > 20


def test_import_with_one_bad_line_writes_nothing(client, base):
    before = version(client, base)
    lines = [json.dumps({"kind": "entity", "id": "ok.1", "name": "好的", "type": "Product"}),
             json.dumps({"kind": "entity", "id": "bad id", "name": "坏的", "type": "Product"})]
    resp = client.post(f"{base}/import", content="\n".join(lines).encode())
    assert resp.status_code == 422
    assert resp.json()["line"] == 2 and resp.json()["field"] == "id"
    assert client.get(f"{base}/entities/ok.1").status_code == 404
    assert version(client, base) == before
    not_utf8 = client.post(f"{base}/import", content="名字".encode("gbk"))
    assert not_utf8.status_code == 422 and "UTF-8" in not_utf8.json()["detail"]


def test_search_exact_prefix_and_fuzzy(client, base):
    exact = client.get(f"{base}/search", params={"q": "a产品（个人版）"}).json()
    assert [h["id"] for h in exact["hits"]] == ["prod.a.personal"]
    prefix = client.get(f"{base}/search", params={"q": "A产品", "mode": "prefix"}).json()
    assert {h["id"] for h in prefix["hits"]} == {"prod.a", "prod.a.personal"}
    fuzzy = client.get(f"{base}/search", params={"q": "华东地区", "mode": "fuzzy"}).json()
    assert fuzzy["hits"][0]["id"] == "region.east" and fuzzy["hits"][0]["score"] < 100
    none = client.get(f"{base}/search", params={"q": "完全无关的词", "mode": "exact"}).json()
    assert none["hits"] == []
    bad = client.get(f"{base}/search", params={"q": "x", "mode": "regex"})
    assert bad.status_code == 422 and bad.json()["field"] == "mode"


def test_version_moves_with_every_write_and_this_process_links_with_it(client, base):
    v1 = client.get(f"{base}/version").json()
    client.post(f"{base}/entities/region.east/aliases", json={"alias": "华东片区"})
    v2 = client.get(f"{base}/version").json()
    assert v2["version"] == v1["version"] + 1
    client.get(f"{base}/search", params={"q": "华东片区"})
    assert client.get(f"{base}/version").json()["snapshot_version"] == v2["version"]


def test_per_kb_normalization_rekeys_aliases(client, base, kb, milvus_index):
    seed_collection(milvus_index, kb)
    client.post(f"{base}/entities", json={"id": "en.ai", "name": "AI", "type": "Product"})
    assert client.get(f"{base}/search", params={"q": "ai"}).json()["hits"][0]["id"] == "en.ai"
    resp = client.put(base, json={"normalization": {"case": False}})
    assert resp.status_code == 200 and resp.json()["aliases_rekeyed"] >= 1
    assert resp.json()["kb"]["normalization"]["case"] is False
    assert client.get(f"{base}/search", params={"q": "ai"}).json()["hits"] == []
    assert client.get(f"{base}/search", params={"q": "AI"}).json()["hits"][0]["id"] == "en.ai"
    assert turn(client, kb, "what does AI cost", session="case").json()["entities"] == ["en.ai"]
    assert turn(client, kb, "what does ai cost", session="case2").json()["entities"] == []
    assert audit(client, base, action="kb.normalization")[0]["after"]["normalization"]["case"] is False
    typo = client.put(base, json={"normalization": {"kase": False}})
    assert typo.status_code == 422 and typo.json()["field"] == "normalization.kase"


# -- audit filters and paging ------------------------------------------------------------------

def test_audit_filters_and_pages(client, base):
    for i in range(7):
        assert client.post(f"{base}/entities/region.east/aliases",
                           json={"alias": f"东{i}号区"}).status_code == 201
    everything = audit(client, base, limit=500)
    seqs = [e["seq"] for e in everything]
    assert seqs == sorted(seqs, reverse=True) and len(seqs) == len(set(seqs))

    pages, before = [], None
    while True:
        params = {"limit": 3} | ({"before_seq": before} if before else {})
        page = client.get(f"{base}/audit", params=params).json()
        pages.extend(e["seq"] for e in page["entries"])
        before = page["next_before_seq"]
        if before is None:
            break
    assert pages == seqs

    assert len(audit(client, base, action="alias.add")) == 7
    assert len(audit(client, base, action="alias")) == 7
    assert {e["action"] for e in audit(client, base, target="region.east")} == {"entity.create", "alias.add"}
    assert audit(client, base, who="someone-else") == []
    assert len(audit(client, base, who="test-admin", limit=500)) == len(seqs)
    future = (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()
    past = (datetime.now(timezone.utc) - timedelta(hours=1)).isoformat()
    assert audit(client, base, since=future) == []
    assert len(audit(client, base, since=past, until=future, limit=500)) == len(seqs)
    bad = client.get(f"{base}/audit", params={"since": "yesterday"})
    assert bad.status_code == 422 and bad.json()["field"] == "since"


# -- bad input ---------------------------------------------------------------------------------

BAD_INPUTS = [
    # (method, path suffix, body, status, field)
    ("post", "/entities", {"id": "x y", "name": "坏", "type": "Product"}, 422, "id"),
    ("post", "/entities", {"id": "x" * 129, "name": "长", "type": "Product"}, 422, "id"),
    ("post", "/entities", {"id": "p;DROP", "name": "坏", "type": "Product"}, 422, "id"),
    ("post", "/entities", {"id": "ok.id", "name": "好", "type": "Product", "aliases": [""]}, 422, "aliases[0]"),
    ("post", "/entities", {"id": "ok.id", "name": "好", "type": "Product", "aliases": ["长" * 129]}, 422, "aliases[0]"),
    ("post", "/entities", {"id": "ok.id", "name": "好", "type": "Product", "parent": "nowhere"}, 422, "parent"),
    ("post", "/entities", {"id": "ok.id", "name": "好", "type": "Product", "parent": "ok.id"}, 422, "parent"),
    ("post", "/entities", {"id": "ok.id", "name": "好"}, 422, "type"),
    ("post", "/entities", {"id": "ok.id", "name": "好", "type": "Product", "colour": "red"}, 422, "colour"),
    ("post", "/entities/prod.a/aliases", {"alias": ""}, 422, "alias"),
    ("post", "/entities/prod.a/aliases", {"alias": "   "}, 422, "alias"),
    ("post", "/entities/prod.a/aliases", {"alias": "！？。"}, 422, "alias"),
    ("post", "/entities/prod.a/aliases", {"alias": "长" * 129}, 422, "alias"),
    ("post", "/entities/prod.a/aliases", {"alias": "换\n行"}, 422, "alias"),
    ("post", "/entities/nowhere/aliases", {"alias": "新别名"}, 404, "entity_id"),
    ("post", "/entities/bad%20id/aliases", {"alias": "新别名"}, 422, "entity_id"),
    ("patch", "/entities/prod.a", {"parent": "prod.a.personal"}, 422, "parent"),
    ("patch", "/entities/prod.a", {"name": None}, 422, "name"),
    ("patch", "/entities/nowhere", {"name": "无"}, 404, "entity_id"),
]


@pytest.mark.parametrize("method,suffix,body,status,field", BAD_INPUTS,
                         ids=[f"{m} {s} {f}" for m, s, _, _, f in BAD_INPUTS])
def test_bad_input_names_the_field_and_writes_nothing(client, base, method, suffix, body, status, field):
    before_version = version(client, base)
    before_audit = len(audit(client, base, limit=500))
    resp = getattr(client, method)(f"{base}{suffix}", json=body) if method != "delete" else \
        client.delete(f"{base}{suffix}")
    assert resp.status_code == status, resp.text
    problem = resp.json()
    assert resp.headers["content-type"].startswith("application/problem+json")
    assert problem["status"] == status and problem["field"] == field, problem
    assert len(problem["detail"]) > 10
    assert version(client, base) == before_version
    assert len(audit(client, base, limit=500)) == before_audit


def test_malformed_json_and_unknown_kb(client, base):
    resp = client.post(f"{base}/entities", content=b'{"id": "x", "name": ',
                       headers={**ADMIN, "content-type": "application/json"})
    assert resp.status_code == 400 and resp.json()["field"] == "body"
    assert "JSON" in resp.json()["detail"]
    not_object = client.post(f"{base}/entities", json=["x"])
    assert not_object.status_code == 422
    for path in ("", "/version", "/audit", "/entities/x", "/types", "/export"):
        resp = client.get(f"/v1/kbs/no_such_kb_here/admin{path}")
        assert resp.status_code == 404, (path, resp.text)
    bad_kb = client.get("/v1/kbs/bad-kb!/admin")
    assert bad_kb.status_code == 422 and bad_kb.json()["field"] == "kb"
    write = client.post("/v1/kbs/no_such_kb_here/admin/entities",
                        json={"id": "a", "name": "甲", "type": "T"})
    assert write.status_code == 404 and "PUT /v1/kbs/no_such_kb_here/admin" in write.json()["detail"]


HOSTILE = ["x' OR 1=1 //", "}) MATCH (n) DETACH DELETE n //", 'chunk_id in ["a"] or 1==1',
           '" or entities != "', "$kb", "array_contains(entities, \"region.east\")"]


def test_cypher_and_filter_lookalikes_are_stored_and_matched_literally(client, base, kb, milvus_index):
    seed_collection(milvus_index, kb)
    counts = client.get(base).json()
    for i, text in enumerate(HOSTILE):
        resp = client.post(f"{base}/entities/prod.a.personal/aliases", json={"alias": text})
        assert resp.status_code == 201, resp.text
    created = client.post(f"{base}/entities", json={"id": "hostile.1", "name": HOSTILE[1],
                                                    "type": "Product", "description": HOSTILE[0],
                                                    "ambiguous_aliases": [HOSTILE[1]]})
    assert created.status_code == 201
    entity = client.get(f"{base}/entities/prod.a.personal").json()
    assert entity["aliases"][-len(HOSTILE):] == HOSTILE
    assert client.get(f"{base}/entities/hostile.1").json()["description"] == HOSTILE[0]
    after = client.get(base).json()
    # Nothing else was touched: one more entity, and exactly the added aliases.
    assert after["entities"] == counts["entities"] + 1
    assert after["aliases"] == counts["aliases"] + len(HOSTILE)
    for text in HOSTILE:
        hits = client.get(f"{base}/search", params={"q": text}).json()["hits"]
        assert "prod.a.personal" in {h["id"] for h in hits}, text
    found = turn(client, kb, 'chunk_id in ["a"] or 1==1 怎么申请', session="hostile").json()
    assert found["entities"] == ["prod.a.personal"]
    assert client.get(f"{base}/entities/region.east").status_code == 200
