"""The benchmark command in --quick mode (tiny sizes): it runs end to end against the real
Neo4j and Milvus Lite, starts and loads the real server on loopback, and writes a results
JSON and a report with plots whose values make sense. A functional test, not a timed one:
no figure is compared with a target here."""

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    proc = subprocess.run(
        [sys.executable, "benchmarks/run_all.py", "--quick", "--out", str(out / "results.json"),
         "--report", str(out / "benchmarks.md"), "--workdir", str(out / "work")],
        cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads((out / "results.json").read_text(encoding="utf-8")), out


def _sane(stat: dict) -> None:
    assert stat["min"] <= stat["median"] <= stat["max"], stat
    assert len(stat["runs"]) >= 2


def test_results_hold_every_figure_with_sane_values(quick_run):
    results, _ = quick_run
    meta = results["meta"]
    assert meta["mode"] == "quick" and meta["machine"]["cpus"] >= 1 and meta["machine"]["memory_gb"] > 0

    (linking,) = results["linking"]
    assert linking["aliases"] >= 2000 and linking["entities"] > 0
    _sane(linking["p50_ms"])
    assert 0 < linking["p50_ms"]["median"] <= linking["p99_ms"]["median"] < 1000

    (corpus,) = results["corpus"]
    assert corpus["chunks"] == 300 and corpus["entities"] >= 20
    assert corpus["import"]["entities_per_s"]["median"] > 0
    assert corpus["ingest"]["chunks_per_s"]["median"] > 0
    turns = corpus["turns"]
    assert turns["actions"].get("retrieve", 0) > 0 and turns["actions"].get("clarify", 0) > 0
    for p in ("p50", "p95", "p99"):
        _sane(turns["latency_ms"][p])
        assert turns["bare_milvus_ms"][p]["median"] > 0
    assert turns["latency_ms"]["p50"]["median"] <= turns["latency_ms"]["p99"]["median"]
    assert turns["ratio_to_bare_p50"]["median"] > 0
    # The trace times every stage, and the stages fit inside the turn.
    stages = turns["stages_ms_mean"]
    assert set(stages) == {"session_load", "detect", "link", "rewrite", "retrieve", "pack", "session_save"}
    assert all(s["median"] >= 0 for s in stages.values()) and stages["retrieve"]["median"] > 0
    assert sum(s["median"] for s in stages.values()) <= turns["latency_ms"]["p99"]["median"] * 1.5

    server = corpus["server"]
    assert [x["clients"] for x in server["throughput"]] == [1, 4, 16]
    for level in server["throughput"]:
        assert level["turns_per_s"]["median"] > 0 and level["requests"] > 0
        assert level["errors"] == 0, level["error_kinds"]
    assert server["memory_idle"]["api_rss_mb"] > 50 and server["memory_after_load"]["total_rss_mb"] > 50
    # Cold start: ready (the kb loaded) after it answered /healthz, then a first turn.
    assert server["ready_s"] >= server["start_s"] > 0 and server["first_turn_ms"] > 0
    assert corpus["ingest"]["memory"]["total_rss_mb"] > 50

    sessions = results["sessions"]
    assert [x["sessions"] for x in sessions] == [1_000, 5_000]
    for x in sessions:
        assert 0 < x["load_ms"]["p50"] <= x["load_ms"]["p99"] and 0 < x["save_ms"]["p50"] <= x["save_ms"]["p99"]
        assert x["state_bytes"] > 100 and x["file_mb"] > 0

    demo = results["quality"]["demo"]
    assert set(demo["systems"]) == {"referent", "raw", "concat"}
    for system in demo["systems"].values():
        assert set(system["by_turn"]) == {"1", "2", "3+"}
        assert 0 <= system["overall"]["hit_at_k"] <= 1
    assert demo["systems"]["referent"]["overall"]["clarify_recall"] > 0


def test_report_is_written_with_tables_and_plots(quick_run):
    _, out = quick_run
    report = (out / "benchmarks.md").read_text(encoding="utf-8")
    for heading in ("## Machine and run", "## Commands", "## Targets", "## Mention detection + linking",
                    "## Turn latency vs corpus size", "## Ingest and import", "## The running server",
                    "## Session store vs sessions stored", "## Quality: demo suite"):
        assert heading in report, heading
    assert "zero errors under load" in report and "**met**" in report
    plots = sorted((out / "benchmarks").glob("*.png"))
    assert {p.stem for p in plots} >= {"turn-latency-vs-size", "turn-stages", "throughput",
                                       "linking-vs-aliases", "hit-per-turn-demo", "sessions-vs-stored"}
    for plot in plots:
        assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 5000
        assert f"benchmarks/{plot.name}" in report
