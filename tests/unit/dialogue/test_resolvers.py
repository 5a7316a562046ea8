"""Resolvers as components: each a module of dialogue/resolvers/ registered by name, their
order data (order.json), the policy a loop over them with no step of its own."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from common.errors import ConfigurationError
from dialogue.policy import DialoguePolicy, PlanQueries
from dialogue.resolvers import ORDER_FILE, configured_order, load_resolvers
from dialogue.state import SessionState
from tests.unit.dialogue.test_policy import decide

RESOLVERS = ORDER_FILE.parent
POLICY = RESOLVERS.parent / "policy" / "policy.py"


def test_every_resolver_module_is_in_the_order_and_every_name_has_its_module():
    modules = sorted(p.stem for p in RESOLVERS.glob("*.py") if p.stem != "__init__")
    assert sorted(configured_order()) == modules
    assert [r.name for r in load_resolvers()] == configured_order()


def test_an_unknown_or_malformed_order_is_a_clear_configuration_error(tmp_path):
    with pytest.raises(ConfigurationError, match="no resolver 'nonesuch'.*nonesuch.py"):
        load_resolvers(["salience", "nonesuch"])
    bad = tmp_path / "order.json"
    bad.write_text(json.dumps({"resolvers": "salience"}), encoding="utf-8")
    with pytest.raises(ConfigurationError, match="must be a list"):
        configured_order(bad)
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="cannot read the resolver order"):
        configured_order(bad)


def test_the_policy_calls_no_resolver_mechanism_itself():
    # What the resolver modules take from the policy package are their mechanisms; the
    # policy class reaches them only through the resolvers.
    mechanisms = set()
    for path in RESOLVERS.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dialogue.policy"):
                mechanisms |= {alias.name for alias in node.names if alias.name[0].islower()}
    policy = next(node for node in ast.parse(POLICY.read_text(encoding="utf-8")).body
                  if isinstance(node, ast.ClassDef) and node.name == "DialoguePolicy")
    called = {node.func.id for node in ast.walk(policy)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert mechanisms and not (mechanisms & called)


def test_the_order_decides_which_resolvers_run(snapshot):
    # A follow-up that names nothing is about the focus only while the resolver that
    # says so is configured.
    state = SessionState(kb="t", session_id="s", focus=["region.east"])
    every = decide("为什么下降", snapshot, state)
    assert isinstance(every, PlanQueries) and every.entities == ("region.east",)
    assert every.trace["resolvers"][0]["resolver"] == "subject_from_dialogue"
    without = [n for n in configured_order() if n != "subject_from_dialogue"]
    bare = decide("为什么下降", snapshot, state, DialoguePolicy(resolvers=load_resolvers(without)))
    assert isinstance(bare, PlanQueries) and bare.entities == ()
    assert "resolvers" not in bare.trace
