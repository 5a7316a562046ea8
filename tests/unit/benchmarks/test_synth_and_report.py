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


def _size_run(chunks: int, *, turns: bool) -> dict:
    entry = {"chunks": chunks, "entities": chunks // 10, "aliases": chunks // 3,
             "import": {"seconds": _stat(5.0), "entities_per_s": _stat(200.0)},
             "ingest": {"seconds": _stat(100.0), "chunks_per_s": _stat(chunks / 100),
                        "lite_peak_rss_mb": 2345.0}}
    if turns:
        entry["turns"] = {"turns_per_run": 4, "latency_ms": {p: _stat(9.0) for p in ("p50", "p95", "p99")},
                          "bare_milvus_ms": {p: _stat(3.0) for p in ("p50", "p95", "p99")},
                          "ratio_to_bare_p50": _stat(3.0), "overhead_ms_p50": _stat(6.0),
                          "overhead_share_of_bare": 2.0, "outside_retrieve_ms_p50": _stat(1.0),
                          "stages_ms_p50": {}, "stages_ms_mean": {}}
    return entry


def test_a_size_that_stopped_after_its_ingest_is_reported_with_where_it_stopped():
    from benchmarks.report import STAGES, render

    done = _size_run(10_000, turns=True)
    for key in ("stages_ms_p50", "stages_ms_mean"):
        done["turns"][key] = {s: _stat(0.5) for s in STAGES}
    stopped = dict(_size_run(1_000_000, turns=False), collection_load={"finished": False, "seconds": 900.0})
    machine = {"cpus": 2, "memory_gb": 23.5, "python": "3.11", "load_average": [1.0, 1.0, 1.0]}
    results = {"meta": {"machine": machine, "config": {
        "runs": 1, "aliases": [], "chunks": [10_000, 1_000_000], "clients": [1], "load_seconds": 1,
        "load_max_requests": 10}, "command": "python benchmarks/run_all.py", "started": "2026-12-06T21:00", "mode": "full",
        "commit": "abc", "finished": "2026-12-06T22:40"},
        "corpus": [done, stopped],
        "stopped": {"chunks": 1_000_000, "error": "StoppedByHand: stopped by hand", "stored": 640_000,
                    "seconds": 1500.0, "lite_peak_rss_mb": 2345.0, "at": "2026-12-06T22:30:00+00:00"}}

    page = render(results, {}, "results.json")

    assert "| 1,000,000 | 100,000 | 333,333 |" in page  # its ingest row, though it has no turns
    assert "stored 640,000 of 1,000,000 chunks, 1,500 s after it started" in page
    assert "was still loading the collection of 1,000,000 chunks after 900 s" in page
    assert "| 10,000 | 1,000 | 4 |" in page and "| 1,000,000 | 100,000 | 4 |" not in page


def test_recording_a_size_replaces_that_size_only_and_leaves_paths_out(tmp_path):
    from benchmarks.run_all import record_sizes

    path = tmp_path / "results.json"
    path.write_text(json.dumps({"corpus": [_size_run(10_000, turns=True), _size_run(1_000_000, turns=False)],
                                "stopped": {"chunks": 1_000_000, "error": "not run"}, "hybrid": {"x": 1}}))
    run = {"meta": {"config": {"chunks": [1_000_000]}, "command": (
        "python benchmarks/run_all.py --chunks 1000000 --keep --workdir /some/where/w1m "
        "--out /some/where/r.json --record /some/where/results.json")},
        "corpus": [dict(_size_run(1_000_000, turns=True), entities=7)]}

    record_sizes(run, path)

    recorded = json.loads(path.read_text())
    assert [(c["chunks"], c["entities"]) for c in recorded["corpus"]] == [(10_000, 1_000), (1_000_000, 7)]
    assert "stopped" not in recorded and recorded["hybrid"] == {"x": 1}
    shown = recorded["corpus"][1]["measured"]["command"]
    assert "/some/where" not in shown and "--workdir var/bench/keep" in shown and "--record" not in shown
