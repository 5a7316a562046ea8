"""The standalone rendered from slots: a follow-up replaces the slot it fills, keeps the
others, and never writes a corrected-away name (dialogue/render.py)."""

import json

import pytest

from dialogue.render import Change, QuestionSlots, follow_up, read_question, render
from kg.aliases import AliasSnapshot
from kg.ontology import parse_ontology

ONTOLOGY = [
    {"kind": "type", "name": "Site", "attributes": [], "parent": None},
    {"kind": "type", "name": "Pool", "attributes": ["票价", "水温"], "parent": None},
    {"kind": "type", "name": "Rulebook", "attributes": ["手续费"], "parent": None},
    {"kind": "type", "name": "Branch", "attributes": ["opening hours"], "parent": None},
    {"kind": "entity", "id": "site.n", "name": "北岸基地", "type": "Site", "aliases": ["北岸"]},
    {"kind": "entity", "id": "site.s", "name": "南岸基地", "type": "Site", "aliases": ["南岸"]},
    {"kind": "entity", "id": "pool.n", "name": "北岸恒温池", "type": "Pool", "aliases": []},
    {"kind": "entity", "id": "pool.s", "name": "南岸恒温池", "type": "Pool", "aliases": []},
    {"kind": "entity", "id": "rules.23", "name": "会员守则（2023版）", "type": "Rulebook",
     "aliases": ["会员守则"]},
    {"kind": "entity", "id": "rules.24", "name": "会员守则（2024版）", "type": "Rulebook",
     "aliases": ["会员守则"]},
    {"kind": "entity", "id": "br.harbor", "name": "Harbor branch", "type": "Branch", "aliases": []},
    {"kind": "entity", "id": "br.hill", "name": "Hill branch", "type": "Branch", "aliases": []},
    {"kind": "entity", "id": "br.lake", "name": "湖畔分馆", "type": "Branch",
     "aliases": ["Lakeside branch"]},
]


@pytest.fixture(scope="module")
def snap() -> AliasSnapshot:
    lines = [json.dumps(line, ensure_ascii=False) for line in ONTOLOGY]
    return AliasSnapshot.from_ontology("t", 1, parse_ontology(lines))


def again(previous: str, subjects, change: Change, snap) -> str:
    return render(follow_up(read_question(previous, subjects, snap), change, snap), snap)


def test_a_question_read_into_slots_renders_back_as_it_was(snap):
    slots = read_question("北岸恒温池7月的票价是多少", ["pool.n"], snap)
    assert slots.pattern == "{s0}{t0}的{a0}是多少"
    assert (slots.times, slots.attribute) == (("7月",), ("票价",))
    assert render(slots, snap) == "北岸恒温池7月的票价是多少"


def test_an_ellipsis_puts_its_subject_in_the_place_of_the_one_of_its_type(snap):
    out = again("北岸恒温池周六几点开门", ["pool.n"], Change(subjects=("pool.s",)), snap)
    assert out == "南岸恒温池周六几点开门"


def test_a_new_time_or_attribute_replaces_the_previous_one_in_its_place(snap):
    assert again("北岸恒温池7月的票价是多少", ["pool.n"], Change(times=("8月",)), snap) \
        == "北岸恒温池8月的票价是多少"
    assert again("北岸恒温池7月的票价是多少", ["pool.n"], Change(attribute=("水温",)), snap) \
        == "北岸恒温池7月的水温是多少"


def test_a_time_the_question_had_none_of_is_written_with_the_subjects(snap):
    assert again("北岸恒温池的票价是多少", ["pool.n"], Change(times=("8月",)), snap) \
        == "北岸恒温池8月的票价是多少"


def test_an_attribute_the_question_had_none_of_takes_the_place_of_what_it_asked(snap):
    assert again("北岸恒温池夜场是多少", ["pool.n"], Change(attribute=("水温",)), snap) \
        == "北岸恒温池水温多少"


def test_a_correction_leaves_no_trace_of_the_entity_corrected_away(snap):
    out = again("北岸恒温池和北岸基地周六几点开门", ["pool.n", "site.n"],
                Change(subjects=("pool.s",), removed=("site.n",)), snap)
    assert out == "南岸恒温池周六几点开门"
    assert "北岸" not in out


def test_an_edition_change_replaces_the_version_written_after_a_shorter_name(snap):
    out = again("会员守则2023版里退卡手续费多少", ["rules.23"], Change(subjects=("rules.24",)), snap)
    assert out == "会员守则（2024版）里退卡手续费多少"
    assert "2023" not in out


def test_a_subject_of_a_new_type_is_written_beside_the_first(snap):
    out = again("北岸恒温池几点开门", ["pool.n"], Change(subjects=("site.s",)), snap)
    assert out == "北岸恒温池和南岸基地几点开门"


def test_what_is_compared_with_is_carried_and_not_written_twice(snap):
    first = again("北岸恒温池的票价是多少", ["pool.n"], Change(compared=("南岸恒温池",)), snap)
    assert first == "北岸恒温池的票价是多少（与南岸恒温池相比）"
    slots = follow_up(read_question(first, ["pool.n"], snap), Change(times=("8月",)), snap)
    assert slots.compared == ("南岸恒温池",)
    assert render(slots, snap) == "北岸恒温池8月的票价是多少（与南岸恒温池相比）"


def test_an_english_ellipsis_replaces_the_subject_where_the_question_wrote_it(snap):
    out = again("When does the Harbor branch open on Sundays?", ["br.harbor"],
                Change(subjects=("br.hill",)), snap)
    assert out == "When does the Hill branch open on Sundays?"


def test_an_english_question_with_no_place_for_its_subject_names_it_before_the_mark(snap):
    slots = QuestionSlots("en", "When does it open?", ("br.lake",))
    assert render(slots, snap) == "When does it open (湖畔分馆 (Lakeside branch))?"


def test_an_ellipsis_word_replaces_the_word_of_its_length_and_head(snap):
    assert again("北岸恒温池成人票多少钱", ["pool.n"], Change(words="儿童票"), snap) \
        == "北岸恒温池儿童票多少钱"


def follow_up_rewrite(text: str, previous: str, focus, snap, *, correction=False):
    """The rules rewrite of a follow-up, linked and swapped as the policy does."""
    from dialogue.classify import TurnKind
    from dialogue.policy.counterparts import swap_counterparts
    from dialogue.rewrite import RuleRewriter
    from understanding.linker import EntityLinker
    from understanding.mentions import detect_mentions

    detection = detect_mentions(text, snap)
    kind = TurnKind.CORRECTION if correction else TurnKind.CONTINUATION
    links = swap_counterparts(kind, EntityLinker().link(detection, snap, focus=list(focus)),
                              detection, focus, snap)
    excluded = [e for e in focus if e not in links.resolved] if correction else []
    return RuleRewriter().rewrite(detection, links, snap, entities=links.resolved,
                                  previous_standalone=previous, previous_entities=focus,
                                  correction=correction, continuation=True, excluded=excluded)


def test_an_edition_ellipsis_asks_the_previous_question_of_that_edition_only(snap):
    r = follow_up_rewrite("那2024版呢", "会员守则2023版里退卡手续费多少", ["rules.23"], snap)
    assert r.standalone == "会员守则（2024版）里退卡手续费多少"
    assert r.entities == ("rules.24",)


def test_a_correction_writes_the_right_name_once_and_the_wrong_one_nowhere(snap):
    r = follow_up_rewrite("不是北岸恒温池，是南岸恒温池", "北岸恒温池7月的票价是多少", ["pool.n"], snap,
                          correction=True)
    assert r.standalone == "南岸恒温池7月的票价是多少"
    assert r.entities == ("pool.s",)


def test_an_ellipsis_word_of_its_own_replaces_what_the_question_asked_about(snap):
    assert again("北岸恒温池游泳课怎么报名", ["pool.n"], Change(words="夜场"), snap) \
        == "北岸恒温池夜场怎么报名"


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_WORDS = st.text(alphabet="北岸南恒温池基地会员守则版年月7820{}()（）和 ?？是多少怎么abc", max_size=30)


@settings(max_examples=80, deadline=None)
@given(previous=_WORDS, words=_WORDS,
       subjects=st.lists(st.sampled_from(["pool.n", "site.n", "rules.23"]), max_size=2, unique=True),
       new=st.lists(st.sampled_from(["pool.s", "site.s", "rules.24"]), max_size=2, unique=True))
def test_any_question_and_follow_up_render_without_raising_or_the_name_removed(
        snap, previous, words, subjects, new):
    slots = follow_up(read_question(previous, subjects, snap),
                      Change(subjects=tuple(new), removed=tuple(subjects), words=words), snap)
    out = render(slots, snap)
    assert isinstance(out, str)
    for removed in subjects:
        assert snap.name(removed) not in out or snap.name(removed) in words


def test_a_turn_naming_nothing_does_not_repeat_the_versions_its_focus_names(snap):
    from dialogue.rewrite import RuleRewriter
    from understanding.linker import EntityLinker
    from understanding.mentions import detect_mentions

    detection = detect_mentions("条款上有什么不同", snap)
    links = EntityLinker().link(detection, snap, focus=["rules.23", "rules.24"])
    r = RuleRewriter().rewrite(detection, links, snap, entities=("rules.23", "rules.24"),
                               previous_standalone="会员守则2023版和2024版退卡手续费差多少",
                               previous_entities=["rules.23", "rules.24"],
                               times=["2023版", "2024版"])
    assert r.standalone == "会员守则（2023版）和会员守则（2024版）条款上有什么不同"
