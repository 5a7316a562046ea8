"""The examples of the README and the docs/ pages a user follows, extracted and run
as written, in the order a reader meets them, against a real API process serving
the demo kb, with the environment the README tells a user to set (REFERENT_URL,
REFERENT_KEY, REFERENT_ADMIN_KEY, REFERENT_KB).

Shell examples run under ``bash`` with only the tools a fresh Debian has (curl
aside); the demo kb's name in their paths is the test's kb. Afterwards the demo kb
must be as it was: the same ontology export, and the demo suite scoring as before."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from dialogue.models import TurnResult
from evaluation.suites import parse_suite, run_system, score
from tests.conftest import ADMIN, DEMO, QUERY, REPO

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

#: The pages, in the order the README's table sends a reader through them.
PAGES = ["README.md", "docs/api.md", "docs/admin.md", "docs/integrations.md"]
EXAMPLE = re.compile(r"<!-- example: ([\w-]+) -->\n```(python|bash)\n(.*?)```", re.S)

# What each example must print.
EXPECTED = {
    "http": ['"action":"clarify"', "您说的“A产品”指的是哪一个", '"standalone":"A产品（个人版）怎么申请"'],
    "client": ["您说的“A产品”指的是哪一个", "prod.a.personal A产品（个人版）",
               "retrieve A产品（个人版）怎么申请 ['prod.a.personal']", "[prod-a-personal-",
               "422 text"],
    "idempotency": ["idempotent-replayed: true"],
    "keys": ['"name":"faq-bot"', '"revoked_at":"20'],
    "admin": ['"kb":"scratch_', "already names prod.x", '"shared_with":["prod.x"]', '"id":"prod.x.pro"',
              "scratch-ontology.jsonl", '"next_before_seq"', '"state":'],
    "async-client": ["retrieve ['region.east'] | ", "华南区7月的销售额是多少"],
    "langchain": ["ask the user: 您说的“A产品”", "个人版 → A产品（个人版）怎么申请 ['prod-a-",
                  "它怎么收费 → A产品（个人版）怎么收费"],
    "llamaindex": ["ask the user: 您说的“A产品”", "第二个 → A产品（", "多少钱 → A产品（"],
    "mcp": ["clarify A产品怎么申请 ['prod.a.", "retrieve A产品（企业版）怎么申请 None",
            "'prod.a.personal'"],
}


def examples() -> list[tuple[str, str, str, str]]:
    """(page, name, language, code) of every marked example, in reading order."""
    found = []
    for page in PAGES:
        text = (REPO / page).read_text(encoding="utf-8")
        found += [(page, name, language, code) for name, language, code in EXAMPLE.findall(text)]
    return found


def test_every_example_is_marked_and_expected_once():
    names = [name for _, name, _, _ in examples()]
    assert sorted(names) == sorted(EXPECTED), names


def test_no_example_needs_a_tool_a_fresh_debian_lacks():
    for page, name, language, code in examples():
        if language == "bash":
            assert not re.search(r"\b(uuidgen|jq|http|python3?)\b(?![./:-])", code), (page, name)


class HttpEngine:
    """The turn engine's ``handle`` over HTTP, so that the suite is replayed through
    the server the examples changed, by the code the scorer reads."""

    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, headers=QUERY, timeout=60)

    def handle(self, kb: str, session: str, text: str, *, k: int) -> TurnResult:
        answer = self.http.post(f"/v1/kbs/{kb}/sessions/{session}/turns", json={"text": text, "k": k})
        answer.raise_for_status()
        return TurnResult.model_validate({"session": session, "user": text, **answer.json()})


def demo_state(url: str, kb: str) -> tuple[str, dict]:
    """The kb's ontology export and the demo suite's scores over HTTP."""
    export = httpx.get(f"{url}/v1/kbs/{kb}/admin/export", headers=ADMIN, timeout=60)
    export.raise_for_status()
    suite = parse_suite((DEMO / "suite.jsonl").read_text(encoding="utf-8").splitlines())
    engine = HttpEngine(url)
    try:
        results = run_system(engine, kb, suite, k=5)
    finally:
        engine.http.close()
    return export.text, without_timings(score(suite, results, k=5))


def without_timings(scores: dict) -> dict:
    """The scores, less the latencies (which differ from run to run)."""
    return {name: without_timings(value) if isinstance(value, dict) else value
            for name, value in scores.items() if "latency" not in name}


def run_example(name: str, language: str, code: str, kb: str, env: dict, cwd: Path):
    if language == "bash":
        code = code.replace("/kbs/demo/", f"/kbs/{kb}/").replace("/kbs/scratch/", f"/kbs/scratch_{kb}/")
        code = code.replace('"demo":', f'"{kb}":')
        command = ["bash", "-c", code]
    else:
        script = cwd / f"example_{name.replace('-', '_')}.py"  # not mcp.py: it would shadow the package
        script.write_text(code, encoding="utf-8")
        command = [sys.executable, str(script)]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=240)


def test_the_examples_run_in_order_and_leave_the_demo_as_it_was(demo_server, tmp_path, neo4j_store):
    # A fresh clone's environment: the virtualenv is not on PATH, and the admin
    # example reads the demo ontology relative to the repository's root.
    env = {**os.environ, **demo_server.env(), "PATH": "/usr/local/bin:/usr/bin:/bin"}
    (tmp_path / "ontology").symlink_to(REPO / "ontology")
    before = demo_state(demo_server.url, demo_server.kb)
    try:
        for page, name, language, code in examples():
            done = run_example(name, language, code, demo_server.kb, env, tmp_path)
            where = f"{page}, example {name!r}"
            assert done.returncode == 0, f"{where} failed:\n{done.stderr[-3000:]}"
            output = done.stdout.lower() if name == "idempotency" else done.stdout
            for expected in EXPECTED[name]:
                assert expected in output, f"{where}: {expected!r} not in:\n{done.stdout[-4000:]}"
            assert "Traceback" not in done.stderr, f"{where}:\n{done.stderr[-3000:]}"
        assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("example_")) \
            == ["ontology"], "an example left files behind"
        after = demo_state(demo_server.url, demo_server.kb)
    finally:
        neo4j_store.delete_kb(f"scratch_{demo_server.kb}")
    assert after[0] == before[0], "the examples changed the demo kb's ontology"
    assert after[1] == before[1], "the demo suite scores differently after the examples"
