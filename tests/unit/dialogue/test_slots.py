from dialogue.classify import TurnKind, classify
from dialogue.rewrite import RuleRewriter
from dialogue.slots import SUMMARY_CHARS, SUMMARY_LINES, comparison_targets, summarize, update_slots
from dialogue.state import SessionState, Slot, Slots, TurnRecord
from understanding.linker import EntityLinker
from understanding.mentions import detect_mentions


def turn(slots, text, snapshot, turn_no, *, kind=None, negated=()):
    focus = slots.focus.values if slots.focus else []
    detection = detect_mentions(text, snapshot)
    links = EntityLinker().link(detection, snapshot, focus=list(focus))
    kind = kind or classify(detection, links, list(focus))
    entities = links.resolved or tuple(focus)
    return update_slots(slots, turn=turn_no, kind=kind, detection=detection, links=links,
                        entities=entities, negated=list(negated))


def test_each_slot_records_the_turn_that_said_it(snapshot):
    slots = turn(Slots(), "华东区7月的销售额是多少", snapshot, 1)
    assert slots.focus == Slot(values=["region.east"], turn=1, how="said")
    assert slots.time == Slot(values=["7月"], turn=1, how="said")
    assert slots.attribute == Slot(values=["销售额"], turn=1, how="said")

    slots = turn(slots, "那增长率呢", snapshot, 2)
    assert slots.attribute == Slot(values=["增长率"], turn=2, how="said")
    # Not restated: carried, with the turn that said it.
    assert slots.time == Slot(values=["7月"], turn=1, how="carried")
    assert slots.focus == Slot(values=["region.east"], turn=1, how="carried")


def test_a_later_correction_overrides_the_earlier_value(snapshot):
    slots = turn(Slots(), "华东区7月的销售额是多少", snapshot, 1)
    slots = turn(slots, "不对，我问的是华南区", snapshot, 2, negated=["region.east"])
    assert slots.focus == Slot(values=["region.south"], turn=2, how="corrected")
    assert slots.negated == Slot(values=["region.east"], turn=2, how="corrected")
    assert slots.time is not None and slots.time.values == ["7月"] and slots.time.turn == 1

    slots = turn(slots, "不对，我问的是华南区6月", snapshot, 3, kind=TurnKind.CORRECTION,
                 negated=["region.east"])
    assert slots.time == Slot(values=["6月"], turn=3, how="corrected")


def test_a_switch_clears_every_slot_and_a_new_topic_what_belonged_to_the_old_one(snapshot):
    slots = turn(Slots(), "华东区7月的销售额是多少", snapshot, 1)
    switched = turn(slots, "换个话题，报销流程是什么", snapshot, 2)
    assert switched.time is None and switched.attribute is None
    assert switched.focus is None or switched.focus.turn == 2

    new_topic = turn(slots, "A产品（企业版）怎么收费", snapshot, 2)
    assert new_topic.focus == Slot(values=["prod.a.enterprise"], turn=2, how="said")
    assert new_topic.time is None and new_topic.attribute is None


def test_the_comparison_target_is_found_and_carried_until_the_focus_moves_onto_it(snapshot):
    text = "华东区和华南区比7月销售额怎么样"
    detection = detect_mentions(text, snapshot)
    links = EntityLinker().link(detection, snapshot)
    assert comparison_targets(detection, links) == ["region.south"]

    slots = turn(Slots(), text, snapshot, 1)
    assert slots.comparison == Slot(values=["region.south"], turn=1, how="said")
    slots = turn(slots, "为什么华东区更高", snapshot, 2)
    assert slots.comparison is not None and slots.comparison.how == "carried"
    slots = turn(slots, "华南区的负责人是谁", snapshot, 3)
    assert slots.comparison is None


def test_the_rewrite_keeps_the_comparison_target_on_a_continuation(snapshot):
    detection = detect_mentions("为什么华东区更高", snapshot)
    links = EntityLinker().link(detection, snapshot, focus=["region.east", "region.south"])
    r = RuleRewriter().rewrite(detection, links, snapshot, entities=links.resolved,
                               previous_standalone="华东区和华南区比7月销售额怎么样",
                               previous_entities=["region.east", "region.south"],
                               continuation=True, times=["7月"], compared=["region.south"])
    assert r.standalone == "为什么华东区7月更高（与华南区相比）"
    assert set(r.entities) == {"region.east", "region.south"}


def test_the_time_slot_is_carried_even_when_the_previous_query_lost_it(snapshot):
    # The previous standalone fell back to the user's own words (no 7月 in it).
    detection = detect_mentions("为什么涨这么多", snapshot)
    links = EntityLinker().link(detection, snapshot, focus=["region.south"])
    r = RuleRewriter().rewrite(detection, links, snapshot, entities=("region.south",),
                               previous_standalone="负责人是谁", previous_entities=["region.south"],
                               continuation=True, times=["7月"])
    assert r.standalone == "华南区7月为什么涨这么多"


def test_summary_keeps_entities_numbers_and_dates_and_stays_bounded(snapshot):
    long = ("华东区2025年7月的销售额是1234.5万元，比去年同期增长了18%，主要原因是渠道扩张和新品上市，"
            "另外请说明负责人是谁以及覆盖省份有哪些，还有和华南区相比差多少，再列出所有的细节和背景情况")
    lines = summarize([TurnRecord(index=1, user="x", standalone=long, action="retrieve",
                                  entities=["region.east", "region.south"]),
                       TurnRecord(index=2, user="?", standalone="A产品怎么申请", action="clarify")],
                      snapshot)
    assert len(lines) == 1  # a clarify turn is resumed by the next one, not summarized
    line = lines[0]
    assert len(line.text) <= SUMMARY_CHARS
    for kept in ("华东区", "2025年7月", "1234.5", "18%", "华南区"):
        assert kept in line.text
    assert line.entities == ["region.east", "region.south"]

    state = SessionState(kb="demo", session_id="s")
    from dialogue.slots import fold_into_summary
    for i in range(1, 30):
        evicted = state.remember(TurnRecord(index=i, user=f"q{i}", standalone=f"华东区{i}月的销售额",
                                            action="retrieve", entities=["region.east"]),
                                 keep_turns=4)
        fold_into_summary(state, evicted, snapshot)
    assert [r.index for r in state.recent] == [26, 27, 28, 29]
    assert [line.turn for line in state.summary] == list(range(26 - SUMMARY_LINES, 26))
