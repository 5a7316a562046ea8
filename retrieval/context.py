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
    """Join hits best first as ``[chunk_id] title\\ntext`` blocks while they fit.

    Returns the context and its token count. A hit that does not fit is skipped
    (a later, shorter one may still fit).
    """
    blocks, used = [], 0
    for hit in hits:
        block = f"[{hit.chunk_id}] {hit.title}\n{hit.text}".strip()
        cost = count_tokens(block)
        if used + cost > budget_tokens:
            continue
        blocks.append(block)
        used += cost
    return "\n\n".join(blocks), used
