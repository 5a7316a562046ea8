"""Between equal answers (the same new words, as specific to the turn's entities) a shown
chunk comes back only when the search ranks it clearly higher than the unseen rival: by
a lead on BM25's scale, by the order alone with fused ranks (retrieval/novelty.py
``admit``)."""

from __future__ import annotations

from retrieval.models import Hit
from retrieval.novelty import TIE_LEAD, Shown, TermStats, admit

SHOWN = "星河卡免息期最长56天，全额还款不收利息。"
RIVAL = "星河卡常见问题：免息期最长56天，账单日后20天内还款。"
OTHER = "星河卡主卡年费300元。"


def hits(shown_score: float, rival_score: float) -> tuple[Hit, Hit]:
    return (Hit("grace#0", "grace", "", SHOWN, ("card",), shown_score),
            Hit("faq#0", "faq", "", RIVAL, ("card",), rival_score))


def back(shown_score: float, rival_score: float, lead: float) -> bool:
    stats = TermStats.from_texts([SHOWN, RIVAL, OTHER])
    shown, rival = hits(shown_score, rival_score)
    before = Shown("grace#0", "grace", 1, "星河卡年费多少")
    return "grace#0" in admit([(shown, before, "星河卡免息期最长多少天")], [rival], stats,
                              intent="new", min_gain=0.15, entity_ids=["card"], tie_lead=lead)


def test_on_bm25_scores_a_tie_needs_a_clear_lead():
    assert back(1.20, 1.00, TIE_LEAD)          # 20% above the unseen passage
    assert not back(1.02, 1.00, TIE_LEAD)      # 2%: as good as equal, the unseen one wins
    assert not back(0.90, 1.00, TIE_LEAD)      # below it


def test_with_fused_ranks_the_order_alone_decides():
    # RRF scores of neighbouring places differ by a percent or two.
    assert back(1 / 61, 1 / 62, 0.0)
    assert not back(1 / 62, 1 / 61, 0.0)
