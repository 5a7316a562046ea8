"""The turn's frame and its reading: mention detection reads each text of a conversation
once (the user's words once per turn, an earlier turn's texts never again), the session
keeps each turn's frame through a save and a load, and a session stored before frames
still loads and plays on."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections import Counter

import pytest

import understanding.mentions as mentions
from dialogue.engine import TurnEngine
from dialogue.memory_store import InMemorySessionStore
from dialogue.sqlite_store import SQLiteSessionStore
from tests.conftest import DEMO
from tests.unit.dialogue.conftest import in_memory_engine
from understanding.frame import FRAME_FORMAT, Intent, TurnFrame

KB = "demo"

# A conversation that carries a time, switches region by ellipsis, corrects, asks about
# an ambiguous name and resumes the question once answered.
CONVERSATION = ["华东区7月的销售额是多少", "那华南区呢", "为什么涨这么多", "不对，我问的是华北区",
                "A产品怎么申请", "个人版", "它多少钱", "还有呢"]


def _engine(sessions) -> TurnEngine:
    return in_memory_engine(KB, (DEMO / "ontology.jsonl").read_text(encoding="utf-8").splitlines(),
                            (DEMO / "corpus.jsonl").read_text(encoding="utf-8").splitlines(), sessions)


@pytest.fixture(scope="module")
def engine() -> TurnEngine:
    return _engine(InMemorySessionStore())


@pytest.fixture
def parses(monkeypatch) -> list[tuple[str, bool]]:
    """Every text mention detection parses from here on, with whether aliases were on."""
    seen: list[tuple[str, bool]] = []
    detect = mentions._detect

    def counted(text, snapshot):
        seen.append((text, snapshot is not None))
        return detect(text, snapshot)

    monkeypatch.setattr(mentions, "_detect", counted)
    return seen


def test_each_text_of_a_conversation_is_parsed_once(engine, parses):
    # Each text is read once with the aliases and at most once without (the times a
    # later turn carries are read off an earlier query without them, by that later
    # turn, and kept with the earlier turn's record from then on).
    session = f"s-{uuid.uuid4().hex[:10]}"
    for text in CONVERSATION:
        start = len(parses)
        engine.handle(KB, session, text)
        assert parses[start:].count((text, True)) == 1, (text, parses[start:])  # the user's words
    assert [item for item, n in Counter(parses).items() if n > 1] == []


def test_the_session_keeps_each_turns_frame(engine):
    session = f"s-{uuid.uuid4().hex[:10]}"
    for text in CONVERSATION[:4]:
        engine.handle(KB, session, text)
    state = engine._sessions.load(KB, session)
    frames = [TurnFrame.from_stored(record.frame) for record in state.recent]
    assert [f.text for f in frames] == CONVERSATION[:4]
    first, ellipsis, _, correction = frames
    assert first.subjects == ("region.east",) and first.times == ("7月",)
    assert first.attribute == ("销售额",) and "多少" in first.question_words
    assert first.language == "zh" and first.intent is Intent.QUESTION
    assert [(m.kind.value, m.text) for m in first.mentions][:1] == [("alias", "华东区")]
    assert first.links[0].entity_ids == ("region.east",) and first.links[0].candidates
    assert ellipsis.subjects == ("region.south",) and ellipsis.times == ("7月",)
    assert ellipsis.ellipsis and ellipsis.standalone == "华南区7月的销售额是多少"
    assert correction.intent is Intent.CORRECTION
    assert correction.corrected_away == ("region.south",)
    assert correction.subjects == ("region.north",)
    # What is stored reads back as the same frame; another format is not read.
    assert TurnFrame.from_stored(json.loads(json.dumps(first.to_stored()))) == first
    assert TurnFrame.from_stored({**first.to_stored(), "format": FRAME_FORMAT + 1}) is None


def test_a_session_stored_before_frames_loads_and_plays_on(tmp_path, parses):
    path = tmp_path / "sessions.db"
    store = SQLiteSessionStore(path, ttl_seconds=3600)
    engine = _engine(store)
    session = "s-old"
    engine.handle(KB, session, CONVERSATION[0])
    state = store.load(KB, session)
    # The state as sessions were saved before: no frame, nothing read kept.
    old = json.loads(state.model_dump_json())
    for record in old["recent"]:
        del record["frame"], record["read"]
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE sessions SET state = ? WHERE kb = ? AND session_id = ?",
                   (json.dumps(old), KB, session))
    db.close()
    loaded = store.load(KB, session)
    assert loaded.recent[0].frame is None and loaded.recent[0].read == []
    start = len(parses)
    follow = engine.handle(KB, session, CONVERSATION[1])
    assert follow.standalone == "华南区7月的销售额是多少"
    # Nothing of the earlier turn was kept read: what the follow-up needs of it is read
    # again, once.
    assert max(Counter(parses[start:]).values()) == 1
    assert TurnFrame.from_stored(store.load(KB, session).recent[-1].frame).subjects == ("region.south",)


def _earlier_texts_read_again(engine, parses, monkeypatch, vocabulary: str | None) -> set[str]:
    """The texts of an earlier turn read (with aliases) again by the turn that answers
    its clarification."""
    session = f"s-{uuid.uuid4().hex[:10]}"
    asked, answer = CONVERSATION[4], CONVERSATION[5]
    assert engine.handle(KB, session, asked).action == "clarify"
    if vocabulary is not None:
        import understanding.reading as reading
        monkeypatch.setattr(reading, "vocabulary", lambda: vocabulary)
    start = len(parses)
    engine.handle(KB, session, answer)
    return {text for text, aliased in parses[start:] if aliased} - {answer}


def test_stored_readings_of_another_vocabulary_are_read_again(engine, parses, monkeypatch):
    # The same code resumes the question from its kept reading; after an upgrade that
    # changed the cue words (another fingerprint) the question is read again instead.
    assert CONVERSATION[4] not in _earlier_texts_read_again(engine, parses, monkeypatch, None)
    assert CONVERSATION[4] in _earlier_texts_read_again(engine, parses, monkeypatch, "upgraded")


@pytest.fixture
def questions_read(monkeypatch) -> list[str]:
    """Every standalone read back into slots from here on (dialogue/render.read_question),
    by the rewriter or by the frame of the turn."""
    import dialogue.framing as framing
    import dialogue.render as render
    import dialogue.rewrite as rewrite

    seen: list[str] = []

    def counted(text, subjects, snapshot):
        seen.append(text)
        return render.read_question(text, subjects, snapshot)

    monkeypatch.setattr(rewrite, "read_question", counted)
    monkeypatch.setattr(framing, "read_question", counted, raising=False)
    return seen


def test_a_follow_up_starts_from_the_previous_turns_kept_slots(engine, parses, questions_read):
    session = f"s-{uuid.uuid4().hex[:10]}"
    first = engine.handle(KB, session, CONVERSATION[0])
    read_start, parse_start = len(questions_read), len(parses)
    follow = engine.handle(KB, session, CONVERSATION[1])
    assert follow.standalone == "华南区7月的销售额是多少"
    # The previous standalone is neither read into slots nor parsed again, nor is the
    # follow-up's own: the next turn starts from the slots it was rendered from.
    assert questions_read[read_start:] == []
    assert (first.standalone, True) not in parses[parse_start:]
    assert "kept slots" in follow.trace["rewrite"]["how"]
    kept = TurnFrame.from_stored(engine._sessions.load(KB, session).recent[-1].frame)
    assert kept.question.pattern == "{s0}{t0}的{a0}是多少"
    assert kept.question.subjects == ("region.south",)


def test_the_frame_keeps_the_turns_question_as_slots(engine):
    session = f"s-{uuid.uuid4().hex[:10]}"
    for text in CONVERSATION[:2]:
        engine.handle(KB, session, text)
    state = engine._sessions.load(KB, session)
    first, ellipsis = (TurnFrame.from_stored(record.frame) for record in state.recent)
    assert first.question.pattern == "{s0}{t0}的{a0}是多少"
    assert (first.question.subjects, first.question.times, first.question.attribute) \
        == (("region.east",), ("7月",), ("销售额",))
    assert ellipsis.question.subjects == ("region.south",)
    stored = json.loads(json.dumps(first.to_stored()))
    assert TurnFrame.from_stored(stored) == first
    key = stored["question"]["snapshot"]
    assert first.question_for(key) == first.question
    # Made against another alias snapshot (a refresh since): not used.
    assert first.question_for([*key[:-1], key[-1] + 1]) is None
    # Malformed slots make the frame unreadable, not half read.
    assert TurnFrame.from_stored({**stored, "question": {"pattern": 3}}) is None


def test_a_session_whose_frames_kept_no_slots_reads_the_previous_standalone(
        tmp_path, questions_read):
    path = tmp_path / "sessions.db"
    store = SQLiteSessionStore(path, ttl_seconds=3600)
    engine = _engine(store)
    session = "s-format-1"
    first = engine.handle(KB, session, CONVERSATION[0])
    # The state as sessions were saved before frames kept the question's slots.
    old = json.loads(store.load(KB, session).model_dump_json())
    for record in old["recent"]:
        record["frame"]["format"] = 1
        del record["frame"]["question"]
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE sessions SET state = ? WHERE kb = ? AND session_id = ?",
                   (json.dumps(old), KB, session))
    db.close()
    frame = TurnFrame.from_stored(store.load(KB, session).recent[0].frame)
    assert frame is not None and frame.question is None and frame.subjects == ("region.east",)
    start = len(questions_read)
    follow = engine.handle(KB, session, CONVERSATION[1])
    assert follow.standalone == "华南区7月的销售额是多少"
    assert questions_read[start:] == [first.standalone]
    assert "slots read from its standalone" in follow.trace["rewrite"]["how"]
    kept = TurnFrame.from_stored(store.load(KB, session).recent[-1].frame)
    assert kept.format == FRAME_FORMAT and kept.question.subjects == ("region.south",)


def test_a_kept_question_is_read_without_the_rest_of_the_frame(engine):
    session = f"s-{uuid.uuid4().hex[:10]}"
    engine.handle(KB, session, CONVERSATION[0])
    stored = engine._sessions.load(KB, session).recent[0].frame
    key = stored["question"]["snapshot"]
    assert TurnFrame.stored_question(stored, key) == TurnFrame.from_stored(stored).question
    assert TurnFrame.stored_question(stored, [*key[:-1], key[-1] + 1]) is None
    assert TurnFrame.stored_question({**stored, "question": {"pattern": 3}}, key) is None
    assert TurnFrame.stored_question({**stored, "format": 1, "question": None}, key) is None
