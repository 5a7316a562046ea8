"""The HTTP API (FastAPI). Routes only: the work is done by the turn engine and,
for ``/v1/kbs/{kb}/admin/...``, by the ontology admin (:mod:`api.admin`).

Every ``/v1`` route needs an API key: the turn routes accept an admin or a
query key, the admin routes only an admin key (:mod:`api.auth`). ``/healthz``,
``/readyz`` and ``/metrics`` need none (see :mod:`api.health`, :mod:`api.metrics`).
"""

# No `from __future__ import annotations` here: the turn request model is made per
# app (its text limit is a setting), and FastAPI must see it in the route's signature.

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Path, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, field_validator

from api import log
from api.admin import INT64_MAX
from api.admin import router as admin_router
from api.analytics import router as analytics_router
from api.console import router as console_router
from api.auth import Caller, KeyRing, any_caller, build_keyring
from api.errors import install_error_handlers, problem
from api.health import Readiness, probes
from api.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from api.metrics import Metrics
from api.middleware import BodyLimit, RequestMiddleware
from api.openapi import install_openapi
from api.runtime import Runtime
from api.settings import Settings
from common.text import first_unprintable
from dialogue.engine import TurnEngine
from dialogue.models import TurnResult

KbPath = Annotated[str, Path(pattern=r"^[A-Za-z0-9_]{1,64}$", description="knowledge base id")]
SessionPath = Annotated[str, Path(pattern=r"^[A-Za-z0-9_.:-]{1,128}$", description="session id")]

IMPORT_ROUTE = "/v1/kbs/{kb}/admin/import"


def turn_request_model(max_text_chars: int) -> type[BaseModel]:
    """The body of a turn, with the configured text limit (REFERENT_LIMITS__MAX_TEXT_CHARS)."""

    class TurnRequest(BaseModel):
        text: str = Field(min_length=1, max_length=max_text_chars,
                          description="the user's turn, verbatim: printable text (tabs and "
                                      "line breaks allowed), at most "
                                      f"{max_text_chars} characters",
                          examples=["那华南区呢"])
        k: int | None = Field(default=None, ge=1, le=50, description="evidence items to return")
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
            position = first_unprintable(text, allowed="\t\n\r\u2028\u2029")  # line breaks are fine here
            if position is not None:
                raise ValueError(f"text has the control character U+{ord(text[position]):04X} "
                                 f"at position {position}; send printable text")
            return text

    return TurnRequest


def get_runtime(request: Request) -> Runtime:
    return request.app.state.runtime


def get_engine(runtime: Annotated[Runtime, Depends(get_runtime)]) -> TurnEngine:
    return runtime.engine


def _log_context(request: Request) -> None:
    """App-wide dependency: the kb and session of the request go into its log lines."""
    context = log.current()
    if context is not None:
        context.kb = request.path_params.get("kb")
        context.session = request.path_params.get("session_id")


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
        app.state.keyring = keyring or build_keyring(effective)
        built = runtime if runtime is not None else Runtime.build(effective)
        app.state.runtime = built
        app.state.readiness = Readiness(probes(built))
        try:
            yield
        finally:
            app.state.readiness.close()
            if runtime is None:
                built.close()

    app = FastAPI(title="Referent", version="0.1.0", lifespan=lifespan,
                  description="Conversational retrieval that links each turn to canonical "
                              "entities before it searches.",
                  dependencies=[Depends(_log_context)],
                  # A path with a trailing slash is a 404 problem, not a redirect: a 307
                  # would send a body again, and a percent-encoded "/" in an id would be cut.
                  redirect_slashes=False)
    app.state.metrics = metrics
    limits = effective.limits
    app.add_middleware(
        RequestMiddleware, metrics=metrics,
        default_limit=BodyLimit(limits.max_body_bytes, "REFERENT_LIMITS__MAX_BODY_BYTES"),
        body_limits={IMPORT_ROUTE: BodyLimit(limits.max_import_bytes,
                                             "REFERENT_LIMITS__MAX_IMPORT_BYTES")})
    install_error_handlers(app)
    TurnRequest = turn_request_model(effective.limits.max_text_chars)
    include_text = effective.log.include_text

    @app.get("/healthz", tags=["ops"], summary="Liveness: the process answers")
    def healthz() -> dict[str, str]:
        """Always 200 while the process serves HTTP; checks no dependency (that is
        ``/readyz``)."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["ops"], summary="Readiness: the dependencies answer")
    def readyz(request: Request) -> Any:
        """200 when Milvus and the session store answer (``status`` is ``degraded``
        when Neo4j or a configured LLM, embedder or reranker does not: turns still
        work on their fallbacks); 503 with the same per-dependency ``checks``
        otherwise. Bounded to about 2 s."""
        ready, checks = request.app.state.readiness.check()
        if not ready:
            down = [f"{name} ({c['status']})" for name, c in checks.items()
                    if c["required"] and c["status"] != "ok"]
            return problem(503, "Not ready", "required dependencies do not answer: "
                           + ", ".join(down), checks=checks)
        degraded = any(c["status"] != "ok" for c in checks.values())
        return JSONResponse({"status": "degraded" if degraded else "ready", "checks": checks})

    @app.get("/metrics", tags=["ops"], summary="Prometheus metrics",
             response_class=Response)
    def get_metrics() -> Response:
        """Prometheus text format. No key needed: it holds counts and timings by
        route template, kb and fixed labels, never a session id, user text or key."""
        return Response(metrics.render(), media_type=METRICS_CONTENT_TYPE)

    @app.post("/v1/kbs/{kb}/sessions/{session_id}/turns", response_model=TurnResult,
              tags=["turns"], summary="Send one user turn")
    def post_turn(kb: KbPath, session_id: SessionPath, body: TurnRequest,
                  engine: Annotated[TurnEngine, Depends(get_engine)],
                  runtime: Annotated[Runtime, Depends(get_runtime)],
                  _: Annotated[Caller, Depends(any_caller)]) -> TurnResult:
        """Link, clarify or rewrite, retrieve: returns what the turn really asks,
        its canonical entities and the evidence, or a clarification question."""
        result = engine.handle(kb, session_id, body.text, k=body.k, used=body.used)
        runtime.clarifications.observe(kb, session_id, result)  # analytics; never raises
        metrics.observe_turn(kb, result)
        context = log.current()
        if context is not None:
            context.turn = result.turn
            context.extra.update(action=result.action, text_chars=len(body.text))
            if include_text:
                context.extra["text"] = body.text
        return result

    @app.delete("/v1/kbs/{kb}/sessions/{session_id}", status_code=204, tags=["turns"],
                summary="Forget a session")
    def delete_session(kb: KbPath, session_id: SessionPath,
                       runtime: Annotated[Runtime, Depends(get_runtime)],
                       _: Annotated[Caller, Depends(any_caller)]) -> Response:
        runtime.sessions.delete(kb, session_id)
        return Response(status_code=204)

    @app.get("/v1/kbs/{kb}/sessions/{session_id}/turns/{turn}/trace", tags=["turns"],
             summary="What each stage of a turn saw and decided")
    def get_trace(kb: KbPath, session_id: SessionPath,
                  turn: Annotated[int, Path(ge=1, le=INT64_MAX)],
                  engine: Annotated[TurnEngine, Depends(get_engine)],
                  _: Annotated[Caller, Depends(any_caller)]) -> dict[str, Any]:
        """Mentions, links with candidates and scores, classification, clarification,
        rewrite candidates with each validator check, retrieval (filters, relaxation,
        exclusions), the stage timings and the result, for one of the session's
        recent turns."""
        context = log.current()
        if context is not None:
            context.turn = turn
        return engine.trace(kb, session_id, turn)

    app.include_router(admin_router)
    app.include_router(analytics_router)
    app.include_router(console_router)
    install_openapi(app)

    return app
