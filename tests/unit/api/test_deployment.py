"""The deployment guide cannot drift from the code: its settings table is the one
generated from api/settings.py, every REFERENT_* name the docs and deploy files use
is a real setting, and the compose file parses and wires the API to its stores."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel, Field

from api import settings_doc
from api.settings import Settings
from referent_client.client import CLIENT_ENV

REPO = Path(__file__).resolve().parents[3]
COMPOSE = REPO / "deploy" / "compose.yaml"
GROUPS = {f"REFERENT_{name.upper()}" for name, f in Settings.model_fields.items()
          if isinstance(f.annotation, type) and issubclass(f.annotation, BaseModel)}


def test_every_setting_has_a_description_and_a_row():
    rows = settings_doc.rows()
    assert len(rows) == len({variable for variable, *_ in rows}) >= 50
    assert all(description for *_, description in rows)


def test_a_setting_without_a_description_is_refused():
    class Group(BaseModel):
        documented: int = Field(default=1, description="says what it does")
        silent: int = 2

    class Fake(BaseModel):
        group: Group = Group()

    with pytest.raises(settings_doc.UndocumentedSettingError, match="REFERENT_GROUP__SILENT"):
        settings_doc.rows(Fake)


def test_the_deployment_guide_holds_the_generated_table():
    text = settings_doc.DOC.read_text(encoding="utf-8")
    assert settings_doc.updated(text) == text, (
        "docs/deployment.md's settings table is out of date: run `python -m api.settings_doc`")


@pytest.mark.parametrize("path", ["README.md", "docs/deployment.md", "docs/api.md", "docs/admin.md",
                                  "docs/configuration.md", "docs/integrations.md",
                                  "deploy/compose.yaml", "deploy/env.example"])
def test_every_referent_variable_named_in_the_docs_exists(path):
    known = settings_doc.variables()
    text = (REPO / path).read_text(encoding="utf-8")
    named = set(re.findall(r"REFERENT_[A-Z0-9_]*[A-Z0-9]", text))
    # The client's variables (README, "Integrations") are read by the client, not the server.
    unknown = {n for n in named if n not in known and n not in GROUPS and n not in CLIENT_ENV}
    assert not unknown, f"{path} names settings that do not exist: {sorted(unknown)}"


def test_no_client_variable_is_a_server_setting():
    assert not set(CLIENT_ENV) & (settings_doc.variables() | GROUPS)


def test_the_compose_file_parses_and_wires_the_api_to_its_stores():
    compose = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    services = compose["services"]
    assert {"neo4j", "etcd", "minio", "milvus", "redis", "api", "lb"} <= set(services)
    env = services["api"]["environment"]
    assert set(env) <= settings_doc.variables()
    assert env["REFERENT_MODE"] == "production"
    assert env["REFERENT_NEO4J__URI"] == "bolt://neo4j:7687"
    assert env["REFERENT_MILVUS__URI"] == "http://milvus:19530"
    assert env["REFERENT_SESSIONS__BACKEND"] == "redis" and "@redis:6379" in env["REFERENT_SESSIONS__REDIS_URL"]
    assert {"neo4j", "milvus", "redis"} <= set(services["api"]["depends_on"])
    # Sessions survive a Redis restart only with persistence on.
    assert "--appendonly" in services["redis"]["command"]
    assert services["milvus"]["command"] == ["milvus", "run", "standalone"]
    assert {"etcd", "minio"} <= set(services["milvus"]["depends_on"])
    # Every named volume a service mounts is declared.
    mounted = {v.split(":")[0] for s in services.values() for v in s.get("volumes", [])
               if not v.startswith((".", "/"))}
    assert mounted <= set(compose["volumes"])
    # The load balancer's config file exists where the compose file mounts it from.
    config = services["lb"]["volumes"][0].split(":")[0]
    assert (COMPOSE.parent / config).is_file()
    assert "server api:8000" in (COMPOSE.parent / config).read_text(encoding="utf-8")
