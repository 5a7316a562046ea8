"""A follow-up that negates the question asked before (标快也不能吗, The SUV can't?)
negates that question's verb where the question writes it, and nowhere else."""

from dialogue.render import _negated


def test_the_verb_the_question_writes_is_negated():
    assert _negated("{s0}能寄到新疆吗", [("能", "不能")], "zh") == "{s0}不能寄到新疆吗"
    assert _negated("{s0}最多能贷多少", [("能", "不能")], "zh") == "{s0}最多不能贷多少"
    assert _negated("Can {s0} be driven into Mexico?", [("can", "can't")], "en") \
        == "Can't {s0} be driven into Mexico?"


def test_a_word_that_holds_the_verb_is_left_alone():
    # 功能's 能 and 会员's 会 are no verbs: the question's own 能 is the one negated.
    assert _negated("{s0}的功能能用吗", [("能", "不能")], "zh") == "{s0}的功能不能用吗"
    assert _negated("{s0}会员价会涨吗", [("会", "不会")], "zh") == "{s0}会员价不会涨吗"


def test_nothing_changes_when_the_question_lacks_the_verb_or_negates_it_already():
    assert _negated("{s0}能寄到新疆吗", [("可以", "不可以")], "zh") == "{s0}能寄到新疆吗"
    assert _negated("{s0}不能寄到新疆吗", [("能", "不能")], "zh") == "{s0}不能寄到新疆吗"
    assert _negated("Is {s0} not covered?", [("is", "is not")], "en") == "Is {s0} not covered?"
    # A verb inside another word of English is no verb of the question.
    assert _negated("Does {s0} cover canoes?", [("can", "can't")], "en") == "Does {s0} cover canoes?"


def test_only_a_negation_after_the_name_with_nothing_else_said_is_a_negating_follow_up(snapshot):
    from dialogue.rewrite import _negated_verbs
    from understanding.mentions import detect_mentions

    def negated(text, previous):
        return _negated_verbs(detect_mentions(text, snapshot), [], previous)

    assert negated("华南区也不能吗", "华东区能申请吗") == (("能", "不能"),)
    # Words of its own besides: a question of its own.
    assert negated("华南区不能打折吗", "华东区能打几折") == ()
    # A negation before the name asks whether it is so (isn't it …?), and a correction's
    # 不是 says what was wrong.
    assert negated("不是华南区出品的么", "那是，谁出品的") == ()
    assert negated("不是华东区，是华南区", "华东区能申请吗") == ()


def test_a_negation_without_a_verb_negates_the_question_s_verb_of_ability(snapshot):
    """也不行吗 (can't either?) names no verb: it negates the first verb of ability the
    previous question writes, and nothing in a question without one."""
    from dialogue.rewrite import _negated_verbs
    from understanding.mentions import detect_mentions

    assert _negated_verbs(detect_mentions("华南区也不行吗", snapshot), [], "华东区能申请吗") \
        == (("", "不行"),)
    assert _negated("定制商品能{s0}吗", [("", "不行")], "zh") == "定制商品不能{s0}吗"
    assert _negated("{s0}可以退差价吗", [("", "没法")], "zh") == "{s0}不可以退差价吗"
    # 功能's 能 is no verb; a question asking no ability is left as it is.
    assert _negated("{s0}的功能可以用吗", [("", "不行")], "zh") == "{s0}的功能不可以用吗"
    assert _negated("{s0}多少钱", [("", "不行")], "zh") == "{s0}多少钱"
