"""Every turn of every development suite, and random turn sequences drawn from them,
is answered without an exception and without a stage falling back.

The suites are the development data beside the checkout (../shared/data): a bank
and a telecom operator, KdConv (about 9,000 turns), CLAQUA single- and multi-turn.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation.suites import FailedTurn, parse_suite, run_system
from tests.conftest import REPO

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

DATA = REPO.parent / "shared" / "data"
SUITES = sorted(p.parent.name for p in DATA.glob("*/suite.jsonl"))


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def loaded(neo4j_store, milvus_index):
    """Each suite's ontology and corpus in a kb of its own, loaded on first use."""
    from kg.aliases import SnapshotCache
    from retrieval.ingest import ingest_corpus

    kbs: dict[str, str] = {}

    def load(name: str) -> str:
        if name not in kbs:
            kb = f"t_replay_{uuid.uuid4().hex[:8]}"
            neo4j_store.import_ontology(kb, _lines(DATA / name / "ontology.jsonl"))
            ingest_corpus(kb, _lines(DATA / name / "corpus.jsonl"), index=milvus_index,
                          snapshot=SnapshotCache(neo4j_store).get(kb))
            kbs[name] = kb
        return kbs[name]

    yield load
    for kb in kbs.values():
        milvus_index.drop(kb)
        neo4j_store.delete_kb(kb)


def _failures(results) -> list[str]:
    out = []
    for r in results:
        if isinstance(r, FailedTurn):
            out.append(f"{r.session} t{r.turn} {r.user!r}: raised {r.error}")
        for fallback in r.trace.get("fallbacks", ()):
            out.append(f"{r.session} t{r.turn} {r.user!r}: {fallback}")
    return out


@pytest.mark.skipif(not SUITES, reason="no development data beside the checkout (../shared/data)")
@pytest.mark.parametrize("name", SUITES)
def test_every_turn_of_the_suite_is_answered_without_a_fallback(name, runtime, loaded):
    suite = parse_suite(_lines(DATA / name / "suite.jsonl"))
    results = run_system(runtime.engine, loaded(name), suite, k=5)
    assert len(results) == sum(len(s.turns) for s in suite)
    failures = _failures(results)
    assert not failures, f"{len(failures)} turns failed, e.g.\n" + "\n".join(failures[:20])


def _utterances() -> list[str]:
    said: list[str] = []
    for name in SUITES:
        for script in parse_suite(_lines(DATA / name / "suite.jsonl")):
            said.extend(t.user for t in script.turns)
    return sorted(set(said))


UTTERANCES = _utterances() if SUITES else []


@pytest.mark.skipif(not SUITES, reason="no development data beside the checkout (../shared/data)")
@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_random_turn_sequences_never_fail_and_never_skip_a_number(data, runtime, loaded):
    """Utterances of every suite, in any order, on one kb: clarification answers where
    no question was asked, pronouns with no antecedent, other domains' names."""
    kb = loaded("enterprise-dev" if "enterprise-dev" in SUITES else SUITES[0])
    turns = data.draw(st.lists(st.sampled_from(UTTERANCES), min_size=1, max_size=6))
    session = f"h-{uuid.uuid4().hex[:10]}"
    for number, text in enumerate(turns, start=1):
        result = runtime.engine.handle(kb, session, text)
        assert result.turn == number
        assert result.action in ("retrieve", "clarify", "no_answer")
        assert not result.trace.get("fallbacks"), result.trace.get("fallbacks")
        if result.action == "clarify":
            assert len(result.clarification.options) >= 2
            assert result.evidence == []
        else:
            assert result.clarification is None
