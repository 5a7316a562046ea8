"""Context packing: the evidence assembled for an assistant's prompt, under a token budget."""

from __future__ import annotations

import re
from collections.abc import Sequence

from retrieval.models import Hit

_TOKEN_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[A-Za-z0-9_]+|[^\sA-Za-z0-9_]")


def count_tokens(text: str) -> int:
    """A tokenizer-free estimate: one token per CJK character, word or symbol.

    Close to what BPE tokenizers of multilingual models give for Chinese, and
    an overestimate for English words, which keeps a budget on the safe side.
    """
    return len(_TOKEN_RE.findall(text))


def pack_context(hits: Sequence[Hit], *, budget_tokens: int = 2000) -> tuple[str, int]:
    """Join hits best first as ``[chunk_id] title\ntext`` blocks while they fit the budget.

    The ``[chunk_id]`` prefix lets an assistant cite each item. A hit that does not
    fit is skipped (a later, shorter one may still fit), except the best one: it is
    cut to the budget (ending in ``…``) rather than lost, so a long best passage
    still leads the context.

    Returns:
        The context and its token count (:func:`count_tokens` of the returned text,
        never more than ``budget_tokens``).
    """
    blocks: list[str] = []
    used = 0
    for position, hit in enumerate(hits):
        head = f"[{hit.chunk_id}] {hit.title}".rstrip()
        block = f"{head}\n{hit.text}".strip()
        cost = count_tokens(block)
        if used + cost > budget_tokens:
            if position > 0:
                continue
            block = _cut(head, hit.text, budget_tokens)
            if not block:
                continue
            cost = count_tokens(block)
        blocks.append(block)
        used += cost
    return "\n\n".join(blocks), used


def _cut(head: str, text: str, budget: int) -> str:
    """``head`` and the longest prefix of ``text`` that fit ``budget`` tokens with ``…``."""
    lo, hi = 0, len(text)
    while lo < hi:  # the largest prefix length whose block fits
        mid = (lo + hi + 1) // 2
        if count_tokens(f"{head}\n{text[:mid]}…") <= budget:
            lo = mid
        else:
            hi = mid - 1
    if lo == 0:
        return ""
    return f"{head}\n{text[:lo]}…"
