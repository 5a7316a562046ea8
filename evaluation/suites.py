"""Conversation suites (docs/formats.md §3), their replay, and the scores (§4).

The system is replayed through :meth:`TurnEngine.handle`, the very path the
HTTP route takes, each scripted session in a fresh server session
(``<run id>-<suite session id>``); results keep the suite's session ids.
Baselines replay the same suite through the same index: ``raw`` searches with
the user's words only, ``concat`` with the concatenated history.
"""

from __future__ import annotations

import statistics
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from common.errors import InvalidIdError
from common.formats import check_line
from common.ids import check_entity_id
from common.jsonl import Fields, iter_jsonl
from dialogue.engine import TurnEngine
from dialogue.models import EvidenceItem, RewriteInfo, TurnResult
from retrieval.context import pack_context
from retrieval.request import SearchRequest
from retrieval.search import Retriever

Baseline = Literal["raw", "concat"]
#: The keys a suite line, a scripted turn and its ``expect`` may have (docs/formats.md §3;
#: a test keeps them, the schema and the doc the same).
SESSION_KEYS = frozenset({"session", "turns", "format"})
TURN_KEYS = frozenset({"user", "expect"})
EXPECT_KEYS = frozenset({"action", "entities", "not_entities", "evidence", "must_contain",
                         "must_not_contain", "clarify_options", "option_index"})
_LIST_KEYS = EXPECT_KEYS - {"action", "option_index"}


@dataclass(frozen=True)
class Expect:
    action: str | None = None
    entities: tuple[str, ...] | None = None
    not_entities: tuple[str, ...] | None = None
    evidence: tuple[str, ...] | None = None
    must_contain: tuple[str, ...] | None = None
    must_not_contain: tuple[str, ...] | None = None
    clarify_options: tuple[str, ...] | None = None
    # An ordinal answer to the previous turn's clarification: the turn must resolve to
    # the option the server offered at this (0-based) position, whatever its order.
    option_index: int | None = None


@dataclass(frozen=True)
class ScriptTurn:
    user: str
    expect: Expect | None


@dataclass(frozen=True)
class ScriptSession:
    session: str
    turns: tuple[ScriptTurn, ...]


def parse_suite(lines: Iterable[str], *, path: str | None = None) -> list[ScriptSession]:
    """Read a conversation suite, checking every line and field.

    Raises:
        FormatError: naming the line and field (``turns[2].expect.action``).
    """
    sessions: list[ScriptSession] = []
    seen: dict[str, int] = {}
    for number, obj in iter_jsonl(lines, path):
        f = Fields(obj, number, path)
        f.check_format_version()
        f.reject_unknown(SESSION_KEYS)
        sid = f.string("session", max_len=128)
        if sid in seen:
            raise f.error("session", f"session {sid!r} already defined on line {seen[sid]}")
        seen[sid] = number
        raw_turns = obj.get("turns")
        if not isinstance(raw_turns, list) or not raw_turns:
            raise f.error("turns", "must be a non-empty list of {\"user\": ...} objects")
        turns = []
        for i, raw in enumerate(raw_turns):
            where = f"turns[{i}]"
            if not isinstance(raw, dict):
                raise f.error(where, "must be an object with a 'user' field")
            unknown = set(raw) - TURN_KEYS
            if unknown:
                raise f.error(f"{where}.{sorted(unknown)[0]}", "unknown field; use 'user' and 'expect'")
            user = raw.get("user")
            if not isinstance(user, str) or not user.strip():
                raise f.error(f"{where}.user", "must be a non-empty string")
            turns.append(ScriptTurn(user=user, expect=_parse_expect(f, where, raw.get("expect"))))
        check_line("suite", obj, line=number, path=path)  # the published schema, docs/formats.md
        sessions.append(ScriptSession(session=sid, turns=tuple(turns)))
    return sessions


def _parse_expect(f: Fields, where: str, raw: Any) -> Expect | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise f.error(f"{where}.expect", "must be an object")
    unknown = set(raw) - EXPECT_KEYS
    if unknown:
        raise f.error(f"{where}.expect.{sorted(unknown)[0]}",
                      f"unknown key; allowed keys are {sorted(EXPECT_KEYS)}")
    values: dict[str, Any] = {}
    action = raw.get("action")
    if action is not None and action not in ("retrieve", "clarify", "no_answer"):
        raise f.error(f"{where}.expect.action", "must be retrieve, clarify or no_answer")
    values["action"] = action
    option_index = raw.get("option_index")
    if option_index is not None:
        if isinstance(option_index, bool) or not isinstance(option_index, int) or option_index < 0:
            raise f.error(f"{where}.expect.option_index",
                          "must be a 0-based option position (0 for the first option offered)")
        if where == "turns[0]":
            raise f.error(f"{where}.expect.option_index",
                          "the first turn answers no clarification; put option_index on the "
                          "turn after a clarify turn")
        values["option_index"] = option_index
    for key in _LIST_KEYS:
        value = raw.get(key)
        if value is None:
            continue
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise f.error(f"{where}.expect.{key}", "must be a list of non-empty strings")
        if key in ("entities", "not_entities", "clarify_options"):
            for v in value:
                try:
                    check_entity_id(v)
                except InvalidIdError as exc:
                    raise f.error(f"{where}.expect.{key}", str(exc)) from exc
        values[key] = tuple(value)
    return Expect(**values)


# -- replay ----------------------------------------------------------------------------

def run_system(engine: TurnEngine, kb: str, suite: Sequence[ScriptSession], *, k: int,
               run_id: str | None = None,
               on_turn: Callable[[TurnResult], None] | None = None) -> list[TurnResult]:
    """Replay every session through the turn engine, each in a fresh server session.

    A turn the engine fails on (a store down, bad turn text) is recorded as an
    error line (``action="no_answer"``, ``error`` says what was raised) and the
    replay goes on."""
    run_id = run_id or uuid.uuid4().hex[:12]
    results = []
    for script in suite:
        server_sid = f"{run_id}-{script.session}"[:128]
        for number, turn in enumerate(script.turns, start=1):
            try:
                result = engine.handle(kb, server_sid, turn.user, k=k)
            except Exception as exc:  # noqa: BLE001 - one failing turn must not end the run
                result = failed_turn(number, turn.user, exc)
            result = result.model_copy(update={"session": script.session})
            results.append(result)
            if on_turn:
                on_turn(result)
    return results


class FailedTurn(TurnResult):
    """A turn the engine raised on: scored as no answer; its results line says
    what was raised (``error``)."""

    error: str

    def results_line(self) -> dict[str, Any]:
        return {**super().results_line(), "error": self.error}


def failed_turn(number: int, user: str, exc: Exception) -> FailedTurn:
    """The result of a turn the engine raised on."""
    return FailedTurn(session="", turn=number, user=user, action="no_answer", standalone=user,
                      queries=[], entities=[], rewrite=RewriteInfo(source="original", accepted=False),
                      error=f"{type(exc).__name__}: {exc}")


def run_baseline(retriever: Retriever, kb: str, suite: Sequence[ScriptSession], baseline: Baseline,
                 *, k: int, history: int = 4, budget_tokens: int = 2000) -> list[TurnResult]:
    """Replay the suite without linking: search with the raw text or the concatenated
    user history (last ``history`` turns), no entity filter, nothing excluded."""
    results = []
    for script in suite:
        said: list[str] = []
        for number, turn in enumerate(script.turns, start=1):
            started = time.perf_counter()
            said.append(turn.user)
            query = turn.user if baseline == "raw" else " ".join(said[-history:])
            outcome = retriever.search(kb, SearchRequest([query], k=k, abstain=False))
            evidence = [EvidenceItem(chunk_id=f.hit.chunk_id, doc_id=f.hit.doc_id, score=f.hit.score,
                                     title=f.hit.title, text=f.hit.text,
                                     entity_ids=list(f.hit.entity_ids), query=query)
                        for f in outcome.found]
            context, tokens = pack_context([f.hit for f in outcome.found], budget_tokens=budget_tokens)
            results.append(TurnResult(
                session=script.session, turn=number, user=turn.user,
                action="retrieve" if evidence else "no_answer", standalone=query, queries=[query],
                entities=[], evidence=evidence, rewrite=RewriteInfo(source="original", accepted=False),
                context=context, context_tokens=tokens,
                latency_ms=(time.perf_counter() - started) * 1000))
    return results


# -- scoring -----------------------------------------------------------------------------

@dataclass
class _Tally:
    hits: int = 0
    hit_turns: int = 0
    action_ok: int = 0
    action_turns: int = 0
    clarify_tp: int = 0
    clarify_pred: int = 0
    clarify_gold: int = 0
    options_ok: int = 0
    options_turns: int = 0
    ent_gold: int = 0
    ent_found: int = 0
    ent_pred: int = 0
    ent_pred_ok: int = 0
    not_ent_turns: int = 0
    not_ent_ok: int = 0
    option_turns: int = 0
    option_ok: int = 0
    contain_ok: int = 0
    contain_turns: int = 0
    evidence_items: int = 0
    repeated_items: int = 0
    context_tokens: list[int] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    turns: int = 0

    def metrics(self) -> dict[str, Any]:
        def rate(num: int, den: int) -> float | None:
            return round(num / den, 4) if den else None

        lat = sorted(self.latencies)
        return {
            "turns": self.turns,
            "hit_at_k": rate(self.hits, self.hit_turns), "hit_turns": self.hit_turns,
            "action_accuracy": rate(self.action_ok, self.action_turns),
            "action_turns": self.action_turns,
            "clarify_precision": rate(self.clarify_tp, self.clarify_pred),
            "clarify_recall": rate(self.clarify_tp, self.clarify_gold),
            "clarify_options_ok": rate(self.options_ok, self.options_turns),
            "entity_precision": rate(self.ent_pred_ok, self.ent_pred),
            "entity_recall": rate(self.ent_found, self.ent_gold),
            "not_entities_ok": rate(self.not_ent_ok, self.not_ent_turns),
            "option_index_ok": rate(self.option_ok, self.option_turns),
            "must_contain_pass": rate(self.contain_ok, self.contain_turns),
            "repeated_evidence_rate": rate(self.repeated_items, self.evidence_items),
            "mean_context_tokens": round(statistics.fmean(self.context_tokens), 1)
            if self.context_tokens else None,
            "latency_p50_ms": round(_percentile(lat, 50), 2) if lat else None,
            "latency_p95_ms": round(_percentile(lat, 95), 2) if lat else None,
        }


def _percentile(sorted_values: list[float], p: float) -> float:
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = (len(sorted_values) - 1) * p / 100
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def turn_bucket(turn: int) -> str:
    return str(turn) if turn < 3 else "3+"


def score(suite: Sequence[ScriptSession], results: Sequence[TurnResult], *, k: int) -> dict[str, Any]:
    """Score results against the suite's expectations: overall and per turn index (1, 2, 3+).

    Definitions: hit@k over turns with ``evidence`` (a doc_id matches any of its
    chunks); entity recall = expected ids found / expected ids; entity precision
    = predicted ids that were expected / predicted ids, on turns with
    ``entities``; clarification precision/recall with "clarify" as the positive
    class, on turns with ``action``; repeated-evidence rate = evidence items
    already returned earlier in the same session / all evidence items. An
    ``option_index`` turn expects the option the previous turn's clarification
    offered at that position: it joins the turn's expected entities (and counts
    as missed when the previous turn offered no such option), and
    ``option_index_ok`` is the share of those turns that resolved to it.
    """
    expected = {(s.session, i): t.expect for s in suite for i, t in enumerate(s.turns, start=1)}
    overall, buckets = _Tally(), {b: _Tally() for b in ("1", "2", "3+")}
    shown: dict[str, set[str]] = {}
    previous: dict[str, TurnResult] = {}
    for r in results:
        ex = expected.get((r.session, r.turn))
        if ex is not None and ex.option_index is not None:
            ex = _with_offered_option(ex, previous.get(r.session), r.turn)
        seen = shown.setdefault(r.session, set())
        for tally in (overall, buckets[turn_bucket(r.turn)]):
            _score_turn(tally, r, ex, seen, k)
        seen.update(e.chunk_id for e in r.evidence)
        previous[r.session] = r
    return {"k": k, "overall": overall.metrics(),
            "by_turn": {b: t.metrics() for b, t in buckets.items()}}


# Stands for "the previous turn offered no option at that position": no result has it.
_NOT_OFFERED = "(not offered)"


def _with_offered_option(ex: Expect, before: TurnResult | None, turn: int) -> Expect:
    """The expectation with the option the server offered at ``option_index`` added to
    the expected entities."""
    offered = ([o.id for o in before.clarification.options]
               if before is not None and before.turn == turn - 1 and before.clarification else [])
    assert ex.option_index is not None
    chosen = offered[ex.option_index] if ex.option_index < len(offered) else _NOT_OFFERED
    entities = tuple(dict.fromkeys((*(ex.entities or ()), chosen)))
    return replace(ex, entities=entities)


def _score_turn(t: _Tally, r: TurnResult, ex: Expect | None, seen: set[str], k: int) -> None:
    t.turns += 1
    t.latencies.append(r.latency_ms)
    if r.action == "retrieve":
        t.context_tokens.append(r.context_tokens)
    t.evidence_items += len(r.evidence)
    t.repeated_items += sum(1 for e in r.evidence if e.chunk_id in seen)
    if ex is None:
        return
    top = r.evidence[:k]
    if ex.evidence is not None:
        t.hit_turns += 1
        ids = {e.chunk_id for e in top} | {e.doc_id for e in top}
        t.hits += any(x in ids for x in ex.evidence)
    if ex.action is not None:
        t.action_turns += 1
        t.action_ok += r.action == ex.action
        t.clarify_gold += ex.action == "clarify"
        t.clarify_pred += r.action == "clarify"
        t.clarify_tp += ex.action == "clarify" and r.action == "clarify"
    if ex.clarify_options is not None:
        t.options_turns += 1
        offered = {o.id for o in r.clarification.options} if r.clarification else set()
        t.options_ok += set(ex.clarify_options) <= offered
    predicted = set(r.entities)
    if ex.entities is not None:
        gold = set(ex.entities)
        t.ent_gold += len(gold)
        t.ent_found += len(gold & predicted)
        t.ent_pred += len(predicted)
        t.ent_pred_ok += len(predicted & gold)
    if ex.option_index is not None:
        t.option_turns += 1
        t.option_ok += bool(ex.entities) and ex.entities[-1] in predicted
    if ex.not_entities is not None:
        t.not_ent_turns += 1
        t.not_ent_ok += not (set(ex.not_entities) & predicted)
    if ex.must_contain is not None or ex.must_not_contain is not None:
        t.contain_turns += 1
        ok = all(s in r.standalone for s in ex.must_contain or ())
        ok = ok and not any(s in r.standalone for s in ex.must_not_contain or ())
        t.contain_ok += ok
