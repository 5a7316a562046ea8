"""A request for the asker's own records is told apart from a question a document answers."""

import pytest

from retrieval.unanswerable import own_records


@pytest.mark.parametrize("text", [
    "我的积分账户里还有多少分",
    "我的储值账号剩多少钱",
    "我今晚那趟车会不会晚点",
    "帮我看看我周五那班船有没有取消",
    "我明早那趟高铁停运了没",
])
def test_the_askers_own_account_or_trip_is_a_record(text):
    assert own_records(text)


@pytest.mark.parametrize("text", [
    "积分账户怎么开通",
    "我的账户多少级可以升",
    "我想问那班车几点开",
    "我那班船取消了怎么退票",
    "航班延误了能退票吗",
])
def test_a_rule_about_accounts_or_trips_is_not_a_record(text):
    assert own_records(text) is None
