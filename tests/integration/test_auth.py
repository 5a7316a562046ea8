"""API keys and roles: every admin route refuses a missing key (401) and a
query key (403); the turn routes take either; start-up refuses bad keys in
production and announces generated ones in development."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.app import create_app
from api.auth import EXAMPLE_KEYS, build_keyring, hash_key
from api.cli import app as cli_app
from api.settings import Settings
from common.errors import ConfigurationError
from tests.conftest import ADMIN, ADMIN_KEY, QUERY, QUERY_KEY

pytestmark = pytest.mark.neo4j

ADMIN_ROUTES = [
    ("get", ""), ("put", ""), ("get", "/version"), ("get", "/search?q=x"),
    ("post", "/entities"), ("get", "/entities/e1"), ("patch", "/entities/e1"),
    ("delete", "/entities/e1"), ("post", "/entities/e1/aliases"),
    ("delete", "/entities/e1/aliases?alias=x"), ("post", "/relations"),
    ("delete", "/relations?from=a&type=T&to=b"), ("get", "/confusables"),
    ("post", "/confusables"), ("delete", "/confusables?a=a&b=b"), ("get", "/types"),
    ("put", "/types/T"), ("delete", "/types/T"), ("post", "/import"), ("get", "/export"),
    ("get", "/audit"), ("get", "/retag"), ("post", "/retag"), ("get", "/clarifications"),
    ("delete", "/sessions?subject=u1"), ("get", "/clarify"), ("post", "/clarify/recalibrate"),
    ("delete", "/clarify"), ("post", "/suggest"),
]


@pytest.fixture
def client(runtime, keyring):
    with TestClient(create_app(runtime=runtime, keyring=keyring)) as c:
        yield c


def test_every_admin_route_is_listed_here(client):
    """A new admin route must join ADMIN_ROUTES, so its role checks are tested."""
    routes = {(method, path.removeprefix("/v1/kbs/{kb}/admin"))
              for path, methods in client.app.openapi()["paths"].items()
              if path.startswith("/v1/kbs/{kb}/admin") for method in methods}
    listed = {(m, p.split("?")[0].replace("/entities/e1", "/entities/{entity_id}")
               .replace("/types/T", "/types/{name}")) for m, p in ADMIN_ROUTES}
    assert routes == listed


@pytest.mark.parametrize("method,path", ADMIN_ROUTES, ids=[f"{m} {p}" for m, p in ADMIN_ROUTES])
def test_admin_routes_need_an_admin_key(client, kb, method, path):
    url = f"/v1/kbs/{kb}/admin{path}"
    none = client.request(method.upper(), url, json={})
    assert none.status_code == 401, none.text
    assert none.headers["www-authenticate"] == "Bearer"
    assert none.headers["content-type"].startswith("application/problem+json")
    wrong = client.request(method.upper(), url, json={},
                           headers={"Authorization": "Bearer rk_not_a_key"})
    assert wrong.status_code == 401
    query = client.request(method.upper(), url, json={}, headers=QUERY)
    assert query.status_code == 403, query.text
    assert "admin key" in query.json()["detail"]
    admin = client.request(method.upper(), url, json={}, headers=ADMIN)
    assert admin.status_code not in (401, 403), admin.text
    for resp in (none, wrong, query, admin):
        assert ADMIN_KEY not in resp.text and QUERY_KEY not in resp.text


def test_turn_routes_take_either_key(client, demo_kb):
    url = f"/v1/kbs/{demo_kb}/sessions/auth-1/turns"
    assert client.post(url, json={"text": "年假有几天"}).status_code == 401
    assert client.post(url, json={"text": "年假有几天"}, headers=QUERY).status_code == 200
    assert client.post(url, json={"text": "年假有几天"}, headers=ADMIN).status_code == 200
    x_api_key = client.post(url, json={"text": "年假有几天"}, headers={"X-API-Key": QUERY_KEY})
    assert x_api_key.status_code == 200
    basic = client.post(url, json={"text": "年假"}, headers={"Authorization": f"Basic {QUERY_KEY}"})
    assert basic.status_code == 401
    assert client.delete(f"/v1/kbs/{demo_kb}/sessions/auth-1").status_code == 401
    assert client.delete(f"/v1/kbs/{demo_kb}/sessions/auth-1", headers=QUERY).status_code == 204
    assert client.get("/healthz").status_code == 200


def test_audit_names_the_key_that_wrote(client, kb):
    client.put(f"/v1/kbs/{kb}/admin", headers=ADMIN)
    [entry] = client.get(f"/v1/kbs/{kb}/admin/audit", headers=ADMIN).json()["entries"]
    assert entry["who"] == "test-admin"


def _settings(**values) -> Settings:
    return Settings(**values)


def test_production_refuses_missing_published_or_default_secrets():
    keys = [{"name": "ops", "role": "admin", "hash": hash_key("rk_a_real_secret_admin_key_123456")},
            {"name": "app", "role": "query", "hash": hash_key("rk_a_real_secret_query_key_654321")}]
    with pytest.raises(ConfigurationError, match="REFERENT_AUTH__KEYS must hold"):
        build_keyring(_settings(mode="production", neo4j={"password": "s3cret-pass-for-the-tests"}))
    with pytest.raises(ConfigurationError, match="REFERENT_AUTH__KEYS must hold"):
        build_keyring(_settings(mode="production", neo4j={"password": "s3cret-pass-for-the-tests"},
                                auth={"keys": keys[:1]}))
    published = [{**keys[0], "hash": hash_key(EXAMPLE_KEYS[0])}, keys[1]]
    with pytest.raises(ConfigurationError, match="published in the docs"):
        build_keyring(_settings(mode="production", neo4j={"password": "s3cret-pass-for-the-tests"},
                                auth={"keys": published}))
    with pytest.raises(ConfigurationError, match="REFERENT_NEO4J__PASSWORD"):
        build_keyring(_settings(mode="production", auth={"keys": keys}))
    ring = build_keyring(_settings(mode="production", neo4j={"password": "s3cret-pass-for-the-tests"},
                                   auth={"keys": keys}))
    assert ring.roles() == {"admin", "query"}


def test_production_server_does_not_start_without_keys(monkeypatch):
    monkeypatch.setenv("REFERENT_MODE", "production")
    result = CliRunner().invoke(cli_app, ["serve", "--port", "1"])
    assert result.exit_code == 1
    assert "production mode refuses to start" in result.output


def test_development_generates_keys_once_and_they_work(runtime, demo_kb):
    shown: list[str] = []
    ring = build_keyring(Settings(), announce=shown.append)
    [text] = shown
    assert "WARNING" in text
    admin_key = text.split("admin key: ")[1].split()[0]
    query_key = text.split("query key: ")[1].split()[0]
    assert ring.hashes() == {hash_key(admin_key), hash_key(query_key)}
    with TestClient(create_app(runtime=runtime, keyring=ring)) as client:
        url = f"/v1/kbs/{demo_kb}/admin/version"
        assert client.get(url, headers={"Authorization": f"Bearer {admin_key}"}).status_code == 200
        assert client.get(url, headers={"Authorization": f"Bearer {query_key}"}).status_code == 403


def test_keys_from_the_environment(monkeypatch):
    entry = {"name": "ops", "role": "admin", "hash": hash_key("rk_env_key_example_for_test_1")}
    monkeypatch.setenv("REFERENT_AUTH__KEYS", json.dumps([entry]))
    settings = Settings()
    assert [k.name for k in settings.auth.keys] == ["ops"]
    assert build_keyring(settings).identify("rk_env_key_example_for_test_1").role == "admin"
    monkeypatch.setenv("REFERENT_AUTH__KEYS", json.dumps([{**entry, "hash": "md5:abc"}]))
    with pytest.raises(ValueError, match="hash"):
        Settings()


def test_keys_new_prints_a_working_key_and_its_entry():
    result = CliRunner().invoke(cli_app, ["keys", "new", "--name", "ops", "--role", "admin"])
    assert result.exit_code == 0, result.output
    key = result.output.split("shown once; give it to the caller, store it nowhere else): ")[1].split()[0]
    entry = json.loads(result.output.split("REFERENT_AUTH__KEYS): ")[1].strip())
    assert entry == {"name": "ops", "role": "admin", "hash": hash_key(key)}
    bad = CliRunner().invoke(cli_app, ["keys", "new", "--name", "ops", "--role", "root"])
    assert bad.exit_code == 2
