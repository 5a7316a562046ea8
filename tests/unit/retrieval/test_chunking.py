"""chunk_text: whole sentences per chunk, bounded size, nothing lost, nothing empty."""

from __future__ import annotations

import re

import pytest

from retrieval.chunking import chunk_text

POLICY = (
    "第一条 本保险合同由保险条款、投保单、保险单组成。"
    "第二条 被保险人因意外伤害住院的，保险人按约定给付住院津贴！"
    "第三条 意外险与综合意外险的保障范围不同；请以保单载明为准。\n"
    "第四条 等待期为30天？等待期内发生的事故不予赔付。"
)


def _without_space(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t"])
def test_blank_text_gives_no_chunks(text: str) -> None:
    assert chunk_text(text) == []


def test_short_text_is_one_trimmed_chunk() -> None:
    assert chunk_text("  华东区销售额同比增长12%。\n") == ["华东区销售额同比增长12%。"]


def test_sentences_are_packed_whole_and_keep_their_punctuation() -> None:
    assert chunk_text(POLICY, max_chars=30) == [
        "第一条 本保险合同由保险条款、投保单、保险单组成。",
        "第二条 被保险人因意外伤害住院的，保险人按约定给付住院津贴！",
        "第三条 意外险与综合意外险的保障范围不同；请以保单载明为准。",
        "第四条 等待期为30天？等待期内发生的事故不予赔付。",
    ]
    assert chunk_text(POLICY, max_chars=60) == [
        "第一条 本保险合同由保险条款、投保单、保险单组成。"
        "第二条 被保险人因意外伤害住院的，保险人按约定给付住院津贴！",
        "第三条 意外险与综合意外险的保障范围不同；请以保单载明为准。\n"
        "第四条 等待期为30天？等待期内发生的事故不予赔付。",
    ]


def test_packing_fills_chunks_up_to_the_limit() -> None:
    sentences = ["甲" * 9 + "。"] * 5  # 10 characters each

    assert chunk_text("".join(sentences), max_chars=25) == [
        sentences[0] * 2, sentences[0] * 2, sentences[0]]


def test_line_breaks_end_sentences_and_stay_inside_a_chunk() -> None:
    assert chunk_text("第一行\n第二行\n第三行", max_chars=3) == ["第一行", "第二行", "第三行"]
    assert chunk_text("第一行\n第二行", max_chars=10) == ["第一行\n第二行"]


def test_english_sentences_split_on_full_stops_but_not_decimals() -> None:
    text = "Version 2.1 raised the limit to 3.5 million. Claims take 30 days! Is that all? Yes."

    assert chunk_text(text, max_chars=45) == [
        "Version 2.1 raised the limit to 3.5 million.",
        "Claims take 30 days! Is that all? Yes.",
    ]


def test_closing_quote_stays_with_its_sentence() -> None:
    assert chunk_text("他说：“可以理赔。”随后提交了材料。", max_chars=10) == [
        "他说：“可以理赔。”", "随后提交了材料。"]


def test_over_long_sentence_is_hard_split() -> None:
    assert [len(chunk) for chunk in chunk_text("甲" * 650, max_chars=300)] == [300, 300, 50]


def test_over_long_sentence_prefers_a_clause_break() -> None:
    text = "甲" * 20 + "，" + "乙" * 20 + "。"

    assert chunk_text(text, max_chars=30) == ["甲" * 20 + "，", "乙" * 20 + "。"]


def test_over_long_english_sentence_breaks_between_words() -> None:
    chunks = chunk_text("alpha beta gamma delta epsilon", max_chars=12)

    assert chunks == ["alpha beta", "gamma delta", "epsilon"]


@pytest.mark.parametrize("max_chars", [1, 7, 25, 60, 300])
@pytest.mark.parametrize("text", [
    POLICY,
    POLICY * 7,
    "无标点的长句" * 120,
    "Mixed 中英文 text; with ； all sorts！of ends?\n\n  and   spaces . 结尾",
])
def test_chunks_are_bounded_non_empty_and_lose_nothing(text: str, max_chars: int) -> None:
    chunks = chunk_text(text, max_chars=max_chars)

    assert all(0 < len(chunk) <= max_chars for chunk in chunks)
    assert all(chunk == chunk.strip() for chunk in chunks)
    assert _without_space("".join(chunks)) == _without_space(text)


def test_each_chunk_is_a_slice_of_the_source() -> None:
    source = POLICY * 3

    position = 0
    for chunk in chunk_text(source, max_chars=100):
        found = source.find(chunk, position)
        assert found >= position
        position = found + len(chunk)


def test_max_chars_below_one_is_rejected() -> None:
    with pytest.raises(ValueError):
        chunk_text("文本", max_chars=0)
