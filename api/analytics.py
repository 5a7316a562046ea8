"""Clarification analytics over HTTP: ``GET /v1/kbs/{kb}/admin/clarifications`` (admin keys).

The records are written by :class:`analytics.clarifications.ClarificationRecorder`
from the turns of every API instance; this route groups them per ambiguous
alias and suggests alias changes (:func:`analytics.clarifications.summarize`).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request
from pydantic import BaseModel, Field

from analytics.clarifications import (DEFAULT_DOMINANCE, DEFAULT_MIN_ANSWERS, ClarificationGroup,
                                      summarize)
from api.auth import Caller, admin_caller
from api.json_body import CheckedJsonRoute
from api.runtime import Runtime
from common.errors import NotFoundError
from kg.clarification_log import RecentClarification

Kb = Annotated[str, Path(pattern=r"^[A-Za-z0-9_]{1,64}$", description="knowledge base id")]

router = APIRouter(route_class=CheckedJsonRoute, prefix="/v1/kbs/{kb}/admin", tags=["admin"])


def _runtime(request: Request) -> Runtime:
    return request.app.state.runtime


class ClarificationReport(BaseModel):
    kb: str
    since: str | None = Field(description="start of the period; null: every kept record")
    min_answers: int
    dominance: float
    asked: int = Field(description="questions asked in the period")
    groups: list[ClarificationGroup]
    recent: list[RecentClarification]


@router.get("/clarifications", operation_id="getClarificationReport",
            response_model=ClarificationReport,
            summary="Which mentions needed a clarification, and what users chose")
def clarifications(
        kb: Kb, runtime: Annotated[Runtime, Depends(_runtime)],
        _: Annotated[Caller, Depends(admin_caller)],
        days: Annotated[int | None, Query(ge=1, le=3650, description="only the last N days; "
                                          "all kept records when left out")] = None,
        min_answers: Annotated[int, Query(ge=1, le=10_000, description="answers needed before "
                                          "a suggestion")] = DEFAULT_MIN_ANSWERS,
        dominance: Annotated[float, Query(gt=0.5, le=1.0, description="share of the answers "
                                          "one option needs to count as dominant")] = DEFAULT_DOMINANCE,
        recent: Annotated[int, Query(ge=0, le=200, description="latest questions to list")] = 20,
) -> ClarificationReport:
    """One group per ambiguous alias (or pronoun) and candidate set, most asked
    first: how often it was asked, the answers (``chosen`` per entity, ``both``,
    ``neither``, ``new_question`` when the user asked something else instead,
    ``open`` when no answer came) and a ``suggestion`` with its reasoning in
    Chinese and English. Records are written in the background: a question shows
    here within about a second of its turn."""
    if runtime.ontology.kb_state(kb) is None:
        raise NotFoundError(f"knowledge base {kb!r} does not exist")
    since = datetime.now(timezone.utc) - timedelta(days=days) if days is not None else None
    log = runtime.clarifications.log
    rows = log.counts(kb, since)
    groups = summarize(rows, runtime.snapshots.get(kb), min_answers=min_answers,
                       dominance=dominance)
    return ClarificationReport(kb=kb, since=since.isoformat() if since else None,
                               min_answers=min_answers, dominance=dominance,
                               asked=sum(g.asked for g in groups), groups=groups,
                               recent=log.recent(kb, since=since, limit=recent) if recent else [])


# -- the clarify-or-resolve model's per-kb calibration ------------------------------------

class ClarifyParamsView(BaseModel):
    kb: str
    source: str = Field(description="`kb`: recalibrated for this kb; `shipped`: the parameter file")
    threshold: float
    fitted_at: str | None = None
    report: dict | None = Field(default=None, description="the recalibration's before/after")


def _uses_e5(runtime: Runtime) -> bool:
    from api.runtime import bundled_e5

    return bundled_e5(runtime.settings, None) is not None


def _shipped_threshold(runtime: Runtime) -> float:
    from dialogue.policy.clarify_model import ClarifyParams

    if runtime.settings.clarify.threshold is not None:
        return runtime.settings.clarify.threshold
    return ClarifyParams.load().threshold_for(_uses_e5(runtime))


@router.get("/clarify", operation_id="getClarifyParams", response_model=ClarifyParamsView,
            summary="The clarify-or-resolve parameters this kb uses")
def clarify_params(kb: Kb, runtime: Annotated[Runtime, Depends(_runtime)],
                   _: Annotated[Caller, Depends(admin_caller)]) -> ClarifyParamsView:
    if runtime.ontology.kb_state(kb) is None:
        raise NotFoundError(f"knowledge base {kb!r} does not exist")
    stored = runtime.clarifications.log.params(kb)
    if stored is None:
        return ClarifyParamsView(kb=kb, source="shipped", threshold=_shipped_threshold(runtime))
    import json

    from dialogue.policy.clarify_model import ClarifyParams

    own = ClarifyParams.from_json(json.loads(stored.params), f"kb {kb} clarify parameters")
    # The threshold of the set the kb's answers recalibrated (with or without the e5, with
    # or without the candidates' own facets); an older file: the one the e5 setting uses.
    recalibrated = own.sets().get(str(own.meta.get("meta", {}).get("recalibrated_set", "")))
    threshold = (recalibrated.threshold if recalibrated is not None
                 and recalibrated.threshold is not None else own.threshold_for(_uses_e5(runtime)))
    return ClarifyParamsView(kb=kb, source="kb", threshold=threshold,
                             fitted_at=stored.fitted_at, report=json.loads(stored.report))


@router.post("/clarify/recalibrate", operation_id="recalibrateClarify", summary="Re-threshold the clarify model from this kb's answers")
def clarify_recalibrate(
        kb: Kb, runtime: Annotated[Runtime, Depends(_runtime)],
        _: Annotated[Caller, Depends(admin_caller)],
        dry_run: Annotated[bool, Query(description="report only; store nothing")] = False,
        min_records: Annotated[int, Query(ge=1, le=100_000, description="answered questions "
                                          "with a recorded decision needed")] = 20,
) -> dict:
    """Reads the questions this kb asked (with the features and score that asked them)
    and how users answered, chooses the threshold with the best F1 of "asked when
    needed" at or above the current one, stores it for the kb (unless ``dry_run``)
    and reports the figures before and after. 422 when too few answers are recorded."""
    from dialogue.policy.clarify_calibrate import recalibrate
    from dialogue.policy.clarify_model import ClarifyParams

    if runtime.ontology.kb_state(kb) is None:
        raise NotFoundError(f"knowledge base {kb!r} does not exist")
    report = recalibrate(kb, runtime.clarifications.log, ClarifyParams.load(),
                         current=runtime.settings.clarify.threshold, min_records=min_records,
                         dry_run=dry_run)
    if runtime.clarify_evidence is not None:
        runtime.clarify_evidence.invalidate(kb)
    return {**report.as_json(), "stored": not dry_run}


@router.delete("/clarify", operation_id="resetClarifyParams", summary="Back to the shipped clarify parameters")
def clarify_reset(kb: Kb, runtime: Annotated[Runtime, Depends(_runtime)],
                  _: Annotated[Caller, Depends(admin_caller)]) -> dict:
    if runtime.ontology.kb_state(kb) is None:
        raise NotFoundError(f"knowledge base {kb!r} does not exist")
    removed = runtime.clarifications.log.delete_params(kb)
    if runtime.clarify_evidence is not None:
        runtime.clarify_evidence.invalidate(kb)
    return {"kb": kb, "removed": removed}
