"""The integrations stay out of the server: building the app imports none of them."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO


def test_the_server_imports_neither_the_client_nor_any_framework():
    code = ("import sys; from api.app import create_app; create_app().openapi(); "
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'referent_client', 'langchain_core', 'llama_index', 'mcp'}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_client_imports_no_framework_until_an_integration_is_used():
    code = ("import sys, referent_client; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'api', 'kg', 'dialogue', 'retrieval', 'langchain_core', 'llama_index', 'mcp'}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
