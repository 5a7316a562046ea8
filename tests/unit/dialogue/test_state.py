from dialogue.state import SessionState


def test_consumed_doc_window_moves_a_returned_document_to_the_newest_end():
    state = SessionState(kb="k", session_id="s")
    state.consume(["a#0", "b#0"], window=3, doc_ids=["a", "b"])
    state.consume(["c#0", "a#1"], window=3, doc_ids=["c", "a"])
    state.consume(["d#0"], window=3, doc_ids=["d"])
    assert state.consumed_docs == ["c", "a", "d"]
    assert state.consumed == ["c#0", "a#1", "d#0"]
    state.consume(["e#0"], window=0, doc_ids=["e"])
    assert state.consumed == [] and state.consumed_docs == []
