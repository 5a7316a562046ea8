"""The ``referent-client`` distribution (clients/python) built from the repository and
installed into a clean virtual environment, as an assistant's project would: it brings
the client and its dependencies, and none of the server's modules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

SERVER_MODULES = ["api", "kg", "dialogue", "retrieval", "common", "evaluation", "analytics",
                  "devservices"]


def run(command: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def client_venv(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("client-venv")
    venv = root / "venv"
    made = run([sys.executable, "-m", "venv", str(venv)], root)
    assert made.returncode == 0, made.stderr
    installed = run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                     str(REPO / "clients" / "python")], root)
    assert installed.returncode == 0, installed.stderr[-3000:]
    return venv


def test_only_the_client_is_installed(client_venv):
    code = ("import importlib.util, json; print(json.dumps({name: importlib.util.find_spec(name) "
            f"is not None for name in {[*SERVER_MODULES, 'referent_client']!r}}}))")
    done = run([str(client_venv / "bin" / "python"), "-c", code], client_venv.parent)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found.pop("referent_client") is True
    assert not [name for name, present in found.items() if present], found


def test_the_client_works_and_names_its_extras(client_venv):
    code = ("from referent_client import ReferentClient, RetryPolicy; "
            "c = ReferentClient('http://127.0.0.1:9', 'rk_x', retry=RetryPolicy(attempts=1)); "
            "c.close(); import referent_client.langchain")
    done = run([str(client_venv / "bin" / "python"), "-c", code], client_venv.parent)
    # The client imports and constructs; an integration without its extra says which to add.
    assert done.returncode == 1
    assert "referent-client[langchain]" in done.stderr


def test_the_mcp_command_is_installed_and_asks_for_its_extra(client_venv):
    done = run([str(client_venv / "bin" / "referent-mcp"), "--help"], client_venv.parent)
    assert done.returncode == 1 and "referent-client[mcp]" in done.stderr


def test_the_server_distribution_leaves_the_client_out():
    import tomllib

    server = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    client = tomllib.loads((REPO / "clients" / "python" / "pyproject.toml").read_text(encoding="utf-8"))
    assert not any(p.startswith("referent_client")
                   for p in server["tool"]["setuptools"]["packages"]["find"]["include"])
    assert client["tool"]["setuptools"]["packages"] == ["referent_client"]
    assert set(client["project"]["optional-dependencies"]) == {"langchain", "llamaindex", "mcp"}
