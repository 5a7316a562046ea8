"""Clarification analytics: which mentions made Referent ask "which one?", how
often, what users answered, and what to change in the alias table.

:class:`ClarificationRecorder` reads each finished API turn (its clarification
events: the engine itself is not involved) and records, in the background,
the question asked and, from the session's next turn, the answer. Recording
is best-effort: a full queue or a Neo4j failure loses a record and logs a
warning, and never delays or fails a turn.

:func:`summarize` folds the counts into one group per ambiguous alias (or
pronoun) with a suggestion: where one answer dominates, point the mention at
that entity; where answers split, keep the ambiguity.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Literal

from pydantic import BaseModel, Field

from dialogue.events import ClarificationAnswered, ClarificationAsked
from dialogue.models import TurnResult
from kg.aliases import AliasSnapshot
from kg.clarification_log import Answered, Asked, ClarificationLog, CountRow

logger = logging.getLogger(__name__)

DEFAULT_MIN_ANSWERS = 5
DEFAULT_DOMINANCE = 0.8
RETENTION = timedelta(days=365)
_PRUNE_EVERY = 24 * 3600.0
_WARN_EVERY = 60.0

# The answer kinds of dialogue.clarify, as the log names them.
_ANSWER_KINDS = {"chosen": "chosen", "both": "both", "neither": "neither",
                 "not_an_answer": "new_question"}


# -- what a turn tells ---------------------------------------------------------------------

@dataclass(frozen=True)
class _Seen:
    """The parts of one turn the recorder needs: its clarification events."""

    kb: str
    session_id: str
    turn: int
    at: datetime
    answer: ClarificationAnswered | None  # how this turn answered the previous question
    asked: ClarificationAsked | None  # the question this turn asked


def seen_in(kb: str, session_id: str, result: TurnResult,
            at: datetime | None = None) -> _Seen | None:
    """What ``result``'s events say about clarifications, or None when nothing (most turns)."""
    answer = next((e for e in result.events if isinstance(e, ClarificationAnswered)), None)
    asked = next((e for e in result.events if isinstance(e, ClarificationAsked)), None)
    if answer is None and asked is None:
        return None
    return _Seen(kb, session_id, result.turn, at or datetime.now(timezone.utc), answer, asked)


def events(seen: _Seen, snapshot: AliasSnapshot | None) -> list[Asked | Answered]:
    """The log records of one turn: the answer to the previous turn's question
    first, then the question this turn asked."""
    out: list[Asked | Answered] = []
    if seen.answer is not None and seen.turn > 1:
        kind = _ANSWER_KINDS.get(seen.answer.kind)
        if kind is not None:
            out.append(Answered(seen.kb, seen.session_id, seen.turn - 1, seen.at, kind,
                                tuple(seen.answer.entity_ids), seen.answer.how))
    asked = seen.asked
    if asked is not None:
        alias = (_alias_of(asked.mention, asked.match, asked.options, snapshot)
                 if asked.mention_kind == "alias" else None)
        out.append(Asked(seen.kb, seen.session_id, seen.turn, seen.at, asked.mention_kind,
                         asked.mention, alias, asked.match, tuple(sorted(asked.options)),
                         decision=asked.decision))
    return out


def _alias_of(mention: str, match: str, options: Iterable[str],
              snapshot: AliasSnapshot | None) -> str | None:
    """The alias key the mention was taken for: its own key, or for a fuzzy match
    the shared key near it (found with the snapshot's fuzzy index)."""
    if snapshot is None:
        return None
    key = snapshot.normalize(mention)
    if key in snapshot.by_norm or match != "fuzzy":
        return key
    index = snapshot.fuzzy_index()
    wanted = set(options)
    for near, _ in index.lookup(key, threshold=snapshot.fuzzy_threshold) if index else ():
        if wanted <= set(snapshot.by_norm.get(near, ())):
            return near
    return key


# -- recording -----------------------------------------------------------------------------

class ClarificationRecorder:
    """Records clarifications in the background, one worker thread per process.

    Args:
        log: where the records go (Neo4j, shared by every API instance).
        snapshot: ``kb → the alias snapshot this process holds`` (never a Neo4j
            read), used to name the alias a mention matched.
        max_queue: turns waiting to be written; beyond it new ones are dropped.
    """

    def __init__(self, log: ClarificationLog, snapshot: Callable[[str], AliasSnapshot | None],
                 *, max_queue: int = 10_000, retention: timedelta | None = RETENTION) -> None:
        self._log = log
        self._snapshot = snapshot
        self._queue: queue.Queue[_Seen | None] = queue.Queue(max_queue)
        self._retention = retention
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._warned_at = float("-inf")
        self._next_prune = 0.0
        self.recorded = 0
        self.dropped = 0
        self.failed = 0

    @property
    def log(self) -> ClarificationLog:
        return self._log

    def observe(self, kb: str, session_id: str, result: TurnResult) -> None:
        """Queue what ``result`` says about clarifications. Never raises."""
        try:
            seen = seen_in(kb, session_id, result)
            if seen is None or self._closed:
                return
            self._start()
            self._queue.put_nowait(seen)
        except queue.Full:
            self.dropped += 1
            self._warn("clarification analytics: queue full, %d record(s) dropped so far",
                       self.dropped)
        except Exception:  # noqa: BLE001 - analytics must never fail a turn
            logger.exception("clarification analytics: could not queue a turn")

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every queued turn is written (or given up); False on timeout."""
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    def close(self, timeout: float = 5.0) -> None:
        """Write what is queued (for up to ``timeout`` seconds) and stop the worker."""
        self._closed = True
        thread = self._thread
        if thread is not None:
            try:
                self._queue.put(None, timeout=timeout)
            except queue.Full:
                pass
            thread.join(timeout)

    def _start(self) -> None:
        if self._thread is not None:
            return
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="clarification-analytics",
                                                daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            try:
                seen = self._queue.get(timeout=60.0)
            except queue.Empty:
                self._maybe_prune()
                continue
            try:
                if seen is None:
                    return
                self._write(seen)
            finally:
                self._queue.task_done()
            self._maybe_prune()

    def _write(self, seen: _Seen) -> None:
        try:
            for event in events(seen, self._snapshot(seen.kb)):
                if isinstance(event, Asked):
                    self._log.record_asked(event)
                else:
                    self._log.record_answer(event)
                self.recorded += 1
        except Exception as exc:  # noqa: BLE001 - best-effort: log and go on
            self.failed += 1
            self._warn("clarification analytics: a record was lost (%s); %d lost so far",
                       exc, self.failed)

    def _maybe_prune(self) -> None:
        if self._retention is None or time.monotonic() < self._next_prune:
            return
        self._next_prune = time.monotonic() + _PRUNE_EVERY
        try:
            self._log.prune(datetime.now(timezone.utc) - self._retention)
        except Exception as exc:  # noqa: BLE001
            self._warn("clarification analytics: pruning old records failed (%s)", exc)

    def _warn(self, message: str, *args: Any) -> None:
        now = time.monotonic()
        if now - self._warned_at >= _WARN_EVERY:
            self._warned_at = now
            logger.warning(message, *args)


# -- summary and suggestions ---------------------------------------------------------------

Action = Literal["wait", "keep", "point_alias", "add_alias", "review", "done"]


class Reason(BaseModel):
    """Why, in both interface languages."""

    en: str
    zh: str


class Change(BaseModel):
    """One admin API write the suggestion proposes."""

    op: Literal["remove_alias", "add_alias"]
    entity: str
    alias: str


class Suggestion(BaseModel):
    """What to do about one ambiguous alias; see :func:`suggest`."""

    action: Action
    reason: Reason
    answered: int = Field(description="answers that picked something: chosen, both, neither")
    entity: str | None = Field(default=None, description="the dominant entity, if any")
    changes: list[Change] = Field(default_factory=list)


class AnswerCounts(BaseModel):
    chosen: int = 0
    both: int = 0
    neither: int = 0
    new_question: int = Field(default=0, description="the user asked something else instead")
    open: int = Field(default=0, description="no answer (yet)")


class CandidateInfo(BaseModel):
    id: str
    name: str
    exists: bool = Field(description="false when the entity has since been deleted")


class ClarificationGroup(BaseModel):
    """The clarifications of one alias (or pronoun) and candidate set, counted."""

    kind: str = Field(description="alias | pronoun | implicit")
    alias: str | None = Field(description="the alias key the mentions matched")
    mentions: list[str] = Field(description="how users wrote it (up to 5 spellings)")
    matches: list[str] = Field(description="exact | normalized | fuzzy | focus ...")
    candidates: list[CandidateInfo]
    asked: int
    answers: AnswerCounts
    chosen: dict[str, int] = Field(description="entity id → answers that chose it, most first")
    last_asked: str | None = None
    suggestion: Suggestion | None = None


def summarize(rows: Iterable[CountRow], snapshot: AliasSnapshot | None, *,
              min_answers: int = DEFAULT_MIN_ANSWERS,
              dominance: float = DEFAULT_DOMINANCE) -> list[ClarificationGroup]:
    """One group per (kind, alias or mention, candidate set), most asked first,
    each with its answer counts and a suggestion."""
    groups: dict[tuple[str, str, tuple[str, ...]], ClarificationGroup] = {}
    for row in rows:
        mention = row.mentions[0] if row.mentions else ""
        key = (row.kind, row.alias if row.alias is not None else mention, row.candidates)
        group = groups.get(key)
        if group is None:
            group = groups[key] = ClarificationGroup(
                kind=row.kind, alias=row.alias, mentions=[], matches=[],
                candidates=[CandidateInfo(id=e, name=snapshot.name(e) if snapshot else e,
                                          exists=snapshot is None or e in snapshot.entities)
                            for e in row.candidates],
                asked=0, answers=AnswerCounts(), chosen={})
        group.asked += row.count
        setattr(group.answers, row.answer, getattr(group.answers, row.answer) + row.count)
        if row.answer == "chosen":
            for entity_id in row.chosen:
                group.chosen[entity_id] = group.chosen.get(entity_id, 0) + row.count
        group.mentions.extend(m for m in row.mentions if m not in group.mentions)
        group.matches.extend(m for m in row.matches if m not in group.matches)
        if row.last_asked and (group.last_asked is None or row.last_asked > group.last_asked):
            group.last_asked = row.last_asked
    for group in groups.values():
        group.chosen = dict(sorted(group.chosen.items(), key=lambda kv: (-kv[1], kv[0])))
        group.suggestion = suggest(group, snapshot, min_answers=min_answers, dominance=dominance)
    return sorted(groups.values(), key=lambda g: (-g.asked, g.alias or "", g.mentions))


def _pct(n: int, total: int) -> int:
    return round(100 * n / total) if total else 0


def _names(ids: Iterable[str], snapshot: AliasSnapshot | None, sep: str) -> str:
    return sep.join(snapshot.name(e) if snapshot else e for e in ids)


def suggest(group: ClarificationGroup, snapshot: AliasSnapshot | None, *,
            min_answers: int = DEFAULT_MIN_ANSWERS,
            dominance: float = DEFAULT_DOMINANCE) -> Suggestion:
    """What to do about one group, with the reasoning in Chinese and English.

    ``action`` is one of ``wait`` (too few answers), ``keep`` (keep the
    ambiguity: answers split, or a pronoun), ``point_alias`` (the shared alias
    should name the dominant entity only: ``changes`` removes it from the others),
    ``add_alias`` (a fuzzy mention: make it an alias of the dominant entity),
    ``review`` (users mostly meant neither option) or ``done`` (the alias no
    longer names several entities).
    """
    answers = group.answers
    answered = answers.chosen + answers.both + answers.neither
    mention = group.mentions[0] if group.mentions else ""
    alias = group.alias
    candidates = [c.id for c in group.candidates]
    name = (lambda e: snapshot.name(e)) if snapshot else (lambda e: e)
    dropped, asked = answers.new_question, group.asked
    note_en = note_zh = ""
    if asked >= min_answers and dropped * 2 >= asked:
        note_en = (f" Users moved on without answering {dropped} of {asked} times: "
                   "check that the options' names and descriptions tell them apart.")
        note_zh = (f"另外，{asked} 次提问中有 {dropped} 次用户没有回答就换了问题："
                   "请检查选项的名称和说明是否足以区分。")

    def result(action: Action, en: str, zh: str, **extra: Any) -> Suggestion:
        return Suggestion(action=action, reason=Reason(en=en + note_en, zh=zh + note_zh),
                          answered=answered, **extra)

    if group.kind == "alias" and alias is not None and snapshot is not None:
        # Settled since: the mention is now an alias of one entity, or what it was
        # taken for no longer names several.
        own = snapshot.by_norm.get(snapshot.normalize(mention), ())
        owners = own if own else snapshot.by_norm.get(alias, ())
        if len(owners) <= 1:
            owner = name(owners[0]) if owners else "—"
            return result("done", f"“{mention}” now names only {owner}: it is no longer asked about.",
                          f"“{mention}”现在只指{owner}，不会再反问。")
    if answered < min_answers:
        return result("wait",
                      f"{answered} answer(s) so far; a suggestion needs at least {min_answers}.",
                      f"目前只有 {answered} 个回答，至少需要 {min_answers} 个才给出建议。")
    chosen = group.chosen
    top, top_n = next(iter(chosen.items()), (None, 0))
    share = top_n / answered
    split_en = ", ".join(f"{name(e)} {_pct(n, answered)}%" for e, n in chosen.items())
    split_zh = "，".join(f"{name(e)} {_pct(n, answered)}%" for e, n in chosen.items())
    if group.kind != "alias":
        return result("keep",
                      f"“{mention}” is a pronoun, not an alias: the alias table cannot settle it "
                      f"(answers: {split_en or 'none chosen'}). Keep asking.",
                      f"“{mention}”是代词而不是别名，别名表无法消除这种歧义"
                      f"（回答：{split_zh or '无'}），继续反问。")
    if top is not None and share >= dominance:
        lead_en = (f"{top_n} of {answered} answers ({_pct(top_n, answered)}%) to “{mention}” "
                   f"chose {name(top)}.")
        lead_zh = (f"对“{mention}”的 {answered} 个回答中有 {top_n} 个"
                   f"（{_pct(top_n, answered)}%）选择了{name(top)}。")
        others = [e for e in candidates if e != top]
        rest = 100 - _pct(top_n, answered)
        keep_en = (f" Keep the ambiguity instead if a silent wrong answer costs the {rest}% "
                   "who meant another option more than one question costs everyone.")
        keep_zh = f"如果让其余 {rest}% 的用户静默得到错误答案的代价大于一次反问，则保留歧义。"
        if snapshot is not None and alias is not None and snapshot.normalize(mention) != alias:
            return result(
                "add_alias",
                lead_en + f" “{mention}” is not an alias: it was taken for “{alias}”, which "
                f"{len(others) + 1} entities share. Add “{mention}” as an alias of {name(top)} "
                "so that it links there without a question." + keep_en,
                lead_zh + f"“{mention}”不是别名，只是近似匹配到多个实体共用的“{alias}”。"
                f"建议把“{mention}”添加为{name(top)}的别名，以后直接链接、不再反问。" + keep_zh,
                entity=top, changes=[Change(op="add_alias", entity=top, alias=mention)])
        if snapshot is None or alias is None:
            return result("keep", lead_en + " The kb is gone or the alias unknown: nothing to change.",
                          lead_zh + "知识库或别名已不存在，无需修改。")
        changes, blocked, left_en, left_zh = [], [], [], []
        for other in others:
            entity = snapshot.entities.get(other)
            if entity is None:
                continue
            texts = [a for a in entity.all_aliases if snapshot.normalize(a) == alias]
            if entity.name in texts:
                blocked.append(other)
                continue
            changes.extend(Change(op="remove_alias", entity=other, alias=a) for a in texts)
            kept = [a for a in entity.all_aliases if snapshot.normalize(a) != alias][:3]
            left_en.append(f"{name(other)} (still called " + ", ".join(f"“{k}”" for k in kept) + ")")
            left_zh.append(f"{name(other)}（仍可称为" + "".join(f"“{k}”" for k in kept) + "）")
        if blocked:
            return result(
                "keep",
                lead_en + f" But “{mention}” is the name of {_names(blocked, snapshot, ', ')}, "
                "which always answers to its name: rename it (the old name stays an alias) "
                "before pointing the alias elsewhere; until then keep the ambiguity.",
                lead_zh + f"但“{mention}”是{_names(blocked, snapshot, '、')}的名称，名称总是别名："
                "需先改名再调整别名，在此之前保留歧义。")
        return result(
            "point_alias",
            lead_en + f" Point “{mention}” at {name(top)} only: remove it from "
            f"{'; '.join(left_en)}. Turns saying “{mention}” then link without a question."
            + keep_en,
            lead_zh + f"建议让“{mention}”只指{name(top)}：从{'；'.join(left_zh)}"
            "删除这个别名，以后直接链接、不再反问。" + keep_zh,
            entity=top, changes=changes)
    if answers.neither * 2 >= answered:
        return result(
            "review",
            f"{answers.neither} of {answered} answers to “{mention}” were “neither”: users "
            "mean something the options do not cover. Add that entity (or an alias for it).",
            f"对“{mention}”的 {answered} 个回答中有 {answers.neither} 个是“都不是”："
            "用户指的东西不在选项中，建议补充该实体或其别名。")
    return result("keep",
                  f"Answers to “{mention}” are split ({split_en or 'mostly both'}): the question "
                  "is doing its job. Keep the ambiguity.",
                  f"对“{mention}”的回答比较分散（{split_zh or '多为都要'}），反问是必要的，保留歧义。")
