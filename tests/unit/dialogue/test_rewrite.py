from dialogue.rewrite import RuleRewriter
from understanding.linker import EntityLinker
from understanding.mentions import detect_mentions


def rewrite(text, snapshot, *, focus=(), previous=None, previous_entities=()):
    detection = detect_mentions(text, snapshot)
    links = EntityLinker().link(detection, snapshot, focus=list(focus))
    entities = links.resolved or tuple(focus)
    return RuleRewriter().rewrite(detection, links, snapshot, entities=entities,
                                  previous_standalone=previous, previous_entities=previous_entities)


def test_ellipsis_swaps_the_region_and_keeps_the_month(snapshot):
    r = rewrite("那华南区呢", snapshot, focus=["region.east"], previous="华东区7月的销售额是多少",
                previous_entities=["region.east"])
    assert r.standalone == "华南区7月的销售额是多少"


def test_ellipsis_swaps_the_attribute(snapshot):
    r = rewrite("那增长率呢", snapshot, focus=["region.south"], previous="华南区7月的销售额是多少",
                previous_entities=["region.south"])
    assert r.standalone == "华南区7月的增长率是多少"


def test_follow_up_without_entity_inherits_focus_and_time(snapshot):
    r = rewrite("为什么涨这么多", snapshot, focus=["region.south"], previous="华南区7月的销售额是多少",
                previous_entities=["region.south"])
    assert r.standalone == "华南区7月为什么涨这么多"


def test_pronoun_becomes_the_canonical_name_and_negation_survives(snapshot):
    r = rewrite("它不能申请了吗", snapshot, focus=["prod.a.personal"])
    assert r.standalone == "A产品（个人版）不能申请了吗"


def test_alias_plus_distinguishing_word_becomes_one_canonical_name(snapshot):
    r = rewrite("A产品企业版2024版怎么收费", snapshot)
    assert r.standalone == "A产品（企业版）2024版怎么收费"
    r = rewrite("A产品 企业版怎么收费", snapshot)
    assert r.standalone == "A产品（企业版）怎么收费"


def test_a_long_question_ending_in_ne_is_not_an_ellipsis(snapshot):
    r = rewrite("华南区的增长率为什么这么高呢", snapshot, focus=["region.east"],
                previous="华东区7月的销售额是多少", previous_entities=["region.east"])
    assert r.standalone == "华南区的增长率为什么这么高呢"


def test_edition_only_ellipsis_swaps_the_entity_in_the_previous_query(snapshot):
    r = rewrite("个人版呢", snapshot, focus=["prod.a.enterprise"], previous="A产品（企业版）怎么申请",
                previous_entities=["prod.a.enterprise"])
    assert r.standalone == "A产品（个人版）怎么申请"
    assert r.entities == ("prod.a.personal",)


def test_pronoun_with_classifier_noun_is_replaced_whole(snapshot):
    r = rewrite("这个区6月的增长率是多少", snapshot, focus=["region.south"])
    assert r.standalone == "华南区6月的增长率是多少"


def test_correction_cues_in_both_languages(snapshot):
    from dialogue.classify import TurnKind, classify

    def kind(text):
        d = detect_mentions(text, snapshot)
        links = EntityLinker().link(d, snapshot, focus=["region.east"])
        return classify(d, links, ["region.east"])

    assert kind("不对，我问的是华南区") is TurnKind.CORRECTION
    assert kind("不是华东，是华南区") is TurnKind.CORRECTION
    assert kind("I meant accident insurance") is TurnKind.CORRECTION
    assert kind("华南区的销售额是多少") is TurnKind.NEW_TOPIC
    assert kind("不对") is TurnKind.CONTINUATION  # names nothing to correct to


def test_correction_swaps_into_the_previous_query(snapshot):
    d = detect_mentions("不对，我问的是华南区", snapshot)
    links = EntityLinker().link(d, snapshot, focus=["region.east"])
    r = RuleRewriter().rewrite(d, links, snapshot, entities=links.resolved,
                               previous_standalone="华东区6月的销售额",
                               previous_entities=["region.east"], correction=True)
    assert r.standalone == "华南区6月的销售额" and r.entities == ("region.south",)


def test_a_continuation_keeps_the_previous_time_and_context_entities(snapshot):
    def carry(text, previous, previous_entities, focus):
        d = detect_mentions(text, snapshot)
        links = EntityLinker().link(d, snapshot, focus=focus)
        return RuleRewriter().rewrite(d, links, snapshot, entities=links.resolved,
                                      previous_standalone=previous,
                                      previous_entities=previous_entities, continuation=True)

    r = carry("华东区的增长率是多少", "华东区7月的销售额是多少", ["region.east"], ["region.east"])
    assert r.standalone == "华东区7月的增长率是多少"
    r = carry("A产品个人版的价格", "华东区A产品企业版的销售额", ["region.east", "prod.a.enterprise"],
              ["region.east", "prod.a.enterprise"])
    assert r.standalone == "华东区A产品（个人版）的价格"
    assert r.entities == ("prod.a.personal", "region.east")
    # A turn that names its own time replaces the old one.
    r = carry("华东区6月的增长率", "华东区7月的销售额是多少", ["region.east"], ["region.east"])
    assert r.standalone == "华东区6月的增长率"


def test_conversation_cues_are_not_searched_for():
    from dialogue.classify import revisit_cue, strip_conversation_cues

    assert strip_conversation_cues("换个话题，退货政策是什么") == "退货政策是什么"
    assert strip_conversation_cues("回到刚才A产品（个人版），怎么申请") == "A产品（个人版），怎么申请"
    assert strip_conversation_cues("By the way, what is the price") == "What is the price"
    assert strip_conversation_cues("年假有几天") == "年假有几天"
    assert revisit_cue("回到刚才那个产品") == "back"
    assert revisit_cue("再给我看看刚才那个") == "back"
    assert revisit_cue("show me that again") == "again"
    assert revisit_cue("年假有几天") is None
    # Going back by saying the topic again (说回, 聊回): a revisit, and the cue is no topic.
    assert revisit_cue("再说回年假，能顺延吗") == "back"
    assert strip_conversation_cues("再说回年假，能顺延吗") == "年假，能顺延吗"
    assert strip_conversation_cues("我们聊回刚才的报销流程") == "报销流程"
    # 说回来 inside a question is no cue there.
    assert revisit_cue("这事说回来怎么办") is None


def test_several_intents_become_one_query_per_entity(snapshot):
    r = rewrite("华东和华南分别怎么申请", snapshot)
    assert r.queries == ("华东区怎么申请", "华南区怎么申请")
    assert r.entities == ("region.east", "region.south")
    assert r.standalone == "华东区和华南区分别怎么申请"
    # Without a "separately" cue the question stays one query.
    assert rewrite("华东和华南的销售额对比", snapshot).queries == ("华东区和华南区的销售额对比",)


def test_carried_times_are_never_repeated(snapshot):
    r = rewrite("导演是谁", snapshot, focus=["region.south"],
                previous="华南区2004年2004年06月的销售额", previous_entities=["region.south"])
    assert r.standalone == "华南区2004年06月导演是谁"


def test_english_turns_keep_the_english_words_beside_a_chinese_name(snapshot):
    detection = detect_mentions("What does accident insurance not cover?", snapshot)
    links = EntityLinker().link(detection, snapshot)
    r = RuleRewriter().rewrite(detection, links, snapshot, entities=links.resolved,
                               previous_standalone=None, previous_entities=())
    assert r.standalone == "What does 意外险 (accident insurance) not cover?"
    detection = detect_mentions("Is it expensive?", snapshot)
    links = EntityLinker().link(detection, snapshot, focus=["ins.accident"])
    r = RuleRewriter().rewrite(detection, links, snapshot, entities=links.resolved,
                               previous_standalone=None, previous_entities=())
    assert r.standalone == "Is 意外险 (accident insurance) expensive?"


def test_an_english_turn_naming_nothing_gets_the_focus_only_where_the_focus_stands(snapshot):
    def follow_up(text):
        detection = detect_mentions(text, snapshot)
        links = EntityLinker().link(detection, snapshot, focus=["ins.accident"])
        return RuleRewriter().rewrite(detection, links, snapshot, entities=("ins.accident",),
                                      previous_standalone="What does 意外险 cover?",
                                      previous_entities=("ins.accident",)).standalone

    # "the insurance" is the focus (a word of its English name): the name goes there.
    assert follow_up("How long does the insurance last?") == (
        "How long does 意外险 (the insurance) last?")
    # "the office", "the genre" are what is asked about: the words stay, the name is added.
    assert follow_up("Where is the office?") == "Where is the office (意外险 (accident insurance))?"
    assert follow_up("What is the genre?") == "What is the genre (意外险 (accident insurance))?"


def _follow_up(text, snapshot, previous):
    detection = detect_mentions(text, snapshot)
    links = EntityLinker().link(detection, snapshot, focus=["region.east"])
    return RuleRewriter().rewrite(detection, links, snapshot, entities=("region.east",),
                                  previous_standalone=previous, previous_entities=("region.east",),
                                  continuation=True, attributes=("负责人",))


def test_a_short_follow_up_asks_about_the_attribute_the_previous_question_asked(snapshot):
    r = _follow_up("怎么联系", snapshot, "华东区的负责人是谁")
    assert "负责人" in r.standalone and r.standalone.startswith("华东区")


def test_an_attribute_asked_turns_ago_is_not_carried_into_a_short_follow_up(snapshot):
    # The slot still holds 负责人, but the question just before asked about sales.
    r = _follow_up("怎么联系", snapshot, "华东区7月的销售额是多少")
    assert "负责人" not in r.standalone
    assert r.standalone.startswith("华东区")


def test_asking_for_more_puts_no_particle_into_the_previous_question(snapshot):
    # 还有呢 has no words of its own: its 呢 is no counterpart of anything in the question.
    r = rewrite("还有呢", snapshot, focus=["region.east"], previous="华东区要准备哪些材料",
                previous_entities=["region.east"])
    assert "呢哪些" not in r.standalone
    assert r.standalone.startswith("华东区")


def test_a_turn_naming_nothing_is_its_own_words_with_the_focus_rendered_in(snapshot):
    from dialogue.render import render

    r = rewrite("那么为什么涨这么多", snapshot, focus=["region.south"], previous="华南区7月的销售额是多少",
                previous_entities=["region.south"])
    # The turn's own words are the pattern (the continuation cue left out), its subject
    # the focus and its time the dialogue's, written by the template: no name spliced in.
    assert r.slots is not None and r.slots.pattern == "为什么涨这么多"
    assert (r.slots.subjects, r.slots.times) == (("region.south",), ("7月",))
    assert r.standalone == render(r.slots, snapshot) == "华南区7月为什么涨这么多"
    assert "rendered" in r.how
