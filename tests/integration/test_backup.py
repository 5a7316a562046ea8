"""Backup and restore of an ontology with `referent ontology export` / `import`
(docs/deployment.md): the export of a restored kb is the export it was restored
from, byte for byte, and the restored kb links as the original did."""

from __future__ import annotations

import json
import uuid

import pytest
from typer.testing import CliRunner

from api.cli import app
from kg.aliases import SnapshotCache
from tests.conftest import DEMO

pytestmark = [pytest.mark.neo4j]

# Beyond the demo: a parent listed after its child, an ambiguous alias, attributes,
# a custom relation, quotes and Cypher-looking text kept as text.
EXTRA = [
    {"kind": "type", "name": "Dept", "attributes": ["负责人"], "parent": None},
    {"kind": "entity", "id": "a.child", "name": "子部门", "type": "Dept", "parent": "z.parent",
     "aliases": ["共享名", "x' OR 1=1 //"], "attributes": {"负责人": "张三", "人数": 12}},
    {"kind": "entity", "id": "z.parent", "name": "总部", "type": "Dept",
     "aliases": ["共享名", "MATCH (n) DETACH DELETE n"]},
    {"kind": "relation", "from": "a.child", "type": "REPORTS_TO", "to": "z.parent"},
]


@pytest.fixture
def kbs(neo4j_store, monkeypatch, tmp_path):
    monkeypatch.setenv("REFERENT_DATA_DIR", str(tmp_path / "data"))
    names = [f"t_bak_{uuid.uuid4().hex[:8]}" for _ in range(2)]
    yield names
    for name in names:
        neo4j_store.delete_kb(name)


def _cli(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


def _linking(store, kb: str):
    snapshot = SnapshotCache(store).get(kb)
    return dict(snapshot.by_norm), dict(snapshot.entities), dict(snapshot.confusable)


def test_export_then_import_restores_the_same_ontology(kbs, neo4j_store, tmp_path):
    original, restored = kbs
    source = tmp_path / "source.jsonl"
    source.write_text((DEMO / "ontology.jsonl").read_text(encoding="utf-8")
                      + "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in EXTRA),
                      encoding="utf-8")
    _cli("ontology", "import", "--kb", original, str(source))

    backup = tmp_path / "backup.jsonl"
    _cli("ontology", "export", "--kb", original, "--out", str(backup))
    lines = backup.read_text(encoding="utf-8").splitlines()
    assert sum('"kind": "entity"' in line for line in lines) == \
        sum('"kind": "entity"' in line for line in source.read_text(encoding="utf-8").splitlines())

    # Restore into another kb, and into the original after losing it.
    _cli("ontology", "import", "--kb", restored, str(backup))
    again = tmp_path / "again.jsonl"
    _cli("ontology", "export", "--kb", restored, "--out", str(again))
    assert again.read_bytes() == backup.read_bytes()
    assert _linking(neo4j_store, restored) == _linking(neo4j_store, original)

    neo4j_store.delete_kb(original)
    _cli("ontology", "import", "--kb", original, str(backup))
    after = tmp_path / "after.jsonl"
    _cli("ontology", "export", "--kb", original, "--out", str(after))
    assert after.read_bytes() == backup.read_bytes()
    # Re-importing a backup over the kb it came from changes nothing.
    unchanged = _cli("ontology", "import", "--kb", original, str(backup))
    assert "nothing changed" in unchanged.output
    # Text that looks like Cypher came back as an alias, not as a statement.
    _, entities, _ = _linking(neo4j_store, original)
    assert "MATCH (n) DETACH DELETE n" in entities["z.parent"].aliases
    assert len(entities) > len(EXTRA)
