"""The `referent` command line against the real services."""

import json

import pytest
from typer.testing import CliRunner

from api.cli import app
from tests.conftest import DEMO

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]


@pytest.fixture
def cli_env(monkeypatch, tmp_path):
    # A data dir of its own: the CLI opens its own Milvus Lite file.
    monkeypatch.setenv("REFERENT_DATA_DIR", str(tmp_path / "data"))
    return tmp_path


def run(*args):
    result = CliRunner().invoke(app, list(args))
    return result


def test_import_reports_a_bad_line_and_writes_nothing(cli_env, kb, neo4j_store):
    bad = cli_env / "bad.jsonl"
    bad.write_text('{"kind": "entity", "id": "ok", "name": "好", "type": "T"}\n'
                   '{"kind": "entity", "id": "ok2", "name": "好", "type": "T", "aliases": "x"}\n',
                   encoding="utf-8")
    result = run("ontology", "import", "--kb", kb, str(bad))
    assert result.exit_code == 2
    assert "line 2" in result.output and "'aliases'" in result.output
    assert neo4j_store.alias_version(kb) is None


def test_import_ingest_eval_and_export(cli_env, kb):
    assert run("ontology", "import", "--kb", kb, str(DEMO / "ontology.jsonl")).exit_code == 0
    again = run("ontology", "import", "--kb", kb, str(DEMO / "ontology.jsonl"))
    assert again.exit_code == 0 and "nothing changed" in again.output

    ingest = run("ingest", "--kb", kb, str(DEMO / "corpus.jsonl"))
    assert ingest.exit_code == 0, ingest.output
    assert "chunks" in ingest.output and " 0 unchanged" in ingest.output
    # What was tagged, truly: 124 lines carry entity_ids; of the other lines' chunks,
    # only those that name an alias are counted.
    assert "124 lines tagged by their entity_ids" in ingest.output
    chunks = int(ingest.output.split(" chunks (")[0].rsplit(" ", 1)[1])
    tagged = int(ingest.output.split(" chunks tagged by alias matching")[0].rsplit(" ", 1)[1])
    assert 0 < tagged <= chunks - 124
    again = run("ingest", "--kb", kb, str(DEMO / "corpus.jsonl"))
    assert again.exit_code == 0 and " 0 written" in again.output, again.output

    out, summary = cli_env / "results.jsonl", cli_env / "summary.json"
    result = run("eval", "--kb", kb, str(DEMO / "suite.jsonl"), "--out", str(out),
                 "--summary", str(summary), "--baseline", "raw", "--baseline", "concat")
    assert result.exit_code == 0, result.output
    assert "hit_at_k" in result.output
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    suite_turns = [(json.loads(s)["session"], i)
                   for s in (DEMO / "suite.jsonl").read_text(encoding="utf-8").splitlines()
                   for i in range(1, len(json.loads(s)["turns"]) + 1)]
    # Every system's lines, each naming its system, each in the suite's order.
    for system in ("referent", "raw", "concat"):
        assert [(r["session"], r["turn"]) for r in lines if r["system"] == system] == suite_turns
    assert len(lines) == 3 * len(suite_turns)
    assert set(lines[0]) == {"session", "turn", "user", "action", "standalone", "queries",
                             "entities", "clarification", "evidence", "rewrite",
                             "context_tokens", "latency_ms", "system"}
    from common.formats import schema_error

    assert [schema_error("results", line) for line in lines] == [None] * len(lines)
    systems = json.loads(summary.read_text(encoding="utf-8"))["systems"]
    assert set(systems) == {"referent", "raw", "concat"}
    assert set(systems["referent"]["by_turn"]) == {"1", "2", "3+"}
    # Every docs/formats.md §4 metric, per turn index, for every system, printed and written.
    from api.cli import _METRICS

    for name, summary_of in systems.items():
        for bucket in ("1", "2", "3+"):
            assert set(_METRICS) <= set(summary_of["by_turn"][bucket]), (name, bucket)
    per_turn_table = result.output[result.output.index("per turn index"):]
    for metric in _METRICS:
        assert metric in per_turn_table, metric
    # Linking before searching must beat searching the raw words on later turns.
    assert systems["referent"]["by_turn"]["2"]["hit_at_k"] > systems["raw"]["by_turn"]["2"]["hit_at_k"]
    # Evidence shown before comes back only on revisits (回到刚才…), or marked with the
    # turn that showed it when it answers the new question (novelty).
    from dialogue.classify import revisit_cue

    shown: dict[str, set[str]] = {}
    for r in (r for r in lines if r["system"] == "referent"):
        again = [e for e in r["evidence"] if e["chunk_id"] in shown.get(r["session"], set())]
        assert revisit_cue(r["user"]) or all(e.get("seen_in_turn") for e in again), r
        shown.setdefault(r["session"], set()).update(e["chunk_id"] for e in r["evidence"])

    exported = run("ontology", "export", "--kb", kb)
    assert exported.exit_code == 0
    assert exported.output.count('"kind": "entity"') == \
        (DEMO / "ontology.jsonl").read_text(encoding="utf-8").count('"kind": "entity"')


def test_ids_the_ontology_lacks_are_refused_before_any_work(cli_env, kb):
    assert run("ontology", "import", "--kb", kb, str(DEMO / "ontology.jsonl")).exit_code == 0
    corpus = cli_env / "corpus.jsonl"
    corpus.write_text('{"doc_id": "a", "text": "A产品", "entity_ids": ["prod.a"]}\n'
                      '{"doc_id": "b", "text": "B", "entity_ids": ["prod.a", "prod.nope"]}\n',
                      encoding="utf-8")
    refused = run("ingest", "--kb", kb, str(corpus))
    assert refused.exit_code == 2, refused.output
    assert "knowledge base" in refused.output and "does not have, on 1 line:" in refused.output
    assert "line 2: 'prod.nope'" in refused.output and "prod.a'" not in refused.output
    assert "ingest corpus.jsonl" not in refused.output  # no progress bar: no work began


def test_eval_names_the_bad_suite_line(cli_env, kb):
    suite = cli_env / "suite.jsonl"
    suite.write_text('{"session": "a", "turns": [{"user": "x", "expect": {"action": "maybe"}}]}\n',
                     encoding="utf-8")
    result = run("eval", "--kb", kb, str(suite))
    assert result.exit_code == 2
    assert "line 1" in result.output and "turns[0].expect.action" in result.output


def test_delete_doc_removes_one_document(cli_env, kb):
    assert run("ontology", "import", "--kb", kb, str(DEMO / "ontology.jsonl")).exit_code == 0
    assert run("ingest", "--kb", kb, str(DEMO / "corpus.jsonl")).exit_code == 0

    deleted = run("delete-doc", "--kb", kb, "prod-a-personal-apply")
    assert deleted.exit_code == 0, deleted.output
    assert "chunks" in deleted.output
    again = run("delete-doc", "--kb", kb, "prod-a-personal-apply")
    assert again.exit_code == 1 and "has no document" in again.output
    bad = run("delete-doc", "--kb", kb, "it's")
    assert bad.exit_code == 2 and "invalid doc id" in bad.output


def test_a_kb_without_an_ontology_is_ingested_and_answered(cli_env, kb):
    corpus = cli_env / "corpus.jsonl"
    corpus.write_text(
        '{"doc_id": "roam", "title": "国际漫游", "text": "国际漫游需在出国前通过营业厅或APP开通，日套餐每天28元。"}\n'
        '{"doc_id": "fiber", "title": "千兆宽带", "text": "千兆宽带的安装费为100元，预约后48小时内上门安装。"}\n',
        encoding="utf-8")
    ingest = run("ingest", "--kb", kb, str(corpus))
    assert ingest.exit_code == 0, ingest.output
    assert "has no ontology" in ingest.output and "referent retag" in ingest.output
    # It says what was tagged: nothing, and why.
    assert "2 chunks (untagged: the kb has no ontology)" in ingest.output
    assert "alias matching" not in ingest.output
    # Ids the kb cannot know are refused before any work, naming every line and id,
    # and without first announcing an untagged ingest.
    tagged = cli_env / "tagged.jsonl"
    tagged.write_text('{"doc_id": "x", "text": "安装费", "entity_ids": ["prod.fiber"]}\n'
                      '{"doc_id": "y", "text": "漫游"}\n'
                      '{"doc_id": "z", "text": "套餐", "entity_ids": ["plan.day", "prod.fiber"]}\n',
                      encoding="utf-8")
    refused = run("ingest", "--kb", kb, str(tagged))
    assert refused.exit_code == 2, refused.output
    assert "has no ontology: import it first" in refused.output
    assert "line 1: 'prod.fiber'; line 3: 'plan.day', 'prod.fiber'" in refused.output
    assert "tagged with no entity" not in refused.output

    suite = cli_env / "suite.jsonl"
    suite.write_text('{"session": "s", "turns": [{"user": "千兆宽带安装费多少", '
                     '"expect": {"action": "retrieve", "evidence": ["fiber"]}}]}\n',
                     encoding="utf-8")
    out = cli_env / "results.jsonl"
    result = run("eval", "--kb", kb, str(suite), "--out", str(out))
    assert result.exit_code == 0, result.output
    line = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert line["action"] == "retrieve"
    assert line["evidence"][0]["doc_id"] == "fiber"


DEEP = "[" * 10_000 + "]" * 10_000


def test_a_line_nested_too_deeply_is_refused_naming_it_and_nothing_is_written(cli_env, kb,
                                                                             neo4j_store,
                                                                             milvus_index):
    ontology = cli_env / "deep-ontology.jsonl"
    ontology.write_text('{"kind": "entity", "id": "ok", "name": "好", "type": "T"}\n'
                        '{"kind": "entity", "id": "deep", "name": "深", "type": "T", '
                        f'"attributes": {{"a": {DEEP}}}}}\n', encoding="utf-8")
    result = run("ontology", "import", "--kb", kb, str(ontology))
    assert result.exit_code == 2, result.output
    assert "line 2" in result.output and "nested too deeply" in result.output, result.output
    assert "Traceback" not in result.output and "RecursionError" not in result.output
    assert neo4j_store.alias_version(kb) is None

    assert run("ontology", "import", "--kb", kb, str(DEMO / "ontology.jsonl")).exit_code == 0
    corpus = cli_env / "deep-corpus.jsonl"
    corpus.write_text('{"doc_id": "d1", "text": "年假有五天"}\n'
                      f'{{"doc_id": "d2", "text": "病假", "metadata": {{"m": {DEEP}}}}}\n',
                      encoding="utf-8")
    result = run("ingest", "--kb", kb, str(corpus))
    assert result.exit_code == 2, result.output
    assert "line 2" in result.output and "nested too deeply" in result.output, result.output
    assert "Traceback" not in result.output
    suite = cli_env / "deep-suite.jsonl"
    suite.write_text(f'{{"session": "s1", "turns": {DEEP}}}\n', encoding="utf-8")
    result = run("eval", "--kb", kb, str(suite), "--out", str(cli_env / "out.jsonl"))
    assert result.exit_code == 2, result.output
    assert "line 1" in result.output and "nested too deeply" in result.output, result.output


def test_the_demo_loads_its_kb_and_plays_a_conversation(cli_env, kb, settings, monkeypatch):
    # The README's first command ends in this one: it must run on a fresh data dir. The
    # suite's Neo4j is already up, so the demo is pointed at it rather than starting one.
    monkeypatch.setenv("REFERENT_NEO4J__URI", settings.neo4j_uri)
    result = run("demo", "--kb", kb, "--session", "demo-01", "--session", "demo-03")
    assert result.exit_code == 0, result.output
    assert "documents" in result.output and "chunks" in result.output
    # The ellipsis swaps the region; the shared product name is asked about.
    assert "那华南区呢" in result.output and "region.south" in result.output
    assert "A产品怎么申请" in result.output and "clarify" in result.output


def test_clarify_fit_replays_a_suite_keeps_its_examples_and_refits_from_them(cli_env, kb):
    from dialogue.policy.clarify_model import ClarifyParams
    from evaluation.clarify_fit import read_examples
    from evaluation.suites import parse_suite

    assert run("ontology", "import", "--kb", kb, str(DEMO / "ontology.jsonl")).exit_code == 0
    assert run("ingest", "--kb", kb, str(DEMO / "corpus.jsonl")).exit_code == 0
    # The demo suite's scored turns that reach the decision all ask; three more sessions
    # name the shared short form with a question only one edition's passages answer, and
    # are labelled to be answered without a question.
    suite = cli_env / "demo" / "suite.jsonl"
    suite.parent.mkdir()
    extra = [{"session": f"answered-{i}", "turns": [{"user": text, "expect": {"action": "retrieve"}}]}
             for i, text in enumerate(("A产品按席位怎么计费", "A产品的管理后台怎么开通",
                                       "A产品能按月订阅吗"))]
    suite.write_text((DEMO / "suite.jsonl").read_text(encoding="utf-8")
                     + "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in extra),
                     encoding="utf-8")
    kept, params = cli_env / "examples.jsonl", cli_env / "params.json"
    result = run("clarify", "fit", "--suite", f"{kb}={suite}",
                 "--features-out", str(kept), "--out", str(params))
    assert result.exit_code == 0, result.output
    assert "examples from" in result.output and "scored turns" in result.output
    examples = read_examples(kept)
    # Each example is a scored turn of the suite, labelled by what the turn expects.
    scripts = parse_suite(suite.read_text(encoding="utf-8").splitlines())
    expected = {(s.session, i): t.expect.action == "clarify" for s in scripts
                for i, t in enumerate(s.turns, 1) if t.expect and t.expect.action}
    assert len(examples) >= 10 and {e.label for e in examples} == {0, 1}
    for e in examples:
        assert e.suite == "demo" and expected[(e.session, e.turn)] == bool(e.label)
    fitted = ClarifyParams.load(params)
    assert 0 < fitted.threshold < 1
    # The kept examples give the same parameters without replaying.
    again = cli_env / "again.json"
    assert run("clarify", "fit", "--from-features", str(kept), "--out", str(again)).exit_code == 0
    a, b = json.loads(params.read_text()), json.loads(again.read_text())
    assert a["meta"].pop("coverage")["demo"]["examples"] == len(examples)
    b["meta"].pop("coverage")
    assert a == b
