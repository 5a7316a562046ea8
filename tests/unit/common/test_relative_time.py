"""A relative time is written as the explicit time it stands for."""

import pytest

from common.language.relative import anchored, shift_of


@pytest.mark.parametrize(("relative", "context", "expected"), [
    ("上个月", "2025年5月二套个人住房贷款利率是多少？", "2025年4月"),
    ("上月", "华东区7月的销售额是多少", "6月"),
    ("下个月", "2025年12月的账单", "2026年1月"),
    ("上个月", "2025年1月利率", "2024年12月"),
    ("去年", "2025年5月利率", "2024年5月"),
    ("去年", "2025年的年费", "2024年"),
    ("前年", "2025年的年费", "2023年"),
    ("last month", "What was the rate in May 2025?", "April 2025"),
    ("previous month", "sales in January", "December"),
    ("last year", "the fee of the 2024 plan", "2023"),
    ("Last  Year", "sales in March 2025", "March 2024"),
])
def test_a_relative_time_is_counted_from_the_time_talked_about(relative, context, expected):
    assert anchored(relative, context) == expected


def test_nothing_to_count_from_or_not_relative_gives_none():
    assert anchored("上个月", "信用卡年费多少") is None
    assert anchored("去年", "华东区7月的销售额") is None  # a month without its year
    assert anchored("last year", "sales in July") is None
    assert anchored("2024年", "2025年5月") is None
    assert anchored("今年", "2025年5月") is None  # today's year, not one counted from the topic
    assert shift_of("上个月") == ("month", -1) and shift_of("next year") == ("year", 1)
