from retrieval.dual_path import _fused
from retrieval.models import Hit
from retrieval.search import Found


def found(cid, query, score=1.0):
    hit = Hit(chunk_id=cid, doc_id=cid.split("#")[0], title="", text="", entity_ids=(), score=score)
    return Found(hit, query)


def test_fusion_keeps_the_label_of_the_path_that_ranked_an_item_first_and_one_chunk_per_doc():
    rewrite = [found("a#0", "rewrite"), found("b#0", "rewrite"), found("c#0", "rewrite")]
    original = [found("b#0", "original"), found("d#0", "original"), found("a#1", "original")]
    out = _fused(rewrite, original, k=10, per_doc=1)
    ids = [f.hit.chunk_id for f in out]
    assert ids[0] == "b#0"  # found by both paths: ranked first by RRF
    assert {f.hit.chunk_id: f.query for f in out} == {
        "b#0": "rewrite", "a#0": "rewrite", "d#0": "original", "c#0": "rewrite"}
    assert "a#1" not in ids  # a second chunk of document a
    assert all(0 < f.hit.score <= 1 for f in out)


def test_one_empty_path_leaves_the_other_as_it_is_up_to_k():
    original = [found(f"d{i}#0", "original", score=1 - i / 10) for i in range(6)]
    assert [f.hit.chunk_id for f in _fused((), original, k=3, per_doc=1)] == ["d0#0", "d1#0", "d2#0"]
    assert _fused((), (), k=3, per_doc=1) == []


def test_words_that_name_only_a_time_or_a_number_say_nothing_to_search_alone():
    from retrieval.dual_path import says_something

    # Without the topic the rewrite put back, these find any passage naming the month.
    assert not says_something("那7月的呢")
    assert not says_something("那2024版呢")
    assert not says_something("What about 2024?")
    # A word of the user's own is worth searching alone.
    assert says_something("那价格呢")
    assert says_something("6.5版还能用到什么时候")
    assert says_something("What about the price in 2024?")
