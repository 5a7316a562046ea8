"""The turn engine: one user turn in, one TurnResult out.

A short pipeline: load the session → understand (detect mentions, link) →
decide (dialogue/policy) → rewrite (dialogue/rewrite_chain.py) → retrieve
(entity filter, used evidence excluded, shown evidence back only when it answers
something new, one chunk per doc) → pack context → apply
(dialogue/transition.py) → save. A stage that fails falls back and the trace
says so (dialogue/stages.py); only a store being down fails the turn. The HTTP
route and `referent eval` both call :meth:`TurnEngine.handle`.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from common.errors import ConflictError, DependencyError, InputError, NotFoundError
from common.ids import check_kb, check_session_id
from dialogue.clarify import build_clarification
from dialogue.events import (ClarificationAnswered, ClarificationAsked, DependencyDegraded,
                             StagesTimed)
from dialogue.classify import (TurnKind, asks_again, asks_for_more, is_switch,
                               strip_conversation_cues, strip_correction_cue)
from dialogue.framing import keep_understanding, kept_readings
from dialogue.llm_rewriter import LLMRewriter
from dialogue.models import EvidenceItem, RewriteInfo, TurnResult
from dialogue.policy.clarify_model import ClarifyModel
from dialogue.policy.gate import AntecedentGate, ModelGate
from dialogue.policy import (Clarify, Decision, DialoguePolicy, NoAnswer, PlanQueries, Resume,
                             UnderstoodTurn, links_trace)
from dialogue.rewrite import RuleRewriter
from dialogue.rewrite_chain import RewriteChain, RewriteOutcome
from dialogue.rewriter import Proposal, RewriteRequest
from dialogue.session_store import SessionStore
from dialogue.stages import TurnRun
from dialogue.state import (PlayedTurn, SessionAccess, SessionOwner, SessionState,
                            ShownRecord, TurnRecord)
from dialogue.topic_shift import SimilarityShift, refers_back
from dialogue.topics import TopicConfig, TopicPhrase, answers_read, next_topic, refers_to
from dialogue.trace import ConsumedTrace, MentionTrace, RewriteTrace
from dialogue.transition import Limits, TurnOutcome, apply_turn, negated_after
from dialogue.validate import RewriteValidator
from kg.aliases import AliasSnapshot, SnapshotCache
from kg.ontology import Ontology
from understanding.linker import EntityLinker, LinkResult
from understanding.mentions import Detection, MentionKind, detect_mentions
from understanding.reading import current as current_reading
from understanding.reading import reading
from common.language.normalize import turn_language
from retrieval.context import pack_context
from retrieval.dual_path import dual_search, own_coverage
from retrieval.entity_facts import EntityFacts, EntityFactsCache
from retrieval.history import Carried
from retrieval.novelty import Shown
from retrieval.request import SearchRequest
from retrieval.search import Found, Retriever, SearchOutcome, degraded_dependencies


logger = logging.getLogger(__name__)

# What the search does with the chunks shown before, by what the turn asks: a new
# question lets back those that answer what is new, "show me that again" all of them,
# "what else" none.
_READMIT = {"new": "novel", "revisit": "all", "more": "none"}


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
    # Played turns remembered per session for retries (idempotency keys, turn numbers),
    # and how many of the newest keep their whole answer to return it again.
    played_kept: int = 20
    answers_kept: int = 2
    # How a kb without an ontology keeps the conversation's topic (dialogue/topics.py).
    topics: TopicConfig = field(default_factory=TopicConfig)

    def granularity(self, kb: str) -> str:
        return self.granularity_by_kb.get(kb, self.consumed_granularity)


@dataclass(frozen=True)
class _Plan:
    """A searched turn once decided and rewritten."""

    kind: TurnKind
    detection: Detection
    links: LinkResult
    proposal: Proposal
    lift_consumed: bool = False

    @property
    def queries(self) -> tuple[str, ...]:
        return self.proposal.queries

    @property
    def entities(self) -> tuple[str, ...]:
        return self.proposal.entities


class TurnEngine:
    """Composes kg (linking), the dialogue policy, the rewriters and retrieval
    around the session state."""

    def __init__(self, snapshots: SnapshotCache, retriever: Retriever, sessions: SessionStore,
                 config: EngineConfig = EngineConfig(), linker: EntityLinker | None = None,
                 rewriter: RuleRewriter | None = None, llm: LLMRewriter | None = None,
                 validator: RewriteValidator | None = None,
                 shift: SimilarityShift | None = None,
                 policy: DialoguePolicy | None = None,
                 rewrites: RewriteChain | None = None,
                 clarifier: ClarifyModel | None = None,
                 facts: EntityFactsCache | None = None) -> None:
        self._snapshots = snapshots
        # The empty snapshot of each kb served without an ontology, built once: building
        # one builds its mention pipeline, which costs far more than a turn.
        self._no_ontology: dict[str, AliasSnapshot] = {}
        # What the kb's passages state about each entity (tells apart by what is asked).
        self._facts = facts
        self._retriever = retriever
        self._sessions = sessions
        self._config = config
        # With the clarify model, the linker leaves what only the context fit or the
        # salience order would settle to it, through the policy's gate.
        self._linker = linker or EntityLinker(defer_fit=clarifier is not None)
        self._llm = llm
        self._policy = policy or DialoguePolicy(
            self._linker, shift=shift, gate=AntecedentGate(ModelGate(clarifier) if clarifier else None))
        self._rewrites = rewrites or RewriteChain(rewriter or RuleRewriter(), llm, validator)
        self._limits = Limits(recent_turns=config.recent_turns,
                              consumed_window=config.consumed_window)
        self._topics = config.topics

    def handle(self, kb: str, session_id: str, text: str, *, k: int | None = None,
               access: SessionAccess | None = None, idempotency_key: str | None = None,
               expected_turn: int | None = None, used: Sequence[str] = ()) -> TurnResult:
        """Process one user turn and persist the new session state.

        With ``access``, the session must be the caller's (or the caller an admin of
        the kb); a new session becomes the caller's. Without (the CLI), no check.
        The turn's answer is saved with the state, in the same write. A retry of a
        turn that was saved (same ``idempotency_key``, or ``expected_turn`` naming a
        turn already played) gets that answer again with ``replayed`` set, and the
        session does not advance; a failed turn (any exception) saved nothing.
        ``used``: chunk ids of earlier evidence the client used; they count as consumed.

        Raises:
            InputError: bad kb, session id or text; an idempotency key reused for
                another text (``field`` is ``Idempotency-Key``); a used id the session
                was not shown.
            NotFoundError: the kb has neither an ontology nor a corpus, or the session
                belongs to another caller.
            ConflictError: the session kept changing under us (after retries), or
                ``expected_turn`` does not follow the session's last turn.
            DependencyError: Neo4j, Milvus or the session store failed; the
                session is not advanced.
        """
        self._check_input(kb, session_id, text)
        k = k or self._config.top_k
        text = text.strip()
        fingerprint = hashlib.sha256(f"{k}\x00{text}".encode()).hexdigest()[:32]
        for attempt in range(self._config.save_attempts):
            started = time.perf_counter()
            state = self._owned(self._sessions.load(kb, session_id), access)
            loaded = time.perf_counter()
            replay = self._replay(state, fingerprint, idempotency_key, expected_turn)
            if replay is not None:
                return self._with_kept_trace(kb, session_id, replay)
            if used:
                state = _with_used(state, used)
            result, new_state = self._turn(kb, state, text, k)
            self._warn_if_incomplete(kb, result)
            # The answer without its trace, which the trace store keeps (and a replay
            # reads back from there): the bulk of a state would be traces otherwise.
            new_state.keep_played(PlayedTurn(turn=result.turn, key=idempotency_key,
                                             fingerprint=fingerprint,
                                             answer=result.model_dump_json(exclude={"trace"})),
                                  keep=self._config.played_kept,
                                  answers=self._config.answers_kept)
            saving = time.perf_counter()
            try:
                # One write: the state and the turn's trace (its timings up to the save).
                self._sessions.save(new_state, trace=_trace_record(result, new_state.owner))
            except ConflictError:
                if attempt + 1 == self._config.save_attempts:
                    raise
                continue
            # Saved: from here on nothing may fail the request, or the client would be
            # told the turn failed although it was played.
            self._timed(result, started, loaded, saving)
            return result
        raise AssertionError("unreachable")

    @staticmethod
    def _timed(result: TurnResult, started: float, loaded: float, saving: float) -> None:
        """The turn's latency and its session load and save timings, and the event that
        tells them to the metrics."""
        done = time.perf_counter()
        result.latency_ms = (done - started) * 1000
        timings = result.trace.setdefault("timings_ms", {})
        timings["session_load"] = _ms(started, loaded)
        timings["session_save"] = _ms(saving, done)
        result.events.append(StagesTimed(dict(timings), result.trace.get("alias_version")))

    def _check_input(self, kb: str, session_id: str, text: str) -> None:
        check_kb(kb)
        check_session_id(session_id)
        if not text or not text.strip():
            raise InputError("text must not be empty")
        if len(text) > self._config.max_text_chars:
            raise InputError(f"text is {len(text)} characters long; the limit is "
                             f"{self._config.max_text_chars}")

    def _with_kept_trace(self, kb: str, session_id: str, result: TurnResult) -> TurnResult:
        """A replayed answer with the trace its turn kept (an empty one if it is gone)."""
        try:
            kept = self._sessions.load_trace(kb, session_id, result.turn)
        except DependencyError:
            kept = None
        if kept is not None:
            result.trace = kept.get("stages", {})
        return result

    def _warn_if_incomplete(self, kb: str, result: TurnResult) -> None:
        """Say so in the answer when an ingest into the kb did not finish."""
        try:
            incomplete = self._retriever.incomplete(kb)
        except Exception:  # noqa: BLE001 - a warning never fails a turn
            logger.exception("could not read the ingest state of kb %r", kb)
            return
        if incomplete is not None:
            result.trace["collection_incomplete"] = incomplete
            result.warnings.append(
                f"the knowledge base's collection is incomplete: an ingest started at "
                f"{incomplete.get('started_at', '?')} did not finish, so evidence may be "
                f"missing; run `referent ingest --kb {kb} FILE` again to complete it")

    def _replay(self, state: SessionState, fingerprint: str, key: str | None,
                expected_turn: int | None) -> TurnResult | None:
        """The stored answer when this request repeats a played turn; None to play it.

        Raises:
            InputError: the key was used for a turn with another text or k.
            ConflictError: ``expected_turn`` does not fit the session (skips a turn,
                or names a played turn with another text), or the repeated turn's
                answer is no longer kept.
        """
        record = state.played_turn(key=key) if key is not None else None
        if record is not None and record.fingerprint != fingerprint:
            raise InputError(f"Idempotency-Key {key!r} was already used for turn {record.turn} "
                             f"of session {state.session_id!r} with another text or k; a new "
                             "turn needs a new key", field="Idempotency-Key")
        if record is not None and expected_turn is not None and expected_turn != record.turn:
            raise ConflictError(f"Idempotency-Key {key!r} belongs to turn {record.turn}, not turn "
                                f"{expected_turn}", field="turn")
        if record is None and expected_turn is not None:
            now = state.turn_count
            if expected_turn == now + 1:
                return None
            if expected_turn > now + 1:
                raise ConflictError(f"session {state.session_id!r} is at turn {now} (it may have "
                                    f"expired), so turn {expected_turn} would skip turns; send "
                                    f"\"turn\": {now + 1}", field="turn")
            record = state.played_turn(turn=expected_turn)
            if record is not None and record.fingerprint != fingerprint:
                raise ConflictError(f"turn {expected_turn} of session {state.session_id!r} was "
                                    f"played with another text or k; the session is at turn "
                                    f"{now}: send \"turn\": {now + 1} for a new turn", field="turn")
            if record is None:
                raise ConflictError(f"turn {expected_turn} of session {state.session_id!r} was "
                                    f"played already and is no longer remembered; the session "
                                    f"is at turn {now}", field="turn")
        if record is None:
            return None
        if record.answer is None:
            raise ConflictError(f"turn {record.turn} of session {state.session_id!r} was played "
                                f"already; its answer is no longer kept (the last "
                                f"{self._config.answers_kept} are)",
                                field="Idempotency-Key" if key is not None else "turn")
        return TurnResult.model_validate_json(record.answer).model_copy(update={"replayed": True})

    # -- one turn: understand → decide → rewrite → retrieve → pack → apply ----------

    def _turn(self, kb: str, state: SessionState, text: str, k: int) -> tuple[TurnResult, SessionState]:
        snapshot = self._snapshot(kb)
        # Every text read in the turn is read once; the recent turns' texts come read.
        with reading(snapshot, kept_readings(state)):
            return self._played(kb, state, text, k, snapshot)

    def _played(self, kb: str, state: SessionState, text: str, k: int,
                snapshot: AliasSnapshot) -> tuple[TurnResult, SessionState]:
        run = TurnRun(self._trace_start(kb, state, snapshot))
        turn_no = state.turn_count + 1
        understood = self._understand(run, text, state, snapshot)
        facts = self._entity_facts(run, kb, snapshot)
        decision = self._decide(run, understood, state, snapshot, facts)
        if isinstance(decision, Clarify):
            return self._told(run, decision, self._ask(run, state, turn_no, text, decision, snapshot))
        if isinstance(decision, NoAnswer):
            return self._told(run, decision,
                              self._answer_nothing(run, state, turn_no, text, decision, snapshot))
        plan, rewrite = self._rewrite(run, decision, state, snapshot, turn_no)
        run.lap("rewrite")
        negated = run.guarded("apply", lambda: negated_after(state, plan.kind, plan.entities),
                              lambda: list(state.negated), "the negated entities as they were")
        plan, found, weak = self._retrieve(run, kb, plan, state, snapshot, k, negated)
        if (run.trace.get("topic_shift") or {}).get("switch"):
            rival = found if found and not weak else None
            again = self._unswitched(run, kb, understood, state, snapshot, turn_no, k, facts,
                                     rival=rival)
            if again is not None:
                decision, plan, rewrite, negated, found, weak = again
        run.lap("retrieve")
        result = self._answer(run, state, turn_no, text, plan, rewrite, found, weak)
        run.lap("pack")
        topic = self._topic(run, kb, snapshot, state, plan, result)
        outcome = TurnOutcome(turn_no, text, decision, result.action, plan.proposal.standalone,
                              plan.entities, plan.kind, plan.detection, plan.links, tuple(negated),
                              tuple(e.chunk_id for e in result.evidence),
                              tuple(e.doc_id for e in result.evidence),
                              asked=" ".join(plan.queries),
                              found_titles=tuple(e.title for e in result.evidence[:2] if e.title),
                              kinds=_kinds(facts, [*plan.entities, *state.focus]),
                              topic=topic, question=plan.proposal.slots)
        new_state = self._apply(run, state, outcome, snapshot)
        run.trace["slots"] = new_state.slots.as_trace()
        result.trace = run.trace  # with what applying the turn added
        return self._told(run, decision, (result, new_state))

    def _topic(self, run: TurnRun, kb: str, snapshot: AliasSnapshot, state: SessionState,
               plan: _Plan, result: TurnResult) -> dict[str, float]:
        """The topic this turn leaves behind, in a kb without an ontology ({} with one:
        there the focus entities are the subject)."""
        if snapshot.entities:
            return {}
        topic = run.guarded("topic", lambda: next_topic(
            _inherited_topic(state), strip_conversation_cues(plan.detection.text),
            [e.text for e in result.evidence[:1]], self._retriever.term_stats(kb),
            self._topics, switched=plan.kind is TurnKind.SWITCH),
            lambda: _inherited_topic(state), "the topic as it was")
        run.trace.setdefault("topic", {})["after"] = [p.text for p in topic]
        return {p.text: round(p.weight, 4) for p in topic}

    def _unswitched(self, run: TurnRun, kb: str, understood: UnderstoodTurn,
                    state: SessionState, snapshot: AliasSnapshot, turn_no: int, k: int,
                    facts: EntityFacts | None = None, rival: list[Found] | None = None,
                    ) -> tuple[PlanQueries, _Plan, Any, list[str], list[Found], bool] | None:
        """A turn the similarity check took for a new topic, read again as a continuation
        of the focus. Similarity alone cannot tell a subjectless follow-up ("怎么才能退掉",
        "超出以后会另外收费吗", "how much is colour printing" after a library) from a new
        question; the kb can. A new topic the kb has is found without the focus, so a
        switch that finds nothing is more likely a follow-up; and one whose evidence
        (``rival``) holds less of the user's own words than the focus' does is too (the
        words are weighed by how rare they are in the kb, never the focus' name, which
        only the continuation's query carries). Kept only when the continuation finds
        evidence, and better evidence than ``rival``; otherwise the trace is as it was
        (None)."""
        kept_trace, kept_events = dict(run.trace), len(run.events)
        decision = run.guarded(
            "policy", lambda: self._policy.decide(understood, state, snapshot, facts,
                                                  by_similarity=False),
            lambda: None, "the switch kept")
        if isinstance(decision, PlanQueries):
            run.trace.update(decision.trace)
            plan, rewrite = self._rewrite(run, decision, state, snapshot, turn_no)
            negated = run.guarded("apply", lambda: negated_after(state, plan.kind, plan.entities),
                                  lambda: list(state.negated), "the negated entities as they were")
            plan, found, weak = self._retrieve(run, kb, plan, state, snapshot, k, negated)
            undone = self._better_than_switch(kb, understood.text, found, rival) \
                if found and not weak else None
            if undone is not None:
                run.trace["topic_shift"] = {**kept_trace["topic_shift"], "switch": False,
                                            **undone}
                return decision, plan, rewrite, negated, found, weak
        run.trace.clear()
        run.trace.update(kept_trace)
        del run.events[kept_events:]
        return None

    def _better_than_switch(self, kb: str, text: str, found: list[Found],
                            rival: list[Found] | None) -> dict[str, Any] | None:
        """Why the continuation's evidence ``found`` beats the switch's (``rival``; None:
        the switch found nothing), for the trace; None when it does not: it must hold more
        of the user's own words, weighed by how rare they are in the kb."""
        if rival is None:
            return {"undone": "the new topic found nothing; searched as a continuation"}
        stats = self._retriever.term_stats(kb)
        words = strip_conversation_cues(text)
        held = max(own_coverage(words, f.hit, stats) for f in found)
        held_by_switch = max(own_coverage(words, f.hit, stats) for f in rival)
        if held <= held_by_switch:
            return None
        return {"undone": "the focus' evidence holds more of the turn's words than the new "
                          "topic's",
                "held": round(held, 4), "held_by_switch": round(held_by_switch, 4)}

    @staticmethod
    def _told(run: TurnRun, decision: Decision,
              played: tuple[TurnResult, SessionState]) -> tuple[TurnResult, SessionState]:
        """The played turn, with the events it tells the metrics and the analytics."""
        result = played[0]
        if decision.pending_answer is not None:
            answer = decision.pending_answer
            result.events.append(ClarificationAnswered(answer.kind.value, answer.entity_ids,
                                                       answer.how))
        if isinstance(decision, Clarify):
            candidates = decision.link.candidates
            result.events.append(ClarificationAsked(
                decision.mention, decision.link.mention.kind.value,
                candidates[0].match if candidates else "", tuple(decision.options),
                decision=decision.record))
        result.events.extend(run.events)
        return played

    def _snapshot(self, kb: str) -> AliasSnapshot:
        snapshot = self._snapshots.get(kb)
        if snapshot is None:
            # No ontology: nothing links, the turn is searched with its own words and
            # those of the earlier turns. A kb with neither ontology nor corpus is unknown.
            if not self._retriever.has_kb(kb):
                raise unknown_kb(kb)
            snapshot = self._no_ontology.get(kb)
            if snapshot is None:
                snapshot = self._no_ontology[kb] = AliasSnapshot.from_ontology(kb, 0, Ontology())
        return snapshot

    def _trace_start(self, kb: str, state: SessionState, snapshot: AliasSnapshot) -> dict[str, Any]:
        trace: dict[str, Any] = {"alias_version": snapshot.version,
                                 "focus_before": list(state.focus), "timings_ms": {}}
        stale = self._snapshots.stale(kb)
        if stale is not None:
            # Neo4j is away: linked with the snapshot this process holds.
            trace["alias_snapshot_stale"] = stale
        return trace

    def _understand(self, run: TurnRun, text: str, state: SessionState,
                    snapshot: AliasSnapshot) -> UnderstoodTurn:
        detection = run.guarded("detect", lambda: detect_mentions(text, snapshot),
                                lambda: Detection(text, (), False), "no mentions")
        run.lap("detect")
        links = run.guarded("link", lambda: self._linker.link(
            detection, snapshot, focus=state.focus, listed=state.listed,
            alternates=state.alternates, recent=_recent_entities(state),
            context_attributes=_slot_values(state, "attribute")),
            lambda: LinkResult(()), "nothing linked")
        run.lap("link")
        run.trace["mentions"] = [MentionTrace(kind=m.kind.value, text=m.text, start=m.start,
                                              end=m.end).dump() for m in detection.mentions]
        run.trace["links"] = links_trace(links)
        return UnderstoodTurn(text, detection, links)

    def _entity_facts(self, run: TurnRun, kb: str, snapshot: AliasSnapshot) -> EntityFacts | None:
        """The kb's entity facts; None (the policy goes without) when there is no
        cache or the index could not be read, which the trace says."""
        if self._facts is None or not snapshot.entities:
            return None
        try:
            return self._facts.get(kb, snapshot)
        except Exception as exc:  # noqa: BLE001 - a turn never raises; the facts are optional
            logger.warning("entity facts of %r unavailable: %s", kb, exc)
            run.fell_back("facts", type(exc).__name__, "no entity facts")
            return None

    def _decide(self, run: TurnRun, turn: UnderstoodTurn, state: SessionState,
                snapshot: AliasSnapshot, facts: EntityFacts | None = None) -> Decision:
        decision = run.guarded(
            "policy", lambda: self._policy.decide(turn, state, snapshot, facts),
            lambda: PlanQueries(TurnKind.CONTINUATION, turn.detection, turn.links,
                                reasons=("the policy failed: the turn as understood",)),
            "the turn as understood, as a continuation")
        run.trace.update(decision.trace)
        return decision

    def _rewrite(self, run: TurnRun, decision: PlanQueries | Resume, state: SessionState,
                 snapshot: AliasSnapshot, turn_no: int) -> tuple[_Plan, RewriteInfo]:
        if isinstance(decision, Resume):
            request = RewriteRequest(TurnKind.ANSWER, decision.detection, decision.links, state,
                                     snapshot, turn_no, readings=decision.readings,
                                     neither=decision.neither)
        else:
            request = RewriteRequest(decision.kind, decision.detection, decision.links, state,
                                     snapshot, turn_no)
        run.trace["classification"] = request.kind.value
        rewritten: RewriteOutcome = self._rewrites.run(request)
        run.trace["rewrite"] = RewriteTrace.model_validate(rewritten.trace).dump()
        for fallback in rewritten.fallbacks:
            run.fell_back(fallback["stage"], fallback["error"], fallback["fallback"])
        run.events.extend(rewritten.events)
        plan = _Plan(request.kind, request.detection, request.links, rewritten.proposal,
                     lift_consumed=isinstance(decision, PlanQueries) and decision.lift_consumed)
        return plan, rewritten.info

    def _retrieve(self, run: TurnRun, kb: str, plan: _Plan, state: SessionState,
                  snapshot: AliasSnapshot, k: int,
                  negated: list[str]) -> tuple[_Plan, list[Found], bool]:
        """The plan (with the user's own words when they were searched too), the
        evidence (none only about negated entities) and whether it is too weak."""
        shown = self._shown_so_far(run, kb, plan, state, snapshot)
        original = plan.detection.text
        if plan.kind is TurnKind.CORRECTION:
            original = strip_correction_cue(original)
        request = SearchRequest(plan.queries, k, entity_ids=plan.entities,
                                confusable=dict(snapshot.confusable), **shown)
        outcome = run.guarded("retrieve", lambda: dual_search(
            self._retriever, kb, request, strip_conversation_cues(original),
            weak_below=self._config.dual_path_below),
            lambda: SearchOutcome(found=(), trace={"fallback": "no answer"}, no_answer=True),
            "no answer")
        run.trace["retrieval"] = outcome.trace
        run.events.extend(DependencyDegraded(d) for d in degraded_dependencies(outcome.trace))
        dual = outcome.trace.get("dual_path", {})
        if dual.get("ran"):
            # Both were searched; each evidence item says which query found it.
            queries = tuple(dict.fromkeys((*plan.queries, dual["original"])))
            plan = _Plan(plan.kind, plan.detection, plan.links,
                         _with_queries(plan.proposal, queries), plan.lift_consumed)
        found = [f for f in outcome.found
                 if not _only_negated(f.hit.entity_ids, negated, plan.entities)]
        if len(found) < len(outcome.found):
            run.trace["retrieval"]["dropped_negated"] = len(outcome.found) - len(found)
        return plan, found, outcome.no_answer

    def _shown_so_far(self, run: TurnRun, kb: str, plan: _Plan, state: SessionState,
                      snapshot: AliasSnapshot) -> dict[str, Any]:
        """What the session was shown, as fields of the turn's SearchRequest: ``exclude_*``
        (what must stay out: used chunks, or whole documents at doc granularity),
        ``readmittable`` and ``readmit`` (what was shown, and whether it comes back under
        the novelty test, all of it (a revisit) or none (a request for more)), ``context``
        (the earlier turns' queries, for a turn that resolves no entity), ``abstain``
        and the resolved entities' names in every language."""
        granularity = self._config.granularity(kb)
        text = plan.detection.text
        # "再发我一下 / show me that again" asks for what was shown; "回到刚才那个X，…"
        # returns to a topic with a question, which the novelty test serves.
        again = plan.lift_consumed and asks_again(text)
        intent = "revisit" if again else "more" if asks_for_more(text) else "new"
        exclude_chunks: list[str] = []
        exclude_docs: list[str] = []
        shown: list[Shown] = []
        if granularity == "doc":
            if not plan.lift_consumed:
                exclude_docs = list(state.consumed_docs)
        else:
            used = set(state.used)
            known = {r.chunk_id for r in state.shown}
            # Sessions saved before shown chunks were recorded: their turn is unknown (0).
            records = [*(ShownRecord(chunk_id=c, doc_id="", turn=0, query="")
                         for c in state.consumed if c not in known), *state.shown]
            exclude_chunks = [] if plan.lift_consumed else [r.chunk_id for r in records
                                                            if r.chunk_id in used]
            shown = [Shown(r.chunk_id, r.doc_id, r.turn, r.query) for r in records
                     if plan.lift_consumed or r.chunk_id not in used]
            if not snapshot.entities and not plan.lift_consumed:
                listed = shown
                shown = run.guarded("offered", lambda: self._read(kb, listed, text),
                                    lambda: listed, "every shown passage counted as read")
        run.trace["consumed"] = ConsumedTrace(
            granularity=granularity, lifted=plan.lift_consumed, intent=intent, shown=len(shown),
            excluded=len(exclude_docs) + len(exclude_chunks)).dump()
        history = _carried(plan, state, with_topic=not snapshot.entities)
        if history.topic:
            run.trace["topic"] = {"carried": list(history.topic),
                                  "pronoun_means": refers_to(_inherited_topic(state))
                                  if history.refers_back else None}
        # A revisit asks for something the session found before: it never abstains.
        return {"exclude_chunk_ids": exclude_chunks, "exclude_doc_ids": exclude_docs,
                "readmittable": shown, "readmit": _READMIT[intent], "context": history,
                "known_words": _known_words(plan, state),
                "abstain": not plan.lift_consumed,
                "names": {e: snapshot.entities[e].all_aliases for e in plan.entities
                          if e in snapshot.entities}}

    def _read(self, kb: str, shown: list[Shown], text: str) -> list[Shown]:
        """Of the shown chunks, those that count as read in a kb without an ontology
        (dialogue/topics.py: answers_read)."""
        texts = {c.chunk_id: f"{c.title}\n{c.text}"
                 for c in self._retriever.chunks(kb, [r.chunk_id for r in shown])}
        return answers_read(shown, strip_conversation_cues(text), texts,
                            self._retriever.term_stats(kb))

    def _answer(self, run: TurnRun, state: SessionState, turn_no: int, text: str, plan: _Plan,
                rewrite: RewriteInfo, found: list[Found], weak: bool) -> TurnResult:
        evidence = [EvidenceItem(chunk_id=f.hit.chunk_id, doc_id=f.hit.doc_id,
                                 score=f.hit.score, title=f.hit.title, text=f.hit.text,
                                 entity_ids=list(f.hit.entity_ids), query=f.query,
                                 seen_in_turn=f.seen_in_turn)
                    for f in found]
        context, tokens = run.guarded(
            "pack", lambda: pack_context([f.hit for f in found],
                                         budget_tokens=self._config.context_budget_tokens),
            lambda: ("", 0), "no packed context")
        action = "no_answer" if weak or not evidence else "retrieve"
        return TurnResult(session=state.session_id, turn=turn_no, user=text, action=action,
                          standalone=plan.proposal.standalone, queries=list(plan.queries),
                          entities=list(plan.entities), evidence=evidence, rewrite=rewrite,
                          context=context, context_tokens=tokens, trace=run.trace)

    def _ask(self, run: TurnRun, state: SessionState, turn_no: int, text: str, decision: Clarify,
             snapshot: AliasSnapshot) -> tuple[TurnResult, SessionState]:
        names = [(link.mention.start, link.mention.end) for link in decision.links.links
                 if link.mention.kind is MentionKind.ALIAS]
        clarification = build_clarification(decision.mention, list(decision.options), snapshot, text,
                                            language=turn_language(text, names))
        run.trace["classification"] = "needs_clarification"
        outcome = TurnOutcome(turn_no, text, decision, "clarify", text, decision.resolved)
        new_state = self._apply(run, state, outcome, snapshot)
        run.lap("rewrite")
        result = TurnResult(session=state.session_id, turn=turn_no, user=text, action="clarify",
                            standalone=text, queries=[], entities=list(decision.resolved),
                            clarification=clarification,
                            rewrite=RewriteInfo(source="original", accepted=False), trace=run.trace)
        return result, new_state

    def _answer_nothing(self, run: TurnRun, state: SessionState, turn_no: int, text: str,
                        decision: NoAnswer, snapshot: AliasSnapshot) -> tuple[TurnResult, SessionState]:
        run.trace["classification"] = "no_answer"
        run.trace["no_answer"] = {"reasons": list(decision.reasons)}
        new_state = self._apply(run, state, TurnOutcome(turn_no, text, decision, "no_answer", text),
                                snapshot)
        run.lap("rewrite")
        result = TurnResult(session=state.session_id, turn=turn_no, user=text, action="no_answer",
                            standalone=text, queries=[], entities=[],
                            rewrite=RewriteInfo(source="original", accepted=False), trace=run.trace)
        return result, new_state

    def _apply(self, run: TurnRun, state: SessionState, outcome: TurnOutcome,
               snapshot: AliasSnapshot) -> SessionState:
        after = run.guarded("apply", lambda: apply_turn(state, outcome, snapshot, self._limits),
                            lambda: _counted_only(state, outcome, self._limits),
                            "the turn counted and remembered, nothing else changed")
        run.guarded("frame", lambda: keep_understanding(state, after, outcome, snapshot,
                                                        current_reading()),
                    lambda: None, "the turn kept without its frame")
        return after

    # -- traces --------------------------------------------------------------------

    def trace(self, kb: str, session_id: str, turn: int, *,
              access: SessionAccess | None = None) -> dict[str, Any]:
        """What every stage of a recent turn saw and decided.

        Raises:
            NotFoundError: no such turn (never played, expired, older than the kept ones),
                or one of a session that ``access`` does not permit (the same answer).
        """
        check_kb(kb)
        check_session_id(session_id)
        trace = self._sessions.load_trace(kb, session_id, turn)
        owner = trace.get("owner") if trace is not None else None
        if trace is None or (access is not None and not access.permits(
                SessionOwner.model_validate(owner) if owner else None)):
            raise no_trace(session_id, turn)
        return trace

    def forget(self, kb: str, session_id: str, *, access: SessionAccess | None = None) -> bool:
        """Delete a session and its traces; False when there was none.

        Raises:
            NotFoundError: the session belongs to a caller ``access`` does not permit.
        """
        check_kb(kb)
        check_session_id(session_id)
        self._owned(self._sessions.load(kb, session_id), access)
        return self._sessions.delete(kb, session_id)

    @staticmethod
    def _owned(state: SessionState, access: SessionAccess | None) -> SessionState:
        """``state`` if ``access`` permits it, owned by the caller when it had no owner."""
        if access is None:
            return state
        if not access.permits(state.owner):
            # The same answer whether the session exists or not would be a 200 for a new
            # one; a 404 at least shows nothing of it.
            raise NotFoundError(f"session {state.session_id!r} belongs to another caller; "
                                "use a session id of your own (a random one, e.g. a UUID)")
        if state.owner is None:
            return state.model_copy(update={"owner": access.owner})
        return state

    def close(self) -> None:
        if self._llm is not None:
            self._llm.close()


def _trace_record(result: TurnResult, owner: SessionOwner | None) -> dict[str, Any]:
    """What the trace store keeps of a turn (``GET .../turns/{n}/trace``): written with the
    state, so its timings stop before the save (the answer's own trace has the save's)."""
    record = {"turn": result.turn, "user": result.user, "stages": result.trace,
              "result": result.results_line()}
    if owner is not None:
        record["owner"] = owner.model_dump()
    return record


def _with_queries(proposal: Proposal, queries: tuple[str, ...]) -> Proposal:
    return Proposal(proposal.source, queries, proposal.standalone, proposal.entities,
                    proposal.how, proposal.note, proposal.slots)


def _counted_only(state: SessionState, outcome: TurnOutcome, limits: Limits) -> SessionState:
    """The fallback transition: the turn is counted and remembered, nothing else changes."""
    state = state.model_copy(deep=True)
    state.pending = None
    state.turn_count = outcome.turn
    state.remember(TurnRecord(index=outcome.turn, user=outcome.text, standalone=outcome.standalone,
                              action=outcome.action, entities=list(outcome.entities)),
                   keep_turns=limits.recent_turns)
    return state


def unknown_kb(kb: str) -> NotFoundError:
    """What a turn on a kb with neither an ontology nor a corpus answers."""
    return NotFoundError(f"knowledge base {kb!r} has neither an ontology nor a corpus; "
                         f"import one with `referent ontology import --kb {kb} FILE` "
                         f"or `referent ingest --kb {kb} FILE`")


def no_trace(session_id: str, turn: int) -> NotFoundError:
    """The answer for a trace that is not there, or not the caller's (the same answer)."""
    return NotFoundError(f"no trace of turn {turn} in session {session_id!r}: only the last "
                         "turns of a live session are kept, and only for the caller that "
                         "made them")


def _with_used(state: SessionState, used: Sequence[str]) -> SessionState:
    """The state with the client's used chunks marked consumed.

    Raises:
        InputError: an id this session was not shown (or shown too long ago to remember).
    """
    known = {r.chunk_id for r in state.shown} | set(state.consumed)
    unknown = [c for c in used if c not in known]
    if unknown:
        raise InputError(f"used: {unknown[0]!r} is not evidence this session was shown (or it "
                         "fell out of the consumed window); send chunk ids of earlier evidence")
    state = state.model_copy(deep=True)
    state.mark_used(list(used))
    return state


def _known_words(plan: _Plan, state: SessionState) -> tuple[str, ...] | None:
    """The words a shown chunk does not come back for besides its own turn's: the last
    turn's (the retrieval default, None), unless that turn was about other entities than
    this one. What it asked of another subject (A's refund, then B's change fee, then
    A's: "and the former?") is still unanswered for this one."""
    last = state.last_turn
    if last is None or not plan.entities or not last.entities:
        return None
    return None if set(plan.entities) & set(last.entities) else ()


def _carried(plan: _Plan, state: SessionState, *, with_topic: bool = False) -> Carried:
    """The queries of the turns since the last topic switch, for a turn that resolves no
    entity (none after an explicit switch: the user said the topic changed), whether
    the turn points back by its own words, and (``with_topic``: a kb without an
    ontology) the conversation's topic phrases."""
    if plan.kind is TurnKind.SWITCH:
        return Carried()
    earlier: list[str] = []
    for record in reversed(state.recent):
        if record.action == "clarify":
            continue
        earlier.insert(0, record.standalone or record.user)
        if is_switch(record.user):
            break
    topic = tuple(p.text for p in _inherited_topic(state)) if with_topic else ()
    return Carried(tuple(earlier), refers_back(plan.detection, plan.links, state.focus), topic)


def _inherited_topic(state: SessionState) -> list[TopicPhrase]:
    """The topic the last searched turn left behind (a kb without an ontology)."""
    for record in reversed(state.recent):
        if record.action != "clarify":
            return [TopicPhrase(text, weight) for text, weight in record.topic.items()]
    return []


def _kinds(facts: EntityFacts | None, entity_ids: Sequence[str]) -> dict[str, bool | None] | None:
    """Whether each entity is a person (True), a thing (False) or unknown (None), as the
    kb's passages tell; {} for a kb without people (all alike), None without facts."""
    if facts is None:
        return None
    if not facts.kinds:
        return {}
    return {e: facts.is_person(e) for e in entity_ids}


def _recent_entities(state: SessionState) -> list[str]:
    """The entities of the verbatim turns, most recent first, each once."""
    return list(dict.fromkeys(e for record in reversed(state.recent) for e in record.entities))


def _slot_values(state: SessionState, name: str) -> list[str]:
    slot = getattr(state.slots, name)
    return list(slot.values) if slot is not None else []


def _ms(start: float, end: float) -> float:
    return round((end - start) * 1000, 3)


def _only_negated(tags: tuple[str, ...], negated: list[str], wanted: tuple[str, ...]) -> bool:
    """A chunk about nothing but entities the user corrected away from."""
    return bool(tags) and set(tags) <= set(negated) and not set(tags) & set(wanted)
