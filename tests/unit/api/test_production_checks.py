"""Production mode refuses weak Neo4j passwords at start-up, naming the setting."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from api.auth import build_keyring, hash_key
from api.cli import app as cli_app
from api.settings import Settings, weak_neo4j_password
from common.errors import ConfigurationError

KEYS = [{"name": "ops", "role": "admin", "hash": hash_key("rk_a_real_secret_admin_key_123456")},
        {"name": "app", "role": "query", "hash": hash_key("rk_a_real_secret_query_key_654321")}]


@pytest.mark.parametrize("password", [
    "", "neo4j", "NEO4J", "password", "Password", "referent-dev", "s3cret", "short-pw-11",
    "neo4j2024000000", "password12345678", "aaaaaaaaaaaaaaaa", "abababababababab",
    "123456789012", "changeme1234"])
def test_production_refuses_a_weak_neo4j_password(password):
    settings = Settings(mode="production", neo4j={"password": password}, auth={"keys": KEYS})
    with pytest.raises(ConfigurationError) as caught:
        build_keyring(settings)
    message = str(caught.value)
    assert "production mode refuses to start" in message
    assert "REFERENT_NEO4J__PASSWORD" in message and "openssl rand" in message
    # The secret itself is not echoed.
    assert repr(password) not in message and f"`{password}`" not in message


@pytest.mark.parametrize("password", ["u7#Kq2vLm9xR", "correct horse battery staple",
                                      "Zq5pV0tWn8yB3cLd"])
def test_production_accepts_a_long_uncommon_password(password):
    assert weak_neo4j_password(password) is None
    ring = build_keyring(Settings(mode="production", neo4j={"password": password},
                                  auth={"keys": KEYS}))
    assert ring.roles() == {"admin", "query"}


def test_development_keeps_the_default_password():
    assert build_keyring(Settings(auth={"keys": KEYS})).roles() == {"admin", "query"}


def test_the_server_does_not_start_and_says_which_setting(monkeypatch):
    monkeypatch.setenv("REFERENT_MODE", "production")
    monkeypatch.setenv("REFERENT_AUTH__KEYS", json.dumps(KEYS))
    monkeypatch.setenv("REFERENT_NEO4J__PASSWORD", "password")
    result = CliRunner().invoke(cli_app, ["serve", "--port", "1"])
    assert result.exit_code == 1
    assert "REFERENT_NEO4J__PASSWORD" in result.output
    assert "well-known" in result.output
