"""The local Neo4j (devservices.local_neo4j) against a real server: build, start, stop, status.

A temporary home and a free port keep these tests away from a developer's own
server on 7687. The first run builds the launcher with Maven (a download of
about 125 MB when the local Maven repository is empty); a start takes seconds.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import neo4j
import pytest

from common.errors import ConfigurationError
from devservices.local_neo4j import LocalNeo4j

pytestmark = pytest.mark.neo4j

AUTH = ("neo4j", "referent-dev")


def free_port() -> int:
    """A port nothing listens on right now (never Neo4j's default 7687)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if port != 7687:
            return port


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False


def run_cypher(uri: str, query: str, auth: tuple[str, str] = AUTH, **params: object) -> list:
    with neo4j.GraphDatabase.driver(uri, auth=auth) as driver:
        driver.verify_connectivity()
        return driver.execute_query(query, params).records


@pytest.fixture
def local(tmp_path: Path) -> Iterator[LocalNeo4j]:
    server = LocalNeo4j(tmp_path / "neo4j", free_port())
    try:
        yield server
    finally:
        server.stop(timeout=10.0)  # never leave a JVM behind, whatever failed


def test_start_status_stop_and_restart_keeps_data(local: LocalNeo4j) -> None:
    started = local.start()
    assert started.already_running is False
    assert started.uri == f"bolt://127.0.0.1:{local.port}"
    assert (local.home / "neo4j.pid").read_text().strip() == str(started.pid)
    assert run_cypher(started.uri, "RETURN 1 AS x")[0]["x"] == 1

    again = local.start()
    assert again.already_running is True
    assert again.pid == started.pid

    status = local.status()
    assert status.running is True
    assert status.pid == started.pid
    assert status.uri == started.uri
    assert status.home == local.home

    # Something to find after a restart: the shutdown must have been clean.
    run_cypher(started.uri, "CREATE (:Probe {name: $name})", name="kept")

    assert local.stop() is True
    status = local.status()
    assert status.running is False
    assert status.pid is None
    assert not port_open(local.port)
    assert not (local.home / "neo4j.pid").exists()
    assert local.stop() is False

    restarted = local.start()
    assert restarted.already_running is False
    records = run_cypher(restarted.uri, "MATCH (p:Probe) RETURN p.name AS name")
    assert [r["name"] for r in records] == ["kept"]
    assert local.stop() is True


def test_auth_is_enforced_with_the_configured_password(tmp_path: Path) -> None:
    server = LocalNeo4j(tmp_path / "neo4j", free_port(), password="another-secret")
    try:
        server.start()
        assert run_cypher(server.uri, "RETURN 2 AS x", auth=("neo4j", "another-secret"))[0]["x"] == 2
        with pytest.raises(neo4j.exceptions.AuthError):
            run_cypher(server.uri, "RETURN 1", auth=AUTH)
    finally:
        server.stop(timeout=10.0)


def test_port_taken_by_another_program_names_the_setting(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        server = LocalNeo4j(tmp_path / "neo4j", squatter.getsockname()[1])
        with pytest.raises(ConfigurationError, match="REFERENT_NEO4J__LOCAL_PORT"):
            server.start()
    assert server.status().running is False


def test_stale_pid_file_is_not_a_running_server(tmp_path: Path) -> None:
    server = LocalNeo4j(tmp_path / "neo4j", free_port())
    server.home.mkdir(parents=True)
    # Our own pid is alive but is not the launcher; a dead pid is plainly stale.
    for pid in (os.getpid(), _dead_pid()):
        (server.home / "neo4j.pid").write_text(f"{pid}\n")
        assert server.status().running is False
        assert server.stop() is False
        assert not (server.home / "neo4j.pid").exists()


def _dead_pid() -> int:
    """A pid that belongs to no process (one past the kernel's limit is never used)."""
    try:
        return int(Path("/proc/sys/kernel/pid_max").read_text()) + 1
    except OSError:
        return 2**22 + 1
