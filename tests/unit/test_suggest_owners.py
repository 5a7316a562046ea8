"""Head-word types split by the organisation that owns their members, so that what a
turn asks tells two things of one head word apart (invented corpus)."""

import pytest

from kg.suggest import read_corpus, suggest, to_ontology
from tests.unit.test_suggest import line

TWO_OWNERS = [
    line("air", "关于松涛航空", "松涛航空成立于2003年，总部在厦门。松涛航空有60架飞机。"),
    line("air-tier", "鹏程银卡", "鹏程银卡：一年内累积定级里程30,000公里即可升级；保级需要24,000公里。"
         "松涛航空的鹏程银卡会员可优先登机。"),
    line("air-tier-2", "鹏程银卡权益", "鹏程银卡会员在松涛航空航班上额外托运10公斤行李。"),
    line("hosp", "关于白鹭医疗集团", "白鹭医疗集团有东西两个院区。白鹭医疗集团的客服电话是96000。"),
    line("hosp-card", "白鹭健康银卡", "白鹭健康银卡是预付费会员卡，一次性充值3000元即可办理，余额可用于自费项目。"
         "白鹭医疗集团两个院区通用。"),
    line("hosp-card-2", "白鹭健康银卡办理", "白鹭健康银卡在门诊楼服务台办理，余额到期可申请延期。"),
]


@pytest.fixture(scope="module")
def found():
    return suggest(read_corpus(TWO_OWNERS))


def test_two_owners_things_sharing_a_head_word_get_a_type_each(found):
    air, card = found.entities["鹏程银卡"].type, found.entities["白鹭健康银卡"].type
    assert air != card
    assert air.startswith("银卡") and "松涛" in air
    assert card.startswith("银卡") and "白鹭" in card
    assert "银卡" not in found.types


def test_a_split_type_has_the_words_only_its_members_documents_use(found):
    air = found.types[found.entities["鹏程银卡"].type].attributes
    card = found.types[found.entities["白鹭健康银卡"].type].attributes
    assert {"保级", "定级"} <= air.keys() and {"充值", "余额"} <= card.keys()
    assert air.keys().isdisjoint({"充值", "余额"}) and card.keys().isdisjoint({"保级", "定级"})


def test_one_owners_things_keep_their_head_word_type():
    corpus = [row for row in TWO_OWNERS if '"air' in row]
    corpus.append(line("air-tier-3", "商旅银卡", "商旅银卡：出差满20次即可申请。松涛航空的商旅银卡可用休息室。"))
    found = suggest(read_corpus(corpus))
    assert found.entities["鹏程银卡"].type == "银卡"
    assert not any(t.head for t in found.types.values())


APPS = [
    line("org-a", "关于晴川航空", "晴川航空是一家航空公司，总部在厦门。晴川航空有30条航线。"),
    line("org-b", "关于福安医疗集团", "福安医疗集团下设三家医院。福安医疗集团的热线是96100。"),
    line("app-a", "晴川航空App使用说明", "晴川航空App可以值机和选座。在App里也能改签，值机后生成登机牌。"),
    line("app-b", "福安就医App使用说明", "福安就医App可以挂号和缴费。App首页有报告查询，挂号后可取消。"),
]


def test_two_organisations_apps_share_app_and_keep_their_own_words():
    found = suggest(read_corpus(APPS))
    air, clinic = found.entities["晴川航空App"], found.entities["福安就医App"]
    # 晴川航空App gets App as its name without the airline's; the clinic's App is one too.
    assert "App" in air.aliases and "App" in clinic.aliases
    assert air.type != clinic.type
    assert "值机" in found.types[air.type].attributes and "挂号" in found.types[clinic.type].attributes
    assert "挂号" not in found.types[air.type].attributes


def test_a_thing_whose_passages_name_an_organisation_has_it_as_its_parent(found):
    # 鹏程银卡 names no organisation, but its passages name 松涛航空: a shared short
    # name (银卡) is then read under the owner the conversation is about.
    written = to_ontology(found).ontology
    ids = {e.name: e.id for e in written.entities}
    parent = {e.name: e.parent for e in written.entities}
    assert parent["鹏程银卡"] == ids["松涛航空"]
    assert parent["白鹭健康银卡"] == ids["白鹭医疗集团"]
    assert ("PART_OF", ids["松涛航空"]) in {(r.type, r.to_id) for r in written.relations
                                        if r.from_id == ids["鹏程银卡"]}


def test_in_a_corpus_of_one_organisation_ownership_gives_no_parent():
    corpus = [row for row in TWO_OWNERS if '"air' in row]
    written = to_ontology(suggest(read_corpus(corpus))).ontology
    assert all(e.parent is None for e in written.entities)
