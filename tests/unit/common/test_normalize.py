from common.language.normalize import language_of, normalize, normalize_with_offsets


def test_width_case_punctuation_and_traditional_fold_to_one_key():
    key = normalize("A产品（个人版）")
    assert key == "a产品个人版"
    assert normalize("Ａ產品 個人版") == key
    assert normalize("a产品-个人版") == key


def test_offsets_map_back_to_the_original_text():
    norm = normalize_with_offsets("那 華南區 呢")
    assert norm.text == "那华南区呢"
    start = norm.text.index("华南区")
    assert norm.span(start, start + 3) == (2, 5)
    assert norm.original[2:5] == "華南區"


def test_language():
    assert language_of("What about 华南区") == "zh"
    assert language_of("What about the south?") == "en"


def test_each_step_can_be_switched_off_per_kb():
    from common.language.normalize import Normalization

    assert Normalization(case=False).normalize("A产品（个人版）") == "A产品个人版"
    assert Normalization(traditional_to_simplified=False).normalize("產品") == "產品"
    assert Normalization(punctuation=False).normalize("A 产品") == "a 产品"
    assert Normalization(width=False).normalize("ＡＢ") == "ａｂ"
    norm = Normalization(case=False).with_offsets("那 華南區 呢")
    assert norm.text == "那华南区呢" and norm.span(1, 4) == (2, 5)


def test_normalization_settings_round_trip_and_refuse_unknown_steps():
    import pytest

    from common.errors import InputError
    from common.language.normalize import DEFAULT, Normalization

    custom = Normalization(case=False, punctuation=False)
    assert Normalization.from_json(custom.to_json()) == custom
    assert Normalization.from_json(None) == DEFAULT
    with pytest.raises(InputError) as info:
        Normalization.from_mapping({"cases": False})
    assert info.value.field == "normalization.cases"
    with pytest.raises(InputError):
        Normalization.from_mapping({"case": "no"})
