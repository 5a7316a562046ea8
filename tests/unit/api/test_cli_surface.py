"""What a newcomer sees of the `referent` command before any service runs: the
version, the help pages, `referent mcp`'s options, and a busy port."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from tests.conftest import REPO

REFERENT = str(Path(sys.executable).parent / "referent")


def referent(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([REFERENT, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": "100", **(env or {})})


def test_version():
    done = referent("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"referent {version('referent-server')}"


@pytest.mark.parametrize("command", [[], ["ingest"], ["serve"], ["eval"], ["mcp"], ["keys", "create"],
                                     ["clarify", "fit"]])
def test_help_shows_no_type_placeholders(command):
    done = referent(*command, "--help")
    assert done.returncode == 0, done.stderr
    assert not re.search(r"<(str|bool|int|float|path|file)[^>]*>", done.stdout), done.stdout
    assert "--install-completion" not in done.stdout


def test_options_name_their_value():
    assert re.search(r"--kb\s+KB\b", referent("ingest", "--help").stdout)
    assert re.search(r"--port\s+PORT\b", referent("serve", "--help").stdout)


def test_mcp_is_a_subcommand_with_the_same_options_as_referent_mcp():
    out = referent("mcp", "--help").stdout
    for option in ("--url", "--transport", "--host", "--port", "--verbose"):
        assert option in out
    done = referent("mcp", env={"REFERENT_URL": ""})
    assert done.returncode == 2 and "set REFERENT_URL or pass --url" in done.stderr


def test_a_busy_port_is_one_line_and_exit_1():
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = referent("serve", "--port", str(port))
    assert done.returncode == 1, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert f"127.0.0.1:{port}" in lines[0] and "another --port" in lines[0]
    assert "Traceback" not in done.stderr and "Milvus" not in done.stderr
