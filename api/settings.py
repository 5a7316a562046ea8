"""Referent's settings: one object, nested groups, read from ``REFERENT_*``.

Nested values use ``__``: ``REFERENT_NEO4J__URI=bolt://db:7687``,
``REFERENT_SESSIONS__BACKEND=redis``. Defaults are the embedded set-up: a
local Neo4j started by ``referent neo4j start``, Milvus Lite in a local file,
sessions in SQLite, everything under ``REFERENT_DATA_DIR`` (``./var``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Neo4jSettings(BaseModel):
    """Where the ontology lives. Any Bolt/neo4j URI works (server, cluster, Aura)."""

    # None: the local Neo4j that `referent neo4j start` runs on 127.0.0.1:local_port.
    uri: str | None = None
    user: str = "neo4j"
    password: str = "referent-dev"
    database: str | None = None
    # The embedded default (`referent neo4j start`): where it keeps its files.
    local_port: int = 7687
    local_home: Path | None = None  # default: <data_dir>/neo4j
    # JVM heap of the local Neo4j; one import is one transaction, and a file of
    # 100,000 entities with 300,000 aliases needs about 4g.
    local_heap: str = Field(default="1g", pattern=r"^[1-9][0-9]*[mMgG]$")


class MilvusSettings(BaseModel):
    """The vector store: a Milvus Lite file path (default) or a server URI."""

    uri: str | None = None  # default: <data_dir>/milvus.db
    token: str | None = None
    collection_prefix: str = "referent_"


class SessionSettings(BaseModel):
    """Dialogue state: where it is stored and how much of it is kept."""

    backend: Literal["sqlite", "redis"] = "sqlite"
    sqlite_path: Path | None = None  # default: <data_dir>/sessions.sqlite3
    redis_url: str = "redis://127.0.0.1:6379/0"
    ttl_seconds: int = Field(default=1800, gt=0)
    recent_turns: int = Field(default=4, ge=1)
    # Chosen from the `not in` benchmark (docs/retrieval.md): 200 ids cost about 1 ms at 100k chunks.
    consumed_window: int = Field(default=200, ge=0)


Granularity = Literal["chunk", "doc"]


class RetrievalSettings(BaseModel):
    """Search, dedup, no-answer, context and chunking defaults (see docs/retrieval.md)."""

    top_k: int = Field(default=5, ge=1, le=100)
    chunk_chars: int = Field(default=300, ge=50)
    # With fewer entity-filtered hits than this, the filter becomes a boost (trace says so).
    min_filtered_hits: int = Field(default=3, ge=0)
    insert_batch_bytes: int = Field(default=4 * 1024 * 1024, ge=64 * 1024)
    # What the consumed window excludes: the returned chunks, or their whole documents.
    consumed_granularity: Granularity = "chunk"
    # Per-kb override, e.g. REFERENT_RETRIEVAL__CONSUMED_GRANULARITY_BY_KB='{"faq": "doc"}'.
    consumed_granularity_by_kb: dict[str, Granularity] = Field(default_factory=dict)
    chunks_per_doc: int = Field(default=1, ge=1, le=20)
    near_duplicate_cosine: float = Field(default=0.95, gt=0, le=1)
    near_duplicate_shingles: float = Field(default=0.8, gt=0, le=1)
    rrf_k: int = Field(default=60, ge=1)
    # Calibrated on the dev data (docs/retrieval.md); 0 never abstains.
    no_answer_threshold: float = Field(default=0.15, ge=0, le=1)
    context_budget_tokens: int = Field(default=2000, ge=50)

    def granularity(self, kb: str) -> Granularity:
        return self.consumed_granularity_by_kb.get(kb, self.consumed_granularity)


class EmbedSettings(BaseModel):
    """Dense embeddings: none (BM25 only), an OpenAI-compatible endpoint, or the local e5."""

    # None: "openai" when base_url is set, else "none".
    backend: Literal["none", "openai", "local"] | None = None
    base_url: str | None = None  # e.g. http://127.0.0.1:8080/v1
    api_key: str | None = None
    model: str = "bge-m3"
    dim: int | None = Field(default=None, ge=1, le=32768)  # None: asked from the endpoint
    timeout_seconds: float = Field(default=10.0, gt=0)
    batch_size: int = Field(default=64, ge=1, le=2048)
    query_prefix: str = ""
    passage_prefix: str = ""

    @property
    def resolved_backend(self) -> str:
        if self.backend is not None:
            return self.backend
        return "openai" if self.base_url else "none"


class LLMSettings(BaseModel):
    """The optional LLM rewriter: any OpenAI-compatible chat endpoint. Unset base_url:
    the rules rewriter alone (the default; no LLM is needed)."""

    base_url: str | None = None  # e.g. http://127.0.0.1:8000/v1
    api_key: str | None = None
    model: str = "qwen2.5-7b-instruct"
    timeout_seconds: float = Field(default=2.0, gt=0)
    # Ask for {"type": "json_object"}; turn off for endpoints that reject the option.
    json_mode: bool = True


class RerankSettings(BaseModel):
    """The optional cross-encoder behind a TEI/Cohere-style POST /rerank endpoint.

    The entity-aware rerank always runs; with ``base_url`` set, the cross-encoder
    reorders the candidates first and a failure falls back to the entity-aware order.
    """

    base_url: str | None = None  # e.g. http://127.0.0.1:8081 (POST {base_url}/rerank)
    api_key: str | None = None
    model: str | None = None
    style: Literal["tei", "cohere"] = "tei"
    timeout_seconds: float = Field(default=2.0, gt=0)
    top_n: int = Field(default=20, ge=1, le=200)


class ApiKeySetting(BaseModel):
    """One API key, stored as the SHA-256 of the key (``referent keys new`` prints both)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.:-]{1,64}$",
                      description="who the audit log names for this key's writes")
    role: Literal["admin", "query"]
    hash: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")


class AuthSettings(BaseModel):
    """API keys and their roles: ``admin`` may use every route, ``query`` the turn routes.

    ``REFERENT_AUTH__KEYS='[{"name": "ops", "role": "admin", "hash": "sha256:..."}]'``.
    With no keys, development mode makes one key of each role for the life of
    the process and prints them once; production mode refuses to start.
    """

    keys: list[ApiKeySetting] = Field(default_factory=list)


class LimitsSettings(BaseModel):
    """How much one request may carry. A larger body is refused with 413 before it
    is read to the end; a longer turn text with 422 naming the field."""

    # JSON routes (turns, admin writes). A turn is at most a few kB; an entity with
    # its aliases and attributes rarely reaches 10 kB.
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024)
    # POST .../admin/import carries the whole ontology file, read into memory: the
    # benchmark's 100,000 entities with 300,000 aliases (no descriptions) are 13 MB.
    max_import_bytes: int = Field(default=128 * 1024 * 1024, ge=1024)
    # One user turn, in characters.
    max_text_chars: int = Field(default=2000, ge=1, le=100_000)


class LogSettings(BaseModel):
    """Logs of `referent serve`: one JSON object per line on stderr (or plain text).

    Every line carries the request id, and kb, session and turn ids where the
    request has them. API keys, Authorization headers and configured secrets
    are never written; the user's turn text only when ``include_text`` is set.
    """

    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    format: Literal["json", "text"] = "json"
    # Off: a turn's log line says how long the text was, not what it said.
    include_text: bool = False


class Settings(BaseSettings):
    """All of Referent's configuration."""

    model_config = SettingsConfigDict(env_prefix="REFERENT_", env_nested_delimiter="__",
                                      extra="ignore")

    mode: Literal["development", "production"] = "development"
    data_dir: Path = Path("var")
    neo4j: Neo4jSettings = Neo4jSettings()
    milvus: MilvusSettings = MilvusSettings()
    sessions: SessionSettings = SessionSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    embed: EmbedSettings = EmbedSettings()
    rerank: RerankSettings = RerankSettings()
    llm: LLMSettings = LLMSettings()
    auth: AuthSettings = AuthSettings()
    limits: LimitsSettings = LimitsSettings()
    log: LogSettings = LogSettings()

    @property
    def neo4j_uri(self) -> str:
        return self.neo4j.uri or f"bolt://127.0.0.1:{self.neo4j.local_port}"

    @property
    def uses_local_neo4j(self) -> bool:
        """True when no REFERENT_NEO4J__URI is set: the embedded default is in use."""
        return self.neo4j.uri is None

    @property
    def neo4j_home(self) -> Path:
        return self.neo4j.local_home or self.data_dir / "neo4j"

    @property
    def milvus_uri(self) -> str:
        return self.milvus.uri or str(self.data_dir / "milvus.db")

    @property
    def sqlite_path(self) -> Path:
        return self.sessions.sqlite_path or self.data_dir / "sessions.sqlite3"
