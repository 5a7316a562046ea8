"""The load benchmark in its short form: a real server on the demo kb takes 10
conversations of 5 turns at once with no 5xx; and the script's exit code does
fail when a server answers 5xx."""

from __future__ import annotations

import re
import subprocess
import sys
import uuid

import pytest

from tests.conftest import REPO
from tests.http_fakes import serve

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

SCRIPT = REPO / "benchmarks" / "load_soak.py"


def _run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout)


def test_ten_conversations_of_five_turns_at_once_get_no_5xx(tmp_path, neo4j_store):
    kb = f"t_load_{uuid.uuid4().hex[:8]}"
    try:
        done = _run("--sessions", "10", "--turns", "5", "--kb", kb,
                    "--data-dir", str(tmp_path / "load"), "--drop")
    finally:
        neo4j_store.delete_kb(kb)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5xx: 0" in done.stdout
    assert re.search(r"answers: 200: 50;", done.stdout), done.stdout
    assert re.search(r"latency ms: p50 \d+  p95 \d+  p99 \d+", done.stdout), done.stdout
    # The scripted conversations exercise more than one path.
    assert "clarify:" in done.stdout and "retrieve:" in done.stdout


def test_a_5xx_makes_the_run_fail(tmp_path):
    with serve(lambda path, body: (503, {"title": "Dependency unavailable"})) as broken:
        done = _run("--url", broken.url, "--key", "rk_any", "--sessions", "2", "--turns", "2")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "5xx: 4" in done.stdout
