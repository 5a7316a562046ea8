"""The HTTP API (FastAPI). Routes only: the work is done by the turn engine and,
for ``/v1/kbs/{kb}/admin/...``, by the ontology admin (:mod:`api.admin`).

Every ``/v1`` route needs an API key: the turn routes accept an admin or a
query key, the admin routes only an admin key (:mod:`api.auth`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Path, Request, Response
from pydantic import BaseModel, Field

from api.admin import router as admin_router
from api.analytics import router as analytics_router
from api.console import router as console_router
from api.auth import Caller, KeyRing, any_caller, build_keyring
from api.errors import install_error_handlers
from api.runtime import Runtime
from api.settings import Settings
from dialogue.engine import TurnEngine
from dialogue.models import TurnResult

KbPath = Annotated[str, Path(pattern=r"^[A-Za-z0-9_]{1,64}$", description="knowledge base id")]
SessionPath = Annotated[str, Path(pattern=r"^[A-Za-z0-9_.:-]{1,128}$", description="session id")]


class TurnRequest(BaseModel):
    text: str = Field(min_length=1, max_length=2000, description="the user's turn, verbatim",
                      examples=["那华南区呢"])
    k: int | None = Field(default=None, ge=1, le=50, description="evidence items to return")


def get_runtime(request: Request) -> Runtime:
    return request.app.state.runtime


def get_engine(runtime: Annotated[Runtime, Depends(get_runtime)]) -> TurnEngine:
    return runtime.engine


def create_app(settings: Settings | None = None, runtime: Runtime | None = None,
               keyring: KeyRing | None = None) -> FastAPI:
    """Build the app. With ``runtime`` given (tests), the lifespan does not build or close one.

    The keys come from ``keyring`` or else from the settings (checked at start:
    production refuses to start without proper keys, see :func:`api.auth.build_keyring`).
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        effective = settings or (runtime.settings if runtime is not None else Settings())
        app.state.keyring = keyring or build_keyring(effective)
        if runtime is not None:
            app.state.runtime = runtime
            yield
            return
        built = Runtime.build(effective)
        app.state.runtime = built
        try:
            yield
        finally:
            built.close()

    app = FastAPI(title="Referent", version="0.1.0", lifespan=lifespan,
                  description="Conversational retrieval that links each turn to canonical "
                              "entities before it searches.")
    install_error_handlers(app)

    @app.get("/healthz", tags=["ops"])
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/v1/kbs/{kb}/sessions/{session_id}/turns", response_model=TurnResult,
              tags=["turns"], summary="Send one user turn")
    def post_turn(kb: KbPath, session_id: SessionPath, body: TurnRequest,
                  runtime: Annotated[Runtime, Depends(get_runtime)],
                  _: Annotated[Caller, Depends(any_caller)]) -> TurnResult:
        """Link, clarify or rewrite, retrieve: returns what the turn really asks,
        its canonical entities and the evidence, or a clarification question."""
        result = runtime.engine.handle(kb, session_id, body.text, k=body.k)
        runtime.clarifications.observe(kb, session_id, result)  # analytics; never raises
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
    def get_trace(kb: KbPath, session_id: SessionPath, turn: Annotated[int, Path(ge=1)],
                  engine: Annotated[TurnEngine, Depends(get_engine)],
                  _: Annotated[Caller, Depends(any_caller)]) -> dict[str, Any]:
        """Mentions, links with candidates and scores, classification, clarification,
        rewrite candidates with each validator check, retrieval (filters, relaxation,
        exclusions) and the result, for one of the session's recent turns."""
        return engine.trace(kb, session_id, turn)

    app.include_router(admin_router)
    app.include_router(analytics_router)
    app.include_router(console_router)

    return app
