"""`referent ontology suggest` against the real Neo4j and Milvus Lite: from a file or
from what the kb has ingested, imported with the existing import, and re-run on a
kb with an ontology without touching what an administrator wrote."""

import json

import pytest

from tests.integration.test_cli import cli_env, run  # noqa: F401 (cli_env is a fixture)
from tests.unit.test_suggest import CORPUS, line

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]


def entities(path):
    return {json.loads(x)["name"]: json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()
            if x.startswith("{") and json.loads(x)["kind"] == "entity"}


def test_suggest_from_a_file_then_import_it(cli_env, kb, neo4j_store):
    corpus, out = cli_env / "corpus.jsonl", cli_env / "suggested.jsonl"
    corpus.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    result = run("ontology", "suggest", "--kb", kb, str(corpus), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "ambiguous aliases" in result.output and "referent ontology import" in result.output
    assert (cli_env / "suggested.jsonl.evidence.jsonl").exists()
    imported = run("ontology", "import", "--kb", kb, str(out))
    assert imported.exit_code == 0, imported.output
    names = {e.name for e in neo4j_store.export_ontology(kb).entities}
    assert {"青禾保险", "安居家财险（基础款）"} <= names


def test_rerun_proposes_only_what_is_new_and_keeps_an_admins_edits(cli_env, kb, neo4j_store):
    corpus, out = cli_env / "corpus.jsonl", cli_env / "suggested.jsonl"
    corpus.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    assert run("ontology", "suggest", "--kb", kb, str(corpus), "--out", str(out)).exit_code == 0
    first = entities(out)
    # The administrator renames one entity and gives it an alias of their own, then imports.
    edited = out.read_text(encoding="utf-8").replace('"name": "青禾保险"', '"name": "青禾财产保险"')
    edited = edited.replace('"aliases": ["青禾"]', '"aliases": ["青禾", "青禾保险", "青禾财险"]')
    out.write_text(edited, encoding="utf-8")
    assert run("ontology", "import", "--kb", kb, str(out)).exit_code == 0, edited

    corpus.write_text("\n".join([*CORPUS, line("car", "畅途车险产品说明",
                                               "畅途车险保费每年900元。畅途车险含三者险100万元。")]) + "\n",
                      encoding="utf-8")
    again = cli_env / "again.jsonl"
    result = run("ontology", "suggest", "--kb", kb, str(corpus), "--out", str(again))
    assert result.exit_code == 0, result.output
    new = entities(again)
    assert "畅途车险" in new
    assert not set(new) & set(first), "only names the kb does not hold yet"
    assert run("ontology", "import", "--kb", kb, str(again)).exit_code == 0
    held = {e.id: e for e in neo4j_store.export_ontology(kb).entities}
    org = held[first["青禾保险"]["id"]]
    assert org.name == "青禾财产保险" and "青禾财险" in org.aliases


def test_suggest_from_what_the_kb_has_ingested(cli_env, kb):
    corpus, out = cli_env / "corpus.jsonl", cli_env / "suggested.jsonl"
    corpus.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    missing = run("ontology", "suggest", "--kb", kb, "--out", str(out))
    assert missing.exit_code == 2 and "no chunks" in missing.output
    assert run("ingest", "--kb", kb, str(corpus)).exit_code == 0
    result = run("ontology", "suggest", "--kb", kb, "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "安居家财险（尊享款）" in entities(out)


def test_a_bad_corpus_line_is_named_and_nothing_is_written(cli_env, kb):
    corpus, out = cli_env / "corpus.jsonl", cli_env / "suggested.jsonl"
    corpus.write_text(CORPUS[0] + '\n{"doc_id": "x", "text": 3}\n', encoding="utf-8")
    result = run("ontology", "suggest", "--kb", kb, str(corpus), "--out", str(out))
    assert result.exit_code == 2 and "line 2" in result.output
    assert not out.exists()


def test_admin_route_suggest_review_import_then_a_turn_clarifies(runtime, keyring, kb):
    """The console's flow over the API: suggest from what is ingested, keep the accepted
    lines, import them (all or nothing), and a turn naming a suggested ambiguous alias asks."""
    from fastapi.testclient import TestClient

    from api.app import create_app
    from kg.aliases import AliasSnapshot
    from kg.ontology import Ontology
    from retrieval.ingest import ingest_corpus
    from tests.conftest import ADMIN, QUERY

    ingest_corpus(kb, CORPUS, index=runtime.index, snapshot=AliasSnapshot.from_ontology(kb, 0, Ontology()))
    with TestClient(create_app(runtime=runtime, keyring=keyring)) as client:
        url = f"/v1/kbs/{kb}/admin/suggest"
        assert client.post(url, headers=QUERY).status_code == 403
        assert client.post("/v1/kbs/t_none_such/admin/suggest", headers=ADMIN).status_code == 404
        resp = client.post(url, headers=ADMIN)
        assert resp.status_code == 200, resp.text
        body = resp.json()
        lines = body["ontology"].splitlines()
        ids = {e["id"] for e in body["evidence"] if e["kind"] == "entity"}
        assert ids and all(e["passages"] for e in body["evidence"] if e["kind"] == "entity")
        # Review: reject one entity (and what refers to it), accept the rest.
        rejected = next(e["id"] for e in body["evidence"]
                        if e["kind"] == "entity" and e["name"] == "家财险")
        accepted = [x for x in lines if f'"{rejected}"' not in x]
        imported = client.post(f"/v1/kbs/{kb}/admin/import", headers=ADMIN,
                               content="\n".join(accepted).encode("utf-8"))
        assert imported.status_code == 200, imported.text
        held = {e.name for e in runtime.ontology.export_ontology(kb).entities}
        assert "安居家财险（基础款）" in held and "家财险" not in held
        turn = client.post(f"/v1/kbs/{kb}/sessions/s1/turns", headers=QUERY,
                           json={"text": "安居家财险的保费是多少"})
        assert turn.status_code == 200, turn.text
        result = turn.json()
        assert result["action"] == "clarify", result
        offered = {o["name"] for o in result["clarification"]["options"]}
        assert {"安居家财险（基础款）", "安居家财险（尊享款）"} <= offered


EDITIONS_AND_LISTS = [
    line("card-2024", "星途流量卡资费说明（2024版）", "星途流量卡月费29元，含流量20GB。"),
    line("card-2025", "星途流量卡资费说明（2025版）", "星途流量卡月费39元，含流量40GB。星途流量卡可叠加日包。"),
    line("roam", "出境通信指南", "星辰流量日包：15元/天，含1GB。\n出境推荐星辰流量日包，星辰流量日包可随时退订。"),
]


def test_a_thing_whose_price_sheets_have_editions_is_one_entity_and_a_turn_about_it_does_not_ask(
        runtime, keyring, kb):
    """Suggested from documents, imported into Neo4j: the card whose price sheet has a 2024
    and a 2025 edition is one entity with both editions in its 版本, the day pass listed
    without a title of its own is there too, and a turn naming the card is answered."""
    from fastapi.testclient import TestClient

    from api.app import create_app
    from kg.aliases import AliasSnapshot
    from kg.ontology import Ontology
    from retrieval.ingest import ingest_corpus
    from tests.conftest import ADMIN, QUERY

    ingest_corpus(kb, EDITIONS_AND_LISTS, index=runtime.index,
                  snapshot=AliasSnapshot.from_ontology(kb, 0, Ontology()))
    with TestClient(create_app(runtime=runtime, keyring=keyring)) as client:
        body = client.post(f"/v1/kbs/{kb}/admin/suggest", headers=ADMIN).json()
        imported = client.post(f"/v1/kbs/{kb}/admin/import", headers=ADMIN,
                               content=body["ontology"].encode("utf-8"))
        assert imported.status_code == 200, imported.text
        held = {e.name: e for e in runtime.ontology.export_ontology(kb).entities}
        assert held["星途流量卡"].attributes["版本"] == "2024、2025"
        assert "星辰流量日包" in held
        assert not [n for n in held if n.startswith("星途流量卡") and n != "星途流量卡"]
        turn = client.post(f"/v1/kbs/{kb}/sessions/s1/turns", headers=QUERY,
                           json={"text": "星途流量卡月费多少"})
        assert turn.status_code == 200, turn.text
        assert turn.json()["action"] == "retrieve", turn.json()
