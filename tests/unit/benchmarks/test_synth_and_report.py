"""The benchmark's generated data and the report's verdicts."""

import json

from benchmarks.report import targets
from benchmarks.synth import synthetic_ontology, turn_kb
from kg.ontology import parse_ontology


def test_generated_kb_is_deterministic_valid_and_confusable():
    a, b = turn_kb(300, sessions=8), turn_kb(300, sessions=8)
    assert a == b
    ontology = parse_ontology(a.ontology_lines)
    assert len(ontology.entities) == a.entities >= 20
    assert len(a.corpus_lines) == a.chunks == 300
    ids = {e.id for e in ontology.entities}
    assert all(set(json.loads(line)["entity_ids"]) <= ids for line in a.corpus_lines)
    # Editions share their bare name: a bare mention of it is ambiguous.
    by_alias: dict[str, set[str]] = {}
    for e in ontology.entities:
        for alias in e.all_aliases:
            by_alias.setdefault(alias, set()).add(e.id)
    assert any(len(owners) == 2 for owners in by_alias.values())
    assert all(len(script) == 4 for script in a.sessions)


def test_alias_table_reaches_the_asked_size():
    ontology, names = synthetic_ontology(5000)
    assert sum(len(e.all_aliases) for e in ontology.entities) >= 5000
    assert len(names) == len(set(names))


def _stat(x: float) -> dict:
    return {"median": x, "min": x, "max": x, "runs": [x, x]}


def test_targets_are_judged_from_the_figures_and_unmeasured_ones_said_so():
    results = {
        "meta": {"machine": {"cpus": 2}},
        "linking": [{"aliases": 1_000_002, "p99_ms": _stat(1.4)}],
        "corpus": [{"chunks": 10_000, "turns": {"latency_ms": {"p50": _stat(12.0)},
                                                "overhead_ms_p50": _stat(1.0),
                                                "bare_milvus_ms": {"p50": _stat(4.0)},
                                                "overhead_share_of_bare": 0.25},
                    "server": {"throughput": [{"clients": 1, "turns_per_s": _stat(80.0), "requests": 10,
                                               "errors": 0},
                                              {"clients": 4, "turns_per_s": _stat(120.0), "requests": 10,
                                               "errors": 0}]}}],
    }
    rows = targets(results)
    assert [verdict for _, _, verdict in rows] == ["not met", "not measured", "met", "met",
                                                   "not measured", "not measured", "not measured",
                                                   "met"]
    assert "120 turns/s with 4 clients" in rows[3][1] and "0 errors in 20 requests" in rows[7][1]


def test_the_scale_targets_are_judged_at_100k_chunks_and_for_each_hybrid_suite():
    from benchmarks.report import scale_targets

    at100k = {"chunks": 100_000,
              "turns": {"ratio_to_bare_p50": _stat(2.4), "latency_ms": {"p50": _stat(6.0)},
                        "bare_milvus_ms": {"p50": _stat(2.5)}},
              "server": {"ready_s": 50.0, "first_turn_ms": 420.0,
                         "throughput": [{"clients": 16, "turns_per_s": _stat(130.0),
                                         "p99_ms": _stat(150.0), "errors": 0}]}}
    hybrid = {"systems": {"hybrid": {"p50_ms": 30.0}, "bare hybrid": {"p50_ms": 25.0}},
              "hybrid_over_bare_p50": 1.2}
    rows = scale_targets({"hybrid": {"enterprise-dev": hybrid}}, [at100k])

    assert [verdict for _, _, verdict in rows] == ["met", "not met", "met", "met"]
    assert "420 ms" in rows[0][1] and "2.4" in rows[1][1] and "enterprise-dev" in rows[2][0]
