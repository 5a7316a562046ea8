"""Fitting the clarify-or-resolve model: ``referent clarify fit``.

1. Replay each suite (docs/formats.md, the suite format) through the real turn engine against its
   kb, with a collecting model that always asks (so every ambiguous mention's
   features are measured, and the dialogue state before each scored turn does
   not depend on the parameters being fitted). The prior from recorded answers
   is left out, so the replay depends on the kb alone.
2. Every scored turn (one with ``expect``) that reached the decision is an
   example: features from the trace, label ``expect.action == "clarify"``.
3. Per coefficient set (``semantic``: every feature; ``lexical``: without the
   e5 ones), each suite weighing the same: a logistic regression on standardized
   features (scikit-learn, the ``fit`` extra), whose weights rank the candidates
   when the model resolves, and, for the semantic set, boosted shallow trees
   that score instead, kept as arrays the server walks in pure Python. Cross-validated by
   session (5 folds, whole sessions in one fold), over several seeded partitions
   of the sessions into folds: the out-of-fold probabilities of all of them choose
   the threshold with the best mean accuracy of the decision over the suites (a
   needless question and a guess that should have asked each cost the user a
   turn; ties: the lower threshold), and give the per-suite figures in the report.
4. The file is written with sorted keys and rounded numbers: the same examples
   give the same bytes.

The examples can be kept (``--features-out``) and refitted without replaying
(``--from-features``).
"""

from __future__ import annotations

import json
import math
import random
import re
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.errors import ConfigurationError, InputError
from common.jsonl import loads
from dialogue.policy.clarify_model import (FACETS_UNKNOWN, FEATURES, NEEDS_OWN_FACETS,
                                           ClarifyModel, ClarifyParams, feature_value,
                                           label_uses_e5, needs_own_facets, set_key,
                                           uses_embedder, with_interactions)
from evaluation.suites import ScriptSession, run_system

FOLDS = 5
# One partition of the sessions into folds gives one noisy accuracy curve: on the shipped
# examples the best threshold of a single partition ranged from 0.42 to 0.54 as the
# partition changed, while the curve averaged over partitions peaks in one place. The
# threshold is read from the mean over PARTITIONS seeded partitions.
PARTITIONS = 10
C = 1.0
ROUND = 6
# The boosted trees: few and shallow (microseconds to score in pure Python). Deeper or
# more trees score higher by session on CLAQUA multi-turn only by recognizing its
# repeated question wordings (docs/linking.md, "Refit").
TREES = 100
DEPTH = 3
RATE = 0.1
MIN_LEAF = 20


@dataclass(frozen=True)
class Example:
    suite: str
    session: str
    turn: int
    label: int
    features: Mapping[str, float]
    semantic: bool
    # Each candidate's own features (as the trace rounds them), in the order offered: a
    # later round can derive new decision features from them without replaying.
    candidates: tuple[Mapping[str, float], ...] = ()

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "suite": self.suite, "session": self.session, "turn": self.turn,
            "label": self.label, "semantic": self.semantic,
            "features": {k: round(float(self.features.get(k, 0.0)), ROUND)
                         for k in (*FEATURES, FACETS_UNKNOWN)}}
        if self.candidates:
            out["candidates"] = [{k: round(float(v), ROUND) for k, v in c.items()}
                                 for c in self.candidates]
        return out

    @classmethod
    def from_json(cls, raw: Mapping[str, Any], where: str) -> Example:
        try:
            return cls(str(raw["suite"]), str(raw["session"]), int(raw["turn"]),
                       int(raw["label"]), {k: float(v) for k, v in raw["features"].items()},
                       bool(raw.get("semantic", True)),
                       tuple({k: float(v) for k, v in c.items()}
                             for c in raw.get("candidates") or ()))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{where}: an example needs suite, session, turn, label and "
                             f"features ({exc})") from exc


@dataclass(frozen=True)
class Coverage:
    """What the replay of one suite gave."""

    suite: str
    scored_turns: int
    expect_clarify: int
    examples: int
    clarify_without_decision: int  # expected a question the linker never left open


def collect(engine_for: Callable[[ClarifyModel], Any], kb: str, suite_name: str,
            scripts: Sequence[ScriptSession], collector: ClarifyModel,
            on_turn: Callable[[Any], None] | None = None) -> tuple[list[Example], Coverage]:
    """Replay ``scripts`` and take the decision features of every scored turn
    (``on_turn`` is called after each turn played)."""
    engine = engine_for(collector)
    # A fresh run id: the server sessions of an earlier replay in the same data dir are
    # not continued (their dialogue state would change the features).
    results = run_system(engine, kb, scripts, k=5, run_id=f"clarify-fit-{uuid.uuid4().hex[:8]}",
                         on_turn=on_turn)
    expects = [(s.session, i + 1, t.expect) for s in scripts for i, t in enumerate(s.turns)]
    examples: list[Example] = []
    scored = expect_clarify = missing = 0
    for (session, turn, expect), result in zip(expects, results, strict=True):
        if expect is None or expect.action is None:
            continue
        scored += 1
        label = int(expect.action == "clarify")
        expect_clarify += label
        # The gate's verdicts on the turn's ambiguous links; the first is the one asked about.
        decision = next((d["features"] for d in result.trace.get("clarify_decisions") or ()
                         if "features" in d.get("features", {})), None)
        if decision is None:
            missing += label
            continue
        examples.append(Example(suite_name, session, turn, label, decision["features"],
                                label_uses_e5(str(decision.get("params", ""))),
                                tuple((decision.get("candidates") or {}).values())))
    return examples, Coverage(suite_name, scored, expect_clarify, len(examples), missing)


def _sklearn():
    try:
        import numpy as np
        from sklearn.ensemble import GradientBoostingClassifier
        from sklearn.linear_model import LogisticRegression
    except ImportError as exc:
        raise ConfigurationError("fitting needs scikit-learn: pip install "
                                 "'referent-server[fit]'") from exc
    return np, LogisticRegression, GradientBoostingClassifier


def _boosted():
    """The scoring model: shallow boosted trees (deterministic: fixed seed, no subsampling)."""
    _, _, GradientBoostingClassifier = _sklearn()
    return GradientBoostingClassifier(n_estimators=TREES, max_depth=DEPTH,
                                      learning_rate=RATE, min_samples_leaf=MIN_LEAF,
                                      random_state=0)


def _export_trees(model, x) -> dict[str, Any]:
    """The fitted ensemble as the parameter file keeps it, checked against scikit-learn."""
    np = _sklearn()[0]
    prior = float(model.init_.class_prior_[1])
    base = math.log(prior / (1.0 - prior))
    trees = []
    for est in model.estimators_[:, 0]:
        t = est.tree_
        leaf = t.children_left < 0
        trees.append({"feature": [-1 if lf else int(f) for f, lf in zip(t.feature, leaf)],
                      "threshold": [0.0 if lf else round(float(v), ROUND)
                                    for v, lf in zip(t.threshold, leaf)],
                      "left": [int(v) for v in t.children_left],
                      "right": [int(v) for v in t.children_right],
                      "value": [round(float(v), ROUND) for v in t.value[:, 0, 0]]})
    out = {"base": round(base, ROUND), "rate": RATE, "trees": trees}
    # The pure-Python scorer must give what scikit-learn gives (up to the rounding).
    from dialogue.policy.clarify_model import Trees

    ours = Trees.from_json(out, x.shape[1], "fitted trees")
    mine = np.array([ours.raw(list(row)) for row in x])
    theirs = model.decision_function(x)
    if float(np.max(np.abs(mine - theirs))) > 1e-3:
        raise ConfigurationError("the exported trees do not reproduce scikit-learn's scores")
    return out


def partitions(groups: Sequence[str], count: int = PARTITIONS) -> list[list[int]]:
    """``count`` assignments of each example to one of FOLDS folds, a group's examples
    always in one fold: the distinct groups in a seeded random order (seed = the
    partition's number), dealt to the folds in turn. The same groups give the same folds."""
    distinct = sorted(set(groups))
    out = []
    for seed in range(count):
        order = distinct[:]
        random.Random(seed).shuffle(order)
        fold_of = {g: i % FOLDS for i, g in enumerate(order)}
        out.append([fold_of[g] for g in groups])
    return out


def _fit_set(examples: Sequence[Example], names: Sequence[str],
             group_of: Callable[[Example], str] | None = None, boosted: bool = True,
             count: int = PARTITIONS, on_partition: Callable[[], None] | None = None
             ) -> tuple[dict[str, Any], list[list[float]], list[list[float]]]:
    """The set on every example, and the out-of-fold probabilities of the boosted trees
    (which score) and of the logistic part (kept for comparison), one list per partition
    of the examples into folds (``count`` of them, :func:`partitions`). Folds keep each
    session together (``group_of``: another grouping, e.g. by the question's wording). Without
    ``boosted`` the logistic model scores alone (its probabilities twice).
    ``on_partition`` is called after each partition's folds are fitted."""
    np = _sklearn()[0]
    x = np.array([[feature_value(e.features, n) for n in names] for e in examples], dtype=float)
    # A feature that needs the candidates' own facets is unknown where some candidate has
    # none: it is read at the mean of the examples where it is known (the scorer reads it
    # at the set's mean, the same value), so the placeholder 0 teaches nothing.
    unknown = np.array([bool(e.features.get(FACETS_UNKNOWN)) for e in examples])
    if unknown.any():
        for j, name in enumerate(names):
            if needs_own_facets(name):
                x[unknown, j] = x[~unknown, j].mean() if (~unknown).any() else 0.0
    y = np.array([e.label for e in examples])
    groups = [group_of(e) if group_of else f"{e.suite}/{e.session}" for e in examples]
    # Each suite weighs the same, however many examples it has: a small enterprise
    # suite is not drowned by a large public one.
    sizes = {s: sum(1 for e in examples if e.suite == s) for s in {e.suite for e in examples}}
    w = np.array([len(examples) / (len(sizes) * sizes[e.suite]) for e in examples])

    runs, runs_linear = [], []
    for folds in partitions(groups, count):
        oof, oof_linear = _out_of_fold(x, y, w, np.array(folds), boosted)
        runs.append(oof)
        runs_linear.append(oof_linear)
        if on_partition is not None:
            on_partition()
    mean, scale = _standardize(x)
    m = _logistic().fit((x - mean) / scale, y, sample_weight=w)
    coef = {"features": list(names),
            "mean": [round(float(v), ROUND) for v in mean],
            "scale": [round(float(v), ROUND) for v in scale],
            "coef": [round(float(v), ROUND) for v in m.coef_[0]],
            "intercept": round(float(m.intercept_[0]), ROUND)}
    if boosted:
        coef["trees"] = _export_trees(_boosted().fit(x, y, sample_weight=w), x)
    return coef, runs, runs_linear


def _standardize(rows):
    mean = rows.mean(axis=0)
    scale = rows.std(axis=0)
    scale[scale < 1e-9] = 1.0
    return mean, scale


def _logistic():
    _, LogisticRegression, _ = _sklearn()
    return LogisticRegression(C=C, max_iter=10_000, solver="lbfgs")


def _out_of_fold(x, y, w, folds, boosted: bool) -> tuple[list[float], list[float]]:
    """One partition's out-of-fold probabilities: of the boosted trees (or the logistic
    model without ``boosted``) and of the logistic model."""
    np = _sklearn()[0]
    oof, oof_linear = np.zeros(len(y)), np.zeros(len(y))
    for k in range(FOLDS):
        train, test = folds != k, folds == k
        if len(set(y[train].tolist())) < 2:
            # Every example of one label fell in this fold (a small suite): what the
            # rest teaches is that label alone.
            oof[test] = oof_linear[test] = float(y[train][0])
            continue
        mean, scale = _standardize(x[train])
        m = _logistic().fit((x[train] - mean) / scale, y[train], sample_weight=w[train])
        oof_linear[test] = m.predict_proba((x[test] - mean) / scale)[:, 1]
        if boosted:
            b = _boosted().fit(x[train], y[train], sample_weight=w[train])
            oof[test] = b.predict_proba(x[test])[:, 1]
        else:
            oof[test] = oof_linear[test]
    return [float(p) for p in oof], [float(p) for p in oof_linear]


def by_suite(runs: Sequence[Sequence[float]], examples: Sequence[Example]
             ) -> dict[str, list[tuple[float, int]]]:
    """Per suite, the (out-of-fold probability, label) pairs of every partition together:
    an accuracy or a precision over them is the mean over the partitions."""
    out: dict[str, list[tuple[float, int]]] = {s: [] for s in sorted({e.suite for e in examples})}
    for run in runs:
        for p, e in zip(run, examples, strict=True):
            out[e.suite].append((p, e.label))
    return out


def _prf(pairs: Iterable[tuple[float, int]], threshold: float, runs: int = 1
         ) -> dict[str, Any]:
    """Precision, recall and F1 of the clarify class; ``pairs`` may hold ``runs``
    partitions' scores of the same examples (counts are per example)."""
    pairs = list(pairs)
    tp = sum(1 for p, y in pairs if p >= threshold and y)
    fp = sum(1 for p, y in pairs if p >= threshold and not y)
    fn = sum(1 for p, y in pairs if p < threshold and y)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"n": len(pairs) // runs, "positives": (tp + fn) // runs,
            "precision": round(precision, 4),
            "recall": round(recall, 4), "f1": round(f1, 4)}


def _accuracy(pairs: Iterable[tuple[float, int]], threshold: float) -> float:
    pairs = list(pairs)
    return sum(1 for p, y in pairs if (p >= threshold) == bool(y)) / max(len(pairs), 1)


def choose_threshold(by_suite: Mapping[str, Sequence[tuple[float, int]]]) -> float:
    """The threshold (0.05-0.95, step 0.01) with the best mean accuracy of the decision
    over the suites (each suite weighs the same); ties: the lower.

    Accuracy, not the F1 of the clarify class: F1 ignores the turns rightly answered
    without a question, so where most turns need none it buys recall with needless
    questions. Here a needless question and a wrong guess each cost the user one turn."""
    best_t, best = 0.5, -1.0
    for i in range(5, 96):
        t = i / 100
        score = sum(_accuracy(p, t) for p in by_suite.values()) / max(len(by_suite), 1)
        if score > best + 1e-12:
            best_t, best = t, score
    return best_t


def fit(examples: Sequence[Example], coverage: Sequence[Coverage] = (), *,
        trees: bool = False, progress: Callable[[int, int], None] | None = None
        ) -> dict[str, Any]:
    """The parameter file's content (see :class:`ClarifyParams`) with its report. With
    ``trees`` the semantic set is scored by boosted trees (not the shipped default: on
    KdConv, a kb unlike the training ones, they asked three times as often).
    ``progress(done, total)`` counts the partitions fitted, over every set."""
    asks = sum(e.label for e in examples)
    if len(examples) < 2 * FOLDS or asks in (0, len(examples)):
        raise InputError(f"{len(examples)} examples, {asks} of them expected to ask: fitting "
                         f"needs at least {2 * FOLDS}, some expected to ask and some expected "
                         f"to be answered without a question (add scored turns of the kind "
                         f"missing to the suites)")
    ordered = sorted(examples, key=lambda e: (e.suite, e.session, e.turn))
    # The decision features and the products of two of them (clarify_model.INTERACTIONS).
    lexical_names = with_interactions([n for n in FEATURES if not uses_embedder(n)])
    # The e5 set learns only from examples whose e5 features were measured.
    with_e5 = [e for e in ordered if e.semantic]
    report: dict[str, Any] = {}
    sets: dict[str, Any] = {}
    # Trees score the semantic set; the lexical set keeps the logistic model: folded by the
    # question's wording, trees over the lexical features did no better (docs/linking.md).
    semantic_names = with_interactions(FEATURES)
    # Each set again without the features that need the candidates' own facets: it scores
    # a decision where some candidate has none (what the model knows without that
    # evidence), fitted on the same examples.
    plans = []
    for name, names, rows, boosted in (("lexical", lexical_names, ordered, False),
                                       ("semantic", semantic_names, with_e5, trees)):
        plans.append((name, names, rows, boosted))
        plans.append((set_key(name == "semantic", False),
                      tuple(n for n in names if not needs_own_facets(n)), rows, False))
    done, total = 0, len(plans) * PARTITIONS

    def advance() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    for name, names, rows, boosted in plans:
        if len(rows) < 2 * FOLDS or len({e.label for e in rows}) < 2:
            raise InputError(f"the {name} set has {len(rows)} examples: too few to fit")
        coef, oof, oof_linear = _fit_set(rows, names, boosted=boosted, on_partition=advance)
        scored, linear = by_suite(oof, rows), by_suite(oof_linear, rows)
        coef["threshold"] = threshold = choose_threshold(scored)
        linear_threshold = choose_threshold(linear)
        runs = len(oof)
        per_suite = {s: {"model": _prf(pairs, threshold, runs),
                         "always_clarify": _prf(((1.0, y) for _, y in pairs), 0.5, runs)}
                     for s, pairs in scored.items()}
        if boosted:
            for s in scored:
                per_suite[s]["logistic_alone"] = {**_prf(linear[s], linear_threshold, runs),
                                                  "threshold": linear_threshold}
        per_suite["all"] = {"model": _prf([p for pairs in scored.values() for p in pairs],
                                          threshold, runs)}
        report[name] = per_suite
        sets[name] = coef
    return {
        # Without an embedder the lexical set decides; its threshold is the default.
        "threshold": sets["lexical"]["threshold"],
        "sets": sets,
        "meta": {
            "without_own_facets": f"the *_without_own_facets sets leave out "
                                  f"{list(NEEDS_OWN_FACETS)} and score a decision where "
                                  f"some candidate has no facet of its own",
            "model": (f"semantic set: boosted trees score (scikit-learn "
                      f"GradientBoostingClassifier, {TREES} trees of depth {DEPTH}, learning rate "
                      f"{RATE}, at least {MIN_LEAF} examples a leaf, seed 0) and a logistic "
                      f"regression (lbfgs, C={C}, standardized features) ranks the candidates; "
                      f"lexical set: the logistic regression alone" if trees else
                      f"logistic regression (scikit-learn lbfgs, C={C}), standardized features "
                      f"and, in the semantic set, the e5 differences times salience_tie"),
            "threshold_rule": "best mean accuracy of the decision over the suites, on "
                              "out-of-fold probabilities",
            "weights": "each suite weighs the same",
            "cross_validation": f"{FOLDS} folds by session, {PARTITIONS} seeded partitions; "
                                f"the figures pool every partition's out-of-fold scores",
            "examples": {s: {"all": sum(1 for e in ordered if e.suite == s),
                             "with_e5": sum(1 for e in ordered if e.suite == s and e.semantic)}
                         for s in sorted({e.suite for e in ordered})},
            "coverage": {c.suite: {"scored_turns": c.scored_turns, "expect_clarify": c.expect_clarify,
                                   "examples": c.examples,
                                   "clarify_without_decision": c.clarify_without_decision}
                         for c in coverage},
            "cv": report,
        },
    }


_NUMBER_LIST = re.compile(r"\[\s*((?:-?[0-9][0-9.e+-]*,\s*)*-?[0-9][0-9.e+-]*)\s*\]")


def dump(params: Mapping[str, Any]) -> str:
    """The file's bytes: sorted keys, two-space indent, newline at the end."""
    text = json.dumps(params, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    # A list of numbers on one line: the trees' arrays would otherwise take a line per node.
    text = _NUMBER_LIST.sub(
        lambda m: "[" + ", ".join(v.strip() for v in m.group(1).split(",")) + "]", text)
    ClarifyParams.from_json(json.loads(text), "fitted parameters")  # loadable, or fail here
    return text


def read_examples(path: Path) -> list[Example]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                raw = loads(line, "the line")
            except ValueError as exc:  # not JSON, or nested too deeply
                raise InputError(f"{path}:{n}: not JSON ({exc})") from exc
            out.append(Example.from_json(raw, f"{path}:{n}"))
    return out


def write_examples(path: Path, examples: Iterable[Example]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for e in examples:
            fh.write(json.dumps(e.as_json(), sort_keys=True, ensure_ascii=False) + "\n")


def _finite(values: Iterable[float]) -> bool:
    return all(math.isfinite(v) for v in values)
