"""The profile section of the benchmark report: its verdicts and what it shows."""

from benchmarks import report_profile
from benchmarks.turn_profile import shown_command


def _spread(p50: float) -> dict:
    return {"p50": p50, "p99": p50 * 5, "mean": p50 * 2}


PROFILE = {
    "turns": {"100000": {
        "turns": 240, "load_average": [3.0, 3.0, 3.0], "turn_ms": _spread(3.0),
        "bare_ms": _spread(2.0), "ratio_p50": 1.5, "in_milvus_ms": _spread(2.2),
        "outside_milvus_ms": _spread(0.8), "commit": "abc", "command": "python benchmarks/turn_profile.py",
        "stages_ms": {s: _spread(0.1) for s in report_profile.BUYS}}},
    "http": {"100000": {
        "ready_s": 5.0, "first_turn_ms": 40.0, "load_average": [3.0, 3.0, 3.0], "commit": "abc",
        "command": "python benchmarks/http_load.py",
        "throughput": [{"clients": 16, "turns_per_s": {"median": 120.0}, "p50_ms": {"median": 90.0},
                        "p99_ms": {"median": 250.0}, "requests": 1200, "errors": 0}]}},
}


def test_the_profile_answers_the_turn_and_http_targets_with_its_own_verdicts():
    rows = report_profile.target_rows(PROFILE)
    assert rows["turn"][2] == "met" and "1.50×" in rows["turn"][1]
    # 120 turns/s but a p99 of 250 ms: the HTTP target needs both.
    assert rows["http"][2] == "not met" and "p99 250 ms" in rows["http"][1]
    assert report_profile.target_rows({}) == {}


def test_the_section_names_every_stage_and_each_load_level():
    out: list[str] = []
    report_profile.render(PROFILE, out.append)
    text = "\n".join(out)
    assert all(f"| {stage} |" in text for stage in report_profile.BUYS)
    assert "| 100,000 |  | 5 | 40 | 16 | 120.0 |" in text
    out.clear()
    report_profile.render({}, out.append)
    assert out == []


def test_recorded_commands_show_no_local_paths():
    shown = shown_command(["/home/x/benchmarks/turn_profile.py", "--chunks", "10", "--workdir",
                           "/tmp/a b", "--record=/srv/p.json", "--pstats", "/tmp/p",
                           "--against", "/srv/old", "--profile=/srv/spy"])
    assert shown == ("python benchmarks/turn_profile.py --chunks 10 --workdir var/bench/profile "
                     "--record=docs/benchmarks/profile.json --pstats PROFILE "
                     "--against OLDER_TREE --profile=PROFILE_DIR")


def _request(turns: str, request: str, per_turn: float, ms: float) -> dict:
    return {"turns": turns, "request": request, "path": "_retrieve > search", "count": 10,
            "per_turn": per_turn, "mean_limit": 20.0, "mean_ms": ms, "ms_per_turn": per_turn * ms}


def test_the_section_lists_the_turns_requests_and_the_search_feature_by_feature():
    turns = dict(PROFILE["turns"]["100000"])
    turns["requests"] = [_request("with entities", "search (filtered)", 1.0, 4.0),
                         _request("with entities", "query", 0.001, 9.0)]
    turns["anatomy_ms"] = {"bare: limit 5, chunk ids": _spread(2.0),
                           "+ the entity filter (the turn's request)": _spread(3.5),
                           "the same behind its chunk ids (not built)": _spread(2.5)}
    profile = {**PROFILE, "turns": {"100000": turns}, "suite_requests": {"kb_a": {
        "turns": 12, "sessions": 3, "load_average": [2.0, 2.0, 2.0], "commit": "abc",
        "command": "python benchmarks/turn_requests.py --kb kb_a",
        "requests": [_request("no entity", "query", 0.5, 2.0)]}}}
    out: list[str] = []
    report_profile.render(profile, out.append)
    text = "\n".join(out)
    assert "| with entities | search (filtered) | 1.00 | 20.0 | 4.00 | 4.00 |" in text
    # A request fewer than one turn in 200 makes is left out of the table.
    assert "| with entities | query |" not in text
    assert "| + the entity filter (the turn's request) | 3.50 | 7.00 | +1.50 |" in text
    assert "| the same behind its chunk ids (not built) | 2.50 | 5.00 | -1.00 |" in text
    # The filtered request alone is 1.75× the bare search; the turn (3.0 ms) 0.9× it.
    assert "1.8× the bare search by itself" in text and "the turn is 0.9×" in text
    assert "the same request took 2.50 ms (1.2× the bare search)" in text
    assert "`kb_a` development kb (12 turns of 3 sessions" in text
    assert "| no entity | query | 0.50 |" in text
    assert "benchmarks/turn_requests.py --kb kb_a" in text


def test_the_server_table_shows_the_older_tree_of_the_same_run_and_the_cpu_per_turn():
    cpu = {"api": {"median": 9.0}, "milvus_lite": {"median": 3.5}, "client": {"median": 1.2}}
    current = dict(PROFILE["http"]["100000"], commit="new1234567890")
    current["throughput"] = [{**current["throughput"][0], "cpu_ms_per_turn": cpu}]
    older = dict(PROFILE["http"]["100000"], commit="old1234567890")
    out: list[str] = []
    report_profile.render({"http": {"100000": {**current, "against": older}}}, out.append)
    text = "\n".join(out)
    assert "| 100,000 | new | 5 | 40 | 16 | 120.0 | 90.0 | 250 | 1200 | 0 | 9.0 / 3.5 / 1.2 |" in text
    assert "| 100,000 | old | 5 | 40 | 16 | 120.0 | 90.0 | 250 | 1200 | 0 | – | 3.0 | `old123456789` |" in text


def test_server_samples_go_to_the_first_part_they_fall_in_and_the_event_loop_by_its_own_frame():
    from benchmarks import server_profile

    loop_root = "<module> (uvicorn/__main__.py:4);Runner.run (asyncio/runners.py:118)"
    lines = [
        "x (api/app.py:1);TurnEngine.handle (dialogue/engine.py:186);TurnEngine._retrieve "
        "(dialogue/engine.py:519);MilvusClient.search (pymilvus/milvus_client/milvus_client.py:1) 6",
        "x (api/app.py:1);TurnEngine.handle (dialogue/engine.py:186);TurnEngine._retrieve "
        "(dialogue/engine.py:519);jaccard (retrieval/dedup.py:48) 2",
        f"{loop_root} 1",
        f"{loop_root};RequestResponseCycle.send (uvicorn/protocols/http/httptools_impl.py:522) 1",
    ]
    found = server_profile.shares(lines, rate=100, seconds=0.2)
    parts = {p["part"]: p["samples"] for p in found["parts"]}
    assert found["samples"] == 10 and found["busy"] == 0.5
    assert parts == {"Milvus client (pymilvus, gRPC)": 6,
                     "retrieval: rerank, dedup, novelty, no-answer": 2,
                     "event loop and worker hand-offs": 1,
                     "HTTP: uvicorn, middleware, routing, body, auth": 1}
    out: list[str] = []
    report_profile.render({"server_cpu": {"100000": {**found, "commit": "abc123",
                                                     "command": "python benchmarks/server_profile.py"}}},
                          out.append)
    text = "\n".join(out)
    assert "| Milvus client (pymilvus, gRPC) | 60.0% |" in text and "busy 50% of the run" in text


def test_a_positional_file_of_a_recorded_command_shows_no_local_path():
    shown = shown_command(["/x/benchmarks/server_profile.py", "/tmp/spy/current-r0.16c0.txt",
                           "--commit", "abc"])
    assert shown == ("python benchmarks/server_profile.py PROFILE_DIR/current-r0.16c0.txt "
                     "--commit abc")


def test_a_side_by_side_run_of_several_runs_shows_each_runs_throughput():
    level = {**PROFILE["http"]["100000"]["throughput"][0],
             "turns_per_s": {"median": 100.0, "runs": [90.0, 110.0]}}
    new = dict(PROFILE["http"]["100000"], runs=2, throughput=[level], commit="n")
    old = dict(PROFILE["http"]["100000"], runs=2, throughput=[level], commit="o")
    out: list[str] = []
    report_profile.render({"http": {"100000": {**new, "against": old}}}, out.append)
    assert ("median of 2 runs per tree; turns/s of each run: new 16 clients [90.0, 110.0]; "
            "old 16 clients [90.0, 110.0]") in "\n".join(out)


def _level(tps: float, p99: float) -> dict:
    cpu = {"api": {"median": 9.0}, "milvus_lite": {"median": 4.0}, "client": {"median": 1.0}}
    return {"clients": 16, "turns_per_s": {"median": tps, "min": tps, "max": tps},
            "p50_ms": {"median": 100.0}, "p99_ms": {"median": p99, "min": p99, "max": p99},
            "requests": 1000, "errors": 0, "cpu_ms_per_turn": cpu}


def _setup(tps: float, p99: float, each: list[float] | None = None) -> dict:
    level = _level(tps, p99)
    memory = {"api_rss_mb": 580.0, "children_rss_mb": 313.0, "total_rss_mb": 893.0}
    if each:
        level["cpu_ms_per_turn"] |= {f"api_{k + 1}": {"median": v} for k, v in enumerate(each)}
        memory = {"api_rss_mb": [580.0] * len(each), "milvus_rss_mb": 316.0,
                  "total_rss_mb": 580.0 * len(each) + 316}
    return {"ready_s": 90.0, "runs": 2, "command": "python benchmarks/http_load.py",
            "memory_after_load": memory, "throughput": [level]}


def test_several_processes_answer_the_http_target_beside_one_process_of_the_same_run():
    section = {"command": "python benchmarks/http_load.py --processes 1 2 3", "commit": "abc",
               "load_average": [1.0, 1.0, 1.0], "load_average_after": [2.0, 2.0, 2.0],
               "processes": {"1": _setup(85.0, 260.0), "2": _setup(118.0, 190.0, [9.8, 8.1]),
                             "3": _setup(90.0, 460.0, [9.3, 9.2, 9.3])}}
    profile = {**PROFILE, "http_processes": {"100000": section}}
    row = report_profile.target_rows(profile)["http"]
    # The count with the most turns/s decides, and the single process is shown beside it.
    assert row[2] == "met"
    assert "2 API processes" in row[1] and "one process in the same run 85 turns/s, p99 260" in row[1]
    slow = {**section, "processes": {**section["processes"], "2": _setup(118.0, 342.0, [9.8, 8.1])}}
    assert report_profile.target_rows({"http_processes": {"100000": slow}})["http"][2] == "not met"

    out: list[str] = []
    report_profile.render(profile, out.append)
    text = "\n".join(out)
    assert "| 2 | 16 | 118.0 [118.0–118.0] | 100.0 | 190 [190–190] | 1000 | 0 | 9.0 (9.8, 8.1) / 4.0 / 1.0 | 90 |" in text
    assert "| 3 | 580, 580, 580 | 316 | 2056 |" in text and "| 1 | 580 | 313 | 893 |" in text
    assert "python benchmarks/http_load.py --processes 1 2 3" in text
