"""The short name a family of two or three suggested entities shares, though the
documents write only each member's full name: it must come out as an ambiguous
alias, so that a turn saying it is asked which member it means."""

import pytest

from kg.suggest import read_corpus, suggest
from tests.unit.test_suggest import line


CORPUS = [
    line("org", "关于翠湖银行", "翠湖银行是一家城市商业银行，翠湖的客服电话是96000，翠湖在全省设有网点。"),
    line("card-a", "翠湖借记卡普通版产品说明", "翠湖借记卡普通版免年费，每日取现限额2万元。"),
    line("card-b", "翠湖借记卡钻石版产品说明", "翠湖借记卡钻石版年费200元，每日取现限额10万元。"),
    line("loan", "悦行贷产品说明", "悦行贷最高可借20万元，年利率4.5%起。"),
    line("pack", "悦行流量包产品说明", "悦行流量包每月30元，含20GB流量。"),
    line("br-a", "江城分行", "江城分行辖下有多个网点，江城分行营业时间为9:00-17:00。"),
    line("br-b", "海城分行", "海城分行辖下有多个网点，海城分行营业时间为9:00-17:30。"),
    line("site-a", "江城解放路网点", "江城解放路网点周六营业，江城解放路网点电话0571-1111。"),
    line("site-b", "海城解放路网点", "海城解放路网点周六不营业，海城解放路网点电话0574-2222。"),
]


@pytest.fixture(scope="module")
def result():
    return suggest(read_corpus(CORPUS))


def holders(result, alias):
    return {e.name for e in result.entities.values() if alias == e.name or alias in e.aliases}


def test_variants_share_their_name_without_the_variant_word(result):
    assert holders(result, "翠湖借记卡") == {"翠湖借记卡普通版", "翠湖借记卡钻石版"}


def test_two_things_a_rare_first_word_starts_share_it(result):
    # 悦行贷 is one word to the segmenter; it still starts with the brand 悦行.
    assert holders(result, "悦行") == {"悦行贷", "悦行流量包"}


def test_places_that_tell_units_apart_are_dropped_together(result):
    # 江城 and 海城 lead other names (their branches): they qualify the unit's name.
    assert holders(result, "解放路网点") == {"江城解放路网点", "海城解放路网点"}
    assert "解放路网点" in result.ambiguous_aliases()


def test_the_organisations_name_is_no_familys_name(result):
    # 翠湖 leads both cards, but it names the bank: a turn saying it means the bank.
    assert holders(result, "翠湖") <= {"翠湖银行"}


LOUNGES = [
    line("org-a", "关于晴川航空", "晴川航空是一家航空公司，晴川的总部在厦门，晴川在全国有航线。"),
    line("hall-a", "晴川贵宾厅（厦门高崎）", "晴川贵宾厅（厦门高崎）位于T3航站楼，开放时间6:00-22:00。"),
    line("hall-b", "晴川贵宾厅（福州长乐）", "晴川贵宾厅（福州长乐）位于T2航站楼，开放时间7:00-21:00。"),
]


@pytest.fixture(scope="module")
def lounges():
    return suggest(read_corpus(LOUNGES))


def test_bracketed_variants_of_one_name_get_no_family_name_after_their_shared_lead(lounges):
    # Both start with the airline's 晴川: the brackets tell them apart, and 晴川贵宾厅 is
    # already their shared name; 贵宾厅 alone would only widen it.
    assert holders(lounges, "晴川贵宾厅") == {"晴川贵宾厅（厦门高崎）", "晴川贵宾厅（福州长乐）"}
    assert holders(lounges, "贵宾厅") == set()


INNER_CORPUS = [
    line("n", "江北寄存包裹规定", "江北寄存包裹规定第一条：每件5元。江北寄存包裹规定第二条：寄存包裹须在柜台登记。"),
    line("s", "江南寄存包裹规定", "江南寄存包裹规定第一条：每件8元。江南寄存包裹规定第二条：寄存包裹超过三天另收费。"),
    line("d", "日间陪护结算说明", "日间陪护按小时计费，日间陪护结算在出院时办理。日间陪护可预约。"),
    line("e", "夜间陪护结算说明", "夜间陪护按夜计费，夜间陪护由护工提供。夜间陪护须提前一天预约。陪护结算以发票为准。"),
]


@pytest.fixture(scope="module")
def inner():
    return suggest(read_corpus(INNER_CORPUS))


def test_names_share_their_inner_words_without_the_lead_and_the_everyday_last_word(inner):
    # 寄存包裹 keeps neither name's last character nor its first word: it is what is left
    # once 江北 / 江南 (which tell them apart) and 规定 (everyday) are off.
    assert holders(inner, "寄存包裹") == {"江北寄存包裹规定", "江南寄存包裹规定"}


def test_a_family_name_only_the_titles_hold_is_shared(inner):
    # The entities are 日间陪护 and 夜间陪护 (the titles' everyday 结算 is taken off), yet
    # the passages write 陪护结算 alone: the name of the pair, from the titles' names.
    assert {e.name for e in inner.entities.values()} >= {"日间陪护", "夜间陪护"}
    assert holders(inner, "陪护结算") == {"日间陪护", "夜间陪护"}


def test_a_members_own_lead_with_the_family_name_names_it_alone(inner):
    # 寄存包裹 is asked about; 江北寄存包裹 says which one (a turn writing it is not asked).
    assert holders(inner, "江北寄存包裹") == {"江北寄存包裹规定"}
    assert holders(inner, "夜间陪护结算") == {"夜间陪护"}


SEATS = [
    line("hall", "观澜剧院座位说明", "观澜剧院设池座和楼座。池座在一层，楼座在二层，贵宾厢在三层。"),
    line("stalls", "池座说明", "池座共800个座位，池座视野最好。"),
    line("gallery", "楼座说明", "楼座共400个座位，楼座可俯视舞台。"),
    line("box", "贵宾厢说明", "贵宾厢共20间，贵宾厢含茶水。"),
    line("s-early", "池座早鸟票价说明", "池座早鸟开演前30天发售，每张180元，不可退换。池座早鸟限购4张。"),
    line("g-early", "楼座早鸟票价说明", "楼座早鸟开演前30天发售，每张120元，不可退换。楼座早鸟限购6张。"),
    line("b-early", "贵宾厢早鸟票价说明", "贵宾厢早鸟开演前30天发售，每间1500元，可改期一次。贵宾厢早鸟限购1间。"),
]


@pytest.fixture(scope="module")
def seats():
    return suggest(read_corpus(SEATS))


def test_a_variant_is_shared_with_the_word_its_titles_give_it(seats):
    # 池座早鸟 lost the title's everyday 票价; users say 早鸟票 (票价 cut as 贷款 is to 贷).
    variants = {"池座早鸟", "楼座早鸟", "贵宾厢早鸟"}
    assert holders(seats, "早鸟票") == variants
    assert holders(seats, "早鸟票价") == variants
    # With the thing it is a variant of in front, the form names one (池座早鸟票).
    assert holders(seats, "池座早鸟票") == {"池座早鸟"}
    assert holders(seats, "贵宾厢早鸟票价") == {"贵宾厢早鸟"}
