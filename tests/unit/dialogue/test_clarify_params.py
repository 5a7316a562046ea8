"""The clarify model's parameter file: refitting the kept examples gives the shipped
file byte for byte, a malformed file is refused with what to fix, and the scoring
needs nothing but the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from common.errors import ConfigurationError, InputError
from dialogue.policy.clarify_model import (FACETS_UNKNOWN, FEATURES, INTERACTIONS, PARAMS_PATH,
                                           SET_KEYS, ClarifyParams, Coefficients,
                                           decision_features, needs_own_facets,
                                           with_interactions)
from evaluation.clarify_fit import (FOLDS, PARTITIONS, Example, _fit_set, by_suite, choose_threshold, dump,
                                    fit, partitions, read_examples)

EXAMPLES = Path(__file__).resolve().parents[3] / "benchmarks" / "data" / "clarify_examples.jsonl"


def test_refitting_the_kept_examples_reproduces_the_shipped_file():
    pytest.importorskip("sklearn")
    examples = read_examples(EXAMPLES)
    assert len(examples) > 500
    shipped = PARAMS_PATH.read_text(encoding="utf-8")
    calls: list[tuple[int, int]] = []
    refit = dump(fit(examples, coverage=(), progress=lambda *c: calls.append(c)))
    # Progress counts every partition of every set, once each, up to the total.
    total = len(SET_KEYS) * PARTITIONS
    assert calls == [(i, total) for i in range(1, total + 1)]
    # Coverage comes from the replay and is not in the examples file; the rest must match.
    a, b = json.loads(shipped), json.loads(refit)
    a["meta"].pop("coverage"), b["meta"].pop("coverage")
    # The shipped file came from another process: the same examples, the same bytes.
    assert a == b


def test_the_threshold_counts_the_turns_rightly_answered_without_a_question():
    """Most turns need no question, and a band scores alike whether it needs one or not
    (5 that do, 8 that do not): the F1 of the clarify class, blind to the turns rightly
    answered, would ask the whole band (F1 0.71 against 0.67); the decision's accuracy
    leaves it answered (0.93 against 0.88)."""
    pairs = ([(0.9, 1)] * 5 + [(0.3, 1)] * 5      # those that need asking; half score low
             + [(0.3, 0)] * 8 + [(0.1, 0)] * 50)  # those that do not; a band scores like them
    suites = {"mostly-answered": pairs}
    assert choose_threshold(suites) == 0.31
    # The same suite beside one where every scored turn needs a question: each weighs the
    # same, and asking on the band would cost the first more than it gains the second.
    every = [(0.95, 1)] * 10
    assert choose_threshold({**suites, "always-asks": every}) == 0.31
    # Ties go to the lower threshold (more questions): all scores apart, the lowest gap.
    assert choose_threshold({"apart": [(0.8, 1), (0.2, 0)]}) == 0.21


def test_partitions_keep_a_group_in_one_fold_and_are_seeded():
    groups = [f"s{i // 2}" for i in range(40)]  # two examples a session
    parts = partitions(groups, count=3)
    assert len(parts) == 3 and parts == partitions(groups, count=3)
    for folds in parts:
        assert {(g, f) for g, f in zip(groups, folds)} == {(g, folds[groups.index(g)])
                                                          for g in groups}
        assert sorted(set(folds)) == list(range(FOLDS))
        # Dealt in turn: the folds differ in size by at most one session.
        sizes = [folds.count(k) for k in range(FOLDS)]
        assert max(sizes) - min(sizes) <= 2
    assert parts[0] != parts[1]


def test_the_threshold_reads_every_partition_not_the_first():
    """Two partitions' out-of-fold scores of the same six examples: each alone puts the
    best threshold elsewhere (0.21, 0.81); pooled, the choice is the one with the best
    mean accuracy over both (0.36: 0.67 against 0.58 at either single choice)."""
    examples = [Example("s", f"x{i}", 1, label, {}, True)
                for i, label in enumerate([1, 1, 0, 0, 1, 0])]
    first = [0.60, 0.60, 0.20, 0.75, 0.40, 0.90]
    second = [0.85, 0.90, 0.85, 0.80, 0.85, 0.35]
    assert choose_threshold(by_suite([first], examples)) == 0.21
    assert choose_threshold(by_suite([second], examples)) == 0.81
    pooled = by_suite([first, second], examples)
    assert len(pooled["s"]) == 12
    assert choose_threshold(pooled) == 0.36


def test_the_shipped_file_loads_and_names_every_feature():
    params = ClarifyParams.load()
    assert 0 < params.threshold < 1
    assert params.semantic.features == with_interactions(FEATURES)
    assert set(INTERACTIONS) <= set(params.semantic.features)
    # The products are of e5 differences: the lexical set has none.
    assert not any("*" in n for n in params.lexical.features)
    assert not {"low_semantic_profile", "gap_semantic_type", "profile_similarity"} & set(
        params.lexical.features)


def test_the_sets_without_own_facets_are_the_main_sets_without_shared_facets():
    params = ClarifyParams.load()
    for main, bare in ((params.semantic, params.semantic_without_own_facets),
                       (params.lexical, params.lexical_without_own_facets)):
        assert bare is not None and 0 < bare.threshold < 1
        assert bare.features == tuple(n for n in main.features if not needs_own_facets(n))
        assert "shared_facets" in main.features and "shared_facets" not in bare.features
    assert set(params.sets()) == set(SET_KEYS)


def _flagged_example() -> dict[str, float]:
    [example] = [e for e in read_examples(EXAMPLES) if e.suite == "enterprise-dev"][:1]
    return {**example.features, FACETS_UNKNOWN: 1.0}


def test_shared_facets_unknown_does_not_move_the_score():
    """A decision where some candidate has no own facet: whatever shared_facets reads (0
    there), the score is the same; an older file without the sets reads it at its mean."""
    params = ClarifyParams.load()
    f = _flagged_example()
    key, coefficients, unknown = params.coefficients(True, facets_known=False)
    assert key == "semantic_without_own_facets" and unknown == frozenset()
    assert coefficients.logit({**f, "shared_facets": 0.0}) == coefficients.logit(
        {**f, "shared_facets": 1.0})
    assert params.threshold_for(True, facets_known=False) == coefficients.threshold
    raw = json.loads(PARAMS_PATH.read_text(encoding="utf-8"))
    for k in ("semantic_without_own_facets", "lexical_without_own_facets"):
        del raw["sets"][k]
    older = ClarifyParams.from_json(raw, "an older file")
    key, main, unknown = older.coefficients(True, facets_known=False)
    assert key == "semantic" and unknown == {"shared_facets"}
    mean = main.mean[main.features.index("shared_facets")]
    at_zero = main.logit({**f, "shared_facets": 0.0}, unknown)
    assert at_zero == pytest.approx(main.logit({**f, "shared_facets": mean}))
    assert at_zero == pytest.approx(main.logit({**f, "shared_facets": 1.0}, unknown))
    # Read as known, 0 ("nothing in common") pushes toward resolving.
    assert main.logit({**f, "shared_facets": 0.0}) < at_zero


def test_fitting_reads_an_unknown_shared_facets_at_the_mean_of_the_known():
    """Examples flagged own_facets_unknown teach nothing through their placeholder: the
    fitted set is the same whatever value they carry."""
    pytest.importorskip("sklearn")
    examples = [e for e in read_examples(EXAMPLES) if e.semantic][:300]

    def flagged(value: float) -> list[Example]:
        return [Example(e.suite, e.session, e.turn, e.label,
                        {**e.features, FACETS_UNKNOWN: 1.0, "shared_facets": value}
                        if i % 3 == 0 else e.features, e.semantic, e.candidates)
                for i, e in enumerate(examples)]

    names = ("shared_facets", "low_known_text", "gap_semantic_facet", "salience_tie")
    a, oof_a, _ = _fit_set(flagged(0.0), names, boosted=False)
    b, oof_b, _ = _fit_set(flagged(1.0), names, boosted=False)
    assert a == b and oof_a == oof_b
    known = [e.features["shared_facets"] for i, e in enumerate(examples) if i % 3]
    assert a["mean"][0] == pytest.approx(sum(known) / len(known), abs=1e-5)


@pytest.mark.parametrize("change, message", [
    ({"threshold": 1.5}, "between 0 and 1"),
    ({"threshold": "high"}, "must be a number"),
    ({"sets": {"semantic": {"features": ["low_focus"], "mean": [], "scale": [1], "coef": [1],
                            "intercept": 0}}}, "differ in length"),
    ({"sets": {"semantic": {"features": ["shoe_size"], "mean": [0], "scale": [1], "coef": [1],
                            "intercept": 0}}}, "unknown features"),
    ({"sets": {"semantic": {"features": ["low_focus*shoe_size"], "mean": [0], "scale": [1],
                            "coef": [1], "intercept": 0}}}, "unknown features"),
    ({"sets": {"semantic_sans_facets": {"features": ["low_focus"], "mean": [0], "scale": [1],
                                        "coef": [1], "intercept": 0}}}, "unknown coefficient sets"),
    ({"sets": {"lexical_without_own_facets": {"features": ["shared_facets"], "mean": [0],
                                              "scale": [1], "coef": [1], "intercept": 0}}},
     "must not read"),
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


def test_lead_compares_the_candidate_the_dialogue_is_about_with_the_others():
    def cand(focus: float, recency: float, fit: float) -> dict:
        return {"focus": focus, "recency": recency, "semantic_own": fit}

    # The focus leads; its fit minus the best other's (three candidates).
    out = decision_features({"a": cand(1.0, 1.0, 0.70), "b": cand(0.5, 1.0, 0.80),
                             "c": cand(0.0, 0.5, 0.75)}, {})
    assert out["salience_tie"] == 0.0
    assert out["lead_semantic_own"] == pytest.approx(0.70 - 0.80)
    assert out["low_semantic_own"] == 0.70 and out["gap_semantic_own"] == pytest.approx(0.10)
    # Equal focus: the more recent one leads.
    out = decision_features({"a": cand(0.0, 0.5, 0.9), "b": cand(0.0, 1.0, 0.6)}, {})
    assert out["lead_semantic_own"] == pytest.approx(0.6 - 0.9)
    # Nobody more salient than the rest: no lead.
    out = decision_features({"a": cand(0.0, 0.0, 0.9), "b": cand(0.0, 0.0, 0.6)}, {})
    assert out["salience_tie"] == 1.0 and out["lead_semantic_own"] == 0.0


def _stump(feature: int, threshold: float, low: float, high: float) -> dict:
    return {"feature": [feature, -1, -1], "threshold": [threshold, 0.0, 0.0],
            "left": [1, -1, -1], "right": [2, -1, -1], "value": [0.0, low, high]}


def _with_trees(trees: dict) -> Coefficients:
    raw = {"features": ["gap_semantic_facet", "low_focus"], "mean": [0, 0], "scale": [1, 1],
           "coef": [-1, 0], "intercept": 0, "trees": trees}
    return Coefficients.from_json(raw, "test set")


def test_boosted_trees_score_by_walking_each_tree():
    c = _with_trees({"base": -0.5, "rate": 0.1,
                     "trees": [_stump(0, 0.2, 2.0, -3.0), _stump(1, 0.5, 0.0, 1.0)]})
    # A wide facet gap (one candidate fits what is asked): the first tree pushes to resolve.
    assert c.logit({"gap_semantic_facet": 0.3, "low_focus": 0.0}) == pytest.approx(-0.5 - 0.3)
    assert c.logit({"gap_semantic_facet": 0.2, "low_focus": 1.0}) == pytest.approx(-0.5 + 0.3)
    # The logistic part still ranks the candidates when the trees score.
    assert c.gap_weight("semantic_facet") == pytest.approx(1.0)
    assert Coefficients.from_json(c.as_json(), "round trip") == c


@pytest.mark.parametrize("trees, message", [
    ({"base": 0, "rate": 0.1, "trees": []}, "no tree"),
    ({"base": 0, "rate": 0.1, "trees": [_stump(5, 0.2, 0, 1)]}, "names feature 5"),
    ({"base": 0, "rate": 0.1, "trees": [{**_stump(0, 0.2, 0, 1), "left": [0, -1, -1]}]},
     "children outside"),
    ({"base": 0, "rate": 0.1, "trees": [{**_stump(0, 0.2, 0, 1), "value": [0]}]},
     "differ in length"),
    ({"rate": 0.1, "trees": [_stump(0, 0.2, 0, 1)]}, "needs base"),
])
def test_a_malformed_tree_is_refused_with_what_is_wrong(trees, message):
    with pytest.raises(ConfigurationError, match=message):
        _with_trees(trees)


def test_boosted_trees_fitted_on_the_kept_examples_score_without_scikit_learn():
    """`referent clarify fit --trees`: the export is checked against scikit-learn's scores
    inside fit(); here the written file loads and its pure-Python scorer is fast and right
    on the enterprise suite it was fitted with."""
    pytest.importorskip("sklearn")
    import math
    import time

    examples = read_examples(EXAMPLES)
    params = ClarifyParams.from_json(json.loads(dump(fit(examples, trees=True))))
    assert params.semantic.trees is not None and params.lexical.trees is None
    assert len(params.semantic.trees.trees) <= 200
    start = time.perf_counter()
    scores = [params.semantic.logit(e.features) for e in examples]
    per_score = (time.perf_counter() - start) / len(examples)
    assert per_score < 0.002  # well under the 2 ms a turn may spend on the decision
    threshold = params.threshold_for(True)
    for e, z in zip(examples, scores):
        if e.suite == "enterprise-dev":
            assert (1 / (1 + math.exp(-z)) >= threshold) == bool(e.label), e
    # The shipped file scores with the logistic model (docs/linking.md, "Refit": why the trees are not shipped).
    assert ClarifyParams.load().semantic.trees is None


def test_a_product_of_two_features_is_scored_and_moves_the_candidates_weights():
    """"gap_x*salience_tie": the gap weighs otherwise when no candidate is more salient."""
    c = Coefficients(("gap_semantic_facet", "gap_semantic_facet*salience_tie"), (0.0, 0.0),
                     (1.0, 0.5), (-1.0, -2.0), 0.0)
    lead = {"gap_semantic_facet": 0.3, "salience_tie": 0.0}
    tie = {"gap_semantic_facet": 0.3, "salience_tie": 1.0}
    assert c.logit(lead) == pytest.approx(-0.3)
    assert c.logit(tie) == pytest.approx(-0.3 - 2.0 * 0.3 / 0.5)
    # The weight of the facet gap when ranking the candidates: the logit's slope in it.
    assert c.gap_weight("semantic_facet", lead) == pytest.approx(1.0)
    assert c.gap_weight("semantic_facet", tie) == pytest.approx(1.0 + 4.0)
    assert Coefficients.from_json(c.as_json(), "round trip") == c


def test_undescribed_marks_a_candidate_the_kb_has_no_description_of():
    per = {"a": {"known_text": 0.0, "known_facets": 1.0}, "b": {"known_text": 2.5}}
    assert decision_features(per, {})["undescribed"] == 1.0
    per["a"]["known_text"] = 1.1
    assert decision_features(per, {})["undescribed"] == 0.0


def test_shared_facets_is_the_share_of_the_least_described_candidates_facets():
    from dialogue.policy.clarify_model import _shared_facets
    assert _shared_facets([("type", "fee", "limit"), ("type", "fee", "limit", "issued to")]) == 1.0
    assert _shared_facets([("type", "fee", "limit", "hours"), ("type", "fee", "owner")]) == \
        pytest.approx(2 / 3)
    assert _shared_facets([("type",), ("branch",)]) == 0.0
    # One candidate, or one the kb holds nothing about: no evidence that anything is shared.
    assert _shared_facets([("type", "fee")]) == 0.0
    assert _shared_facets([("type", "fee"), ()]) == 0.0


def test_a_fold_whose_rest_holds_one_label_scores_that_label():
    """A small suite whose only examples of one label share a session: that session's fold
    leaves the rest with one label, which a logistic regression cannot fit. The fold is
    scored as what the rest teaches (that label), and the fit goes on."""
    pytest.importorskip("sklearn")
    features = {"low_focus": 0.0}
    examples = [Example("small", f"s{i}", 1, 1, {"low_focus": i / 10}, True) for i in range(10)]
    examples += [Example("small", "asked-twice", turn, 0, features, True) for turn in (1, 2)]
    _, oof, linear = _fit_set(examples, ("low_focus",), boosted=False, count=3)
    folds = partitions([f"{e.suite}/{e.session}" for e in examples], count=3)
    for run, fold in zip(oof, folds, strict=True):
        alone = fold[-1]  # the fold of the session with both "answer" examples
        for p, k in zip(run, fold):
            if k == alone:
                assert p == 1.0  # the rest was all "ask"
            else:
                assert 0.0 < p < 1.0  # a model was fitted
    assert oof == linear


def test_examples_of_one_label_are_refused_saying_what_is_missing():
    examples = [Example("small", f"s{i}", 1, 1, {"low_focus": 0.0}, True) for i in range(12)]
    with pytest.raises(InputError, match="12 examples, 12 of them expected to ask.*"
                                         "expected to be answered without a question"):
        fit(examples)
