"""Follow-ups that change one slot of the question through the ontology, in both
languages, on a small campus kb (two campuses, each with a library and a canteen
that are PART_OF it; a handbook in two editions) in the in-memory stores:

- a turn that names both sides of a shared name compares them (no "which one?");
- a correction takes the corrected entity out of every slot and of later turns;
- an ellipsis that names a campus means that campus's library, not the campus;
- an ellipsis or a correction that names an edition swaps the edition;
- a shared name is settled by a sibling of what the dialogue talked about.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from dialogue.engine import EngineConfig, TurnEngine
from dialogue.memory_store import InMemorySessionStore
from kg.aliases import SnapshotCache
from understanding.linker import EntityLinker
from kg.memory_store import InMemoryOntologyStore
from retrieval.ingest import ingest_corpus
from retrieval.memory_index import InMemoryIndex
from retrieval.search import Retriever

DATA = Path(__file__).parent / "data"
KB = "campus"


@pytest.fixture(scope="module", params=[False, True], ids=["fit", "deferring"])
def engine(request) -> TurnEngine:
    """The engine as without the clarify model, and with a linker that leaves what only
    the context fit would settle to the policy, as it does beside the model."""
    ontology = InMemoryOntologyStore()
    ontology.import_ontology(KB, (DATA / "campus_ontology.jsonl").read_text(encoding="utf-8")
                             .splitlines())
    snapshots = SnapshotCache(ontology)
    index = InMemoryIndex()
    ingest_corpus(KB, (DATA / "campus_corpus.jsonl").read_text(encoding="utf-8").splitlines(),
                  index=index, snapshot=snapshots.get(KB))
    return TurnEngine(snapshots, Retriever(index), InMemorySessionStore(), EngineConfig(),
                      linker=EntityLinker(defer_fit=request.param))


@pytest.fixture
def say(engine: TurnEngine):
    session = f"s-{uuid.uuid4().hex[:10]}"
    return lambda text: engine.handle(KB, session, text)


@pytest.mark.parametrize("turn", ["北校区和南校区的图书馆，哪个周末开门",
                                  "Which is open at weekends, the North Campus or South Campus library?"])
def test_a_turn_naming_both_campuses_compares_both_libraries(say, turn):
    both = say(turn)
    assert both.action == "retrieve" and both.clarification is None
    assert set(both.entities) == {"lib.north", "lib.south"}


@pytest.mark.parametrize("turn", ["学生手册2023版和2024版的请假规定有什么不同",
                                  "How do the 2023 and 2024 student handbook differ on leave?"])
def test_a_turn_naming_both_editions_compares_both(say, turn):
    both = say(turn)
    assert both.action == "retrieve"
    assert set(both.entities) == {"book.2023", "book.2024"}
    assert "2023" in both.standalone and "2024" in both.standalone


def test_one_side_alone_is_still_asked_about(say):
    assert say("图书馆周末开门吗").action == "clarify"


@pytest.mark.parametrize(("first", "correction", "later"), [
    ("北校区图书馆几点开门", "不是北校区，是南校区", "周末呢"),
    ("When does the North Campus library open?", "Not North Campus, but South Campus.",
     "And at weekends?")])
def test_a_correction_replaces_the_corrected_campus_everywhere(say, first, correction, later):
    say(first)
    fixed = say(correction)
    assert fixed.entities == ["lib.south"]
    assert "南校区图书馆" in fixed.standalone and "北校区" not in fixed.standalone
    after = say(later)
    assert after.action == "retrieve" and after.entities == ["lib.south"]
    assert "北校区" not in after.standalone


@pytest.mark.parametrize(("first", "ellipsis"), [
    ("北校区图书馆几点开门", "那南校区的呢"),
    ("When does the North Campus library open?", "And the South Campus one?")])
def test_an_ellipsis_naming_the_other_campus_means_its_library(say, first, ellipsis):
    say(first)
    other = say(ellipsis)
    assert other.entities == ["lib.south"]
    assert "南校区图书馆" in other.standalone and "北校区" not in other.standalone


def test_after_an_ellipsis_the_former_and_the_latter_are_both_sides(say):
    say("北校区图书馆几点开门")
    say("那南校区的呢")
    assert say("前者周末开吗").entities == ["lib.north"]


@pytest.mark.parametrize(("first", "ellipsis"), [
    ("学生手册2024版的请假规定是什么", "旧版呢"),
    ("What does the 2024 student handbook say about leave?", "And the previous version?")])
def test_an_older_edition_ellipsis_swaps_the_edition(say, first, ellipsis):
    assert say(first).entities == ["book.2024"]
    older = say(ellipsis)
    assert older.entities == ["book.2023"]
    assert "2023" in older.standalone and "2024" not in older.standalone


@pytest.mark.parametrize(("first", "correction", "later"), [
    ("学生手册2023版的请假规定是什么", "不是2023，是2024版的", "要谁批准"),
    ("What does the 2023 student handbook say about leave?", "No, I meant the 2024 edition.",
     "Who approves it?")])
def test_a_numbered_edition_correction_swaps_the_edition(say, first, correction, later):
    say(first)
    fixed = say(correction)
    assert fixed.entities == ["book.2024"]
    assert "2024" in fixed.standalone and "2023" not in fixed.standalone
    after = say(later)
    assert after.entities == ["book.2024"] and "2023" not in after.standalone


def test_the_newer_of_two_editions_in_focus(say):
    say("学生手册2023版和2024版的请假规定有什么不同")
    assert say("新版要谁批准").entities == ["book.2024"]


@pytest.mark.parametrize(("first", "then"), [
    ("南校区图书馆几点开门", "食堂几点开始供应早餐"),
    ("When does the South Campus library open?", "When does the canteen serve breakfast?")])
def test_a_shared_name_is_settled_by_a_sibling_of_the_focus(say, first, then):
    say(first)
    assert say(then).entities == ["canteen.south"]


@pytest.mark.parametrize(("turn", "meant"), [
    ("一卡通丢了怎么挂失", "card.campus"),
    ("一卡通坐地铁有优惠吗", "card.transit"),
    ("Is there a fare discount with the card?", "card.transit"),
    ("What is the top-up method for the card?", "card.campus")])
def test_a_piece_of_an_attribute_only_one_type_has_settles_a_shared_name(say, turn, meant):
    settled = say(turn)
    assert settled.action != "clarify" and settled.entities == [meant]


def test_a_shared_name_with_no_attribute_of_either_type_is_still_asked_about(say):
    assert say("一卡通在哪里办").action == "clarify"


@pytest.mark.parametrize("turn", ["学生手册2021版的请假规定是什么", "2022年的学生手册怎么请假"])
def test_an_edition_the_kb_does_not_hold_is_answered_with_nothing(say, turn):
    # Asking which of the 2023 and 2024 editions is meant would ask what was not said.
    assert say(turn).action == "no_answer"
