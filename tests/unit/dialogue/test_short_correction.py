"""A correction's cue followed by a few words asks the last question again, of what
those words name; a cue followed by a statement of its own does not."""

from __future__ import annotations

import pytest

from dialogue.classify import is_short_correction


@pytest.mark.parametrize("text", ["说错了，我想问北湖", "不对，是北湖", "搞错了，北湖的",
                                  "No, I meant the night one", "Sorry, I meant Lakeside",
                                  "北湖的，不是南湖", "北湖，不是南湖。", "the night one, not the day one",
                                  "不是南湖，北湖", "抱歉，不是南湖，北湖的", "Sorry, not the day one, the night one"])
def test_a_cue_and_a_few_words_are_a_short_correction(text):
    assert is_short_correction(text)


@pytest.mark.parametrize("text", ["不是的，这是一部彩色的纪录片。", "不对，我问的是北湖几点开门",
                                  "北湖几点开门", "No, I meant the lakeside office, when does it open?",
                                  "北湖几点开门，不是南湖"])
def test_a_cue_and_a_statement_or_a_question_of_its_own_are_not(text):
    assert not is_short_correction(text)
