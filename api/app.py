"""The HTTP API (FastAPI). Routes only: the work is done by the turn engine and,
for ``/v1/kbs/{kb}/admin/...``, by the ontology admin (:mod:`api.admin`).

Every ``/v1`` route needs an API key: the turn routes accept an admin or a
query key, the admin routes only an admin key (:mod:`api.auth`). ``/healthz``,
``/readyz`` and ``/metrics`` need none (see :mod:`api.health`, :mod:`api.metrics`).
"""

# No `from __future__ import annotations` here: the turn request model is made per
# app (its text limit is a setting), and FastAPI must see it in the route's signature.

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, Path, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator

from api import log
from api.admin import INT64_MAX
from api.admin import router as admin_router
from api.analytics import router as analytics_router
from api.console import router as console_router
from api.formats import router as formats_router
from api.auth import (Authenticator, Caller, KeyRing, build_keyring, kb_caller,
                      trace_caller)
from api.json_body import CheckedJsonRoute
from api.keys import router as keys_router
from api.ratelimit import build_limiter
from api.errors import install_error_handlers, problem
from api.health import Readiness, loaded_kb, not_ready_detail, probes
from api.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from api.metrics import Metrics
from api.middleware import BodyLimit, RequestMiddleware
from api.openapi import install_openapi
from api.runtime import Runtime
from api.settings import Settings
from api.turn_gate import TurnGate, default_concurrency
from common.text import TURN_TEXT_ALLOWED, describe_unprintable, first_unprintable
from dialogue.engine import TurnEngine
from dialogue.models import TurnResult
from dialogue.state import SessionAccess
from kg.api_keys import KeyTable, Neo4jKeyStore

KbPath = Annotated[str, Path(pattern=r"^[A-Za-z0-9_]{1,64}$", description="knowledge base id")]
SessionPath = Annotated[str, Path(pattern=r"^[A-Za-z0-9_.:-]{1,128}$", description="session id")]

IdempotencyKey = Annotated[str | None, Header(
    alias="Idempotency-Key", pattern=r"^[A-Za-z0-9._:@/+=-]{1,128}$",
    description="one value per turn the client means to play (a UUID, say): a retry with the "
                "same key gets the stored answer (`replayed: true`, header `Idempotent-Replayed`) "
                "instead of a second turn; the same key with another text is refused (422)")]

IMPORT_ROUTE = "/v1/kbs/{kb}/admin/import"

logger = logging.getLogger(__name__)


def turn_request_model(max_text_chars: int) -> type[BaseModel]:
    """The body of a turn, with the configured text limit (REFERENT_LIMITS__MAX_TEXT_CHARS)."""

    class TurnRequest(BaseModel):
        # Strict: a JSON value of the declared type only ("turn": true is not turn 1,
        # "2" is not 2), as every request body of the API (api/admin.py, api/keys.py).
        model_config = ConfigDict(strict=True)

        text: str = Field(min_length=1, max_length=max_text_chars,
                          description="the user's turn, verbatim: printable text (tabs, "
                                      "line breaks and the emoji zero-width joiner allowed; "
                                      "no bidi or other format controls), at most "
                                      f"{max_text_chars} characters",
                          examples=["那华南区呢"])
        k: int | None = Field(default=None, ge=1, le=50, description="evidence items to return")
        turn: int | None = Field(default=None, ge=1, le=INT64_MAX, description=(
            "optional: the number this turn should get (the session's last turn + 1). A retry "
            "of a turn that was saved gets its stored answer; a number that skips or repeats "
            "a turn with other text is refused (409)"))
        used: list[Annotated[str, Field(min_length=1, max_length=256)]] = Field(
            default_factory=list, max_length=200,
            description="chunk ids of earlier evidence the client actually used: they count "
                        "as consumed and are not shown again (a revisit aside); evidence shown "
                        "but not used may come back when it answers a new question. Each must "
                        "be a chunk this session was shown.",
            examples=[["prod-a-personal-apply#1"]])

        @field_validator("text")
        @classmethod
        def _printable(cls, text: str) -> str:
            if not text.strip():
                raise ValueError("text is blank; send the user's words")
            position = first_unprintable(text, allowed=TURN_TEXT_ALLOWED)
            if position is not None:
                raise ValueError(f"text has {describe_unprintable(text, position)}; remove it "
                                 "and send the text as the user sees it")
            return text

    return TurnRequest


# Dependencies that only read the app's state are ``async``: FastAPI runs a plain ``def``
# dependency in the thread pool, a round trip through the event loop per request each.

async def get_runtime(request: Request) -> Runtime:
    return request.app.state.runtime


async def get_engine(runtime: Annotated[Runtime, Depends(get_runtime)]) -> TurnEngine:
    return runtime.engine


async def _log_context(request: Request) -> None:
    """App-wide dependency: the kb and session of the request go into its log lines."""
    context = log.current()
    if context is not None:
        context.kb = request.path_params.get("kb")
        context.session = request.path_params.get("session_id")


def turn_response(result: TurnResult) -> Response:
    """The turn's answer as JSON, serialized once by pydantic. Returning the model would
    have FastAPI dump it, validate the dump against ``TurnResult`` again and encode it
    (about 4 ms a turn, most of a turn's own CPU time); the body is the same."""
    return Response(result.model_dump_json(by_alias=True, fallback=str),
                    media_type="application/json")


def create_app(settings: Settings | None = None, runtime: Runtime | None = None,
               keyring: KeyRing | None = None) -> FastAPI:
    """Build the app. With ``runtime`` given (tests), the lifespan does not build or close one.

    The keys come from ``keyring`` or else from the settings (checked at start:
    production refuses to start without proper keys, see :func:`api.auth.build_keyring`).
    """
    effective = settings or (runtime.settings if runtime is not None else Settings())
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        ring = keyring if keyring is not None else build_keyring(effective)
        built = runtime if runtime is not None else Runtime.build(effective)
        app.state.runtime = built
        app.state.key_store = Neo4jKeyStore(built.ontology)
        app.state.auth = Authenticator(ring, KeyTable(
            app.state.key_store, refresh_seconds=effective.auth.key_refresh_seconds))
        app.state.auth.stored.start()
        app.state.limiter = build_limiter(effective)
        app.state.readiness = Readiness(probes(built), loading=built.preloader.status)
        if runtime is None:
            built.preloader.start()
        try:
            yield
        finally:
            app.state.readiness.close()
            app.state.auth.close()
            if app.state.limiter is not None:
                app.state.limiter.close()
            if runtime is None:
                built.close()

    app = FastAPI(title="Referent", version="0.1.0", lifespan=lifespan,
                  description="Conversational retrieval that links each turn to canonical "
                              "entities before it searches.",
                  dependencies=[Depends(_log_context)],
                  # A path with a trailing slash is a 404 problem, not a redirect: a 307
                  # would send a body again, and a percent-encoded "/" in an id would be cut.
                  redirect_slashes=False)
    # Request bodies nested too deeply are refused before parsing (api/json_body.py).
    app.router.route_class = CheckedJsonRoute
    app.state.metrics = metrics
    limits = effective.limits
    app.add_middleware(
        RequestMiddleware, metrics=metrics,
        default_limit=BodyLimit(limits.max_body_bytes, "REFERENT_LIMITS__MAX_BODY_BYTES"),
        body_limits={IMPORT_ROUTE: BodyLimit(limits.max_import_bytes,
                                             "REFERENT_LIMITS__MAX_IMPORT_BYTES")})
    install_error_handlers(app)
    TurnRequest = turn_request_model(effective.limits.max_text_chars)
    gate = TurnGate(limits.concurrent_turns or default_concurrency(), limits.queued_turns)
    app.state.turn_gate = gate
    metrics.watch_gate(gate.state)
    include_text = effective.log.include_text

    @app.get("/healthz", operation_id="getHealth",
             tags=["ops"], summary="Liveness: the process answers")
    def healthz() -> dict[str, str]:
        """Always 200 while the process serves HTTP; checks no dependency (that is
        ``/readyz``)."""
        return {"status": "ok"}

    @app.get("/readyz", operation_id="getReadiness",
             tags=["ops"], summary="Readiness: the dependencies answer")
    def readyz(request: Request) -> Any:
        """200 when Milvus and the session store answer (``status`` is ``degraded``
        when Neo4j or a configured LLM, embedder or reranker does not: turns still
        work on their fallbacks); 503 with the same per-dependency ``checks``
        otherwise. Bounded to about 2 s."""
        ready, checks = request.app.state.readiness.check()
        if not ready:
            return problem(503, "Not ready", not_ready_detail(checks), checks=checks)
        degraded = any(c["status"] != "ok" for c in checks.values())
        return JSONResponse({"status": "degraded" if degraded else "ready", "checks": checks})

    @app.get("/metrics", operation_id="getMetrics", tags=["ops"], summary="Prometheus metrics",
             response_class=Response)
    def get_metrics() -> Response:
        """Prometheus text format. No key needed: it holds counts and timings by
        route template, kb and fixed labels, never a session id, user text or key."""
        return Response(metrics.render(), media_type=METRICS_CONTENT_TYPE)

    @app.post("/v1/kbs/{kb}/sessions/{session_id}/turns", operation_id="playTurn",
              response_model=TurnResult,
              tags=["turns"], summary="Send one user turn")
    async def post_turn(kb: KbPath, session_id: SessionPath, body: TurnRequest,
                        engine: Annotated[TurnEngine, Depends(get_engine)],
                        runtime: Annotated[Runtime, Depends(get_runtime)],
                        caller: Annotated[Caller, Depends(kb_caller)],
                        _loaded: Annotated[None, Depends(loaded_kb)],
                        idempotency_key: IdempotencyKey = None) -> TurnResult:
        """Link, clarify or rewrite, retrieve: returns what the turn really asks,
        its canonical entities and the evidence, or a clarification question.

        The session belongs to the key that made it and the end user named in
        ``X-Referent-Subject``, if any: another caller gets 404 (an admin key of the
        kb may continue it). A turn is saved exactly once: an error answer (4xx, 5xx)
        saved nothing, and a retry with the same ``Idempotency-Key`` (or ``turn``) of a
        turn that was saved returns the stored answer instead of playing it again.
        A process runs a few turns at once and queues the next ones in arrival order
        (`REFERENT_LIMITS__CONCURRENT_TURNS`); beyond `REFERENT_LIMITS__QUEUED_TURNS`
        waiting, a turn gets 503 with `Retry-After` at once."""
        return await gate.run(lambda: play_turn(
            engine, runtime, kb, session_id, body, caller.session_access(kb), idempotency_key))

    def play_turn(engine: TurnEngine, runtime: Runtime, kb: str, session_id: str, body: Any,
                  access: SessionAccess, idempotency_key: str | None) -> Response:
        """The turn and its answer's serialization, on a worker thread of the gate."""
        result = engine.handle(kb, session_id, body.text, k=body.k, access=access,
                               idempotency_key=idempotency_key, expected_turn=body.turn,
                               used=body.used)
        response = turn_response(result)
        if result.replayed:
            response.headers["Idempotent-Replayed"] = "true"
        else:
            try:
                runtime.clarifications.observe(kb, session_id, result)  # analytics
                metrics.observe_turn(kb, result)
            except Exception:  # noqa: BLE001 - the turn is saved: its answer must go out
                logger.exception("turn bookkeeping failed")
        context = log.current()
        if context is not None:
            context.turn = result.turn
            context.extra.update(action=result.action, text_chars=len(body.text))
            if include_text:
                context.extra["text"] = body.text
        return response

    @app.delete("/v1/kbs/{kb}/sessions/{session_id}", operation_id="deleteSession",
                status_code=204, tags=["turns"],
                summary="Forget a session")
    def delete_session(kb: KbPath, session_id: SessionPath,
                       engine: Annotated[TurnEngine, Depends(get_engine)],
                       caller: Annotated[Caller, Depends(kb_caller)]) -> Response:
        """Forgets the session and its traces (204 also when there was none). A session
        of another caller is not touched: 404 (an admin key of the kb may delete it)."""
        engine.forget(kb, session_id, access=caller.session_access(kb))
        return Response(status_code=204)

    @app.get("/v1/kbs/{kb}/sessions/{session_id}/turns/{turn}/trace", operation_id="getTrace",
             tags=["turns"],
             summary="What each stage of a turn saw and decided")
    def get_trace(kb: KbPath, session_id: SessionPath,
                  turn: Annotated[int, Path(ge=1, le=INT64_MAX)],
                  engine: Annotated[TurnEngine, Depends(get_engine)],
                  caller: Annotated[Caller, Depends(trace_caller)]) -> dict[str, Any]:
        """Mentions, links with candidates and scores, classification, clarification,
        rewrite candidates with each validator check, retrieval (filters, relaxation,
        exclusions), the stage timings and the result, for one of the session's
        recent turns (`REFERENT_SESSIONS__TRACES_KEPT`, `..._TRACE_TTL_SECONDS`). Only
        the session's owner and the kb's admin keys may read it; others get 404."""
        context = log.current()
        if context is not None:
            context.turn = turn
        return engine.trace(kb, session_id, turn, access=caller.session_access(kb))

    app.include_router(admin_router)
    app.include_router(keys_router)
    app.include_router(analytics_router)
    app.include_router(console_router)
    app.include_router(formats_router)
    install_openapi(app)

    return app
