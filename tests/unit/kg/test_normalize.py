from kg.normalize import language_of, normalize, normalize_with_offsets


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
