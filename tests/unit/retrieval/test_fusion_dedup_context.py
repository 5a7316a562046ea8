import pytest

from retrieval.context import count_tokens, pack_context
from retrieval.dedup import drop_near_duplicates, jaccard, shingles
from retrieval.fusion import rrf
from retrieval.models import Hit


def hit(cid, text="", score=1.0, vector=None, title=""):
    return Hit(chunk_id=cid, doc_id=cid.split("#")[0], title=title, text=text, entity_ids=(),
               score=score, vector=vector)


def test_rrf_sums_reciprocal_ranks_and_rescales_the_best_to_one():
    bm25 = [hit("a#0"), hit("b#0"), hit("c#0")]
    dense = [hit("c#0", vector=(1.0, 0.0)), hit("a#0", vector=(0.0, 1.0))]

    fused = rrf([bm25, dense], k=60)

    raw = {"a#0": 1 / 61 + 1 / 62, "b#0": 1 / 62, "c#0": 1 / 63 + 1 / 61}
    assert [h.chunk_id for h in fused] == ["a#0", "c#0", "b#0"]
    assert [h.score for h in fused] == pytest.approx([raw[c] / raw["a#0"] for c in ("a#0", "c#0", "b#0")])
    # A vector carried by either ranking is kept for near-duplicate checks.
    assert fused[0].vector == (0.0, 1.0) and fused[2].vector is None


def test_rrf_of_nothing_and_bad_k():
    assert rrf([[], []]) == []
    with pytest.raises(ValueError):
        rrf([[hit("a#0")]], k=0)


def test_shingles_ignore_whitespace():
    assert shingles("华东 区") == shingles("华东区") == {"华东", "东区"}
    assert shingles("") == frozenset() and jaccard(frozenset(), shingles("华东")) == 0.0


def test_near_duplicates_by_text_keep_the_better_one():
    hits = [hit("a#0", "被保险人因意外伤害住院的，按约定给付住院津贴。"),
            hit("b#0", "华东区7月销售额为12亿元，同比增长8%。"),
            hit("c#0", "被保险人因意外伤害住院的，按照约定给付住院津贴。"),
            hit("d#0", "华东区6月销售额为10亿元，同比增长5%。")]

    kept, dropped = drop_near_duplicates(hits)

    assert [h.chunk_id for h in kept] == ["a#0", "b#0", "d#0"]
    assert dropped == [("c#0", "a#0")]


def test_near_duplicates_by_cosine_when_both_have_vectors():
    hits = [hit("a#0", "退货运费由买家承担", vector=(1.0, 0.0)),
            hit("b#0", "Return shipping is paid by the buyer", vector=(0.99, 0.05)),
            hit("c#0", "退货运费由买家承担", vector=(0.0, 1.0))]

    kept, dropped = drop_near_duplicates(hits, cosine_at=0.95)

    # b is a translation of a (cosine 0.999); c has the same text but a distant vector:
    # with vectors on both sides, the cosine decides.
    assert [h.chunk_id for h in kept] == ["a#0", "c#0"]
    assert dropped == [("b#0", "a#0")]


def test_context_is_packed_best_first_with_ids_and_counted_exactly():
    hits = [hit("a#0", "华东区7月销售额为12亿元。", title="月报"), hit("b#1", "年假5天。", title="手册")]

    context, tokens = pack_context(hits, budget_tokens=2000)

    assert context.index("[a#0] 月报") < context.index("[b#1] 手册")
    assert tokens == count_tokens(context)


def test_context_never_exceeds_the_budget_and_skips_what_does_not_fit():
    long = hit("long#0", "长" * 300)
    short = [hit(f"s{i}#0", "年假五天。") for i in range(5)]
    hits = [short[0], long, *short[1:]]

    context, tokens = pack_context(hits, budget_tokens=60)

    assert tokens <= 60 and tokens == count_tokens(context)
    assert "[long#0]" not in context
    assert "[s0#0]" in context and "[s4#0]" in context  # later, shorter items still fit


def test_an_oversized_best_item_is_cut_to_the_budget_not_dropped():
    best = hit("best#0", "华东区销售额" * 100, title="月报")

    context, tokens = pack_context([best, hit("b#0", "年假五天。")], budget_tokens=50)

    assert context.startswith("[best#0] 月报") and "…" in context
    assert tokens == count_tokens(context) <= 50


def test_token_estimate():
    assert count_tokens("华东区 sales 12%") == 3 + 1 + 1 + 1
    assert count_tokens("") == 0


def test_a_high_cosine_alone_does_not_make_two_chinese_passages_duplicates():
    # The bundled e5 gives 0.95 and more to different facts of one product (the 2024 and
    # 2025 fee tables): within one script the text must be a near copy too.
    hits = [hit("fee-2025#0", "2025版：ATM跨行取款每笔2元。", vector=(1.0, 0.0)),
            hit("fee-2024#0", "2024版：ATM跨行取款每笔4元，每月前3笔免费。", vector=(0.999, 0.04))]

    kept, dropped = drop_near_duplicates(hits, cosine_at=0.95)

    assert [h.chunk_id for h in kept] == ["fee-2025#0", "fee-2024#0"] and dropped == []
