"""An optional cross-encoder behind an HTTP ``POST /rerank`` endpoint.

Two request/answer dialects are spoken:

- ``tei`` (Hugging Face text-embeddings-inference):
  ``{"query": q, "texts": [...]}`` → ``[{"index": i, "score": s}, ...]``
- ``cohere`` (Cohere, Jina, vLLM, Infinity):
  ``{"model": m, "query": q, "documents": [...], "top_n": n}`` →
  ``{"results": [{"index": i, "relevance_score": s}, ...]}``

A cross-encoder reads query and passage together and usually ranks better
than BM25, but it is a network call on the turn's critical path: a timeout
bounds it, and any failure is a ``DependencyError`` that the retriever turns
into "keep the entity-aware order" with a note in the trace.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, Protocol

import httpx

from common.errors import DependencyError, RetryableDependencyError


class Reranker(Protocol):
    """Scores passages against a query; higher is more relevant."""

    @property
    def name(self) -> str:
        ...

    def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        """One score per passage, in the order given.

        Raises:
            DependencyError: the backend failed or answered something unusable.
        """
        ...


class HttpCrossEncoder:
    """A TEI- or Cohere-style ``/rerank`` endpoint.

    Args:
        base_url: the server root; requests go to ``{base_url}/rerank``.
        style: ``tei`` or ``cohere`` (see the module docstring).
        model: sent in Cohere-style requests.
        timeout: seconds for the whole request.
        transport: for tests only (an ``httpx`` transport).
    """

    def __init__(self, base_url: str, *, style: Literal["tei", "cohere"] = "tei",
                 model: str | None = None, api_key: str | None = None, timeout: float = 2.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._url = base_url.rstrip("/") + "/rerank"
        self._style = style
        self._model = model
        self._client = httpx.Client(timeout=timeout, headers=headers, transport=transport)

    @property
    def name(self) -> str:
        return f"{self._style}:{self._model or self._url}"

    def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        if self._style == "tei":
            body: dict = {"query": query, "texts": list(passages), "raw_scores": False}
        else:
            body = {"query": query, "documents": list(passages), "top_n": len(passages)}
            if self._model:
                body["model"] = self._model
        where = f"the rerank endpoint {self._url}"
        try:
            response = self._client.post(self._url, json=body)
        except httpx.TimeoutException as exc:
            raise RetryableDependencyError(f"{where} timed out; raise "
                                           "REFERENT_RERANK__TIMEOUT_SECONDS or check the server") from exc
        except httpx.HTTPError as exc:
            raise RetryableDependencyError(f"{where} could not be reached: {exc}") from exc
        if response.status_code != 200:
            error = RetryableDependencyError if response.status_code in (429, 502, 503, 504) \
                else DependencyError
            raise error(f"{where} answered HTTP {response.status_code}: {response.text[:200]}")
        try:
            payload = response.json()
        except ValueError as exc:
            raise DependencyError(f"{where} answered something that is not JSON") from exc
        return _parse(payload, len(passages), where)

    def close(self) -> None:
        self._client.close()


def _parse(payload: object, count: int, where: str) -> list[float]:
    """Scores by passage index from a TEI list or a Cohere ``results`` object."""
    items = payload.get("results") if isinstance(payload, dict) else payload
    if not isinstance(items, list):
        raise DependencyError(f"{where} answered without a list of results")
    scores: list[float | None] = [None] * count
    for item in items:
        if not isinstance(item, dict):
            raise DependencyError(f"{where} answered a result that is not an object")
        index = item.get("index")
        score = item.get("score", item.get("relevance_score"))
        if not isinstance(index, int) or not 0 <= index < count:
            raise DependencyError(f"{where} answered an index out of range: {index!r}")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise DependencyError(f"{where} answered a score that is not a number: {score!r}")
        scores[index] = float(score)
    if any(s is None for s in scores):
        missing = sum(s is None for s in scores)
        raise DependencyError(f"{where} left {missing} of {count} passages unscored")
    return [float(s) for s in scores if s is not None]
