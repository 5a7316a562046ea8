"""The turn engine: one user turn in, one TurnResult out.

load state → detect mentions → link → classify → clarify or rewrite →
retrieve (entity filter, consumed excluded, one chunk per doc) → pack context
→ save state. The HTTP route and `referent eval` both call :meth:`TurnEngine.handle`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from common.errors import (ConflictError, DependencyError, InputError, NotFoundError,
                           ReferentError)
from common.ids import check_kb, check_session_id
from dialogue.clarify import AnswerKind, build_clarification, read_answer
from dialogue.classify import (TurnKind, classify, is_bare_mention, revisit_cue,
                               strip_conversation_cues, strip_correction_cue)
from dialogue.llm_rewriter import LLMRewriter
from dialogue.models import EvidenceItem, RewriteInfo, TurnResult
from dialogue.rewrite import RuleRewriter
from dialogue.session_store import TRACES_KEPT, SessionStore
from dialogue.slots import fold_into_summary, update_slots
from dialogue.state import PendingClarification, SessionState, TurnRecord
from dialogue.topic_shift import SimilarityShift
from dialogue.validate import RewriteValidator
from kg.aliases import AliasSnapshot, SnapshotCache
from kg.linker import EntityLinker, LinkResult
from kg.mentions import Detection, MentionKind, detect_mentions
from retrieval.context import pack_context
from retrieval.dual_path import dual_search
from retrieval.search import Retriever


logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class EngineConfig:
    """Per-turn limits. ``consumed_granularity`` says whether the consumed window
    excludes returned chunks or their whole documents; ``granularity_by_kb`` overrides it."""

    top_k: int = 5
    recent_turns: int = 4
    consumed_window: int = 200
    consumed_granularity: Literal["chunk", "doc"] = "chunk"
    granularity_by_kb: Mapping[str, Literal["chunk", "doc"]] = field(default_factory=dict)
    context_budget_tokens: int = 2000
    # Below this evidence strength the user's own words are searched too (0: never).
    dual_path_below: float = 0.3
    max_text_chars: int = 2000
    save_attempts: int = 3

    def granularity(self, kb: str) -> str:
        return self.granularity_by_kb.get(kb, self.consumed_granularity)


@dataclass(frozen=True)
class _Plan:
    """What the turn will do once linking and clarification have been settled."""

    kind: TurnKind
    detection: Detection
    links: LinkResult
    entities: tuple[str, ...]
    queries: tuple[str, ...]
    standalone: str
    rewrite_how: str
    note: str = ""
    # A revisit ("再给我看看刚才那个") lifts the consumed window for this turn.
    lift_consumed: bool = False


class TurnEngine:
    """Composes kg (linking) and retrieval around the session state."""

    def __init__(self, snapshots: SnapshotCache, retriever: Retriever, sessions: SessionStore,
                 config: EngineConfig = EngineConfig(), linker: EntityLinker | None = None,
                 rewriter: RuleRewriter | None = None, llm: LLMRewriter | None = None,
                 validator: RewriteValidator | None = None,
                 shift: SimilarityShift | None = None) -> None:
        self._snapshots = snapshots
        self._retriever = retriever
        self._sessions = sessions
        self._config = config
        self._linker = linker or EntityLinker()
        self._rewriter = rewriter or RuleRewriter()
        self._llm = llm
        self._validator = validator or RewriteValidator()
        self._shift = shift  # similarity-based switch detection (needs an embedder)

    def handle(self, kb: str, session_id: str, text: str, *, k: int | None = None) -> TurnResult:
        """Process one user turn and persist the new session state.

        Raises:
            InputError: bad kb, session id or text.
            NotFoundError: the kb has no ontology.
            ConflictError: the session kept changing under us (after retries).
            DependencyError: Neo4j, Milvus or the session store failed; the
                session is not advanced.
        """
        check_kb(kb)
        check_session_id(session_id)
        if not text or not text.strip():
            raise InputError("text must not be empty")
        if len(text) > self._config.max_text_chars:
            raise InputError(f"text is {len(text)} characters long; the limit is "
                             f"{self._config.max_text_chars}")
        for attempt in range(self._config.save_attempts):
            started = time.perf_counter()
            state = self._sessions.load(kb, session_id)
            loaded = time.perf_counter()
            result, new_state = self._turn(kb, state, text.strip(), k or self._config.top_k)
            saving = time.perf_counter()
            try:
                self._sessions.save(new_state)
            except ConflictError:
                if attempt + 1 == self._config.save_attempts:
                    raise
                continue
            done = time.perf_counter()
            result.latency_ms = (done - started) * 1000
            timings = result.trace.setdefault("timings_ms", {})
            timings["session_load"] = _ms(started, loaded)
            timings["session_save"] = _ms(saving, done)
            self._keep_trace(kb, session_id, result)
            return result
        raise AssertionError("unreachable")

    # -- one turn ------------------------------------------------------------------

    def _turn(self, kb: str, state: SessionState, text: str, k: int) -> tuple[TurnResult, SessionState]:
        snapshot = self._snapshots.get(kb)
        if snapshot is None:
            raise NotFoundError(f"knowledge base {kb!r} has no ontology; import one with "
                                f"`referent ontology import --kb {kb} FILE`")
        state = state.model_copy(deep=True)
        turn_no = state.turn_count + 1
        # Stage timings (ms) for the trace, the metrics and the benchmarks: detect, link,
        # rewrite (classify, clarify or rewrite, validate), retrieve, pack; handle() adds
        # session_load and session_save.
        timings: dict[str, float] = {}
        trace: dict[str, Any] = {"alias_version": snapshot.version,
                                 "focus_before": list(state.focus), "timings_ms": timings}
        stale = self._snapshots.stale(kb)
        if stale is not None:
            # Neo4j is away: linked with the snapshot this process holds.
            trace["alias_snapshot_stale"] = stale
        mark = time.perf_counter()

        def lap(stage: str) -> None:
            nonlocal mark
            now = time.perf_counter()
            timings[stage] = round(timings.get(stage, 0.0) + (now - mark) * 1000, 3)
            mark = now

        detection = detect_mentions(text, snapshot)
        lap("detect")
        links = self._linker.link(detection, snapshot, focus=state.focus, listed=state.listed,
                                  alternates=state.alternates)
        lap("link")
        trace["mentions"] = [{"kind": m.kind.value, "text": m.text, "start": m.start, "end": m.end}
                             for m in detection.mentions]
        trace["links"] = _links_trace(links)

        plan = None
        if state.pending is not None:
            plan = self._answer_plan(state, detection, links, snapshot, trace)
            state.pending = None
        if plan is None:
            kind = classify(detection, links, state.focus)
            last = state.last_turn
            if (kind is TurnKind.CONTINUATION and self._shift is not None and last is not None
                    and self._shift.is_switch(detection, links, snapshot, focus=state.focus,
                                              previous=last.standalone, trace=trace)):
                kind = TurnKind.SWITCH
            if kind is TurnKind.REVISIT and not any(
                    link.mention.kind is MentionKind.ALIAS for link in links.links):
                # 回到刚才那个产品: the references mean an earlier topic, most recent first.
                links = self._linker.link(detection, snapshot, focus=_earlier_focus(state, text),
                                          listed=state.listed)
                trace["links"] = _links_trace(links)
            if (kind in (TurnKind.CONTINUATION, TurnKind.REVISIT) and state.focus
                    and not links.resolved and not links.ambiguous):
                implicit = self._linker.implicit(detection, snapshot, focus=state.focus,
                                                 alternates=state.alternates)
                links = LinkResult((*links.links, implicit))
                trace["links"] = _links_trace(links)
            ambiguous = links.ambiguous
            if ambiguous:
                clarified = self._clarify(state, turn_no, text, ambiguous[0], links, snapshot, trace)
                lap("rewrite")
                return clarified
            plan = self._plan(state, kind, detection, links, snapshot)
        trace["classification"] = plan.kind.value
        plan, rewrite_info = self._validated(plan, state, turn_no, snapshot, trace)
        lap("rewrite")

        granularity = self._config.granularity(kb)
        exclude_chunks: list[str] = []
        exclude_docs: list[str] = []
        if plan.lift_consumed:
            trace["consumed"] = {"granularity": granularity, "lifted": True}
        else:
            if granularity == "doc":
                exclude_docs = state.consumed_docs
            else:
                exclude_chunks = state.consumed
            trace["consumed"] = {"granularity": granularity, "lifted": False,
                                 "excluded": len(exclude_docs) + len(exclude_chunks)}
        original = plan.detection.text
        if plan.kind is TurnKind.CORRECTION:
            original = strip_correction_cue(original)
        outcome = dual_search(self._retriever, kb, plan.queries, strip_conversation_cues(original),
                              k=k, weak_below=self._config.dual_path_below,
                              entity_ids=plan.entities, exclude_chunk_ids=exclude_chunks,
                              exclude_doc_ids=exclude_docs, confusable=dict(snapshot.confusable))
        trace["retrieval"] = outcome.trace
        lap("retrieve")
        if outcome.trace.get("dual_path", {}).get("ran"):
            # Both were searched; each evidence item says which query found it.
            plan = replace(plan, queries=tuple(dict.fromkeys(
                (*plan.queries, outcome.trace["dual_path"]["original"]))))
        if plan.kind is TurnKind.CORRECTION:
            last = state.last_turn
            corrected = [e for e in (last.entities if last else ()) if e not in plan.entities]
            state.negated = list(dict.fromkeys([*state.negated, *corrected]))[-20:]
        found = [f for f in outcome.found if not _only_negated(f.hit.entity_ids, state.negated,
                                                               plan.entities)]
        if len(found) < len(outcome.found):
            trace["retrieval"]["dropped_negated"] = len(outcome.found) - len(found)
        evidence = [EvidenceItem(chunk_id=f.hit.chunk_id, doc_id=f.hit.doc_id,
                                 score=f.hit.score, title=f.hit.title, text=f.hit.text,
                                 entity_ids=list(f.hit.entity_ids), query=f.query)
                    for f in found]
        context, tokens = pack_context([f.hit for f in found],
                                       budget_tokens=self._config.context_budget_tokens)
        action = "no_answer" if outcome.no_answer or not evidence else "retrieve"
        lap("pack")

        if plan.entities:
            bare = plan.kind is not TurnKind.ANSWER and is_bare_mention(plan.detection, plan.links)
            previous = [e for e in state.focus if e not in plan.entities]
            state.alternates = previous if bare else []
            state.focus = list(plan.entities)
            if len(plan.entities) > 1:
                state.listed = list(plan.entities)
        elif plan.kind is TurnKind.SWITCH:
            state.focus, state.listed, state.alternates = [], [], []
        if plan.kind is TurnKind.SWITCH:
            state.negated = []
        state.slots = update_slots(state.slots, turn=turn_no, kind=plan.kind,
                                   detection=plan.detection, links=plan.links,
                                   entities=plan.entities, negated=state.negated)
        trace["slots"] = state.slots.as_trace()
        state.consume([e.chunk_id for e in evidence], window=self._config.consumed_window,
                      doc_ids=[e.doc_id for e in evidence])
        state.turn_count = turn_no
        evicted = state.remember(TurnRecord(index=turn_no, user=text, standalone=plan.standalone,
                                            action=action, entities=list(plan.entities)),
                                 keep_turns=self._config.recent_turns)
        fold_into_summary(state, evicted, snapshot)
        result = TurnResult(session=state.session_id, turn=turn_no, user=text, action=action,
                            standalone=plan.standalone, queries=list(plan.queries),
                            entities=list(plan.entities), evidence=evidence,
                            rewrite=rewrite_info, context=context, context_tokens=tokens,
                            trace=trace)
        return result, state

    def trace(self, kb: str, session_id: str, turn: int) -> dict[str, Any]:
        """What every stage of a recent turn saw and decided.

        Raises:
            NotFoundError: no such turn (never played, expired, or older than the kept ones).
        """
        check_kb(kb)
        check_session_id(session_id)
        trace = self._sessions.load_trace(kb, session_id, turn)
        if trace is None:
            raise NotFoundError(f"no trace of turn {turn} in session {session_id!r}: the last "
                                f"{TRACES_KEPT} turns of a live session are kept")
        return trace

    def _keep_trace(self, kb: str, session_id: str, result: TurnResult) -> None:
        record = {"turn": result.turn, "user": result.user, "stages": result.trace,
                  "result": result.results_line()}
        try:
            self._sessions.save_trace(kb, session_id, result.turn, record)
        except DependencyError as exc:
            # The turn itself succeeded and its state is saved; only the explanation is lost.
            logger.warning("could not keep the trace of turn %s: %s", result.turn, exc)

    def close(self) -> None:
        if self._llm is not None:
            self._llm.close()

    def _validated(self, plan: _Plan, state: SessionState, turn_no: int, snapshot: AliasSnapshot,
                   trace: dict[str, Any]) -> tuple[_Plan, RewriteInfo]:
        """Accept the LLM rewrite if one is configured and it passes every check, else
        the rules rewrite if it passes, else the user's own words."""
        turn_text = plan.detection.text
        asked = strip_correction_cue(turn_text) if plan.kind is TurnKind.CORRECTION else turn_text
        allowed = {*plan.entities, *state.focus, *state.alternates,
                   *(e for record in state.recent for e in record.entities),
                   *(e for line in state.summary for e in line.entities)}
        context = [*(line.text for line in state.summary),
                   *(t for record in state.recent for t in (record.user, record.standalone))]
        tried: list[dict[str, Any]] = []

        def check(queries: tuple[str, ...], reference: tuple[str, ...] = ()):
            return self._validator.check(asked, queries, snapshot, entities=plan.entities,
                                         allowed=allowed, context=context, reference=reference)

        if self._llm is not None and plan.kind in _REFERS_BACK:
            try:
                queries = self._llm.rewrite(
                    kb=snapshot.kb, session_id=state.session_id, turn=turn_no, text=turn_text,
                    history=[*(f"(earlier) {line.text}" for line in state.summary),
                             *(record.user for record in state.recent)],
                    allowed_names=[snapshot.name(e) for e in sorted(allowed)],
                    resolved_names=[snapshot.name(e) for e in plan.entities])
                verdict = check(queries, plan.queries)
                tried.append({"source": "llm", "queries": list(queries), "checks": verdict.checks})
                if verdict.accepted:
                    trace["rewrite"] = {"how": "llm", "tried": tried}
                    return (replace(plan, queries=queries, standalone=queries[0]),
                            RewriteInfo(source="llm", accepted=True, checks=verdict.checks))
            except ReferentError as exc:
                tried.append({"source": "llm", "error": str(exc)})
        verdict = check(plan.queries)
        tried.append({"source": "rules", "queries": list(plan.queries), "checks": verdict.checks})
        trace["rewrite"] = {"how": plan.rewrite_how, "note": plan.note, "tried": tried}
        if verdict.accepted:
            return plan, RewriteInfo(source="rules", accepted=True, checks=verdict.checks)
        trace["rewrite"]["fallback"] = "the user's own words"
        return (replace(plan, queries=(turn_text,), standalone=turn_text),
                RewriteInfo(source="original", accepted=False, checks=verdict.checks))

    def _plan(self, state: SessionState, kind: TurnKind, detection: Detection, links: LinkResult,
              snapshot: AliasSnapshot) -> _Plan:
        entities = links.resolved
        last = state.last_turn
        rewrite = self._rewriter.rewrite(
            detection, links, snapshot, entities=entities,
            previous_standalone=last.standalone if last and kind is not TurnKind.SWITCH else None,
            previous_entities=last.entities if last else (),
            correction=kind is TurnKind.CORRECTION,
            continuation=kind is TurnKind.CONTINUATION
            or (kind is TurnKind.REVISIT and revisit_cue(detection.text) == "again"),
            times=_slot_values(state, "time") if kind is not TurnKind.SWITCH else [],
            compared=_slot_values(state, "comparison") if kind is TurnKind.CONTINUATION else [])
        queries = tuple(strip_conversation_cues(q) for q in rewrite.queries)
        return _Plan(kind, detection, links, rewrite.entities, queries,
                     strip_conversation_cues(rewrite.standalone), rewrite.how,
                     lift_consumed=kind is TurnKind.REVISIT)

    def _answer_plan(self, state: SessionState, detection: Detection, links: LinkResult,
                     snapshot: AliasSnapshot, trace: dict[str, Any]) -> _Plan | None:
        """Resume the pending question when this turn answers it; None when it does not."""
        pending = state.pending
        answer = read_answer(detection, links, pending, snapshot)
        trace["clarification_answer"] = {"kind": answer.kind.value, "entity_ids": list(answer.entity_ids),
                                         "how": answer.how, "pending_question": pending.question_text}
        if answer.kind is AnswerKind.NOT_AN_ANSWER:
            trace["clarification_answer"]["note"] = "not an answer: pending question dropped"
            return None
        question = pending.question_text
        q_detection = detect_mentions(question, snapshot)
        last = state.last_turn
        previous = last.standalone if last and last.action != "clarify" else None
        if answer.kind is AnswerKind.NEITHER:
            return _Plan(TurnKind.ANSWER, q_detection, LinkResult(()), (), (question,), question,
                         "neither option: original question as asked", note="neither")
        queries: list[str] = []
        entities: list[str] = []
        for chosen in answer.entity_ids:
            # The chosen option becomes the focus, which settles the shared alias.
            q_links = self._linker.link(q_detection, snapshot,
                                        focus=[chosen] + [f for f in state.focus if f != chosen])
            rw = self._rewriter.rewrite(q_detection, q_links, snapshot,
                                        entities=q_links.resolved or (chosen,),
                                        previous_standalone=previous,
                                        previous_entities=last.entities if last else (),
                                        times=_slot_values(state, "time"))
            entities.extend(e for e in rw.entities if e not in entities)
            queries.extend(q for q in rw.queries if q not in queries)
        return _Plan(TurnKind.ANSWER, q_detection, links, tuple(entities), tuple(queries),
                     queries[0], "clarification answered: pending question resumed")

    def _clarify(self, state: SessionState, turn_no: int, text: str, link, links: LinkResult,
                 snapshot: AliasSnapshot, trace: dict[str, Any]) -> tuple[TurnResult, SessionState]:
        # Alias ambiguities list options by id (stable); pronoun ones in salience order.
        options = ([c.entity_id for c in link.candidates] if link.mention.kind is not MentionKind.ALIAS
                   else sorted(c.entity_id for c in link.candidates))
        clarification = build_clarification(link.mention.text, options, snapshot, text)
        state.pending = PendingClarification(turn=turn_no, question_text=text,
                                             mention=link.mention.text, options=options)
        state.listed = options
        state.turn_count = turn_no
        resolved = list(links.resolved)
        evicted = state.remember(TurnRecord(index=turn_no, user=text, standalone=text,
                                            action="clarify", entities=resolved),
                                 keep_turns=self._config.recent_turns)
        fold_into_summary(state, evicted, snapshot)
        trace["classification"] = "needs_clarification"
        result = TurnResult(session=state.session_id, turn=turn_no, user=text, action="clarify",
                            standalone=text, queries=[], entities=resolved,
                            clarification=clarification,
                            rewrite=RewriteInfo(source="original", accepted=False),
                            trace=trace)
        return result, state


# Turns whose meaning depends on earlier ones: only these are worth an LLM call.
_REFERS_BACK = frozenset({TurnKind.CONTINUATION, TurnKind.CORRECTION, TurnKind.REVISIT})


def _slot_values(state: SessionState, name: str) -> list[str]:
    slot = getattr(state.slots, name)
    return list(slot.values) if slot is not None else []


def _earlier_focus(state: SessionState, text: str) -> list[str]:
    """Entities of the recent turns, then of the summarized older ones, most recent
    first; for "回到刚才…" the current focus goes last, since the user is leaving it."""
    seen: dict[str, None] = {}
    for entity_ids in [*(r.entities for r in reversed(state.recent)),
                       *(line.entities for line in reversed(state.summary))]:
        for entity_id in entity_ids:
            seen.setdefault(entity_id, None)
    ordered = list(seen)
    if revisit_cue(text) == "back":
        ordered = [e for e in ordered if e not in state.focus] + [e for e in ordered if e in state.focus]
    return ordered


def _ms(start: float, end: float) -> float:
    return round((end - start) * 1000, 3)


def _only_negated(tags: tuple[str, ...], negated: list[str], wanted: tuple[str, ...]) -> bool:
    """A chunk about nothing but entities the user corrected away from."""
    return bool(tags) and set(tags) <= set(negated) and not set(tags) & set(wanted)


def _links_trace(links: LinkResult) -> list[dict[str, Any]]:
    return [{"mention": link.mention.text, "kind": link.mention.kind.value,
             "resolved": list(link.entity_ids), "reason": link.reason,
             "candidates": [{"id": c.entity_id, "score": c.score, "source": c.source}
                            for c in link.candidates]}
            for link in links.links]
