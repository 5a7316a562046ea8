"""Keys scoped to knowledge bases, stored hashed in the real Neo4j, managed through
``/v1/admin/keys`` and ``referent keys``; sessions that belong to their caller (key and
``X-Referent-Subject``); erasing one end user's sessions."""

from __future__ import annotations

import json
import time
import uuid

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.app import create_app
from api.auth import hash_key
from api.cli import app as cli_app
from kg.api_keys import Neo4jKeyStore
from tests.conftest import ADMIN, ADMIN_KEY, QUERY

pytestmark = pytest.mark.neo4j

KEYS = "/v1/admin/keys"


@pytest.fixture
def client(runtime, keyring):
    with TestClient(create_app(runtime=runtime, keyring=keyring)) as c:
        yield c


@pytest.fixture
def other_kb(neo4j_store):
    """A second kb with an ontology (and no corpus): it exists."""
    name = f"t_other_{uuid.uuid4().hex[:8]}"
    neo4j_store.import_ontology(name, [json.dumps(
        {"kind": "entity", "id": "x.1", "name": "某实体", "type": "Thing"}, ensure_ascii=False)])
    yield name
    neo4j_store.delete_kb(name)


def _make(client, scopes, name=None, headers=ADMIN) -> tuple[str, dict]:
    resp = client.post(KEYS, json={"name": name or f"k-{uuid.uuid4().hex[:8]}", "scopes": scopes},
                       headers=headers)
    assert resp.status_code == 201, resp.text
    body = resp.json()
    return body.pop("key"), body


def _bearer(key: str, subject: str | None = None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {key}"}
    if subject is not None:
        headers["X-Referent-Subject"] = subject
    return headers


def _without_id(resp) -> dict:
    body = dict(resp.json())
    body.pop("request_id", None)
    return body


def test_a_stored_key_works_on_its_kb_only_and_its_hash_alone_is_stored(client, demo_kb,
                                                                        other_kb, neo4j_store):
    key, info = _make(client, {demo_kb: "query"})
    assert info["scopes"] == {demo_kb: "query"} and info["source"] == "stored"
    assert info["created_by"] == "test-admin"
    [stored] = [k for k in Neo4jKeyStore(neo4j_store).list() if k.id == info["id"]]
    assert stored.hash == hash_key(key)
    listing = client.get(KEYS, headers=ADMIN)
    assert key not in listing.text and hash_key(key) not in listing.text
    env_admin = next(k for k in listing.json()["keys"] if k["id"] == "env:test-admin")
    assert (env_admin["scopes"], env_admin["source"]) == ({"*": "admin"}, "environment")

    turn = client.post(f"/v1/kbs/{demo_kb}/sessions/s-{uuid.uuid4().hex[:6]}/turns",
                       json={"text": "年假有几天"}, headers=_bearer(key))
    assert turn.status_code == 200, turn.text

    # Another kb that exists answers exactly as a kb that does not.
    missing = f"t_missing_{uuid.uuid4().hex[:6]}"
    elsewhere = client.post(f"/v1/kbs/{other_kb}/sessions/s1/turns", json={"text": "某实体"},
                            headers=_bearer(key))
    nowhere = client.post(f"/v1/kbs/{missing}/sessions/s1/turns", json={"text": "某实体"},
                          headers=ADMIN)
    assert elsewhere.status_code == nowhere.status_code == 404
    assert _without_id(elsewhere) == json.loads(json.dumps(_without_id(nowhere)).replace(
        missing, other_kb))
    trace = "/sessions/s1/turns/3/trace"
    elsewhere = client.get(f"/v1/kbs/{other_kb}{trace}", headers=_bearer(key))
    nowhere = client.get(f"/v1/kbs/{missing}{trace}", headers=ADMIN)
    assert elsewhere.status_code == nowhere.status_code == 404
    assert _without_id(elsewhere) == _without_id(nowhere)
    # Its own kb's admin routes: 403 (the kb's existence is no secret to it).
    assert client.get(f"/v1/kbs/{demo_kb}/admin", headers=_bearer(key)).status_code == 403


def test_an_admin_key_of_one_kb_sees_no_other_and_cannot_manage_keys(client, demo_kb, other_kb):
    key, _ = _make(client, {demo_kb: "admin"})
    assert client.get(f"/v1/kbs/{demo_kb}/admin/version", headers=_bearer(key)).status_code == 200
    missing = f"t_missing_{uuid.uuid4().hex[:6]}"
    elsewhere = client.get(f"/v1/kbs/{other_kb}/admin", headers=_bearer(key))
    nowhere = client.get(f"/v1/kbs/{missing}/admin", headers=ADMIN)
    assert elsewhere.status_code == nowhere.status_code == 404
    assert _without_id(elsewhere) == json.loads(json.dumps(_without_id(nowhere)).replace(
        missing, other_kb))
    for method, path in (("get", KEYS), ("post", KEYS), ("delete", f"{KEYS}/kwhatever")):
        resp = client.request(method.upper(), path, json={"name": "x", "scopes": {"*": "admin"}},
                              headers=_bearer(key))
        assert resp.status_code == 403, resp.text
        assert "deployment-wide admin key" in resp.json()["detail"]
    assert client.get(KEYS, headers=QUERY).status_code == 403


def test_a_stored_deployment_admin_manages_keys_and_a_revoked_key_stops_at_once(client, demo_kb):
    boss, boss_info = _make(client, {"*": "admin"})
    key, info = _make(client, {demo_kb: "query"}, headers=_bearer(boss))
    assert info["created_by"] == boss_info["name"]
    url = f"/v1/kbs/{demo_kb}/sessions/s-{uuid.uuid4().hex[:6]}/turns"
    assert client.post(url, json={"text": "年假"}, headers=_bearer(key)).status_code == 200
    revoked = client.delete(f"{KEYS}/{info['id']}", headers=_bearer(boss))
    assert revoked.status_code == 200 and revoked.json()["revoked_at"]
    # Revoked through this process: refused on the next request.
    after = client.post(url, json={"text": "年假"}, headers=_bearer(key))
    assert after.status_code == 401
    assert client.delete(f"{KEYS}/{info['id']}", headers=ADMIN).status_code == 404
    assert client.delete(f"{KEYS}/env:test-query", headers=ADMIN).status_code == 409
    listed = client.get(KEYS, params={"revoked": "true"}, headers=ADMIN).json()["keys"]
    assert any(k["id"] == info["id"] and k["revoked_by"] for k in listed)
    assert not any(k["id"] == info["id"] for k in client.get(KEYS, headers=ADMIN).json()["keys"])


def test_bad_key_requests_say_what_to_fix(client):
    name = f"k-{uuid.uuid4().hex[:8]}"
    _make(client, {"*": "query"}, name=name)
    again = client.post(KEYS, json={"name": name, "scopes": {"a": "query"}}, headers=ADMIN)
    assert again.status_code == 409 and again.json()["field"] == "name"
    env_name = client.post(KEYS, json={"name": "test-query", "scopes": {"a": "query"}},
                           headers=ADMIN)
    assert env_name.status_code == 409
    for scopes, field in (({}, "scopes"), ({"a b": "query"}, "scopes.a b"),
                          ({"a": "root"}, "scopes.a")):
        resp = client.post(KEYS, json={"name": "ok", "scopes": scopes}, headers=ADMIN)
        assert resp.status_code == 422, resp.text
        assert resp.json()["field"] == field
        assert resp.headers["content-type"].startswith("application/problem+json")


def test_the_cli_creates_lists_and_revokes_and_the_server_follows(client, demo_kb):
    runner = CliRunner()
    name = f"cli-{uuid.uuid4().hex[:8]}"
    made = runner.invoke(cli_app, ["keys", "create", "--name", name, "--scope", f"{demo_kb}=query"])
    assert made.exit_code == 0, made.output
    key = made.output.split("store it nowhere else): ")[1].split()[0]
    key_id = made.output.split("id ")[1].split()[0]
    url = f"/v1/kbs/{demo_kb}/sessions/s-{uuid.uuid4().hex[:6]}/turns"
    # Made by another process: accepted here within the refresh interval (an unknown key
    # makes the process look again sooner).
    deadline = time.monotonic() + 2.0
    while client.post(url, json={"text": "年假"}, headers=_bearer(key)).status_code != 200:
        assert time.monotonic() < deadline, "the new key is still refused after 2 s"
        time.sleep(0.1)
    listed = runner.invoke(cli_app, ["keys", "list"])
    assert listed.exit_code == 0 and name in listed.output and key not in listed.output
    assert runner.invoke(cli_app, ["keys", "revoke", key_id]).exit_code == 0
    deadline = time.monotonic() + 2.0
    while client.post(url, json={"text": "年假"}, headers=_bearer(key)).status_code != 401:
        assert time.monotonic() < deadline, "the revoked key still works after 2 s"
        time.sleep(0.1)
    bad = runner.invoke(cli_app, ["keys", "create", "--name", "x", "--scope", "faq"])
    assert bad.exit_code == 2 and "KB=ROLE" in bad.output
    gone = runner.invoke(cli_app, ["keys", "revoke", key_id])
    assert gone.exit_code == 2 and "no active stored key" in gone.output


# -- sessions belong to their caller ---------------------------------------------------------

def test_another_key_gets_404_for_a_session_and_an_admin_may_read_it(client, demo_kb):
    a, _ = _make(client, {demo_kb: "query"})
    b, _ = _make(client, {demo_kb: "query"})
    session = f"s-{uuid.uuid4().hex[:8]}"
    base = f"/v1/kbs/{demo_kb}/sessions/{session}"
    first = client.post(f"{base}/turns", json={"text": "我的电话是13800138000，年假有几天"},
                        headers=_bearer(a))
    assert first.status_code == 200 and first.json()["turn"] == 1

    for resp in (client.get(f"{base}/turns/1/trace", headers=_bearer(b)),
                 client.post(f"{base}/turns", json={"text": "那病假呢"}, headers=_bearer(b)),
                 client.delete(base, headers=_bearer(b)),
                 client.get(f"{base}/turns/1/trace", headers=QUERY)):
        assert resp.status_code == 404, resp.text
        assert "13800138000" not in resp.text
    # The trace of a turn B never played reads the same as one that does not exist.
    assert _without_id(client.get(f"{base}/turns/1/trace", headers=_bearer(b))) == \
        json.loads(json.dumps(_without_id(client.get(f"{base}/turns/7/trace", headers=_bearer(a))))
                   .replace("turn 7", "turn 1"))

    # The owner goes on where it left off; B's attempts changed nothing.
    second = client.post(f"{base}/turns", json={"text": "那病假呢"}, headers=_bearer(a))
    assert second.status_code == 200 and second.json()["turn"] == 2
    trace = client.get(f"{base}/turns/1/trace", headers=ADMIN)
    assert trace.status_code == 200 and "13800138000" in trace.json()["user"]
    assert client.delete(base, headers=ADMIN).status_code == 204
    fresh = client.post(f"{base}/turns", json={"text": "年假有几天"}, headers=_bearer(b))
    assert fresh.status_code == 200 and fresh.json()["turn"] == 1


def test_a_subject_owns_its_sessions_within_one_key(client, demo_kb):
    key, _ = _make(client, {demo_kb: "query"})
    session = f"s-{uuid.uuid4().hex[:8]}"
    base = f"/v1/kbs/{demo_kb}/sessions/{session}"
    assert client.post(f"{base}/turns", json={"text": "年假有几天"},
                       headers=_bearer(key, "alice@example.com")).status_code == 200
    for headers in (_bearer(key, "bob@example.com"), _bearer(key)):
        assert client.get(f"{base}/turns/1/trace", headers=headers).status_code == 404
        assert client.post(f"{base}/turns", json={"text": "那病假呢"},
                           headers=headers).status_code == 404
    same = client.post(f"{base}/turns", json={"text": "那病假呢"},
                       headers=_bearer(key, "alice@example.com"))
    assert same.status_code == 200 and same.json()["turn"] == 2
    bad = client.post(f"{base}/turns", json={"text": "年假"}, headers=_bearer(key, "al ice"))
    assert bad.status_code == 422 and bad.json()["field"] == "X-Referent-Subject"


def test_erasing_a_subject_removes_its_sessions_and_traces_only(client, demo_kb):
    user = f"u-{uuid.uuid4().hex[:8]}"
    kept_user = f"u-{uuid.uuid4().hex[:8]}"
    sessions = [f"s-{uuid.uuid4().hex[:8]}" for _ in range(3)]
    for i, session in enumerate(sessions):
        who = user if i < 2 else kept_user
        resp = client.post(f"/v1/kbs/{demo_kb}/sessions/{session}/turns",
                           json={"text": "年假有几天"}, headers={**QUERY, "X-Referent-Subject": who})
        assert resp.status_code == 200
    assert client.delete(f"/v1/kbs/{demo_kb}/admin/sessions", params={"subject": user},
                         headers=QUERY).status_code == 403
    erased = client.delete(f"/v1/kbs/{demo_kb}/admin/sessions", params={"subject": user},
                           headers=ADMIN)
    assert erased.status_code == 200, erased.text
    assert erased.json() == {"kb": demo_kb, "sessions": 2, "traces": 2}
    for i, session in enumerate(sessions):
        who = user if i < 2 else kept_user
        trace = client.get(f"/v1/kbs/{demo_kb}/sessions/{session}/turns/1/trace",
                           headers={**QUERY, "X-Referent-Subject": who})
        assert trace.status_code == (404 if i < 2 else 200)
    again = client.post(f"/v1/kbs/{demo_kb}/sessions/{sessions[0]}/turns",
                        json={"text": "年假有几天"}, headers={**QUERY, "X-Referent-Subject": user})
    assert again.json()["turn"] == 1


def test_without_redis_each_process_limits_each_key_with_a_429_problem(runtime, keyring, demo_kb):
    from api.settings import RateLimitSettings

    settings = runtime.settings.model_copy(update={
        "rate_limit": RateLimitSettings(per_key_per_second=2, burst=3)})
    with TestClient(create_app(settings, runtime=runtime, keyring=keyring)) as client:
        url = f"/v1/kbs/{demo_kb}/admin/version"
        statuses = [client.get(url, headers=ADMIN).status_code for _ in range(5)]
        assert statuses[:3] == [200, 200, 200] and statuses[3:] == [429, 429]
        limited = client.get(url, headers=ADMIN)
        assert limited.status_code == 429
        assert limited.headers["retry-after"] == "1"
        assert limited.headers["content-type"].startswith("application/problem+json")
        body = limited.json()
        assert body["title"] == "Too many requests" and body["retry_after"] == 1
        assert body["request_id"] == limited.headers["x-request-id"]
        assert ADMIN_KEY not in limited.text
        assert client.get(url, headers=QUERY).status_code == 403  # its own bucket
        time.sleep(0.6)
        assert client.get(url, headers=ADMIN).status_code == 200
        assert client.get("/healthz").status_code == 200  # no key, no limit


def test_stored_keys_stay_in_force_while_neo4j_is_away_and_unknown_before_first_load(settings):
    from api.runtime import open_ontology_store
    from common.errors import RetryableDependencyError
    from kg.api_keys import KeyTable
    from kg.neo4j_store import Neo4jOntologyStore

    store = open_ontology_store(settings)
    keys = Neo4jKeyStore(store)
    made = keys.create(name=f"k-{uuid.uuid4().hex[:8]}", key_hash=hash_key("rk_" + uuid.uuid4().hex),
                       scopes={"faq": "query"}, created_by="test")
    table = KeyTable(keys, refresh_seconds=0.05, wait_seconds=0.5)
    try:
        assert table.lookup(made.hash).scopes == {"faq": "query"}
        store.close()  # Neo4j is gone for this process
        time.sleep(0.1)
        assert table.lookup(made.hash) is not None  # the keys loaded last still serve
        # A key not in the copy might have been made since: it cannot be refused unseen.
        with pytest.raises(RetryableDependencyError, match="cannot be checked"):
            table.lookup(hash_key("rk_never_made"))
    finally:
        table.close()
        keys_cleanup = open_ontology_store(settings)
        Neo4jKeyStore(keys_cleanup).revoke(made.id, revoked_by="test")
        keys_cleanup.close()

    nowhere = Neo4jOntologyStore.connect("bolt://127.0.0.1:1", "neo4j", "x",
                                         connection_timeout=0.5, max_retry_seconds=0)
    cold = KeyTable(Neo4jKeyStore(nowhere), first_wait_seconds=3)
    try:
        with pytest.raises(RetryableDependencyError, match="REFERENT_AUTH__KEYS keep working"):
            cold.lookup(made.hash)
    finally:
        cold.close()
        nowhere.close()
