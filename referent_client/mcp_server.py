"""An MCP server in front of a Referent API: ``referent mcp`` (extra ``mcp``;
``referent-mcp`` or ``python -m referent_client.mcp_server`` where only the
``referent-client`` distribution is installed).

Tools:

- ``referent_turn(kb, session, text)``: one user turn. The answer says what to
  do: ``retrieve`` with the ``standalone`` query and the ``evidence``, ``clarify``
  with the ``question`` and its ``options`` (ask the user, then send their answer
  as the next turn of the same session), or ``no_answer``.
- ``referent_search_aliases(kb, query, mode)``: entities by alias, for admins;
  offered only when an admin key is configured (``REFERENT_ADMIN_KEY``).

Transports: stdio (the default, for a desktop assistant that starts it) and
streamable HTTP (``--transport http``, at ``/mcp``). The Referent server comes
from ``REFERENT_URL`` (or ``--url``); the keys only from the environment,
``REFERENT_KEY`` (a query key) and ``REFERENT_ADMIN_KEY``, so that they never
show in a process list. Stderr carries warnings and errors only, unless
``verbose`` (every request to Referent, the SDK's own messages).
"""

from __future__ import annotations

import argparse
import logging
import os
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from referent_client.client import AsyncReferentClient
from referent_client.errors import APIError, ReferentError
from referent_client.models import AliasHit, ClarifyOption, TurnResult

try:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("the MCP server needs the 'mcp' extra: pip install "
                      "'referent-client[mcp]'") from exc

Transport = Literal["stdio", "http"]

KbArg = Annotated[str, Field(description="the knowledge base's id, e.g. 'demo'")]
SessionArg = Annotated[str, Field(
    description="the conversation's id (1-128 of A-Z a-z 0-9 _ . : -): the same for every turn "
                "of one conversation, a new one for a new conversation")]
TextArg = Annotated[str, Field(description="the user's message as they wrote it (at most 2,000 "
                                           "characters); after a clarification, their answer")]
KArg = Annotated[int | None, Field(ge=1, le=50, description="how many evidence chunks to return "
                                                            "(the server's default when omitted)")]
QueryArg = Annotated[str, Field(description="a name or alias to look up, e.g. 'A产品'")]
ModeArg = Annotated[Literal["exact", "prefix", "fuzzy"], Field(
    description="exact: the whole alias; prefix: aliases starting with the query; "
                "fuzzy: close spellings too")]
LimitArg = Annotated[int, Field(ge=1, le=100, description="the most entities to return")]

# A turn advances the session (it is the next turn of the conversation): neither
# read-only nor idempotent. Alias search only reads.
TURN = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                       open_world_hint=False)
SEARCH = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


class EvidenceOut(BaseModel):
    chunk_id: str
    doc_id: str
    title: str
    text: str
    score: float


class ClarificationOut(BaseModel):
    question: str = Field(description="ask the user this, then send their answer as the next turn")
    mention: str = Field(description="the words that could mean several entities")
    options: list[ClarifyOption] = Field(description="in the order the question lists them")


class TurnOut(BaseModel):
    """One turn's outcome."""

    action: Literal["retrieve", "clarify", "no_answer"]
    turn: int = Field(description="the turn's number in the session")
    standalone: str = Field(description="the turn rewritten to stand alone")
    entities: list[str] = Field(description="canonical ids of the entities the turn is about")
    evidence: list[EvidenceOut] = Field(description="retrieved chunks, best first (retrieve)")
    clarification: ClarificationOut | None = Field(
        description="the question to ask the user instead of answering (clarify)")

    @classmethod
    def of(cls, result: TurnResult) -> TurnOut:
        c = result.clarification
        return cls(action=result.action, turn=result.turn, standalone=result.standalone,
                   entities=result.entities,
                   evidence=[EvidenceOut(chunk_id=e.chunk_id, doc_id=e.doc_id, title=e.title,
                                         text=e.text, score=e.score) for e in result.evidence],
                   clarification=None if c is None else ClarificationOut(
                       question=c.question, mention=c.mention, options=c.options))


class AliasSearchOut(BaseModel):
    query: str
    mode: str
    hits: list[AliasHit]


def _tool_error(exc: ReferentError) -> ToolError:
    if isinstance(exc, APIError):
        return ToolError(f"Referent answered {exc.status} {exc.title}: {exc.detail}"
                         + (f" (field '{exc.field}')" if exc.field else ""))
    return ToolError(f"Referent could not be reached: {exc}")


def build_server(url: str, key: str | None, admin_key: str | None = None, *,
                 timeout: float = 30.0, verbose: bool = False) -> MCPServer:
    """The MCP server: a turn tool with ``key``, and alias search with ``admin_key``."""
    server = MCPServer("referent", version=_version(), log_level="INFO" if verbose else "WARNING",
                       instructions=(
        "Referent finds evidence for a user's question in a knowledge base, one conversation "
        "turn at a time. Send each user message with referent_turn, with the same session id "
        "for the whole conversation. When the action is 'clarify', ask the user the question "
        "and send their answer (e.g. '个人版' or 'the second one') as the next turn."))
    clients: dict[str, AsyncReferentClient] = {}

    def client(which: str, api_key: str | None) -> AsyncReferentClient:
        # Made on first use, inside the loop of the transport that serves the calls.
        if which not in clients:
            clients[which] = AsyncReferentClient(url, api_key, timeout=timeout)
        return clients[which]

    @server.tool(name="referent_turn", title="Send a user turn to Referent", annotations=TURN)
    async def referent_turn(kb: KbArg, session: SessionArg, text: TextArg,
                            k: KArg = None) -> TurnOut:
        """Send one user message of a conversation to the Referent knowledge base `kb`.

        Use one `session` id (letters, digits, _ . : -) for the whole conversation: the
        server resolves pronouns, ellipsis and answers to its questions from it.
        Returns the action: 'retrieve' (with the standalone query and the evidence),
        'clarify' (ask the user the clarification's question; send the answer as the
        next turn) or 'no_answer'.
        """
        try:
            result = await client("query", key).turn(kb, session, text, k=k)
        except ReferentError as exc:
            raise _tool_error(exc) from exc
        return TurnOut.of(result)

    if admin_key:
        @server.tool(name="referent_search_aliases", title="Find entities by alias (admin)",
                     annotations=SEARCH)
        async def referent_search_aliases(kb: KbArg, query: QueryArg, mode: ModeArg = "fuzzy",
                                          limit: LimitArg = 10) -> AliasSearchOut:
            """Find the entities of knowledge base `kb` whose aliases match `query`,
            as the linker sees the alias table (exact, prefix or fuzzy); `ambiguous`
            marks an alias shared by several entities, which makes Referent ask."""
            try:
                found = await client("admin", admin_key).search_aliases(kb, query, mode=mode,
                                                                        limit=limit)
            except ReferentError as exc:
                raise _tool_error(exc) from exc
            return AliasSearchOut(query=found.query, mode=found.mode, hits=found.hits)

    return server


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    for distribution in ("referent-client", "referent-server"):
        try:
            return version(distribution)
        except PackageNotFoundError:
            continue
    return "0"


def serve(url: str | None, *, transport: Transport = "stdio", host: str = "127.0.0.1",
          port: int = 8765, verbose: bool = False) -> None:
    """Run the server until the assistant closes stdio (or until interrupted, over HTTP)."""
    if not url:
        raise ValueError("no Referent URL: set REFERENT_URL or pass --url")
    # The HTTP client logs each request at INFO: on stderr that is noise to an assistant.
    for name in ("httpx", "httpcore"):
        logging.getLogger(name).setLevel(logging.INFO if verbose else logging.WARNING)
    server = build_server(url, os.environ.get("REFERENT_KEY"),
                          os.environ.get("REFERENT_ADMIN_KEY"), verbose=verbose)
    if transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=host, port=port)


def main(argv: list[str] | None = None) -> None:
    """``referent-mcp``: the same as ``referent mcp``, for the client distribution alone."""
    parser = argparse.ArgumentParser(
        prog="referent-mcp", description="An MCP server exposing Referent turns (and alias "
        "search, with an admin key) as tools.")
    parser.add_argument("--url", default=os.environ.get("REFERENT_URL"),
                        help="the Referent API (default: $REFERENT_URL)")
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio",
                        help="stdio (default) or streamable HTTP at /mcp")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port")
    parser.add_argument("--verbose", action="store_true",
                        help="log every request to Referent on stderr")
    args = parser.parse_args(argv)
    if not args.url:
        parser.error("no Referent URL: set REFERENT_URL or pass --url")
    serve(args.url, transport=args.transport, host=args.host, port=args.port,
          verbose=args.verbose)


if __name__ == "__main__":
    main()
