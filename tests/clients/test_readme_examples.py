"""The README's integration examples, extracted and run as written (each in a
process of its own) against a real API process, with the environment the README
tells a user to set: REFERENT_URL, REFERENT_KEY, REFERENT_ADMIN_KEY, REFERENT_KB."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

EXAMPLE = re.compile(r"<!-- example: (\w+) -->\n```python\n(.*?)```", re.S)

# What each example must print: the clarification, then the resumed question.
EXPECTED = {
    "client": ["您说的“A产品”指的是哪一个", "prod.a.personal A产品（个人版）",
               "retrieve A产品（个人版）怎么申请 ['prod.a.personal']", "[prod-a-personal-",
               "422 text"],
    "langchain": ["ask the user: 您说的“A产品”", "个人版 → A产品（个人版）怎么申请 ['prod-a-",
                  "它怎么收费 → A产品（个人版）怎么收费"],
    "llamaindex": ["ask the user: 您说的“A产品”", "第二个 → A产品（", "多少钱 → A产品（"],
    "mcp": ["clarify A产品怎么申请 ['prod.a.", "retrieve A产品（企业版）怎么申请 None",
            "'prod.a.personal'"],
}


def examples() -> dict[str, str]:
    return dict(EXAMPLE.findall((REPO / "README.md").read_text(encoding="utf-8")))


def test_the_readme_has_an_example_per_integration():
    assert set(examples()) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_example_runs_as_written(name, demo_server, tmp_path):
    env = {**os.environ, **demo_server.env(),
           # an activated virtualenv: its scripts (referent-mcp) on the PATH
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    script = tmp_path / f"readme_{name}.py"  # not mcp.py, which would shadow the package
    script.write_text(examples()[name], encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    for expected in EXPECTED[name]:
        assert expected in done.stdout, f"{expected!r} not in:\n{done.stdout}"
