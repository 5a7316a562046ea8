"""The trace is what dialogue.trace declares, and the events tell what the trace shows."""

import uuid

import pytest

from dialogue.events import ClarificationAnswered, ClarificationAsked, StagesTimed
from dialogue.trace import TurnTrace
from evaluation.suites import parse_suite, run_system
from tests.conftest import DEMO

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]


def test_every_demo_turn_has_a_declared_trace_and_tells_its_clarifications(runtime, demo_kb):
    suite = parse_suite((DEMO / "suite.jsonl").read_text(encoding="utf-8").splitlines())
    results = run_system(runtime.engine, demo_kb, suite, k=5, run_id=uuid.uuid4().hex[:8])
    asked = answered = 0
    previous = None
    for result in results:
        trace = TurnTrace.model_validate(result.trace)
        assert trace.timings_ms and trace.links is not None
        [timed] = [e for e in result.events if isinstance(e, StagesTimed)]
        assert timed.timings_ms == result.trace["timings_ms"]
        questions = [e for e in result.events if isinstance(e, ClarificationAsked)]
        if result.action == "clarify":
            asked += 1
            [question] = questions
            assert question.options == tuple(o.id for o in result.clarification.options)
            assert question.mention == result.clarification.mention
            assert trace.clarify_gate is not None and trace.clarify_gate.reasons
        else:
            assert questions == []
        replies = [e for e in result.events if isinstance(e, ClarificationAnswered)]
        if previous is not None and previous.action == "clarify" and previous.session == result.session:
            answered += 1
            [reply] = replies
            assert trace.clarification_answer is not None
            assert reply.kind == trace.clarification_answer.kind
        else:
            assert replies == []
        previous = result
    assert asked >= 5 and answered >= 5


def test_the_openapi_document_declares_the_trace(runtime):
    from fastapi.testclient import TestClient

    from api.app import create_app

    with TestClient(create_app(runtime=runtime)) as client:
        doc = client.get("/openapi.json").json()
    schemas = doc["components"]["schemas"]
    assert schemas["TurnResult"]["properties"]["trace"]["$ref"] == "#/components/schemas/TurnTrace"
    for part in ("LinkTrace", "CandidateTrace", "RewriteTrace", "RetrievalTrace", "FallbackTrace",
                 "ClarifyGateTrace", "ClarificationAnswerTrace"):
        assert part in schemas, part
    assert "timings_ms" in schemas["TurnTrace"]["properties"]
