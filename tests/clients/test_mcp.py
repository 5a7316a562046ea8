"""The MCP server (``referent mcp``, ``referent-mcp``) driven by the official MCP SDK's client over
both transports, stdio and streamable HTTP, in front of a real API process."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the 'mcp' extra is not installed")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from tests.clients.conftest import session_id  # noqa: E402
from tests.conftest import ADMIN_KEY, QUERY_KEY, REPO  # noqa: E402
from tests.services import free_port, port_open  # noqa: E402

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]


def _env(demo_server, admin: bool = True) -> dict[str, str]:
    env = {"REFERENT_URL": demo_server.url, "REFERENT_KEY": QUERY_KEY,
           "PYTHONPATH": str(REPO)}
    if admin:
        env["REFERENT_ADMIN_KEY"] = ADMIN_KEY
    return env


def _stdio(demo_server, admin: bool = True) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "referent_client.mcp_server"],
                                 env=_env(demo_server, admin), cwd=str(REPO))


async def _conversation(client: Client, kb: str) -> list[dict]:
    """A turn that asks back, the user's answer, a follow-up: the structured results."""
    sid = session_id()
    out = []
    for text in ("A产品怎么申请", "个人版", "它怎么收费"):
        result = await client.call_tool("referent_turn", {"kb": kb, "session": sid, "text": text})
        assert not result.is_error, result.content
        out.append(result.structured_content)
    return out


def _check_conversation(turns: list[dict]) -> None:
    asked, answered, follow_up = turns
    assert asked["action"] == "clarify" and asked["evidence"] == []
    options = asked["clarification"]["options"]
    assert {o["id"] for o in options} == {"prod.a.personal", "prod.a.enterprise"}
    assert all(o["name"] for o in options) and "A产品" in asked["clarification"]["question"]
    assert answered["action"] == "retrieve" and answered["entities"] == ["prod.a.personal"]
    assert answered["standalone"] == "A产品（个人版）怎么申请"
    assert answered["clarification"] is None
    assert any(e["doc_id"] == "prod-a-personal-apply" and e["text"] for e in answered["evidence"])
    assert follow_up["turn"] == 3 and follow_up["entities"] == ["prod.a.personal"]


def test_stdio_a_turn_tool_and_alias_search_for_admins(demo_server):
    async def run():
        async with Client(_stdio(demo_server)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {"referent_turn", "referent_search_aliases"}
            assert set(tools["referent_turn"].input_schema["required"]) == {"kb", "session", "text"}
            turns = await _conversation(client, demo_server.kb)
            found = await client.call_tool("referent_search_aliases",
                                           {"kb": demo_server.kb, "query": "A产品"})
            missing = await client.call_tool("referent_turn", {
                "kb": "no_such_kb", "session": "s1", "text": "A产品怎么申请"})
            return turns, found, missing

    turns, found, missing = asyncio.run(run())
    _check_conversation(turns)
    assert not found.is_error
    assert {h["id"] for h in found.structured_content["hits"]} >= {"prod.a.personal",
                                                                   "prod.a.enterprise"}
    # A problem from the API is a tool error the assistant can read, not a crash.
    assert missing.is_error and "404" in missing.content[0].text


def test_without_an_admin_key_alias_search_is_not_offered(demo_server):
    async def run():
        async with Client(_stdio(demo_server, admin=False)) as client:
            return [t.name for t in (await client.list_tools()).tools]

    assert asyncio.run(run()) == ["referent_turn"]


def test_streamable_http(demo_server, tmp_path):
    port = free_port()
    log = open(tmp_path / "mcp.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "referent_client.mcp_server", "--transport",
                             "http", "--port", str(port)], cwd=REPO,
                            env={**os.environ, **_env(demo_server)}, stdout=log,
                            stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not port_open(port):
            assert proc.poll() is None, (tmp_path / "mcp.log").read_text()
            assert time.monotonic() < deadline, "the MCP server did not start"
            time.sleep(0.2)

        async def run():
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                names = {t.name for t in (await client.list_tools()).tools}
                return names, await _conversation(client, demo_server.kb)

        names, turns = asyncio.run(run())
        assert names == {"referent_turn", "referent_search_aliases"}
        _check_conversation(turns)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


def _referent_mcp(demo_server, *args: str) -> StdioServerParameters:
    """``referent mcp`` as an assistant starts it: by its full path, with the given env only."""
    return StdioServerParameters(command=str(Path(sys.executable).parent / "referent"),
                                 args=["mcp", *args], env=_env(demo_server), cwd=str(REPO))


def test_referent_mcp_describes_every_argument_and_says_what_each_tool_does(demo_server, tmp_path):
    async def run():
        errlog = open(tmp_path / "stderr.log", "w")
        try:
            async with Client(stdio_client(_referent_mcp(demo_server), errlog=errlog)) as client:
                tools = {t.name: t for t in (await client.list_tools()).tools}
                await _conversation(client, demo_server.kb)
                return tools
        finally:
            errlog.close()

    tools = asyncio.run(run())
    for tool in tools.values():
        for name, schema in tool.input_schema["properties"].items():
            assert len(schema.get("description", "")) > 10, (tool.name, name)
    turn, search = tools["referent_turn"].annotations, tools["referent_search_aliases"].annotations
    # A turn advances the session: neither read-only nor idempotent. Search only reads.
    assert (turn.read_only_hint, turn.idempotent_hint, turn.destructive_hint) == (False, False, False)
    assert (search.read_only_hint, search.idempotent_hint) == (True, True)
    # Quiet stderr: no line per request to Referent, no SDK INFO lines.
    assert (tmp_path / "stderr.log").read_text() == ""


def test_referent_mcp_verbose_logs_the_requests(demo_server, tmp_path):
    async def run():
        with open(tmp_path / "stderr.log", "w") as errlog:
            async with Client(stdio_client(_referent_mcp(demo_server, "--verbose"),
                                           errlog=errlog)) as client:
                await _conversation(client, demo_server.kb)

    asyncio.run(run())
    assert "HTTP Request: POST" in (tmp_path / "stderr.log").read_text()
