"""The ontology suggestion on a small invented corpus: what it proposes, with which
evidence, and that its file is one the import reads."""

import json

import pytest

from kg.ontology import parse_ontology
from kg.suggest import read_corpus, suggest, to_ontology, write
from kg.suggest.names import clean_title, read_title


def line(doc_id, title, text):
    return json.dumps({"doc_id": doc_id, "title": title, "text": text}, ensure_ascii=False)


CORPUS = [
    line("org", "关于青禾保险", "青禾保险是一家财产保险公司。青禾保险的客服电话是95500，青禾的总部在苏州，青禾在全省有网点。"),
    line("home-basic", "安居家财险（基础款）产品说明",
         "安居家财险（基础款）保费每年120元，保额10万元。安居家财险基础款只保火灾。"),
    line("home-plus", "安居家财险（尊享款）产品说明",
         "安居家财险（尊享款）保费每年360元，保额50万元。尊享款另保水渍和盗抢。"),
    line("faq", "家财险常见问题",
         "问：安居家财险怎么买？答：基础款和尊享款都可以在青禾保险App购买，基础款不保水渍，尊享款保。安居家财险保费按年缴。"),
    line("terms-2024", "安居家财险费率表（2024版）",
         "安居家财险费率表（2024版）的免赔额为500元。安居家财险费率表（2024版）保费每年100元。"),
    line("terms-2025", "安居家财险费率表（2025版）",
         "安居家财险费率表（2025版）自2025年3月1日起施行，取代2024版，免赔额降为200元。"),
    line("en", "Home insurance FAQ (English)",
         "Anju Home Insurance (安居家财险) covers fire. The Anju Home Insurance premium is paid yearly."),
]


@pytest.fixture(scope="module")
def result():
    passages = read_corpus(CORPUS)
    return suggest(passages)


def test_titles_give_names_without_their_kind_of_document_or_date():
    assert clean_title("安居家财险（基础款）产品说明") == ("安居家财险（基础款）", None)
    assert clean_title("安居家财险费率表（2024版）") == ("安居家财险费率表", "2024")
    assert clean_title("某某卡使用指南（2025年3月修订）") == ("某某卡", None)
    assert clean_title("甲与乙对比") is None
    # The terms of a product are a document about it: their edition dates the document.
    assert read_title("安居家财险条款（2024版）") == ("安居家财险", "2024", True)
    assert read_title("安居家财险费率表（2024版）") == ("安居家财险费率表", "2024", False)


def test_entities_aliases_and_the_shared_short_form(result):
    names = {e.name for e in result.entities.values()}
    assert {"青禾保险", "安居家财险（基础款）", "安居家财险（尊享款）"} <= names
    basic = result.entities["安居家财险（基础款）"]
    plus = result.entities["安居家财险（尊享款）"]
    # The name without its qualifier is shared, so it is ambiguous.
    assert "安居家财险" in basic.aliases and "安居家财险" in plus.aliases
    assert "安居家财险" in result.ambiguous_aliases()
    assert "基础款" in basic.aliases and "尊享款" in plus.aliases
    # The organisation's name without its head word.
    assert "青禾" in result.entities["青禾保险"].aliases
    # Every alias carries passages it came from and a confidence.
    evidence = basic.aliases["安居家财险"]
    assert evidence.passages and 0 < evidence.confidence <= 1


def test_editions_succeed_each_other_from_the_date_a_passage_gives(result):
    new = result.entities["安居家财险费率表（2025版）"]
    assert new.attributes["生效日期"] == "2025年3月1日"
    assert ("安居家财险费率表（2025版）", "SUCCEEDS", "安居家财险费率表（2024版）") in {
        (r.from_key, r.type, r.to_key) for r in result.relations}
    # A turn naming the edition links to that edition alone.
    assert "2025版安居家财险费率表" in new.aliases


def test_confusable_pairs_state_different_figures(result):
    pairs = {(c.a, c.b): c.note for c in result.confusables}
    key = tuple(sorted(("安居家财险（基础款）", "安居家财险（尊享款）")))
    assert key in pairs and "120" in pairs[key] and "360" in pairs[key]


def test_a_latin_name_written_beside_the_chinese_one(result):
    owners = {e.name for e in result.entities.values() if "Anju Home Insurance" in e.aliases}
    # Shared like the Chinese name it is written beside.
    assert owners == {"安居家财险（基础款）", "安居家财险（尊享款）"}


def test_the_file_imports_and_the_evidence_sits_beside_it(result, tmp_path):
    written = to_ontology(result)
    out = tmp_path / "suggested.jsonl"
    sidecar = write(written, out)
    parsed = parse_ontology(out.read_text(encoding="utf-8").splitlines(), path=str(out))
    assert {e.name for e in parsed.entities} == {e.name for e in written.ontology.entities}
    evidence = [json.loads(x) for x in sidecar.read_text(encoding="utf-8").splitlines()]
    ids = {e.id for e in parsed.entities}
    assert {x["id"] for x in evidence if x["kind"] == "entity"} == ids
    assert all(x["passages"] for x in evidence if x["kind"] == "entity")


def test_only_what_the_kb_lacks_is_written(result):
    first = to_ontology(result).ontology
    held = next(e for e in first.entities if e.name == "青禾保险")
    again = to_ontology(result, first)
    assert again.ontology.entities == ()
    assert "青禾保险" in again.known
    partial = type(first)(entities=(held,))
    later = to_ontology(result, partial)
    assert "青禾保险" not in {e.name for e in later.ontology.entities}
    assert held.id not in {e.id for e in later.ontology.entities}


def test_a_bad_corpus_line_is_named():
    from common.errors import FormatError

    with pytest.raises(FormatError, match="line 2"):
        read_corpus([CORPUS[0], '{"doc_id": "x"}'])


def test_editions_of_a_document_about_a_thing_keep_the_thing_one_entity():
    # A price sheet of 2024 and of 2025 date the sheet, not the card: a turn naming the
    # card must not be asked which edition; the rate tables of 2024 and 2025 stay editions.
    corpus = [line("card-2024", "星途流量卡资费说明（2024版）", "星途流量卡月费29元，含流量20GB。"),
              line("card-2025", "星途流量卡资费说明（2025版）", "星途流量卡月费39元，含流量40GB。"),
              CORPUS[4], CORPUS[5]]
    found = suggest(read_corpus(corpus))
    card = found.entities["星途流量卡"]
    assert card.attributes["版本"] == "2024、2025"
    assert not any(e.stem == "星途流量卡" for e in found.entities.values())
    assert "星途流量卡" not in found.ambiguous_aliases()
    assert {"安居家财险费率表（2024版）", "安居家财险费率表（2025版）"} <= set(found.entities)


def test_a_variant_several_things_have_is_no_alias_one_thing_has_is():
    corpus = [line("cam-pro", "星河相机（专业版）产品说明", "星河相机（专业版）售价5999元。专业版支持外接麦克风，专业版另送电池。"),
              line("cam-entry", "星河相机（入门版）产品说明", "星河相机（入门版）售价1999元。入门版不支持外接麦克风，入门版无赠品。"),
              line("ear-pro", "云舟耳机（专业版）产品说明", "云舟耳机（专业版）售价899元。专业版支持降噪。")]
    found = suggest(read_corpus(corpus))
    assert "入门版" in found.entities["星河相机（入门版）"].aliases
    # 专业版 alone means the professional variant of whatever is being talked about.
    assert not any("专业版" in e.aliases for e in found.entities.values())


def test_an_organisations_name_without_its_head_word_is_no_alias_when_an_everyday_word():
    corpus = [line("app", "手机银行使用指南", "手机银行可以转账。用手机登录手机银行，手机号即账号；换手机后重新绑定手机。"),
              line("org", "关于青岚银行", "青岚银行成立于1998年。青岚的客服电话是95500，青岚在全省有80家网点。")]
    found = suggest(read_corpus(corpus))
    assert "青岚" in found.entities["青岚银行"].aliases
    assert not any("手机" in e.aliases for e in found.entities.values())


def test_names_a_list_labels_without_a_title_of_their_own():
    corpus = [line("branches", "网点服务信息",
                   "北门营业厅地址：江南路1号。\n北门营业厅停车：免费2小时。\n"
                   "以下情况不能办理开户：未成年。\n以下情况不能办理销户：有欠费。"),
              line("roam", "出境通信指南",
                   "星辰流量日包：15元/天，含1GB。\n转账限额：单日5万元。\n"
                   "出境推荐星辰流量日包，星辰流量日包可随时退订。转账限额可在柜台调整，转账限额每日重置。")]
    found = suggest(read_corpus(corpus))
    names = set(found.entities)
    # The part two labels start with, and a label that states a price and is used elsewhere.
    assert {"北门营业厅", "星辰流量日包"} <= names
    assert found.entities["星辰流量日包"].evidence.reason == "the label of listed items"
    # A label made of dictionary words only describes; a clause is no name.
    assert not any(n.startswith(("转账", "以下")) for n in names)


def test_an_organisations_short_name_written_only_as_its_products_brand_is_no_alias():
    # 云岭 is written only in front of its products' names: said alone in a turn
    # (云岭休息室) it means one of them, not the company.
    corpus = [line("org", "关于云岭航空", "云岭航空成立于2001年，总部在昆明。云岭航空有40架飞机。"),
              line("lounge", "云岭贵宾休息室说明", "云岭贵宾休息室位于T2航站楼。云岭贵宾休息室6:00开放。"),
              line("club", "云岭会员计划说明", "云岭会员计划免费入会。云岭会员计划积分三年有效。")]
    found = suggest(read_corpus(corpus))
    assert found.entities["云岭航空"].aliases.keys().isdisjoint({"云岭"})


def test_a_family_short_name_with_a_members_own_variant_word_names_that_member():
    corpus = [line("std", "晨星信用卡标准版产品说明", "晨星信用卡标准版年费100元。标准版额度5万元，标准版免年费条件为刷卡6笔。"),
              line("plat", "晨星信用卡白金版产品说明", "晨星信用卡白金版年费800元。白金版额度30万元，白金版含贵宾厅。"),
              line("faq", "信用卡常见问题", "问：晨星卡怎么激活？答：晨星卡可在App激活。")]
    found = suggest(read_corpus(corpus))
    std, plat = found.entities["晨星信用卡标准版"], found.entities["晨星信用卡白金版"]
    assert "晨星卡" in found.ambiguous_aliases()
    assert "晨星卡标准版" in std.aliases and "晨星卡白金版" in plat.aliases
    assert "晨星卡标准版" not in plat.aliases


def test_a_name_without_the_describing_words_in_its_middle_is_an_alias_when_its_own():
    corpus = [line("a", "星辰流量日包说明", "星辰流量日包15元/天。星辰流量日包含1GB。"),
              line("b", "云海流量日包说明", "云海流量日包25元/天。云海流量日包含2GB。"),
              line("c", "个人商铺贷款说明", "个人商铺贷款利率3.1%。个人商铺贷款最长30年。"),
              line("d", "公积金组合商铺贷款说明", "公积金组合商铺贷款由两部分组成。公积金组合商铺贷款需先审批公积金。")]
    found = suggest(read_corpus(corpus))
    assert "星辰日包" in found.entities["星辰流量日包"].aliases
    assert "云海日包" in found.entities["云海流量日包"].aliases
    # 公积金商铺贷款 would do, 商铺贷款 is inside another name: never a contraction.
    assert not any("商铺贷款" in e.aliases for e in found.entities.values())


def test_a_label_that_shortens_one_name_is_its_alias_one_that_starts_several_is_nothing():
    corpus = [line("car", "个人游艇贷款产品说明", "个人游艇贷款最长5年。个人游艇贷款首付20%。"),
              line("faq", "贷款常见问题", "艇贷利率：3.5%起。\n艇贷申请材料：身份证。\n艇贷提前还款：免违约金。"),
              line("gold", "澜汐金卡说明", "澜汐金卡年费0元。澜汐金卡含休息室。"),
              line("silver", "澜汐银卡说明", "澜汐银卡年费0元。澜汐银卡无休息室。"),
              line("tiers", "会员等级", "澜汐金卡权益：休息室。\n澜汐银卡权益：优先值机。")]
    found = suggest(read_corpus(corpus))
    assert "艇贷" in found.entities["个人游艇贷款"].aliases and "艇贷" not in found.entities
    assert "澜汐" not in found.entities


def test_a_label_made_of_one_names_words_in_another_order_is_its_alias():
    # The bracket gives the place; the documents' labels put it before the head.
    corpus = [line("xm", "晴川贵宾厅（厦门高崎）",
                   "厦门贵宾厅设施：淋浴间、简餐。\n厦门贵宾厅准入条件：头等舱旅客。"),
              line("fz", "晴川贵宾厅（福州长乐）",
                   "福州贵宾厅设施：按摩椅。\n福州贵宾厅准入条件：金卡会员。")]
    found = suggest(read_corpus(corpus))
    assert "厦门贵宾厅" in found.entities["晴川贵宾厅（厦门高崎）"].aliases
    assert "福州贵宾厅" in found.entities["晴川贵宾厅（福州长乐）"].aliases
    assert not {"厦门贵宾厅", "福州贵宾厅"} & set(found.entities)


def test_another_name_in_brackets_after_a_name_is_its_alias_a_note_is_not():
    corpus = [line("app", "云杉App长辈版说明", "云杉App长辈版（大字版）字体更大。云杉App长辈版转账限额1万元。"),
              line("meal", "定制餐食说明", "定制餐食（儿童餐除外）需提前申请。定制餐食（含素食）免费。定制餐食可在App申请。")]
    found = suggest(read_corpus(corpus))
    assert "大字版" in found.entities["云杉App长辈版"].aliases
    assert not {"儿童餐除外", "含素食"} & set(found.entities["定制餐食"].aliases)


def test_a_title_keeps_its_everyday_last_word_when_the_rest_is_used_only_inside_other_names():
    # 分期 is an everyday word, but 星悦 is written only inside 星悦关爱套餐: the title names 星悦分期.
    corpus = [line("inst", "星悦分期业务说明", "星悦分期手续费率每期0.6%。星悦分期可提前结清。"),
              line("plan", "星悦关爱套餐说明", "星悦关爱套餐月费38元。星悦关爱套餐面向60岁以上用户。")]
    found = suggest(read_corpus(corpus))
    assert {"星悦分期", "星悦关爱套餐"} <= set(found.entities) and "星悦" not in found.entities


def test_a_quoted_name_two_names_start_with_is_their_shared_name_not_a_thing():
    corpus = [line("a", "星悦关爱卡说明", "星悦关爱卡年费0元。星悦关爱卡面向60岁以上用户。"),
              line("b", "星悦畅聊卡说明", "星悦畅聊卡月费19元。星悦畅聊卡含通话300分钟。"),
              line("faq", "常见问题", "“星悦”品牌下有两张卡，“星悦”的客服电话是10086。")]
    found = suggest(read_corpus(corpus))
    assert "星悦" not in found.entities
    assert sorted(found.ambiguous_aliases()["星悦"]) == ["星悦关爱卡", "星悦畅聊卡"]


def test_editions_share_their_name_without_its_everyday_last_word():
    corpus = [line("r24", "升舱规则（2024版）", "按升舱规则（2024版），起飞前收10%。升舱按舱位收费。"),
              line("r25", "升舱规则（2025版）", "升舱规则（2025版）自2025年3月1日起施行。升舱按票价产品收费。"),
              line("faq", "常见问题", "问：升舱在哪办？答：升舱可在App办理。")]
    found = suggest(read_corpus(corpus))
    assert sorted(found.ambiguous_aliases()["升舱"]) == ["升舱规则（2024版）", "升舱规则（2025版）"]


def test_a_quoted_document_is_about_its_subject_not_a_thing_of_its_own():
    corpus = [
        line("guide", "青松养老理财产品说明", "青松养老理财起购金额1万元。收益以当月《青松养老理财收益公告》为准。"),
        line("n-03", "2025年3月青松养老理财收益公告", "2025年3月青松养老理财收益公告：年化收益3.1%。"),
        line("n-04", "2025年4月青松养老理财收益公告", "2025年4月青松养老理财收益公告：年化收益3.0%。"),
        line("faq", "理财常见问题", "问：收益多久公布一次？答：每月初发布《青松养老理财收益公告》。"),
    ]
    result = suggest(read_corpus(corpus))
    names = {e.name for e in result.entities.values()}
    assert "青松养老理财" in names
    # The notice is one of the thing's documents: as an entity of its own it would
    # take the notices' passages from the thing a turn names.
    assert not any(n.endswith("公告") for n in names), names
