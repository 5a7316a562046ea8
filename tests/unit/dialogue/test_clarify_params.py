"""The clarify model's parameter file: refitting the kept examples gives the shipped
file byte for byte, a malformed file is refused with what to fix, and the scoring
needs nothing but the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from common.errors import ConfigurationError
from dialogue.policy.clarify_model import (FEATURES, PARAMS_PATH, ClarifyParams, Coefficients,
                                    decision_features)
from evaluation.clarify_fit import dump, fit, read_examples

EXAMPLES = Path(__file__).resolve().parents[3] / "benchmarks" / "data" / "clarify_examples.jsonl"


def test_refitting_the_kept_examples_reproduces_the_shipped_file():
    pytest.importorskip("sklearn")
    examples = read_examples(EXAMPLES)
    assert len(examples) > 500
    shipped = PARAMS_PATH.read_text(encoding="utf-8")
    refit = dump(fit(examples, coverage=()))
    # Coverage comes from the replay and is not in the examples file; the rest must match.
    a, b = json.loads(shipped), json.loads(refit)
    a["meta"].pop("coverage"), b["meta"].pop("coverage")
    assert a == b
    assert dump(fit(examples)) == refit  # and twice the same bytes


def test_the_shipped_file_loads_and_names_every_feature():
    params = ClarifyParams.load()
    assert 0 < params.threshold < 1
    assert params.semantic.features == FEATURES
    assert not {"low_semantic_profile", "gap_semantic_type", "profile_similarity"} & set(
        params.lexical.features)


@pytest.mark.parametrize("change, message", [
    ({"threshold": 1.5}, "between 0 and 1"),
    ({"threshold": "high"}, "must be a number"),
    ({"sets": {"semantic": {"features": ["low_focus"], "mean": [], "scale": [1], "coef": [1],
                            "intercept": 0}}}, "differ in length"),
    ({"sets": {"semantic": {"features": ["shoe_size"], "mean": [0], "scale": [1], "coef": [1],
                            "intercept": 0}}}, "unknown features"),
])
def test_a_malformed_file_is_refused_with_what_is_wrong(change, message):
    raw = json.loads(PARAMS_PATH.read_text(encoding="utf-8"))
    for key, value in change.items():
        if key == "sets":
            raw["sets"].update(value)
        else:
            raw[key] = value
    with pytest.raises(ConfigurationError, match=message):
        ClarifyParams.from_json(raw, "test file")


def test_low_and_gap_summarize_the_candidates():
    per = {"a": {f: 0.0 for f in ("attribute_fit",)}, "b": {"attribute_fit": 1.0}}
    full = {c: {**{f.split("_", 1)[1]: 0.0 for f in FEATURES if f.startswith("low_")}, **v}
            for c, v in per.items()}
    out = decision_features(full, {"same_type": 1.0})
    assert out["low_attribute_fit"] == 0.0 and out["gap_attribute_fit"] == 1.0
    assert out["same_type"] == 1.0
    c = Coefficients(("gap_attribute_fit",), (0.0,), (2.0,), (-4.0,), 1.0)
    assert c.logit(out) == pytest.approx(1.0 - 4.0 * 0.5)
    assert c.gap_weight("attribute_fit") == pytest.approx(2.0)
