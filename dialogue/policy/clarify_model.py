"""Clarify or resolve: one decision per ambiguous mention, from evidence about each candidate.

The linker settles what is certain (one entity per alias, a distinguishing word
in the turn, exactly one candidate in focus, an asked attribute only one
candidate's type has). What it leaves open comes here: a shared name, a
pronoun or an unnamed subject with several entities in play. For each
candidate the extractor measures, from whatever kb is loaded:

==================  =========================================================
feature             what it measures (larger = the question fits it better)
==================  =========================================================
attribute_fit       share of the asked attributes that the candidate's type has
relation_fit        IDF overlap of the question with its relations (relation
                    type words, the names of the entities at the other end)
chunk_fit           log(1 + BM25) of the best chunk tagged with it for the
                    question (mention removed): do its chunks speak of this?
chunk_attribute     1 when a chunk tagged with it names an asked attribute
semantic_profile    e5 cosine of the question with "name. type. description"
semantic_type       e5 cosine of the question with its type and the type's
                    attributes
semantic_facet      e5: the best cosine of the question with one of its facets,
                    each embedded alone: its type and the types above, the
                    type's attributes, its relation types, its own attribute
                    names and the items of their values (does what is asked
                    apply to it?)
lexical_fit         log(1 + IDF overlap) with its type, attributes and
                    description (:mod:`understanding.fit`)
focus               1 for the dialogue's most salient entity, 0.5 for another
                    focus entity, else 0
recency             1 / (1 + turns since the dialogue last named it), 0 if never
corrected_away      1 when the user corrected away from it (larger = worse)
prior_choice        (times chosen + 1) / (times offered + 2) in this kb's
                    recorded clarification answers
semantic_own        e5: the best cosine of the question with a facet of this
                    candidate that some other candidate lacks (without one:
                    ``semantic_shared``, below; when the candidates share no
                    facet, that is their least fitting facet's cosine)
words_own           log(1 + IDF overlap) of the question with the words of
                    its facets that not every candidate's facets have
schema_fit          log(1 + IDF overlap) of the question (names removed) with
                    the names of what may be asked of it: its types, attribute
                    names, relation types and their values' items, a word
                    meeting a name when one's stem begins the other
                    (directed / director): does it have the relation asked?
known_facets        log(1 + how many facets it has): how much the kb holds
                    about it (an entity it knows little of rarely has what
                    is asked)
known_text          log(1 + the words of its description)
==================  =========================================================

The decision does not look at one candidate but at how the candidates
compare: for every candidate feature ``low_<f>`` (the weakest candidate's
value: does the question fit even the less likely one?) and ``gap_<f>`` (best
minus weakest: does one stand out?), plus the features of the set itself:
``attributes_asked``, ``same_type``, ``type_overlap`` (Jaccard of the type
ancestries), ``confusable`` (a declared confusable pair), ``profile_similarity``
(e5 cosine of the two most supported candidates' profiles), ``n_candidates``,
``pronoun``, ``implicit``, ``fuzzy``, ``prior_asked`` (log of how often this
candidate set was asked before), ``shared_facets`` (of the candidate with
the fewest own facets, not through its type, the share every candidate has:
does what the kb holds about one hold for the others? Unknown when a candidate has
no own facet, ``own_facets_unknown``: the sets fitted without it then score), ``semantic_shared`` and ``words_shared`` (the
question against what every candidate has: e5 cosine with the best shared
facet, IDF overlap with the shared facet words; does what is asked apply to
all of them?). Last, how the candidate the dialogue is about compares with the
others: ``lead_<f>`` for the fit features (the most salient candidate's value
minus the best other's; 0 and ``salience_tie`` = 1 when none is more salient).
The e5 features enter the model only as differences: their gaps,
``shared_margin`` (the best shared facet's cosine minus the best facet's: 0
when what fits the question best belongs to every candidate) and
``own_margin`` (the best facet only one has, minus the best shared), and
``undescribed`` (1 when the kb has no description of some candidate). The
fitted semantic set also reads the e5 differences times ``salience_tie``
(:data:`INTERACTIONS`): on a tie they weigh otherwise. The cosines' own level (``low_semantic_*``, ``semantic_shared``) depends on the
language and the texts' length, not on the question; it stays in the trace
but is not read by the model.

A logistic model (coefficients in ``clarify_params.json``, fitted offline by
``referent clarify fit``; no scikit-learn at run time) turns them into the
probability that the question needs a clarification; at or above the
threshold the turn asks. A file fitted with ``--trees`` keeps boosted shallow
trees for the semantic set as arrays, walked in pure Python (tens of
microseconds), which then score instead. Two sets are shipped:
``semantic`` (with the bundled e5) and ``lexical`` (without an embedder, the e5
features absent). When the model resolves, the candidate with the most
*support* is taken: the
sum of its standardized features, each signed by its polarity and weighted by
how much the logistic ``gap`` coefficient trusts it to tell candidates apart.
Every verdict carries its features and score into the turn's trace.
"""

from __future__ import annotations

import json
import logging
import math
import operator
import re
import threading
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from common.errors import ConfigurationError, ReferentError
from common.language.tokens import tokens
from dialogue.policy.vectors import VectorStore
from kg.aliases import AliasSnapshot
from understanding.fit import context_fit

logger = logging.getLogger(__name__)

PARAMS_PATH = Path(__file__).with_name("clarify_params.json")

CANDIDATE_FEATURES: tuple[str, ...] = (
    "attribute_fit", "relation_fit", "chunk_fit", "chunk_attribute", "semantic_profile",
    "semantic_type", "semantic_facet", "lexical_fit", "focus", "recency", "corrected_away",
    "prior_choice", "semantic_own", "words_own", "schema_fit", "known_facets", "known_text")
# +1: more of it means the question fits the candidate better; -1: worse.
POLARITY: Mapping[str, int] = {f: (-1 if f == "corrected_away" else 1) for f in CANDIDATE_FEATURES}
SEMANTIC_FEATURES = frozenset({"semantic_profile", "semantic_type", "semantic_facet", "semantic_own"})
SET_FEATURES: tuple[str, ...] = (
    "attributes_asked", "same_type", "type_overlap", "confusable", "profile_similarity",
    "n_candidates", "pronoun", "implicit", "fuzzy", "prior_asked", "semantic_shared",
    "words_shared", "shared_facets", "own_facets_unknown")
# How the candidate the dialogue is about (the most salient: focus, then recency) compares
# with the others on what the question fits: lead_<f> = its value minus the best other's
# (0 when no candidate is more salient than the rest, and then ``salience_tie`` is 1).
LEAD_FEATURES: tuple[str, ...] = (
    "attribute_fit", "chunk_fit", "chunk_attribute", "semantic_profile", "semantic_facet",
    "semantic_own", "lexical_fit", "words_own", "schema_fit", "known_facets", "known_text")
# The level of an e5 cosine depends on the language and the length of the texts (Chinese
# chat against English questions): the model reads the e5 features only as differences
# (between candidates, or between what one has and what all share), never their level.
# The levels stay in the trace.
TRACE_ONLY: frozenset[str] = frozenset({*(f"low_{f}" for f in SEMANTIC_FEATURES),
                                        "semantic_shared", "own_facets_unknown"})
# ``shared_facets`` is unknown, not 0, when some candidate has no facet of its own (a kb
# whose entities carry no attributes or relations: every facet comes from the type). The
# flag is in the trace and the kept examples; such a decision is scored by the sets fitted
# without the features it names (``<set>_without_own_facets``), or, in a file without them,
# with those features read at their mean (they then do not move the score).
FACETS_UNKNOWN = "own_facets_unknown"
NEEDS_OWN_FACETS: tuple[str, ...] = ("shared_facets",)
FEATURES: tuple[str, ...] = tuple(n for n in (
    *(f"low_{f}" for f in CANDIDATE_FEATURES), *(f"gap_{f}" for f in CANDIDATE_FEATURES),
    *SET_FEATURES, *(f"lead_{f}" for f in LEAD_FEATURES), "salience_tie",
    "shared_margin", "own_margin", "undescribed") if n not in TRACE_ONLY)


# Pairwise interactions a parameter file may name as "<feature>*<feature>": the product of
# two decision features, computed when scoring (nothing more in the trace). The fitted
# semantic set reads the e5 differences both alone and times ``salience_tie``: when the
# dialogue singles out no candidate (a name met out of the blue), whether the question
# fits what only one of them has is the evidence left, and it weighs otherwise than when
# the dialogue is about one of them. (Every feature times the tie scored higher on CLAQUA
# multi-turn but asked a third more often on KdConv.)
INTERACTIONS: tuple[str, ...] = tuple(f"{f}*salience_tie" for f in (
    "shared_margin", "own_margin", "gap_semantic_own", "gap_semantic_facet",
    "gap_semantic_profile", "gap_semantic_type", "profile_similarity"))


def with_interactions(names: Sequence[str]) -> tuple[str, ...]:
    """``names`` and the :data:`INTERACTIONS` of two of them: what a fitted set reads."""
    have = set(names)
    return (*names, *(n for n in INTERACTIONS if set(n.split("*")) <= have))


def feature_value(values: Mapping[str, float], name: str) -> float:
    """A decision feature's value, or the product of the two a ``a*b`` name joins."""
    if "*" in name:
        a, _, b = name.partition("*")
        return values.get(a, 0.0) * values.get(b, 0.0)
    return values.get(name, 0.0)


def needs_own_facets(name: str) -> bool:
    """Whether a decision feature (or a product) reads the candidates' own facets."""
    return any(part in NEEDS_OWN_FACETS for part in name.split("*"))


def set_key(semantic: bool, facets_known: bool = True) -> str:
    """The coefficient set that scores a decision: ``semantic`` or ``lexical``, and
    ``_without_own_facets`` when some candidate has no own facet."""
    return ("semantic" if semantic else "lexical") + ("" if facets_known else
                                                      "_without_own_facets")


_NO_OWN_FACETS = "without_own_facets"


def verdict_label(source: str, semantic: bool, facets_known: bool) -> str:
    """A verdict's ``params`` label: where the parameters come from and which set scored
    (``shipped:semantic``, ``kb:lexical:without_own_facets``)."""
    return f"{source}:{'semantic' if semantic else 'lexical'}" + (
        "" if facets_known else f":{_NO_OWN_FACETS}")


def label_set(label: str) -> str | None:
    """The set key a verdict's ``params`` label names (:func:`verdict_label`); None when
    it names none."""
    parts = label.split(":")
    if len(parts) < 2:
        return None
    return set_key(parts[1] == "semantic", parts[2:] != [_NO_OWN_FACETS])


def label_uses_e5(label: str) -> bool:
    """Whether a verdict's ``params`` label names a set that read the e5."""
    key = label_set(label)
    return key is not None and key.startswith("semantic")


def uses_embedder(name: str) -> bool:
    """Whether a decision feature needs the embedder (absent from the lexical set)."""
    if "*" in name:
        return any(uses_embedder(part) for part in name.split("*"))
    return (name in ("profile_similarity", "semantic_shared", "shared_margin", "own_margin")
            or name.split("_", 1)[-1] in SEMANTIC_FEATURES)


# -- what the decision is told -----------------------------------------------------------

@dataclass(frozen=True)
class DecisionInput:
    """One ambiguous mention and the dialogue around it.

    Attributes:
        question: the turn's text.
        mention: the ambiguous text ("" for an unnamed subject).
        kind: alias | pronoun | implicit.
        candidates: entity ids in the order the linker offers them.
        fuzzy: the alias was matched approximately.
        attributes: the attributes the turn asks (kb attribute names).
        focus: the dialogue's focus, most salient first.
        recent: entities of the recent turns, oldest turn first.
        negated: entities the user corrected away from.
    """

    question: str
    mention: str
    kind: str
    candidates: tuple[str, ...]
    fuzzy: bool = False
    attributes: tuple[str, ...] = ()
    focus: tuple[str, ...] = ()
    recent: tuple[tuple[str, ...], ...] = ()
    negated: tuple[str, ...] = ()


class Embedder(Protocol):
    def embed_query(self, text: str) -> Sequence[float]: ...
    def embed_passages(self, texts: Sequence[str]) -> list[Sequence[float]]: ...


# (kb, query, entity id) → the tagged chunks' best (score, text) pairs, best first.
ChunkSearch = Callable[[str, str, str], Sequence[tuple[float, str]]]


@dataclass(frozen=True)
class Prior:
    """How often each candidate was offered and chosen in the kb's recorded answers."""

    offered: Mapping[str, int] = field(default_factory=dict)
    chosen: Mapping[str, int] = field(default_factory=dict)
    asked_sets: Mapping[tuple[str, ...], int] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelVerdict:
    """The decision for one ambiguous mention.

    ``options`` are the candidates, most supported first; when ``clarify`` is
    False the first is the one resolved to.
    """

    clarify: bool
    score: float
    threshold: float
    options: tuple[str, ...]
    features: Mapping[str, float]
    candidates: Mapping[str, Mapping[str, float]]
    support: Mapping[str, float]
    params: str
    notes: tuple[str, ...] = ()

    def record(self) -> str:
        """What the clarification log keeps of an asking verdict (JSON): a kb's
        recalibration reads its score and most supported option."""
        return json.dumps({"features": {k: round(v, 6) for k, v in self.features.items()},
                           "score": round(self.score, 6), "params": self.params,
                           "top": self.options[0] if self.options else None}, sort_keys=True)

    def as_trace(self) -> dict[str, Any]:
        return {"clarify": self.clarify, "score": round(self.score, 4),
                "threshold": self.threshold, "params": self.params,
                "options": list(self.options),
                "support": {k: round(v, 4) for k, v in self.support.items()},
                "features": {k: round(v, 4) for k, v in self.features.items()},
                "candidates": {e: {k: round(v, 4) for k, v in f.items()}
                               for e, f in self.candidates.items()},
                **({"notes": list(self.notes)} if self.notes else {})}


# -- the parameters ----------------------------------------------------------------------

@dataclass(frozen=True)
class Tree:
    """One regression tree of a boosted ensemble, as parallel arrays (node 0 is the root).

    A node with ``feature[i] < 0`` is a leaf worth ``value[i]``; otherwise a value
    at or below ``threshold[i]`` goes to ``left[i]``, a larger one to ``right[i]``.
    """

    feature: tuple[int, ...]
    threshold: tuple[float, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]
    value: tuple[float, ...]

    def predict(self, x: Sequence[float]) -> float:
        i = 0
        feature, threshold = self.feature, self.threshold
        while feature[i] >= 0:
            i = self.left[i] if x[feature[i]] <= threshold[i] else self.right[i]
        return self.value[i]

    def as_json(self) -> dict[str, list[Any]]:
        return {"feature": list(self.feature), "threshold": list(self.threshold),
                "left": list(self.left), "right": list(self.right), "value": list(self.value)}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any], n_features: int, where: str) -> Tree:
        try:
            out = cls(tuple(int(v) for v in raw["feature"]),
                      tuple(float(v) for v in raw["threshold"]),
                      tuple(int(v) for v in raw["left"]), tuple(int(v) for v in raw["right"]),
                      tuple(float(v) for v in raw["value"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigurationError(f"{where}: a tree needs feature, threshold, left, right "
                                     f"and value ({exc})") from exc
        n = len(out.feature)
        if not n or not (len(out.threshold) == len(out.left) == len(out.right)
                         == len(out.value) == n):
            raise ConfigurationError(f"{where}: a tree's arrays differ in length or are empty")
        for i in range(n):
            if out.feature[i] >= n_features:
                raise ConfigurationError(f"{where}: node {i} names feature {out.feature[i]}, "
                                         f"the set has {n_features}")
            # Children come after their parent: a walk always ends at a leaf.
            if out.feature[i] >= 0 and not (i < out.left[i] < n and i < out.right[i] < n):
                raise ConfigurationError(f"{where}: node {i} has children outside the tree")
        return out


@dataclass(frozen=True)
class Trees:
    """A boosted ensemble: log-odds = base + rate × the sum of the trees' values."""

    base: float
    rate: float
    trees: tuple[Tree, ...]

    def raw(self, x: Sequence[float]) -> float:
        return self.base + self.rate * math.fsum(t.predict(x) for t in self.trees)

    def as_json(self) -> dict[str, Any]:
        return {"base": self.base, "rate": self.rate, "trees": [t.as_json() for t in self.trees]}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any], n_features: int, where: str) -> Trees:
        try:
            base, rate, trees = float(raw["base"]), float(raw["rate"]), list(raw["trees"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigurationError(f"{where}: 'trees' needs base, rate and trees ({exc})") from exc
        if not trees:
            raise ConfigurationError(f"{where}: 'trees' has no tree")
        return cls(base, rate, tuple(Tree.from_json(t, n_features, f"{where} tree {i}")
                                     for i, t in enumerate(trees)))


@dataclass(frozen=True)
class Coefficients:
    """One fitted model: a logistic part (standardization, weights and intercept) and,
    when fitted, a boosted-trees ensemble over the same raw features that scores instead
    (the logistic weights then only rank the candidates: :func:`_support`)."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    # The operating threshold chosen for this set when it was fitted (None: the file's).
    threshold: float | None = None
    trees: Trees | None = None

    @cached_property
    def _terms(self) -> tuple[tuple[str, str | None, float, float], ...]:
        """(feature, the other factor of a product or None, mean, weight / scale)."""
        return tuple((name.partition("*")[0], name.partition("*")[2] or None, m, w / s)
                     for name, m, s, w in zip(self.features, self.mean, self.scale, self.coef))

    @cached_property
    def _gap_slopes(self) -> dict[str, tuple[float, tuple[tuple[str, float], ...]]]:
        """Per candidate feature: its gap's own weight / scale, and its products' (the
        other factor, weight / scale)."""
        out: dict[str, tuple[float, tuple[tuple[str, float], ...]]] = {}
        for f in CANDIDATE_FEATURES:
            gap = f"gap_{f}"
            own = sum(ws for a, b, _, ws in self._terms if a == gap and b is None)
            products = tuple((b if a == gap else a, ws) for a, b, _, ws in self._terms
                             if b is not None and gap in (a, b))
            out[f] = (own, products)
        return out

    def logit(self, values: Mapping[str, float], unknown: frozenset[str] = frozenset()) -> float:
        """The log-odds of asking. A feature in ``unknown`` (or a product with one) is read
        at its mean: it does not move the score."""
        if self.trees is not None:
            return self.trees.raw([m if unknown and set(n.split("*")) & unknown
                                   else feature_value(values, n)
                                   for n, m in zip(self.features, self.mean)])
        z = self.intercept
        get = values.get
        for a, b, m, ws in self._terms:
            if unknown and (a in unknown or b in unknown):
                continue
            v = get(a, 0.0) if b is None else get(a, 0.0) * get(b, 0.0)
            z += ws * (v - m)
        return z

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"features": list(self.features), "mean": list(self.mean),
                               "scale": list(self.scale), "coef": list(self.coef),
                               "intercept": self.intercept, "threshold": self.threshold}
        if self.trees is not None:
            out["trees"] = self.trees.as_json()
        return out

    def gap_weight(self, feature: str, values: Mapping[str, float] | None = None) -> float:
        """How much a larger gap in ``feature`` pushes toward resolving (≥ 0): minus the
        logit's slope in ``gap_<feature>``, its products with other features included
        (their values from ``values``: the decision's features; without them, 0)."""
        own, products = self._gap_slopes.get(feature, (0.0, ()))
        slope = own + sum(ws * (values or {}).get(other, 0.0) for other, ws in products)
        return max(0.0, -slope)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any], where: str) -> Coefficients:
        try:
            features = tuple(str(f) for f in raw["features"])
            out = cls(features, tuple(float(x) for x in raw["mean"]),
                      tuple(float(x) for x in raw["scale"]), tuple(float(x) for x in raw["coef"]),
                      float(raw["intercept"]),
                      None if raw.get("threshold") is None else float(raw["threshold"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigurationError(f"{where}: a coefficient set needs features, mean, scale, "
                                     f"coef and intercept ({exc})") from exc
        if raw.get("trees") is not None:
            if not isinstance(raw["trees"], Mapping):
                raise ConfigurationError(f"{where}: 'trees' must be an object")
            out = cls(out.features, out.mean, out.scale, out.coef, out.intercept, out.threshold,
                      Trees.from_json(raw["trees"], len(out.features), f"{where} trees"))
        if not (len(out.features) == len(out.mean) == len(out.scale) == len(out.coef)):
            raise ConfigurationError(f"{where}: features, mean, scale and coef differ in length")
        unknown = {n for n in out.features
                   if any(part not in FEATURES for part in n.split("*")) or n.count("*") > 1}
        if unknown:
            raise ConfigurationError(f"{where}: unknown features {sorted(unknown)}")
        if any(s <= 0 for s in out.scale):
            raise ConfigurationError(f"{where}: every scale must be positive")
        if out.threshold is not None and not 0 < out.threshold < 1:
            raise ConfigurationError(f"{where}: 'threshold' must be between 0 and 1")
        return out


SET_KEYS: tuple[str, ...] = ("semantic", "lexical", "semantic_without_own_facets",
                             "lexical_without_own_facets")


@dataclass(frozen=True)
class ClarifyParams:
    """The shipped (or a kb's own) parameter file."""

    semantic: Coefficients
    lexical: Coefficients
    threshold: float
    meta: Mapping[str, Any] = field(default_factory=dict)
    # The same examples fitted without the features that need the candidates' own facets:
    # they score a decision where some candidate has none (None: an older file; the main
    # set then reads those features at their mean).
    semantic_without_own_facets: Coefficients | None = None
    lexical_without_own_facets: Coefficients | None = None

    def coefficients(self, semantic: bool, facets_known: bool = True
                     ) -> tuple[str, Coefficients, frozenset[str]]:
        """The set that scores a decision: its key, its coefficients, and the features it
        must read as unknown (at their mean)."""
        if not facets_known:
            key = set_key(semantic, False)
            own = getattr(self, key)
            if own is not None:
                return key, own, frozenset()
        main = self.semantic if semantic else self.lexical
        unknown = frozenset() if facets_known else frozenset(NEEDS_OWN_FACETS)
        return set_key(semantic), main, unknown

    def threshold_for(self, semantic: bool, facets_known: bool = True) -> float:
        own = self.coefficients(semantic, facets_known)[1].threshold
        return self.threshold if own is None else own

    def sets(self) -> dict[str, Coefficients]:
        """Every coefficient set of the file, by key."""
        return {k: c for k in SET_KEYS if (c := getattr(self, k)) is not None}

    @classmethod
    def neutral(cls) -> ClarifyParams:
        """All weights zero (score 0.5, support from equal weights): the model that
        collects features for fitting, with a threshold of 0 it always asks."""
        lexical = tuple(f for f in FEATURES if not uses_embedder(f))

        def zero(names: tuple[str, ...]) -> Coefficients:
            n = len(names)
            return Coefficients(names, (0.0,) * n, (1.0,) * n, (0.0,) * n, 0.0)

        return cls(zero(FEATURES), zero(lexical), 0.5, {"meta": {"neutral": True}})

    @classmethod
    def load(cls, path: Path = PARAMS_PATH) -> ClarifyParams:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigurationError(f"clarify parameters {path}: {exc}") from exc
        return cls.from_json(raw, str(path))

    @classmethod
    def from_json(cls, raw: Mapping[str, Any], where: str = "clarify parameters") -> ClarifyParams:
        if not isinstance(raw, Mapping) or "sets" not in raw:
            raise ConfigurationError(f"{where}: expected an object with 'sets' and 'threshold'")
        sets = raw["sets"]
        try:
            threshold = float(raw["threshold"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigurationError(f"{where}: 'threshold' must be a number") from exc
        if not 0 < threshold < 1:
            raise ConfigurationError(f"{where}: 'threshold' must be between 0 and 1")
        unknown_sets = sorted(set(sets) - set(SET_KEYS))
        if unknown_sets:
            raise ConfigurationError(f"{where}: unknown coefficient sets {unknown_sets} "
                                     f"(expected some of {list(SET_KEYS)})")
        bare = {}
        for key in ("semantic_without_own_facets", "lexical_without_own_facets"):
            if sets.get(key) is not None:
                bare[key] = Coefficients.from_json(sets[key], f"{where} sets.{key}")
                if any(needs_own_facets(n) for n in bare[key].features):
                    raise ConfigurationError(f"{where}: sets.{key} must not read "
                                             f"{list(NEEDS_OWN_FACETS)}")
        return cls(Coefficients.from_json(sets.get("semantic", {}), f"{where} sets.semantic"),
                   Coefficients.from_json(sets.get("lexical", {}), f"{where} sets.lexical"),
                   threshold, {k: v for k, v in raw.items() if k not in ("sets", "threshold")},
                   **bare)


# -- the features ------------------------------------------------------------------------

def _cos(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def _unit(v: Sequence[float]) -> list[float]:
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v] if n else [0.0 for _ in v]


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return math.fsum(map(operator.mul, a, b))


def _words(name: str) -> str:
    """A type or relation name as words: music.artist → music artist, HAS_VARIANT → has variant."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)
    return re.sub(r"[._/\-]+", " ", spaced).strip().lower()


class _KbCache:
    """What the features need from one snapshot, built once per snapshot."""

    def __init__(self, snapshot: AliasSnapshot) -> None:
        self.snapshot = snapshot
        self.lock = threading.Lock()
        self.profile_vectors: dict[str, Sequence[float]] = {}
        self.type_vectors: dict[str, Sequence[float]] = {}
        parents: dict[str, str | None] = getattr(snapshot, "type_parents", {}) or {}
        self.ancestry: dict[str, frozenset[str]] = {}
        for type_name in {e.type for e in snapshot.entities.values()}:
            chain, seen = [type_name], {type_name}
            while parents.get(chain[-1]) and parents[chain[-1]] not in seen:
                chain.append(parents[chain[-1]])
                seen.add(chain[-1])
            self.ancestry[type_name] = frozenset(chain)
        self.relation_words: dict[str, frozenset[str]] = {}
        self.facet_texts: dict[str, tuple[str, ...]] = {}
        self.facet_words: dict[str, frozenset[str]] = {}
        self.own_facet_texts: dict[str, frozenset[str]] = {}
        # One vector per distinct facet text: entities of one type share theirs.
        self.facet_vectors: dict[str, Sequence[float]] = {}
        self.unit_facets: dict[str, Sequence[float]] = {}

    def relation_tokens(self, entity_id: str) -> frozenset[str]:
        got = self.relation_words.get(entity_id)
        if got is None:
            snap = self.snapshot
            parts = []
            for rel_type, other in getattr(snap, "relations", {}).get(entity_id, ()):
                parts.append(_words(rel_type))
                parts.append(snap.name(other))
            own = set(tokens(" ".join(snap.entities[entity_id].all_aliases)))
            got = frozenset(t for t in tokens(" ".join(parts)) if t not in own)
            self.relation_words[entity_id] = got
        return got

    def profile_text(self, entity_id: str) -> str:
        e = self.snapshot.entities[entity_id]
        return ". ".join(p for p in (e.name, _words(e.type), e.description) if p)

    def facets(self, entity_id: str) -> tuple[str, ...]:
        """What may be asked about the entity, each a short text: its type and the
        types above it, the type's attributes, its relation types, its own attribute
        names and the items of their values (a list, or a text split at separators)."""
        got = self.facet_texts.get(entity_id)
        if got is None:
            snap = self.snapshot
            e = snap.entities[entity_id]
            parts: list[str] = []
            for type_name in sorted(self.ancestry.get(e.type, frozenset({e.type}))):
                parts.append(_words(type_name))
                parts.extend(snap.type_attributes.get(type_name, ()))
            parts.extend(_words(rel) for rel, _ in getattr(snap, "relations", {}).get(entity_id, ()))
            for key, value in (e.attributes or {}).items():
                parts.append(_words(str(key)))
                parts.extend(_value_items(value))
            got = tuple(dict.fromkeys(p for p in parts if p))[:MAX_FACETS]
            self.facet_texts[entity_id] = got
        return got

    def own_facets(self, entity_id: str) -> frozenset[str]:
        """The facets the entity has as itself, not through its type: its relation types,
        its attribute names and the items of their values."""
        got = self.own_facet_texts.get(entity_id)
        if got is None:
            snap = self.snapshot
            e = snap.entities[entity_id]
            parts = [_words(rel) for rel, _ in getattr(snap, "relations", {}).get(entity_id, ())]
            for key, value in (e.attributes or {}).items():
                parts.append(_words(str(key)))
                parts.extend(_value_items(value))
            got = frozenset(list(dict.fromkeys(p for p in parts if p))[:MAX_FACETS])
            self.own_facet_texts[entity_id] = got
        return got

    def facet_tokens(self, entity_id: str) -> frozenset[str]:
        """The words of the entity's facets, its own names left out."""
        got = self.facet_words.get(entity_id)
        if got is None:
            own = set(tokens(" ".join(self.snapshot.entities[entity_id].all_aliases)))
            got = frozenset(t for t in tokens(" ".join(self.facets(entity_id))) if t not in own)
            self.facet_words[entity_id] = got
        return got

    def unit_facet(self, text: str) -> Sequence[float]:
        """The facet's vector scaled to length 1 (kept: a turn computes only dot products)."""
        got = self.unit_facets.get(text)
        if got is None:
            got = self.unit_facets[text] = array("d", _unit(self.facet_vectors[text]))
        return got

    def type_text(self, type_name: str) -> str:
        attrs = self.snapshot.type_attributes.get(type_name, ())
        return _words(type_name) + (": " + ", ".join(attrs) if attrs else "")


class FeatureExtractor:
    """Computes the candidate and set features of one decision."""

    def __init__(self, *, embedder: Embedder | None = None,
                 chunk_search: ChunkSearch | None = None,
                 priors: Callable[[str], Prior] | None = None,
                 store: VectorStore | None = None, warm_on_load: bool = False) -> None:
        self.embedder = embedder
        self.chunk_search = chunk_search
        self.priors = priors
        # Candidate vectors kept across snapshots and processes (by text), and whether a
        # snapshot seen for the first time has all its candidates embedded in the background.
        self.store = store
        self.warm_on_load = warm_on_load and embedder is not None
        self._caches: dict[tuple[str, str, int], _KbCache] = {}
        self._lock = threading.Lock()
        self._warming: dict[tuple[str, str, int], threading.Thread] = {}

    def _cache(self, snapshot: AliasSnapshot) -> _KbCache:
        key = (snapshot.kb, snapshot.uid, snapshot.version)
        cache = self._caches.get(key)
        if cache is None:
            with self._lock:
                cache = self._caches.get(key)
                if cache is None:
                    for old in [k for k in self._caches if k[0] == snapshot.kb]:
                        del self._caches[old]
                    cache = self._caches[key] = _KbCache(snapshot)
                    if self.warm_on_load:
                        thread = threading.Thread(target=self._warm_quietly, args=(snapshot,),
                                                  name=f"clarify-warm-{snapshot.kb}", daemon=True)
                        self._warming[key] = thread
                        thread.start()
        return cache

    def prepare(self, snapshot: AliasSnapshot) -> None:
        """Called on every linked turn (a dictionary lookup): the first turn on a new
        snapshot of a kb starts its warm-up, before any mention of it is ambiguous."""
        self._cache(snapshot)

    def warming(self, snapshot: AliasSnapshot) -> threading.Thread | None:
        """The background warm-up of this snapshot, if one was started."""
        return self._warming.get((snapshot.kb, snapshot.uid, snapshot.version))

    def warm(self, snapshot: AliasSnapshot, *, batch: int = 64) -> dict[str, int]:
        """Every candidate vector of the kb, found in the store or embedded now (in
        batches, stored as they come): afterwards a turn embeds only its question.
        Stops early when a newer snapshot of the kb replaced this one."""
        if self.embedder is None:
            return {"entities": 0, "texts": 0, "from_store": 0, "embedded": 0}
        if len(snapshot.entities) > WARM_MAX_ENTITIES:
            # The vectors of every entity would not fit a process's memory budget: such a
            # kb embeds each candidate the first time a turn needs it (and stores it).
            logger.info("kb %s has %d entities (more than %d): candidate vectors are embedded "
                        "as turns need them", snapshot.kb, len(snapshot.entities),
                        WARM_MAX_ENTITIES)
            return {"entities": 0, "texts": 0, "from_store": 0, "embedded": 0}
        cache = self._cache(snapshot)
        ids = sorted(snapshot.entities)
        totals = {"entities": len(ids), "texts": 0, "from_store": 0, "embedded": 0}
        key = (snapshot.kb, snapshot.uid, snapshot.version)
        step = max(1, batch // 4)
        for i in range(0, len(ids), step):
            if self._caches.get(key) is not cache:
                break
            got = self._fill(cache, ids[i:i + step])
            for k in ("texts", "from_store", "embedded"):
                totals[k] += got[k]
        return totals

    def _warm_quietly(self, snapshot: AliasSnapshot) -> None:
        try:
            got = self.warm(snapshot)
            logger.info("clarify vectors of kb %s ready: %s", snapshot.kb, got)
        except Exception as exc:  # noqa: BLE001 - a background warm-up never takes a turn down
            logger.warning("clarify vectors of kb %s not precomputed: %s", snapshot.kb, exc)

    def _fill(self, cache: _KbCache, ids: Sequence[str]) -> dict[str, int]:
        """Make sure the profile, type and facet vectors of ``ids`` are in the cache:
        from the store when it has them, else embedded (and stored)."""
        assert self.embedder is not None
        missing = [c for c in ids if c not in cache.profile_vectors]
        types = sorted({cache.snapshot.entities[c].type for c in ids} - set(cache.type_vectors))
        facets = list(dict.fromkeys(f for c in ids for f in cache.facets(c)
                                    if f not in cache.facet_vectors))
        if not (missing or types or facets):
            return {"texts": 0, "from_store": 0, "embedded": 0}
        # Several roles may share one text (a facet that is also a type's text).
        roles: dict[str, list[tuple[str, str]]] = {}
        for c in missing:
            roles.setdefault(cache.profile_text(c), []).append(("profile", c))
        for t in types:
            roles.setdefault(cache.type_text(t), []).append(("type", t))
        for f in facets:
            roles.setdefault(f, []).append(("facet", f))
        found: dict[str, Sequence[float]] = {}
        model = getattr(self.embedder, "name", "embedder")
        if self.store is not None:
            try:
                found = dict(self.store.get_many(model, roles))
            except ReferentError as exc:
                logger.warning("%s: embedding instead", exc)
        todo = [t for t in roles if t not in found]
        if todo:
            fresh = {t: array("f", v) for t, v in zip(todo, self.embedder.embed_passages(todo))}
            if self.store is not None:
                try:
                    self.store.put_many(model, fresh)
                except ReferentError as exc:
                    logger.warning("%s: the vectors are kept in memory only", exc)
            found.update(fresh)
        with cache.lock:
            for text, vector in found.items():
                for role, key in roles[text]:
                    {"profile": cache.profile_vectors, "type": cache.type_vectors,
                     "facet": cache.facet_vectors}[role][key] = vector
        return {"texts": len(roles), "from_store": len(roles) - len(todo), "embedded": len(todo)}

    def extract(self, item: DecisionInput, snapshot: AliasSnapshot
                ) -> tuple[dict[str, dict[str, float]], dict[str, float], list[str], bool]:
        """Candidate features, set features, notes, and whether e5 was used."""
        cache = self._cache(snapshot)
        notes: list[str] = []
        ids = [c for c in item.candidates if c in snapshot.entities]
        ignore = [item.mention] + [n for c in ids for n in snapshot.entities[c].all_aliases]
        skip = set(tokens(" ".join(ignore)))
        q_tokens = {t for t in tokens(item.question) if t not in skip}
        fit = context_fit(snapshot)
        idf = getattr(fit, "_idf", {})
        asked = [a for a in item.attributes if a]
        lexical = fit.scores(item.question, ids, ignore=ignore)
        per = {c: _candidate_features(c, item, snapshot, cache, asked, q_tokens, idf, lexical)
               for c in ids}
        words_shared = _word_features(per, ids, q_tokens, cache, idf)
        self._chunk_features(item, snapshot, ids, per, ignore, asked, notes)
        semantic, semantic_shared = self._semantic_features(item, ids, per, cache, notes)
        prior = self._prior(snapshot, notes)
        for c in ids:
            per[c]["prior_choice"] = (prior.chosen.get(c, 0) + 1) / (prior.offered.get(c, 0) + 2)
        sets = _set_features(item, snapshot, cache, ids, asked, prior,
                             semantic_shared=semantic_shared, words_shared=words_shared)
        if semantic and len(ids) > 1:
            sims = [_cos(cache.profile_vectors[a], cache.profile_vectors[b])
                    for i, a in enumerate(ids) for b in ids[i + 1:]]
            sets["profile_similarity"] = max(sims)
        return per, sets, notes, semantic

    def _chunk_features(self, item: DecisionInput, snapshot: AliasSnapshot, ids: list[str],
                        per: dict[str, dict[str, float]], ignore: list[str], asked: list[str],
                        notes: list[str]) -> None:
        """Fills ``chunk_fit`` and ``chunk_attribute`` from the chunks tagged with each
        candidate that best match the question without the names."""
        if self.chunk_search is None or not ids:
            return
        stripped = _strip(item.question, ignore)
        try:
            for c in ids:
                hits = self.chunk_search(snapshot.kb, stripped or item.question, c)
                if hits:
                    per[c]["chunk_fit"] = math.log1p(max(0.0, hits[0][0]))
                    norm_attrs = [snapshot.normalize(a) for a in asked]
                    per[c]["chunk_attribute"] = float(any(
                        a and a in snapshot.normalize(text) for _, text in hits for a in norm_attrs))
        except ReferentError as exc:
            notes.append(f"chunk features skipped: {exc}")

    def _semantic_features(self, item: DecisionInput, ids: list[str],
                           per: dict[str, dict[str, float]], cache: _KbCache,
                           notes: list[str]) -> tuple[bool, float]:
        """Semantic similarity with the bundled e5, when it is configured: whether it was
        used, and ``semantic_shared``."""
        if self.embedder is None:
            notes.append("no e5 configured: the lexical coefficient set decides, without the "
                         "semantic features")
        elif ids:
            try:
                return True, self._semantic(item, ids, per, cache, notes)
            except (ReferentError, RuntimeError, ValueError) as exc:
                notes.append(f"semantic features skipped ({exc}): the lexical coefficient "
                             f"set decides")
        return False, 0.0

    def _prior(self, snapshot: AliasSnapshot, notes: list[str]) -> Prior:
        """The kb's record of earlier choices, or none when it cannot be read."""
        if self.priors is not None:
            try:
                return self.priors(snapshot.kb)
            except ReferentError as exc:
                notes.append(f"prior choices skipped: {exc}")
        return Prior()

    def _semantic(self, item: DecisionInput, ids: list[str], per: dict[str, dict[str, float]],
                  cache: _KbCache, notes: list[str]) -> float:
        """Fills the e5 features of ``per``; returns the best cosine of the question with
        a facet every candidate has (``semantic_shared``)."""
        assert self.embedder is not None
        # Candidate vectors come from the snapshot's cache (precomputed by warm(), or
        # found in the store); what is still missing is embedded now, once. A turn
        # otherwise embeds only its question (shared with the retriever by QueryMemo).
        filled = self._fill(cache, ids)
        if filled["embedded"]:
            notes.append(f"{filled['embedded']} candidate texts embedded on the turn "
                         f"(not precomputed yet)")
        q = self.embedder.embed_query(item.question)
        for c in ids:
            per[c]["semantic_profile"] = _cos(q, cache.profile_vectors[c])
            per[c]["semantic_type"] = _cos(q, cache.type_vectors[cache.snapshot.entities[c].type])
        unit_q = _unit(q)
        cosines = {c: {f: _dot(unit_q, cache.unit_facet(f)) for f in cache.facets(c)} for c in ids}
        for c in ids:
            per[c]["semantic_facet"] = max(cosines[c].values(), default=0.0)
        # Does what is asked apply to every candidate? The best facet they all have,
        # against the best facet each has that some other candidate lacks.
        shared = frozenset.intersection(*(frozenset(cosines[c]) for c in ids))
        # Nothing shared: what they share fits the question as little as their least
        # fitting facet does (on the cosines' own scale, not an out-of-range 0).
        best_shared = max((cosines[ids[0]][f] for f in shared), default=min(
            (v for c in ids for v in cosines[c].values()), default=0.0))
        for c in ids:
            per[c]["semantic_own"] = max((v for f, v in cosines[c].items() if f not in shared),
                                         default=best_shared)
        return best_shared


MAX_FACETS = 48
# Above this many entities a kb is not warmed whole (about 1.5 KB a vector, up to 50 texts
# an entity): its candidates are embedded when a turn first needs them, and stored.
WARM_MAX_ENTITIES = 20_000
_ITEM_SPLIT = re.compile(r"[\s,;，；、|]+")


def _shared_facets(facets: Sequence[Sequence[str]]) -> float:
    """Of the candidate with the fewest (own) facets, the share every candidate has: 1 when
    all the kb holds about one of them holds for the others too (whatever is asked then
    likely applies to each), near 0 when they have little in common. 0 when one has none,
    but then it is unknown, not "nothing in common": ``own_facets_unknown`` says so and
    the decision is scored without it. Bounded, so a kb whose entities have many more facets
    than the training ones does not extrapolate."""
    if len(facets) < 2 or not all(facets):
        return 0.0
    common = frozenset.intersection(*(frozenset(f) for f in facets))
    return len(common) / min(len(frozenset(f)) for f in facets)


def _value_items(value: Any) -> list[str]:
    """An attribute value's items as words: a list's elements, or a text's parts
    between separators (an identifier-like part made words: music.artist → music artist);
    long free text is left to the description and chunks."""
    if isinstance(value, (list, tuple)):
        raw = [str(v) for v in value]
    elif isinstance(value, str):
        raw = _ITEM_SPLIT.split(value)
    else:
        return []
    return [_words(v) for v in raw if 1 < len(v) <= 60][:MAX_FACETS]


def _candidate_features(c: str, item: DecisionInput, snapshot: AliasSnapshot, cache: _KbCache,
                        asked: list[str], q_tokens: set[str], idf: dict[str, float],
                        lexical: dict[str, float]) -> dict[str, float]:
    """One candidate's features from the ontology and the dialogue; those the chunks, e5
    and the prior choices give start at their neutral value."""
    e = snapshot.entities[c]
    f: dict[str, float] = {}
    f["attribute_fit"] = (sum(snapshot.has_attribute(c, a) for a in asked) / len(asked)
                          if asked else 0.0)
    rel = cache.relation_tokens(c)
    f["relation_fit"] = math.log1p(sum(idf.get(t, 1.0) for t in q_tokens if t in rel))
    f["lexical_fit"] = math.log1p(max(lexical.get(c, 0.0), 0.0))
    f["focus"] = (1.0 if item.focus and item.focus[0] == c
                  else 0.5 if c in item.focus else 0.0)
    f["recency"] = _recency(c, item)
    f["corrected_away"] = 1.0 if c in item.negated else 0.0
    f["chunk_fit"] = 0.0
    f["chunk_attribute"] = 0.0
    f["semantic_profile"] = 0.0
    f["semantic_type"] = 0.0
    f["semantic_facet"] = 0.0
    f["semantic_own"] = 0.0
    f["prior_choice"] = 0.5
    f["known_facets"] = math.log1p(len(cache.facets(c)))
    f["known_text"] = math.log1p(len(tokens(e.description or "")))
    return f


def _word_features(per: dict[str, dict[str, float]], ids: list[str], q_tokens: set[str],
                   cache: _KbCache, idf: dict[str, float]) -> float:
    """The question's words in what may be asked of every candidate (its facets' words):
    returned, ``words_shared``; in what only this one has: each ``words_own``; and in
    the names of anything it has, stems meeting: each ``schema_fit``."""
    facet_words = {c: cache.facet_tokens(c) for c in ids}
    common = frozenset.intersection(*facet_words.values()) if ids else frozenset()
    words_shared = math.log1p(sum(idf.get(t, 1.0) for t in q_tokens if t in common))
    for c in ids:
        per[c]["words_own"] = math.log1p(sum(idf.get(t, 1.0) for t in q_tokens
                                             if t in facet_words[c] and t not in common))
        per[c]["schema_fit"] = math.log1p(sum(idf.get(t, 1.0) for t in q_tokens
                                              if _names_word(t, facet_words[c])))
    return words_shared


# Below this length a stem beginning another is chance (art / artist), not one word.
_MIN_STEM_PREFIX = 5


def _names_word(word: str, names: frozenset[str]) -> bool:
    """Whether ``word`` (a content token of the question) is one of ``names`` or, when
    both are long enough, one's stem begins the other's: the question's "directed" or
    "instruments" meets the type names "director" and "instrumentalist". Chinese tokens
    (character bigrams) meet only themselves."""
    if word in names:
        return True
    if len(word) < _MIN_STEM_PREFIX:
        return False
    return any(len(n) >= _MIN_STEM_PREFIX and (n.startswith(word) or word.startswith(n))
               for n in names)


def _set_features(item: DecisionInput, snapshot: AliasSnapshot, cache: _KbCache,
                  ids: list[str], asked: list[str], prior: Prior, *,
                  semantic_shared: float, words_shared: float) -> dict[str, float]:
    """The features of the candidate set as a whole (``profile_similarity`` at 0: e5
    fills it)."""
    types = [snapshot.entities[c].type for c in ids]
    return {
        "attributes_asked": 1.0 if asked else 0.0,
        "same_type": 1.0 if len(set(types)) == 1 else 0.0,
        "type_overlap": _overlap([cache.ancestry.get(t, frozenset({t})) for t in types]),
        "confusable": 1.0 if any(b in snapshot.confusable.get(a, ()) for a in ids for b in ids)
        else 0.0,
        "profile_similarity": 0.0,
        "n_candidates": float(len(ids)),
        "pronoun": 1.0 if item.kind == "pronoun" else 0.0,
        "implicit": 1.0 if item.kind == "implicit" else 0.0,
        "fuzzy": 1.0 if item.fuzzy else 0.0,
        "prior_asked": math.log1p(prior.asked_sets.get(tuple(sorted(ids)), 0)),
        "semantic_shared": semantic_shared,
        "words_shared": words_shared,
        "shared_facets": _shared_facets([cache.own_facets(c) for c in ids]),
        # Some candidate has no facet of its own: ``shared_facets`` is unknown, not 0.
        FACETS_UNKNOWN: 1.0 if len(ids) > 1 and not all(cache.own_facets(c) for c in ids)
        else 0.0,
    }


def _recency(entity_id: str, item: DecisionInput) -> float:
    if entity_id in item.focus:
        return 1.0
    for back, entities in enumerate(reversed(item.recent), start=1):
        if entity_id in entities:
            return 1.0 / (1 + back)
    return 0.0


def _overlap(sets: list[frozenset[str]]) -> float:
    if len(sets) < 2:
        return 1.0
    inter = frozenset.intersection(*sets)
    union = frozenset.union(*sets)
    return len(inter) / len(union) if union else 0.0


def _strip(text: str, spans: Sequence[str]) -> str:
    out = text
    for span in sorted({s for s in spans if s}, key=len, reverse=True):
        out = re.sub(re.escape(span), " ", out, flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", out).strip()


def decision_features(per: Mapping[str, Mapping[str, float]],
                      sets: Mapping[str, float]) -> dict[str, float]:
    """The low/gap summary of the candidate features, the set features, the lead and the
    margins (a superset of :data:`FEATURES`: the e5 levels are kept for the trace)."""
    out: dict[str, float] = {}
    for f in CANDIDATE_FEATURES:
        values = [p.get(f, 0.0) for p in per.values()] or [0.0]
        out[f"low_{f}"] = min(values)
        out[f"gap_{f}"] = max(values) - min(values)
    out.update(sets)
    lead = _lead(per)
    for f in LEAD_FEATURES:
        out[f"lead_{f}"] = (0.0 if lead is None else per[lead].get(f, 0.0) - max(
            p.get(f, 0.0) for c, p in per.items() if c != lead))
    out["salience_tie"] = 1.0 if lead is None else 0.0
    # Does the facet that fits the question best belong to every candidate (0), or how
    # far below it is the best they share? And how far does what only one has fit
    # better than what they share?
    shared = sets.get("semantic_shared", 0.0)
    out["shared_margin"] = (shared - max(p.get("semantic_facet", 0.0) for p in per.values())
                            if per else 0.0)
    out["own_margin"] = (max(p.get("semantic_own", 0.0) for p in per.values()) - shared
                         if per else 0.0)
    # A candidate the kb has no description of at all: the kb knows too little of it to
    # hold what is asked (``known_text`` read as a step, not a slope: in CLAQUA multi-turn
    # no such pair needs asking, while the slope above 0 is mild).
    out["undescribed"] = 1.0 if per and min(p.get("known_text", 0.0) for p in per.values()) <= 0.0 \
        else 0.0
    return out


def _lead(per: Mapping[str, Mapping[str, float]]) -> str | None:
    """The candidate the dialogue is about: the one more salient (focus, then recency) than
    every other, else None."""
    if len(per) < 2:
        return None
    ranked = sorted(per, key=lambda c: (per[c].get("focus", 0.0), per[c].get("recency", 0.0)),
                    reverse=True)
    first, second = per[ranked[0]], per[ranked[1]]
    if (first.get("focus", 0.0), first.get("recency", 0.0)) == (
            second.get("focus", 0.0), second.get("recency", 0.0)):
        return None
    return ranked[0]


# -- the model ---------------------------------------------------------------------------

class ClarifyModel:
    """Scores an ambiguous mention and decides: ask, or resolve to the best supported."""

    def __init__(self, params: ClarifyParams | None = None, *, threshold: float | None = None,
                 extractor: FeatureExtractor | None = None,
                 kb_params: Callable[[str], ClarifyParams | None] | None = None) -> None:
        self.params = params or ClarifyParams.load()
        self.threshold = threshold  # the setting; None: each coefficient set's own
        self.extractor = extractor or FeatureExtractor()
        self._kb_params = kb_params

    def prepare(self, snapshot: AliasSnapshot) -> None:
        self.extractor.prepare(snapshot)

    def decide(self, item: DecisionInput, snapshot: AliasSnapshot) -> ModelVerdict:
        """Never raises for missing evidence: what could not be measured is noted."""
        per, sets, notes, semantic = self.extractor.extract(item, snapshot)
        facets_known = not sets.get(FACETS_UNKNOWN)
        params, which = self.params, "shipped"
        threshold = (params.threshold_for(semantic, facets_known) if self.threshold is None
                     else self.threshold)
        if self._kb_params is not None:
            try:
                own = self._kb_params(snapshot.kb)
            except ReferentError as exc:
                own = None
                notes.append(f"kb parameters unavailable: {exc}")
            if own is not None:
                params, threshold, which = own, own.threshold_for(semantic, facets_known), "kb"
        key, coefficients, unknown = params.coefficients(semantic, facets_known)
        if not facets_known:
            notes.append("a candidate has no facet of its own (no attribute or relation): "
                         + ("scored by the set fitted without " if not unknown else
                            "read at the training mean: ") + ", ".join(NEEDS_OWN_FACETS))
        features = decision_features(per, sets)
        score = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, coefficients.logit(features,
                                                                                  unknown)))))
        support = _support(per, coefficients, features)
        options = tuple(sorted(per, key=lambda c: (-support[c], item.candidates.index(c))))
        clarify = len(options) > 1 and score >= threshold
        return ModelVerdict(clarify=clarify, score=score, threshold=threshold, options=options,
                              features=features, candidates=per, support=support,
                              params=verdict_label(which, semantic, facets_known),
                              notes=tuple(notes))


def _support(per: Mapping[str, Mapping[str, float]], coefficients: Coefficients,
             features: Mapping[str, float] | None = None) -> dict[str, float]:
    """Each candidate's support: its features, centred on the candidates' mean, signed by
    polarity and weighted by how far the model trusts their gap to settle the choice (on
    this decision: a gap's weight may depend on ``features``, e.g. a salience tie)."""
    weights = {f: coefficients.gap_weight(f, features) for f in CANDIDATE_FEATURES}
    if not any(weights.values()):
        weights = {f: 1.0 for f in CANDIDATE_FEATURES}
    n = max(len(per), 1)
    means = {f: sum(p[f] for p in per.values()) / n for f in CANDIDATE_FEATURES}
    return {c: sum(POLARITY[f] * weights[f] * (p[f] - means[f]) for f in CANDIDATE_FEATURES)
            for c, p in per.items()}
