"""The standalone query as a careful annotator writes it, end to end on real Neo4j,
Milvus Lite and SQLite: built from the resolved structure, in both languages; a
reference with two candidates asks which; a homophone slip still links."""

import uuid

import pytest

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]


def sid() -> str:
    return f"s-{uuid.uuid4().hex[:10]}"


def play(runtime, kb, *turns):
    s = sid()
    return [runtime.engine.handle(kb, s, text) for text in turns]


# -- 1. a standalone built from the structure ------------------------------------------------

def test_an_ellipsis_asks_the_previous_question_not_the_words_pasted_on(runtime, demo_kb):
    _, attribute, words = play(runtime, demo_kb, "华东区7月的销售额是多少", "那增长率呢", "线上呢")
    assert attribute.standalone == "华东区7月的增长率是多少"
    # Words that are neither a name, an attribute nor a time go into the question they continue.
    assert words.standalone == "华东区7月的线上增长率是多少"
    assert "呢" not in words.standalone and words.entities == ["region.east"]


def test_a_clarification_answer_keeps_the_pending_question(runtime, demo_kb):
    ask, answer = play(runtime, demo_kb, "A产品怎么申请", "企业版那个")
    assert ask.action == "clarify"
    assert answer.entities == ["prod.a.enterprise"]
    assert answer.standalone == "A产品（企业版）怎么申请"


def test_both_options_are_named_in_the_standalone(runtime, demo_kb):
    _, both = play(runtime, demo_kb, "A产品怎么申请", "都要")
    assert set(both.entities) == {"prod.a.enterprise", "prod.a.personal"}
    assert "企业版" in both.standalone and "个人版" in both.standalone
    assert len(both.queries) == 2


def test_a_comparison_keeps_both_sides(runtime, demo_kb):
    _, versus = play(runtime, demo_kb, "华东区7月的销售额是多少", "跟华南区比呢")
    assert set(versus.entities) == {"region.east", "region.south"}
    assert "华东区" in versus.standalone and "华南区" in versus.standalone
    assert "7月" in versus.standalone and "销售额" in versus.standalone
    _, earlier = play(runtime, demo_kb, "华东区7月的销售额是多少", "比6月高了多少")
    assert "7月" in earlier.standalone and "6月" in earlier.standalone
    assert earlier.entities == ["region.east"]


def test_a_time_said_relative_to_the_one_asked_about_is_written_out(runtime, demo_kb):
    # 上个月 after 7月 is June: the standalone says so, and June's report is found.
    _, before = play(runtime, demo_kb, "华东区7月的销售额是多少", "跟上个月比呢")
    assert "7月" in before.standalone and "6月" in before.standalone
    assert "上个月" not in before.standalone
    assert "sales-2025-06-east" in [e.doc_id for e in before.evidence]
    _, english = play(runtime, demo_kb, "What were the sales of East China region in July?",
                      "Compared with last month?")
    assert "June" in english.standalone and "last month" not in english.standalone


def test_a_correction_replaces_the_entity_and_keeps_the_question(runtime, demo_kb):
    first, fixed = play(runtime, demo_kb, "华东区7月的销售额是多少", "哦说错了，我想问的是华北区")
    assert fixed.entities == ["region.north"]
    assert "华北区" in fixed.standalone and "华东" not in fixed.standalone
    assert "7月" in fixed.standalone and "销售额" in fixed.standalone
    assert "说错" not in fixed.standalone


def test_a_short_follow_up_on_a_sibling_keeps_the_question(runtime, demo_kb):
    _, sibling = play(runtime, demo_kb, "A产品个人版怎么申请", "企业版能用吗")
    assert sibling.entities == ["prod.a.enterprise"]
    # 能用吗 is a question of its own (用), so it is not the previous one asked again.
    assert "企业版" in sibling.standalone
    _, again = play(runtime, demo_kb, "年假的申请流程是什么", "病假也是吗")
    assert again.entities == ["hr.leave.sick"]
    assert "申请流程" in again.standalone and "年假" not in again.standalone


def test_a_switch_drops_the_pending_question_for_good(runtime, demo_kb):
    ask, switch, later = play(runtime, demo_kb, "A产品怎么申请", "算了，我直接问：年假有几天？",
                              "第一个")
    assert ask.action == "clarify"
    assert switch.action == "retrieve" and switch.entities == ["hr.leave.annual"]
    assert "A产品" not in switch.standalone and "算了" not in switch.standalone
    # A stale question is never resolved turns later.
    assert "prod.a.personal" not in later.entities and "prod.a.enterprise" not in later.entities
    assert "A产品" not in later.standalone


def test_setting_the_question_aside_is_a_switch_whose_cue_leaves_the_query(runtime, demo_kb):
    # 先不管这个 / never mind: the pending question is dropped, and the cue (with its 不)
    # is not part of what is searched.
    for aside, question in [("先不管这个，", "年假有几天？"),
                            ("Never mind. ", "How many days of annual leave do I get?")]:
        ask, switch = play(runtime, demo_kb, "A产品怎么申请", aside + question)
        assert ask.action == "clarify"
        assert switch.action == "retrieve" and switch.entities == ["hr.leave.annual"]
        assert switch.trace["classification"] == "switch"
        assert "不管" not in switch.standalone and "never mind" not in switch.standalone.lower()
        assert "A产品" not in switch.standalone


def test_a_short_continuation_keeps_the_attribute_it_asked_about(runtime, demo_kb):
    _, follow = play(runtime, demo_kb, "年假的申请流程是什么", "要提前几天")
    assert follow.entities == ["hr.leave.annual"]
    assert "申请流程" in follow.standalone and "年假" in follow.standalone
    # A follow-up that names a subject of its own asks about that, not the old attribute.
    _, own = play(runtime, demo_kb, "年假的申请流程是什么", "审批人是哪位")
    assert own.entities == ["hr.leave.annual"]
    assert "年假" in own.standalone and "申请流程" not in own.standalone


# -- 2. English and mixed turns -----------------------------------------------------------------

def test_an_english_follow_up_names_the_focus_inside_the_english_question(runtime, demo_kb):
    _, follow = play(runtime, demo_kb, "How many days of annual leave do I get?",
                     "How do I apply for the leave?")
    assert follow.entities == ["hr.leave.annual"]
    assert follow.standalone.startswith("How do I apply for 年假")
    assert "leave" in follow.standalone


def test_an_english_ellipsis_replaces_the_old_entity(runtime, demo_kb):
    first, other = play(runtime, demo_kb, "How many days of annual leave do I get?",
                        "What about sick leave?")
    assert other.entities == ["hr.leave.sick"]
    assert "病假" in other.standalone and "年假" not in other.standalone
    assert "annual" not in other.standalone and other.standalone.startswith("How many days")


def test_an_english_correction_replaces_the_old_entity(runtime, demo_kb):
    _, fixed = play(runtime, demo_kb, "Why did South China region grow so much in July?",
                    "No, I meant North China region")
    assert fixed.entities == ["region.north"]
    assert "华北区" in fixed.standalone and "华南" not in fixed.standalone
    assert "South" not in fixed.standalone and "July" in fixed.standalone


def test_clarification_is_asked_and_read_in_english(runtime, demo_kb):
    ask, answer = play(runtime, demo_kb, "How do I apply for the A产品?", "the enterprise one")
    assert ask.action == "clarify"
    assert ask.clarification.question.startswith("Which")
    assert "Enterprise Edition" in ask.clarification.question
    assert answer.entities == ["prod.a.enterprise"]
    assert answer.standalone.startswith("How do I apply for")
    ask2, second = play(runtime, demo_kb, "How do I apply for the A产品?", "the second one")
    offered = [o.id for o in ask2.clarification.options]
    assert second.entities == [offered[1]]


# -- 3. two compatible antecedents: ask which ----------------------------------------------------

def test_a_pronoun_after_two_of_a_kind_asks_which_and_resumes(runtime, demo_kb):
    listed, ask, answer = play(runtime, demo_kb, "年假和病假分别有几天", "它的申请流程是什么",
                               "病假那个")
    assert set(listed.entities) == {"hr.leave.annual", "hr.leave.sick"}
    assert ask.action == "clarify"
    assert {o.id for o in ask.clarification.options} == {"hr.leave.annual", "hr.leave.sick"}
    assert answer.entities == ["hr.leave.sick"]
    assert answer.standalone == "病假的申请流程是什么"


def test_an_english_pronoun_after_two_of_a_kind_asks_in_english(runtime, demo_kb):
    _, ask = play(runtime, demo_kb, "How many days are annual leave and sick leave?",
                  "How do I apply for it?")
    assert ask.action == "clarify"
    assert ask.clarification.question.startswith("Which")
    assert {o.id for o in ask.clarification.options} == {"hr.leave.annual", "hr.leave.sick"}


def test_a_pronoun_after_things_of_different_kinds_does_not_ask(runtime, demo_kb):
    _, follow = play(runtime, demo_kb, "华东区的负责人是谁", "他的联系方式是什么")
    assert follow.action != "clarify"


# -- 4. typos ---------------------------------------------------------------------------------------

def test_a_homophone_slip_links_but_never_across_a_confusable_pair(runtime, demo_kb):
    slip = runtime.engine.handle(demo_kb, sid(), "年修假有几天")
    assert slip.entities == ["hr.leave.annual"]
    assert "年假" in slip.standalone
    # 西难区 is 西南区 misspelt; 华冬区 could be 华东区 or its confusable twin 华南区.
    assert runtime.engine.handle(demo_kb, sid(), "西难区负责人是谁").entities == ["region.southwest"]
    assert runtime.engine.handle(demo_kb, sid(), "华冬区负责人是谁").entities == []
