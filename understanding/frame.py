"""The TurnFrame: what one turn says, built once per turn, typed.

The mentions the turn's words hold (with their spans) and how each was linked (the
candidates and where each came from), then what the dialogue settled: the subjects,
the attribute asked, times and versions, what is compared, what is negated, the
entities corrected away, the turn's intent, the user's question words and language.
The session keeps the frames of its recent turns (``to_stored`` / ``from_stored``,
JSON with a format number), so a later turn reads an earlier one's understanding
instead of parsing its words again. A frame holds as well the turn's question as
slots (:class:`QuestionSlots`): what its standalone was rendered from, or read as; a
follow-up puts its own slots into them (dialogue/render.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from common.language import cues
from common.language.normalize import turn_language
from understanding.linker import Link, LinkResult
from understanding.mentions import Detection, Mention, MentionKind
from understanding.reading import mention_rows, mentions_from_rows

# Stored frames carry this number; a frame of another format is not read back (the
# turn record keeps its strings, which is all sessions saved before frames had).
# Format 1 frames (saved before frames held their question's slots) still read, with
# no slots: the follow-up reads the previous standalone instead.
FRAME_FORMAT = 2
_READABLE_FORMAT_NUMBERS = (1, FRAME_FORMAT)

# A placeholder of a question's pattern: a subject, a time or an attribute, numbered.
FIELD_RE = re.compile(r"\{([sta])(\d+)\}")


class Intent(str, Enum):
    """What the turn does in the conversation."""

    QUESTION = "question"        # asks something (new topic, follow-up, switch)
    MORE = "more"                # asks for more of what was shown: 还有呢, what else
    REVISIT = "revisit"          # goes back to something shown before
    CORRECTION = "correction"    # 不是A，是B
    ANSWER = "answer"            # answers the clarification Referent asked


@dataclass(frozen=True)
class QuestionSlots:
    """A question as slots and the pattern of its own words.

    ``subjects`` may hold ``""`` for a subject corrected away: its place stays empty.
    """

    language: str
    pattern: str
    subjects: tuple[str, ...] = ()
    times: tuple[str, ...] = ()
    attribute: tuple[str, ...] = ()
    compared: tuple[str, ...] = ()  # what the subjects are compared with, as written
    said: tuple[tuple[str, str], ...] = ()  # (entity, the user's words for it) written beside
    negations: tuple[str, ...] = ()  # the negation words the pattern's words hold

    @property
    def entities(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(e for e in self.subjects if e))

    def places(self, kind: str) -> list[int]:
        return [int(n) for k, n in FIELD_RE.findall(self.pattern) if k == kind]


@dataclass(frozen=True)
class FrameCandidate:
    entity_id: str
    score: float
    source: str  # how the mention matched it, then how it was chosen


@dataclass(frozen=True)
class FrameLink:
    """How one mention (``mention``: its index in the frame's mentions) was linked."""

    mention: int
    entity_ids: tuple[str, ...]
    candidates: tuple[FrameCandidate, ...]
    reason: str


@dataclass(frozen=True)
class TurnFrame:
    text: str
    language: str
    intent: Intent
    mentions: tuple[Mention, ...]
    links: tuple[FrameLink, ...]
    ellipsis: bool = False
    subjects: tuple[str, ...] = ()          # the entities the turn is about, resolved
    attribute: tuple[str, ...] = ()         # what is asked about them
    times: tuple[str, ...] = ()             # times and versions
    comparison: tuple[str, ...] = ()        # what they are compared with
    negations: tuple[str, ...] = ()         # the negation words the turn says
    corrected_away: tuple[str, ...] = ()    # entities the user corrected away from
    question_words: tuple[str, ...] = ()    # 多少, 哪些, how, which
    standalone: str = ""                    # the question as it was searched
    # The standalone as slots, and the alias snapshot (kb, uid, version) its entity ids
    # and pattern were made against: another snapshot's reads the standalone again.
    question: QuestionSlots | None = None
    question_snapshot: tuple[Any, ...] = ()
    format: int = field(default=FRAME_FORMAT, compare=False)

    def detection(self) -> Detection:
        """The mentions of the turn's words, as mention detection found them."""
        return Detection(self.text, self.mentions, self.ellipsis)

    def of(self, kind: MentionKind) -> tuple[Mention, ...]:
        return tuple(m for m in self.mentions if m.kind is kind)

    def question_for(self, snapshot_key: Sequence[Any]) -> QuestionSlots | None:
        """The turn's question as slots, when they were made against this snapshot."""
        return self.question if tuple(snapshot_key) == self.question_snapshot else None

    def to_stored(self) -> dict[str, Any]:
        return _stored(self)

    @classmethod
    def from_stored(cls, data: Any) -> TurnFrame | None:
        """The frame a session kept; None for one of another format or malformed."""
        return _loaded(data)

    @staticmethod
    def stored_question(data: Any, snapshot_key: Sequence[Any]) -> QuestionSlots | None:
        """The question as slots of a kept frame, made against this snapshot, read without
        the rest of the frame; None when there is none or it is malformed."""
        if not isinstance(data, dict) or data.get("format") not in _READABLE_FORMAT_NUMBERS:
            return None
        try:
            kept = _question_loaded(data.get("question"))
        except (KeyError, TypeError, ValueError):
            return None
        if not kept or kept["question_snapshot"] != tuple(snapshot_key):
            return None
        return kept["question"]


def build_frame(detection: Detection, links: LinkResult, *, intent: Intent,
                subjects: Sequence[str] = (), attribute: Sequence[str] = (),
                times: Sequence[str] = (), comparison: Sequence[str] = (),
                corrected_away: Sequence[str] = (), standalone: str = "",
                question: QuestionSlots | None = None,
                question_snapshot: Sequence[Any] = ()) -> TurnFrame:
    """The frame of a turn from its detection, its links and what the dialogue settled."""
    text = detection.text
    names = [(m.start, m.end) for m in detection.of(MentionKind.ALIAS)]
    index = {id(m): i for i, m in enumerate(detection.mentions)}
    return TurnFrame(
        text=text, language=turn_language(text, names), intent=intent,
        mentions=detection.mentions, ellipsis=detection.ellipsis,
        links=tuple(_link(link, index) for link in links.links),
        subjects=tuple(subjects), attribute=tuple(attribute), times=tuple(times),
        comparison=tuple(comparison),
        negations=tuple(m.text for m in detection.of(MentionKind.NEGATION)),
        corrected_away=tuple(corrected_away),
        question_words=tuple(m.group(0) for m in cues.QUESTION_START_RE.finditer(text)),
        standalone=standalone, question=question,
        question_snapshot=tuple(question_snapshot) if question is not None else ())


def _link(link: Link, index: dict[int, int]) -> FrameLink:
    # A link's mention is one of the detection's, or one the linker made (an implicit
    # reference): -1 then, its kind and span are in the reason.
    return FrameLink(index.get(id(link.mention), -1), link.entity_ids,
                     tuple(FrameCandidate(c.entity_id, c.score, c.source) for c in link.candidates),
                     link.reason)


def _stored(frame: TurnFrame) -> dict[str, Any]:
    return {
        "format": FRAME_FORMAT, "text": frame.text, "language": frame.language,
        "intent": frame.intent.value, "ellipsis": frame.ellipsis,
        "mentions": mention_rows(frame.mentions),
        "links": [[li.mention, list(li.entity_ids),
                   [[c.entity_id, c.score, c.source] for c in li.candidates], li.reason]
                  for li in frame.links],
        **{name: list(getattr(frame, name)) for name in _LISTS},
        "standalone": frame.standalone,
        "question": None if frame.question is None else
        {"snapshot": list(frame.question_snapshot), **_question_stored(frame.question)},
    }


def _question_stored(slots: QuestionSlots) -> dict[str, Any]:
    return {"language": slots.language, "pattern": slots.pattern,
            **{name: list(getattr(slots, name)) for name in _QUESTION_LISTS},
            "said": [list(pair) for pair in slots.said]}


_QUESTION_LISTS = ("subjects", "times", "attribute", "compared", "negations")


_LISTS = ("subjects", "attribute", "times", "comparison", "negations", "corrected_away",
          "question_words")


def _loaded(data: Any) -> TurnFrame | None:
    if not isinstance(data, dict) or data.get("format") not in _READABLE_FORMAT_NUMBERS:
        return None
    try:
        mentions = mentions_from_rows(data["mentions"])
        links = tuple(FrameLink(int(at), tuple(ids), tuple(FrameCandidate(e, float(s), str(src))
                                                          for e, s, src in candidates), str(reason))
                      for at, ids, candidates, reason in data["links"])
        return TurnFrame(text=str(data["text"]), language=str(data["language"]),
                         intent=Intent(data["intent"]), mentions=mentions, links=links,
                         ellipsis=bool(data["ellipsis"]),
                         **{name: tuple(data[name]) for name in _LISTS},
                         standalone=str(data["standalone"]),
                         **_question_loaded(data.get("question")))
    except (KeyError, TypeError, ValueError):
        return None


def _question_loaded(data: Any) -> dict[str, Any]:
    """The frame's question and its snapshot key; none when the frame kept none (format
    1) (raises KeyError, TypeError or ValueError when malformed)."""
    if data is None:
        return {}
    slots = QuestionSlots(str(data["language"]), str(data["pattern"]),
                          **{name: tuple(str(v) for v in data[name]) for name in _QUESTION_LISTS},
                          said=tuple((str(e), str(w)) for e, w in data["said"]))
    return {"question": slots, "question_snapshot": tuple(data["snapshot"])}
