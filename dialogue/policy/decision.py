"""The typed decisions of the dialogue policy: what one turn will do, and why.

The policy (dialogue/policy/policy.py) returns exactly one of these for every
turn; the engine acts on it (rewrite, retrieve, ask) and the state transition
(dialogue/transition.py) applies it. Each carries the reasons it was taken,
in words, for the trace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from dialogue.clarify import Answer
from dialogue.classify import TurnKind
from understanding.linker import Link, LinkResult
from understanding.mentions import Detection


@dataclass(frozen=True)
class UnderstoodTurn:
    """What the understanding stages made of the user's words: the mentions
    detected and how each was linked (with the session's focus)."""

    text: str
    detection: Detection
    links: LinkResult


@dataclass(frozen=True)
class ClarifyVerdict:
    """A clarification gate's answer for one ambiguous link: ask or not, the
    options in the order they are offered, and what the verdict rests on."""

    ask: bool
    options: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    features: dict[str, Any] = field(default_factory=dict)
    # Not asking about an ambiguous link: the entity the gate resolved it to.
    resolved: str | None = None
    # Asking: the option the gate would have resolved it to had it not asked (the
    # model's best supported); None when it has no preference beyond the offered order.
    preferred: str | None = None
    # What the clarification log keeps of an asking verdict (JSON), for recalibration.
    record: str | None = None


@dataclass(frozen=True)
class Clarify:
    """Ask the user which entity ``mention`` means before searching anything."""

    mention: str
    options: tuple[str, ...]  # entity ids, in the order they are offered
    link: Link  # the ambiguous link the question is about
    links: LinkResult  # every link of the turn (what else it resolved is remembered)
    reasons: tuple[str, ...] = ()
    trace: dict[str, Any] = field(default_factory=dict)
    # How the turn read the pending clarification, when there was one.
    pending_answer: Answer | None = None
    # The gate's verdict as the clarification log keeps it (JSON), if it gave one.
    record: str | None = None

    @property
    def resolved(self) -> tuple[str, ...]:
        return self.links.resolved


@dataclass(frozen=True)
class QuestionReading:
    """The pending question read again with one chosen option as the focus."""

    chosen: str
    detection: Detection
    links: LinkResult


@dataclass(frozen=True)
class Resume:
    """The turn answers the pending question: the question is asked again with
    the chosen entities (``neither``: as the user first asked it)."""

    answer: str  # AnswerKind value: chosen, both or neither
    entity_ids: tuple[str, ...]  # the options chosen ((), for neither)
    question: str  # the user's question the clarification interrupted
    detection: Detection  # the question's mentions
    links: LinkResult  # the answer turn's own links (the slots read them)
    readings: tuple[QuestionReading, ...] = ()  # one per chosen option
    reasons: tuple[str, ...] = ()
    trace: dict[str, Any] = field(default_factory=dict)
    # How the turn read the pending clarification, when there was one.
    pending_answer: Answer | None = None

    @property
    def neither(self) -> bool:
        return self.answer == "neither"


@dataclass(frozen=True)
class PlanQueries:
    """Search for the turn: its kind, its (final) links and whether the consumed
    window is lifted (a revisit: earlier evidence may come back)."""

    kind: TurnKind
    detection: Detection
    links: LinkResult
    lift_consumed: bool = False
    reasons: tuple[str, ...] = ()
    trace: dict[str, Any] = field(default_factory=dict)
    # How the turn read the pending clarification, when there was one.
    pending_answer: Answer | None = None

    @property
    def entities(self) -> tuple[str, ...]:
        return self.links.resolved


@dataclass(frozen=True)
class NoAnswer:
    """Search nothing and answer nothing (the state still records the turn)."""

    reasons: tuple[str, ...] = ()
    trace: dict[str, Any] = field(default_factory=dict)
    # How the turn read the pending clarification, when there was one.
    pending_answer: Answer | None = None


Decision = Union[Clarify, Resume, PlanQueries, NoAnswer]
