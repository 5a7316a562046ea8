from kg.aliases import AliasSnapshot
from common.language.tokens import tokens
from understanding.fit import ContextFit, decide
from understanding.linker import EntityLinker
from understanding.mentions import detect_mentions
from kg.ontology import parse_ontology

ONTOLOGY = """
{"kind": "entity", "id": "hill.composer", "name": "Richard Hill", "type": "people.person", "description": "British composer who studied trombone and wrote for orchestra."}
{"kind": "entity", "id": "hill.builder", "name": "Richard Hill", "type": "people.person", "description": "Coach builder and member of parliament."}
{"kind": "entity", "id": "kora.lang", "name": "Kora", "type": "language.human_language", "description": "An extinct Andamanese language."}
{"kind": "entity", "id": "kora.harp", "name": "Kora", "type": "commerce.consumer_product", "description": "A 21-string lute harp instrument used in West Africa."}
{"kind": "entity", "id": "zone.band", "name": "Zone", "type": "music.group", "description": "A pop rock band."}
{"kind": "entity", "id": "zone.console", "name": "Zone", "type": "cvg.platform", "description": "A game console."}
{"kind": "entity", "id": "elk.county", "name": "Elk", "type": "location.us_county", "description": "A county in Pennsylvania."}
"""


def snapshot():
    return AliasSnapshot.from_ontology("t", 1, parse_ontology(ONTOLOGY.splitlines()))


def test_tokens_stem_english_and_pair_chinese_characters():
    assert tokens("Which instruments were played?") == ["instrument", "play"]
    assert tokens("华东区销售额") == ["华东", "东区", "区销", "销售", "售额"]


def test_the_candidate_whose_profile_shares_rare_words_wins_by_a_margin():
    snap = snapshot()
    scores = ContextFit(snap).scores("what instrument family is Kora", ["kora.lang", "kora.harp"],
                                     ignore=["Kora"])
    assert scores["kora.harp"] > scores["kora.lang"] == 0
    assert decide(scores, margin=1.0) == "kora.harp"
    assert decide({"a": 1.0, "b": 0.5}, margin=1.0) is None
    assert decide({"a": 0.0, "b": 0.0}, margin=0.0) is None


def test_linker_resolves_by_fit_and_asks_when_nothing_tells_them_apart():
    snap, linker = snapshot(), EntityLinker(fit_margin=1.0)
    kora = linker.link(detect_mentions("what instrument family is Kora", snap), snap)
    assert kora.resolved == ("kora.harp",)
    hill = linker.link(detect_mentions("Where was Richard Hill born?", snap), snap)
    assert hill.resolved == () and len(hill.ambiguous) == 1


def test_a_lower_case_common_word_does_not_trigger_a_question_beside_a_real_name():
    snap = snapshot()
    result = EntityLinker().link(detect_mentions("what is time zone in Elk?", snap), snap)
    assert result.resolved == ("elk.county",)
    assert result.ambiguous == ()


def test_a_near_match_of_two_names_in_lower_case_is_as_weak_as_an_exact_one():
    # "globemastr" is one edit from "globemaster": still the two names in lower case.
    snap = AliasSnapshot.from_ontology("t", 1, parse_ontology(ONTOLOGY.splitlines() + [
        '{"kind": "entity", "id": "gm.plane", "name": "Globemaster", "type": "aircraft"}',
        '{"kind": "entity", "id": "gm.band", "name": "Globemaster", "type": "music.group"}']))
    detection = detect_mentions("is the globemastr based in Elk?", snap)
    assert any(m.similarity < 100 for m in detection.mentions)
    result = EntityLinker().link(detection, snap)
    assert result.resolved == ("elk.county",) and result.ambiguous == ()


def test_a_lower_case_short_form_the_table_gives_is_no_accident_of_case():
    snap = AliasSnapshot.from_ontology("t", 1, parse_ontology(ONTOLOGY.splitlines() + [
        '{"kind": "entity", "id": "tt.2024", "name": "Class Timetable (2024 edition)", '
        '"type": "Timetable", "aliases": ["timetable"]}',
        '{"kind": "entity", "id": "tt.2025", "name": "Class Timetable (2025 edition)", '
        '"type": "Timetable", "aliases": ["timetable"]}']))
    result = EntityLinker().link(detect_mentions("is boxing in the Elk timetable?", snap), snap)
    assert result.resolved == ("elk.county",)
    assert [link.mention.text for link in result.ambiguous] == ["timetable"]


def test_a_pronoun_with_an_alternate_in_play_is_ambiguous_unless_the_fit_decides():
    snap, linker = snapshot(), EntityLinker(fit_margin=1.0)
    d = detect_mentions("Who influenced it?", snap)
    result = linker.link(d, snap, focus=["zone.band"], alternates=["zone.console"])
    assert result.resolved == () and {c.entity_id for c in result.ambiguous[0].candidates} == {
        "zone.band", "zone.console"}
    d = detect_mentions("which instrument is it", snap)
    assert linker.link(d, snap, focus=["kora.lang"], alternates=["kora.harp"]).resolved == ("kora.harp",)


def test_patched_fuzzy_index_equals_a_rebuilt_one():
    from kg.fuzzy import FuzzyAliasIndex

    keys = ["综合意外险", "交通意外险", "百万医疗险", "globemaster"]
    grown = FuzzyAliasIndex(keys).updated(["年度体检套餐"], ["交通意外险"])
    rebuilt = FuzzyAliasIndex(["综合意外险", "百万医疗险", "globemaster", "年度体检套餐"])
    for fragment in ["综合意外保险", "交通意外保险", "年度体检套", "globemastr", "百万医疗保险"]:
        assert grown.lookup(fragment) == rebuilt.lookup(fragment)
    assert grown.fragment_lengths == rebuilt.fragment_lengths
    assert grown.lookup("交通意外保险") == []


def test_what_attributes_say_beyond_the_schema_describes_the_entity():
    """A classification the kb's source gave each entity (any key the type does not
    declare) counts like its description; declared attributes' values do not."""
    lines = [
        '{"kind": "type", "name": "Thing", "attributes": ["price"]}',
        '{"kind": "entity", "id": "reed.player", "name": "Ada Reed", "type": "Thing",'
        ' "attributes": {"categories": "music.oboist music.performer", "price": "orchestra"}}',
        '{"kind": "entity", "id": "reed.maker", "name": "Ada Reed", "type": "Thing",'
        ' "attributes": {"categories": "business.basket_maker", "price": "oboist"}}',
    ]
    snap = AliasSnapshot.from_ontology("t", 1, parse_ontology(lines))
    scores = ContextFit(snap).scores("which oboist is Ada Reed", ["reed.player", "reed.maker"],
                                     ignore=["Ada Reed"])
    assert scores["reed.player"] > scores["reed.maker"] == 0
