"""Vectors the clarify features reuse instead of embedding on the turn.

- :class:`VectorStore`: the e5 vectors of candidate profiles, types and facets,
  kept in a SQLite file by (model, text). A text is the key, so a changed
  ontology invalidates exactly what changed: a new or edited facet is a new
  text, embedded once; an unchanged one is found again by every process and
  every later snapshot of the kb. Filled when a kb's snapshot is first seen
  (:meth:`FeatureExtractor.warm <dialogue.policy.clarify_model.FeatureExtractor.warm>`,
  in the background) or ahead of time (``referent clarify warm``).
- :class:`QueryMemo`: one embedder shared by the retriever, the topic-shift check
  and the clarify features, remembering the last query vectors, so a question
  (or the previous turn's query) embedded by one of them is not embedded again.
"""

from __future__ import annotations

import sqlite3
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from common.errors import DependencyError
from retrieval.embedders import embed_queries


class VectorStore:
    """(model, text) → vector, in one SQLite file (float32, written in batches)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), check_same_thread=False,
                                       isolation_level=None, timeout=10)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, "
                             "text TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (model, text))")
        except (OSError, sqlite3.Error) as exc:
            raise DependencyError(f"clarify vector store {self.path}: {exc}") from exc

    def get_many(self, model: str, texts: Iterable[str]) -> dict[str, array]:
        """The stored vectors among ``texts`` (float32 arrays: a sixth of a tuple's memory)."""
        wanted = list(dict.fromkeys(texts))
        out: dict[str, array] = {}
        try:
            with self._lock:
                for i in range(0, len(wanted), 500):
                    part = wanted[i:i + 500]
                    marks = ",".join("?" * len(part))
                    rows = self._db.execute(
                        f"SELECT text, vector FROM vectors WHERE model = ? AND text IN ({marks})",
                        [model, *part]).fetchall()
                    for text, blob in rows:
                        out[text] = array("f", blob)
        except sqlite3.Error as exc:
            raise DependencyError(f"clarify vector store {self.path}: {exc}") from exc
        return out

    def put_many(self, model: str, items: Mapping[str, Sequence[float]]) -> None:
        if not items:
            return
        try:
            with self._lock:
                self._db.execute("BEGIN")
                self._db.executemany(
                    "INSERT OR REPLACE INTO vectors (model, text, vector) VALUES (?, ?, ?)",
                    [(model, t, array("f", v).tobytes()) for t, v in items.items()])
                self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise DependencyError(f"clarify vector store {self.path}: {exc}") from exc

    def count(self, model: str) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM vectors WHERE model = ?",
                                        (model,)).fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


class QueryMemo:
    """An embedder that remembers its last ``size`` query vectors (passages pass through).

    Forwards ``name`` and ``dim``, so an index checking which model built a kb sees the
    embedder it wraps."""

    def __init__(self, inner: Any, size: int = 256) -> None:
        self.inner = inner
        self.size = size
        self._memo: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_query(self, text: str):
        with self._lock:
            got = self._memo.get(text)
            if got is not None:
                self._memo.move_to_end(text)
                self.hits += 1
                return got
        vector = self.inner.embed_query(text)
        with self._lock:
            self.misses += 1
            self._memo[text] = vector
            while len(self._memo) > self.size:
                self._memo.popitem(last=False)
        return vector

    def embed_queries(self, texts: Sequence[str]) -> list:
        """Remembered vectors for the texts seen before; the others embedded in one batch."""
        with self._lock:
            found = {t: self._memo[t] for t in texts if t in self._memo}
            for text in found:
                self._memo.move_to_end(text)
            self.hits += len(found)
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            vectors = embed_queries(self.inner, missing)
            with self._lock:
                self.misses += len(missing)
                for text, vector in zip(missing, vectors, strict=True):
                    self._memo[text] = vector
                    found[text] = vector
                while len(self._memo) > self.size:
                    self._memo.popitem(last=False)
        return [found[t] for t in texts]

    def embed_passages(self, texts: Sequence[str]):
        return self.inner.embed_passages(texts)
