"""The turn engine: one user turn in, one TurnResult out.

load state → detect mentions → link → classify → clarify or rewrite →
retrieve (entity filter, consumed excluded, one chunk per doc) → pack context
→ save state. The HTTP route and `referent eval` both call :meth:`TurnEngine.handle`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from common.errors import ConflictError, InputError, NotFoundError
from common.ids import check_kb, check_session_id
from dialogue.clarify import AnswerKind, build_clarification, read_answer
from dialogue.classify import TurnKind, classify
from dialogue.models import EvidenceItem, RewriteInfo, TurnResult
from dialogue.rewrite import RuleRewriter
from dialogue.session_store import SessionStore
from dialogue.state import PendingClarification, SessionState, TurnRecord
from kg.aliases import AliasSnapshot, SnapshotCache
from kg.linker import EntityLinker, LinkResult
from kg.mentions import Detection, detect_mentions
from retrieval.context import pack_context
from retrieval.search import Retriever


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
    # A revisit ("再说一遍刚才那个") lifts the consumed window for this turn. Set by
    # the turn classification; nothing sets it yet.
    lift_consumed: bool = False


class TurnEngine:
    """Composes kg (linking) and retrieval around the session state."""

    def __init__(self, snapshots: SnapshotCache, retriever: Retriever, sessions: SessionStore,
                 config: EngineConfig = EngineConfig(), linker: EntityLinker | None = None,
                 rewriter: RuleRewriter | None = None) -> None:
        self._snapshots = snapshots
        self._retriever = retriever
        self._sessions = sessions
        self._config = config
        self._linker = linker or EntityLinker()
        self._rewriter = rewriter or RuleRewriter()

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
            result, new_state = self._turn(kb, state, text.strip(), k or self._config.top_k)
            try:
                self._sessions.save(new_state)
            except ConflictError:
                if attempt + 1 == self._config.save_attempts:
                    raise
                continue
            result.latency_ms = (time.perf_counter() - started) * 1000
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
        trace: dict[str, Any] = {"alias_version": snapshot.version,
                                 "focus_before": list(state.focus)}
        detection = detect_mentions(text, snapshot)
        links = self._linker.link(detection, snapshot, focus=state.focus, listed=state.listed)
        trace["mentions"] = [{"kind": m.kind.value, "text": m.text, "start": m.start, "end": m.end}
                             for m in detection.mentions]
        trace["links"] = _links_trace(links)

        plan = None
        if state.pending is not None:
            plan = self._answer_plan(state, detection, links, snapshot, trace)
            state.pending = None
        if plan is None:
            ambiguous = links.ambiguous
            if ambiguous:
                return self._clarify(state, turn_no, text, ambiguous[0], links, snapshot, trace)
            plan = self._plan(state, detection, links, snapshot)
        trace["classification"] = plan.kind.value
        trace["rewrite"] = {"how": plan.rewrite_how, "note": plan.note}

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
        outcome = self._retriever.search(kb, plan.queries, k=k, entity_ids=plan.entities,
                                         exclude_chunk_ids=exclude_chunks,
                                         exclude_doc_ids=exclude_docs,
                                         confusable=dict(snapshot.confusable))
        trace["retrieval"] = outcome.trace
        evidence = [EvidenceItem(chunk_id=f.hit.chunk_id, doc_id=f.hit.doc_id,
                                 score=f.hit.score, title=f.hit.title, text=f.hit.text,
                                 entity_ids=list(f.hit.entity_ids), query=f.query)
                    for f in outcome.found]
        context, tokens = pack_context([f.hit for f in outcome.found],
                                       budget_tokens=self._config.context_budget_tokens)
        action = "no_answer" if outcome.no_answer else "retrieve"

        if plan.entities:
            state.focus = list(plan.entities)
            if len(plan.entities) > 1:
                state.listed = list(plan.entities)
        elif plan.kind is TurnKind.SWITCH:
            state.focus, state.listed = [], []
        state.consume([e.chunk_id for e in evidence], window=self._config.consumed_window,
                      doc_ids=[e.doc_id for e in evidence])
        state.turn_count = turn_no
        state.remember(TurnRecord(index=turn_no, user=text, standalone=plan.standalone,
                                  action=action, entities=list(plan.entities)),
                       keep_turns=self._config.recent_turns)
        result = TurnResult(session=state.session_id, turn=turn_no, user=text, action=action,
                            standalone=plan.standalone, queries=list(plan.queries),
                            entities=list(plan.entities), evidence=evidence,
                            rewrite=RewriteInfo(source="rules", accepted=True),
                            context=context, context_tokens=tokens, trace=trace)
        return result, state

    def _plan(self, state: SessionState, detection: Detection, links: LinkResult,
              snapshot: AliasSnapshot) -> _Plan:
        kind = classify(detection, links, state.focus)
        entities = links.resolved
        if not entities and kind is TurnKind.CONTINUATION and state.focus:
            entities = tuple(state.focus)
        last = state.last_turn
        rewrite = self._rewriter.rewrite(
            detection, links, snapshot, entities=entities,
            previous_standalone=last.standalone if last and kind is not TurnKind.SWITCH else None,
            previous_entities=last.entities if last else ())
        return _Plan(kind, detection, links, rewrite.entities, rewrite.queries, rewrite.standalone,
                     rewrite.how)

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
            rw = self._rewriter.rewrite(q_detection, q_links, snapshot, entities=q_links.resolved,
                                        previous_standalone=previous,
                                        previous_entities=last.entities if last else ())
            entities.extend(e for e in rw.entities if e not in entities)
            queries.extend(q for q in rw.queries if q not in queries)
        return _Plan(TurnKind.ANSWER, q_detection, links, tuple(entities), tuple(queries),
                     queries[0], "clarification answered: pending question resumed")

    def _clarify(self, state: SessionState, turn_no: int, text: str, link, links: LinkResult,
                 snapshot: AliasSnapshot, trace: dict[str, Any]) -> tuple[TurnResult, SessionState]:
        options = sorted(c.entity_id for c in link.candidates)
        clarification = build_clarification(link.mention.text, options, snapshot, text)
        state.pending = PendingClarification(turn=turn_no, question_text=text,
                                             mention=link.mention.text, options=options)
        state.listed = options
        state.turn_count = turn_no
        resolved = list(links.resolved)
        state.remember(TurnRecord(index=turn_no, user=text, standalone=text, action="clarify",
                                  entities=resolved), keep_turns=self._config.recent_turns)
        trace["classification"] = "needs_clarification"
        result = TurnResult(session=state.session_id, turn=turn_no, user=text, action="clarify",
                            standalone=text, queries=[], entities=resolved,
                            clarification=clarification,
                            rewrite=RewriteInfo(source="original", accepted=False),
                            trace=trace)
        return result, state


def _links_trace(links: LinkResult) -> list[dict[str, Any]]:
    return [{"mention": link.mention.text, "kind": link.mention.kind.value,
             "resolved": list(link.entity_ids), "reason": link.reason,
             "candidates": [{"id": c.entity_id, "score": c.score, "source": c.source}
                            for c in link.candidates]}
            for link in links.links]
