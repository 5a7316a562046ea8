"""Real services a test starts and stops itself: an API process (uvicorn), a
Milvus Lite server, a Redis and a Neo4j of its own, each on a free port.

The fault tests stop and restart these, never the ones the test command
started for the rest of the suite.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import DEMO, REPO, auth_settings_json


def free_port() -> int:
    """A TCP port nothing listens on right now (never a default one: 7687, 6379, 19530)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in (7687, 6379, 19530):
            return port


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def ingest(data_dir: Path, kb: str, records: Iterable[dict[str, Any]] | Path) -> None:
    """Ingest a corpus with `referent ingest` in a process of its own: Milvus Lite
    keeps a file open until the process that opened it exits."""
    if isinstance(records, Path):
        corpus = records
    else:
        corpus = data_dir / "corpus.jsonl"
        corpus.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records),
                          encoding="utf-8")
    subprocess.run([str(Path(sys.executable).parent / "referent"), "ingest", "--kb", kb, str(corpus)],
                   cwd=REPO, env={**os.environ, "REFERENT_DATA_DIR": str(data_dir)}, check=True,
                   capture_output=True, timeout=300)


class ApiServer:
    """One ``uvicorn api.app:create_app`` process, or ``referent serve`` as a deployer
    runs it (``cli=True``); ``env`` adds to or overrides the test's environment (a
    name mapped to None is removed; REFERENT_DATA_DIR is ``data_dir``)."""

    def __init__(self, data_dir: Path, env: Mapping[str, str | None] | None = None, *,
                 wait: bool = True, cli: bool = False) -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        self.data_dir = data_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # No rate limit unless the test sets one: fault and refresh tests send bursts.
        merged = {**os.environ, "REFERENT_DATA_DIR": str(data_dir),
                  "REFERENT_AUTH__KEYS": auth_settings_json(),
                  "REFERENT_RATE_LIMIT__PER_KEY_PER_SECOND": "0", **(env or {})}
        self.env = {name: value for name, value in merged.items() if value is not None}
        self.log_path = data_dir / f"server-{self.port}.log"
        self.log = open(self.log_path, "w")
        command = ([str(Path(sys.executable).parent / "referent"), "serve",
                    "--port", str(self.port)] if cli else
                   [sys.executable, "-m", "uvicorn", "--factory", "api.app:create_app",
                    "--host", "127.0.0.1", "--port", str(self.port), "--log-level", "warning"])
        self.proc = subprocess.Popen(command, cwd=REPO, env=self.env, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        self.client = httpx.Client(base_url=self.url, timeout=30)
        if wait:
            self.wait_ready()

    @classmethod
    def several(cls, dirs: list[Path], env: Mapping[str, str] | None = None) -> list[ApiServer]:
        """Start one server per data dir at once (each takes seconds to import and build)."""
        servers: list[ApiServer] = []
        try:
            for d in dirs:
                servers.append(cls(d, env, wait=False))
            for server in servers:
                server.wait_ready()
        except BaseException:
            for server in servers:
                server.stop()
            raise
        return servers

    def wait_ready(self) -> None:
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self) -> None:
        # Ready, not only alive: until its kbs are loaded a server refuses their turns (503).
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.log_path.read_text()}")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=5).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise RuntimeError("server was not ready within 90 s")

    def output(self) -> str:
        self.log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self, timeout: float = 20) -> None:
        """SIGTERM and wait (a graceful stop: the server cleans up what it started)."""
        self.client.close()
        if self.log.closed:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


# The two-region kb the multi-instance tests load: three documents per region, so
# the entity filter never widens to the other region.
REGIONS_ONTOLOGY = [
    {"kind": "type", "name": "Region", "attributes": ["销售额"]},
    {"kind": "entity", "id": "region.east", "name": "华东区", "type": "Region", "aliases": ["华东"]},
    {"kind": "entity", "id": "region.south", "name": "华南区", "type": "Region", "aliases": ["华南"]},
]
REGIONS_CORPUS = [
    {"doc_id": f"{region}-{i}", "title": f"{name}销售{i}", "text": f"{name}7月销售额{what}"}
    for region, name in (("east", "华东区"), ("south", "华南区"))
    for i, what in enumerate(("增长", "持平", "创新高"))
]


@contextmanager
def two_servers_on_lite(root: Path, kb: str, neo4j_store, ontology: Iterable[dict[str, Any]],
                        corpus: Iterable[dict[str, Any]],
                        env: Mapping[str, str]) -> Iterator[tuple[ApiServer, ApiServer]]:
    """``kb`` imported into the suite's Neo4j and ingested into a Milvus Lite server of
    its own, and two API processes on both (plus ``env``); all stopped and the kb
    deleted afterwards."""
    from devservices.local_milvus import LocalMilvus
    from kg.aliases import SnapshotCache
    from retrieval.ingest import ingest_corpus
    from retrieval.milvus_index import MilvusIndex

    neo4j_store.import_ontology(kb, [json.dumps(x, ensure_ascii=False) for x in ontology])
    milvus = LocalMilvus(root / "milvus" / "milvus.db", free_port())
    milvus.start()
    servers: list[ApiServer] = []
    try:
        # Seeded through the server: no process holds the Lite file but the server.
        index = MilvusIndex(milvus.uri)
        ingest_corpus(kb, [json.dumps(x, ensure_ascii=False) for x in corpus], index=index,
                      snapshot=SnapshotCache(neo4j_store).get(kb))
        index.close()
        servers = ApiServer.several([root / "server0", root / "server1"],
                                    {"REFERENT_MILVUS__URI": milvus.uri, **env})
        yield servers[0], servers[1]
    finally:
        for server in servers:
            server.stop()
        milvus.stop()
        neo4j_store.delete_kb(kb)


class RedisServer:
    """A redis-server of its own, with an append-only file synced at every write, so
    a kill loses nothing that was acknowledged (as production Redis is configured)."""

    def __init__(self, directory: Path, port: int | None = None) -> None:
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "yes", "--appendfsync", "always", "--dir", str(self.dir),
             "--logfile", str(self.dir / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while not port_open(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start: {self._log()}")
            time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL: a crash, no shutdown save."""
        self._signal(signal.SIGKILL)

    def stop(self) -> None:
        self._signal(signal.SIGTERM)

    def _signal(self, sig: int) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=20)
        self.proc = None

    def _log(self) -> str:
        path = self.dir / "redis.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""


def load_demo(kb: str, neo4j_store, index) -> None:
    """The demo ontology and corpus into ``kb`` (an index on a Milvus server, so the
    API processes can read it while this process holds it open)."""
    load_lines(kb, neo4j_store, index,
               (DEMO / "ontology.jsonl").read_text(encoding="utf-8").splitlines(),
               (DEMO / "corpus.jsonl").read_text(encoding="utf-8").splitlines())


def load_kb(kb: str, neo4j_store, index, ontology: Iterable[dict[str, Any]],
            corpus: Iterable[dict[str, Any]], embedder=None, analyzer: str | None = None) -> str:
    """A test's own ontology and corpus records into ``kb``, as import and ingest do;
    returns ``kb``. ``analyzer``: the BM25 analyzer (None: chosen from the corpus)."""
    return load_lines(kb, neo4j_store, index,
                      [json.dumps(x, ensure_ascii=False) for x in ontology],
                      [json.dumps(x, ensure_ascii=False) for x in corpus], embedder, analyzer)


def load_lines(kb: str, neo4j_store, index, ontology: list[str], corpus: list[str],
               embedder=None, analyzer: str | None = None) -> str:
    from kg.aliases import SnapshotCache
    from retrieval.ingest import ingest_corpus

    neo4j_store.import_ontology(kb, ontology)
    ingest_corpus(kb, corpus, index=index, snapshot=SnapshotCache(neo4j_store).get(kb),
                  analyzer=analyzer,
                  **({"embedder": embedder} if embedder is not None else {}))
    return kb


def play(runtime, kb: str, *turns: str) -> list:
    """The turns, in order, as one new conversation of the runtime's engine."""
    session = f"s-{uuid.uuid4().hex[:10]}"
    return [runtime.engine.handle(kb, session, text) for text in turns]


def cards_ontology(*cards: tuple[str, str, str], attributes=("年费", "免息期")) -> list[dict]:
    """A CreditCard type and one entity per (id, name, description), no aliases."""
    return [{"kind": "type", "name": "CreditCard", "attributes": list(attributes), "parent": None},
            *({"kind": "entity", "id": cid, "name": name, "type": "CreditCard", "aliases": [],
               "description": description, "parent": None, "attributes": {}}
              for cid, name, description in cards)]


def found_ids(outcome) -> list[str]:
    """The chunk ids a retriever's outcome found, in order."""
    return [f.hit.chunk_id for f in outcome.found]


def card_passages(passages: Iterable[tuple[str, int, list[str], str, str]]) -> list[dict]:
    """Corpus records from (doc, chunk number, entity ids, title, text)."""
    return [{"doc_id": doc, "chunk_id": f"{doc}#{n}", "title": title, "text": text,
             "entity_ids": tags} for doc, n, tags, title, text in passages]


# Two credit cards and the passages the novelty tests share: a comparison of both and
# three of the first card's own (doc, chunk number, entity ids, title, text).
GALAXY, MOON = "card.galaxy", "card.moon"
TWO_CARDS = cards_ontology((GALAXY, "星河卡", "一张信用卡"), (MOON, "月光卡", "另一张信用卡"))
TWO_CARD_PASSAGES = [
    ("compare", 0, [GALAXY, MOON], "信用卡对比",
     "星河卡与月光卡对比：星河卡年费300元，免息期最长56天；月光卡年费100元，免息期最长50天。"),
    ("fee", 0, [GALAXY], "星河卡年费", "星河卡主卡年费300元；当年刷卡满6次，可免次年年费。"),
    ("grace", 0, [GALAXY], "星河卡免息期", "星河卡免息期最长56天，全额还款不收利息。"),
    ("atm", 0, [GALAXY], "星河卡取现", "星河卡在ATM取现，按取现金额的1%收取手续费，最低10元。"),
]


# One card with Chinese and English aliases and four attributes (the single-card kbs).
GALAXY_CARD = [
    {"kind": "type", "name": "CreditCard", "attributes": ["年费", "免息期", "额度", "取现手续费"],
     "parent": None},
    {"kind": "entity", "id": GALAXY, "name": "星河卡", "type": "CreditCard",
     "aliases": ["星河信用卡", "Galaxy Card"], "description": "一张信用卡", "parent": None,
     "attributes": {}},
]


def suite_turns(session: str) -> list[dict]:
    """The scripted turns of one demo suite session, with their expectations."""
    for line in (DEMO / "suite.jsonl").read_text(encoding="utf-8").splitlines():
        script = json.loads(line)
        if script["session"] == session:
            return script["turns"]
    raise KeyError(session)
