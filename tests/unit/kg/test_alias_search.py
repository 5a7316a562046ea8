from common.language.normalize import Normalization
from kg.aliases import AliasSnapshot
from understanding.mentions import MentionKind, detect_mentions
from kg.ontology import parse_ontology
from tests.unit.kg.conftest import ONTOLOGY


def test_exact_search_uses_the_kbs_normalization(snapshot):
    [hit] = snapshot.search("Ａ產品 個人版")
    assert hit.entity_id == "prod.a.personal" and hit.score == 100.0
    assert {h.entity_id for h in snapshot.search("A产品")} == {"prod.a.enterprise", "prod.a.personal"}
    assert snapshot.search("不存在") == [] and snapshot.search("！！") == []


def test_prefix_search_returns_shortest_keys_first(snapshot):
    hits = snapshot.search("a产品", "prefix")
    assert {h.entity_id for h in hits} == {"prod.a", "prod.a.personal", "prod.a.enterprise"}
    assert hits[0].alias == "a产品"
    assert snapshot.search("a产品", "prefix", limit=1)[0].score == 100.0


def test_fuzzy_search_finds_near_misses_and_ranks_them(snapshot):
    hits = snapshot.search("华东地区", "fuzzy")
    assert hits[0].entity_id == "region.east" and 60 <= hits[0].score < 100
    assert snapshot.search("完全无关", "fuzzy") == []


def test_a_case_sensitive_kb_links_only_the_exact_case():
    sensitive = AliasSnapshot.from_ontology("t", 1, parse_ontology(ONTOLOGY.splitlines()),
                                            normalization=Normalization(case=False))
    assert detect_mentions("what does AI cost", sensitive).of(MentionKind.ALIAS)
    assert not detect_mentions("what does ai cost", sensitive).of(MentionKind.ALIAS)
