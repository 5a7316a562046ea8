"""The subjects of FAQ questions name the things users ask about that have no
document, title or label of their own."""

from kg.suggest import read_corpus, suggest
from tests.unit.test_suggest import line

CORPUS = [
    line("card", "星河信用卡白金版产品说明", "星河信用卡白金版年费800元。白金卡可用机场贵宾厅，白金卡积分永久有效。"),
    line("faq", "常见问题",
         "问：星链保号怎么收费？答：星链保号每月5元，最长保留12个月。"
         "问：套餐变更什么时候生效？答：套餐变更次月生效。"
         "问：新卡怎么激活？答：新卡可在App激活，新卡激活后即可使用。"
         "问：白金卡怎么提额？答：白金卡使用满6个月可申请提额。"),
    line("guide", "办理指南", "出国前可办理星链保号，回国后在App恢复。"),
]


def test_a_question_about_a_thing_with_no_document_of_its_own_names_it():
    result = suggest(read_corpus(CORPUS))
    assert "星链保号" in result.entities
    assert result.entities["星链保号"].evidence.reason == "the subject of FAQ questions"


def test_a_subject_of_everyday_words_a_description_or_a_known_things_short_form_is_none():
    result = suggest(read_corpus(CORPUS))
    assert "套餐变更" not in result.entities  # everyday words only
    assert "新卡" not in result.entities  # an adjective before a kind
    assert "白金卡" not in result.entities  # the card's own short form
    assert "白金卡" in result.entities["星河信用卡白金版"].aliases
