"""The subjects of FAQ questions name the things users ask about that have no
document, title or label of their own."""

from kg.suggest import read_corpus, suggest
from tests.unit.test_suggest import line

CORPUS = [
    line("card", "星河信用卡钻石版产品说明", "星河信用卡钻石版年费2000元。钻石卡可用机场贵宾厅，钻石卡积分永久有效。"),
    line("faq", "常见问题",
         "问：积点转赠怎么办理？答：积点转赠每次收1元，仅限本人名下账户之间。"
         "问：账户升级什么时候生效？答：账户升级次日生效。"
         "问：旧卡怎么注销？答：旧卡可在App注销，旧卡注销后不可恢复。"
         "问：星河卡钻石版和标准版有什么区别？答：钻石版年费2000元，标准版100元。"
         "问：星河卡钻石版怎么提额？答：使用满6个月可申请提额。"),
    line("std", "星河信用卡标准版产品说明", "星河信用卡标准版年费100元，刷卡6次免年费。"),
    line("guide", "办理指南", "积点转赠可在App办理，转入后立即到账。"),
]


def test_a_question_about_a_thing_with_no_document_of_its_own_names_it():
    result = suggest(read_corpus(CORPUS))
    assert "积点转赠" in result.entities
    assert result.entities["积点转赠"].evidence.reason == "the subject of FAQ questions"


def test_a_subject_of_everyday_words_a_description_or_a_known_things_short_form_is_none():
    result = suggest(read_corpus(CORPUS))
    assert "账户升级" not in result.entities  # everyday words only
    assert "旧卡" not in result.entities  # an adjective before a kind
    assert "钻石卡" in result.entities["星河信用卡钻石版"].aliases
    # 星河卡钻石版 is the card's own short form: taken as a name of its own, it would
    # hide the family's 星河卡, which the questions write only inside it.
    assert sorted(result.ambiguous_aliases()["星河卡"]) == ["星河信用卡标准版", "星河信用卡钻石版"]
