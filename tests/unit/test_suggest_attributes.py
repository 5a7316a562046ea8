"""Type attributes from what follows the members' names: the words that tell the
members apart are names, not attributes."""

import json

from kg.suggest import read_corpus, suggest


def line(doc_id, title, text):
    return json.dumps({"doc_id": doc_id, "title": title, "text": text}, ensure_ascii=False)


CORPUS = [
    line("solo", "云帆记账（个人版）", "云帆记账（个人版）续费：每月8元。云帆记账个人版适合一个人记账，云帆记账价格可按年付。"),
    line("team", "云帆记账（团队版）", "云帆记账（团队版）续费：每席位每月20元。云帆记账团队版支持多人协作。"),
    line("faq", "常见问题", "问：云帆记账个人版和团队版有什么区别？答：云帆记账团队版多了审批，云帆记账价格见官网。"),
]


def test_variant_words_after_a_shared_name_are_no_attributes():
    result = suggest(read_corpus(CORPUS))
    [kind] = {e.type for e in result.entities.values()}
    attributes = set(result.types[kind].attributes)
    assert "续费" in attributes
    assert not {a for a in attributes if a.startswith(("个人版", "团队版"))}, attributes
