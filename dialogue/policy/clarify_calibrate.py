"""A kb's own evidence for the clarify-or-resolve decision: what its users answered.

Two things are read from the clarification log (Neo4j, shared by every API
instance), each cached per kb for ``ttl`` seconds:

* the prior: how often each entity was offered and chosen, and how often each
  candidate set was asked (features ``prior_choice`` and ``prior_asked``);
* the kb's own parameters, when it was recalibrated.

:func:`recalibrate` re-thresholds the model for one kb from the questions it
asked and how they were answered. A question was *needed* unless the user
simply chose the option the model supported most (then resolving to it would
have given the same answer one turn earlier); ``both``, ``neither`` or another
option mean it was needed; a new question instead of an answer says nothing and
is left out. Only asked questions are recorded, so the threshold can only rise
(ask less), never fall: the log holds no evidence about turns that resolved.
The new threshold is the one, at or above the current, with the best F1 of
"asked when needed" on the kb's records; it is kept only when it beats the
current one.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from common.errors import InputError
from dialogue.policy.clarify_model import SET_KEYS, ClarifyParams, Prior, label_set
from kg.clarification_log import ClarificationLog, RecordedDecision

MIN_RECORDS = 20


class _TtlCache:
    def __init__(self, ttl: float, load: Callable[[str], Any],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl, self._load, self._clock = ttl, load, clock
        self._kept: dict[str, tuple[float, Any]] = {}
        self._lock = threading.Lock()

    def get(self, kb: str) -> Any:
        now = self._clock()
        kept = self._kept.get(kb)
        if kept is not None and now - kept[0] < self._ttl:
            return kept[1]
        value = self._load(kb)
        with self._lock:
            self._kept[kb] = (now, value)
        return value

    def invalidate(self, kb: str) -> None:
        with self._lock:
            self._kept.pop(kb, None)


class KbEvidence:
    """The prior and the kb's own parameters, read from the log and cached."""

    def __init__(self, log: ClarificationLog, *, ttl: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._log = log
        self._priors = _TtlCache(ttl, self._read_prior, clock)
        self._params = _TtlCache(ttl, self._read_params, clock)

    def prior(self, kb: str) -> Prior:
        return self._priors.get(kb)

    def params(self, kb: str) -> ClarifyParams | None:
        return self._params.get(kb)

    def invalidate(self, kb: str) -> None:
        self._priors.invalidate(kb)
        self._params.invalidate(kb)

    def _read_prior(self, kb: str) -> Prior:
        offered: dict[str, int] = {}
        chosen: dict[str, int] = {}
        asked: dict[tuple[str, ...], int] = {}
        for row in self._log.counts(kb):
            key = tuple(sorted(row.candidates))
            asked[key] = asked.get(key, 0) + row.count
            if row.answer not in ("chosen", "both", "neither"):
                continue
            for c in row.candidates:
                offered[c] = offered.get(c, 0) + row.count
            for c in row.chosen:
                chosen[c] = chosen.get(c, 0) + row.count
        return Prior(offered=offered, chosen=chosen, asked_sets=asked)

    def _read_params(self, kb: str) -> ClarifyParams | None:
        stored = self._log.params(kb)
        if stored is None:
            return None
        return ClarifyParams.from_json(json.loads(stored.params), f"kb {kb} clarify parameters")


# -- recalibration -------------------------------------------------------------------------

@dataclass(frozen=True)
class OperatingPoint:
    threshold: float
    asked: int  # records that would still be asked
    needed_asked: int
    precision: float | None  # of asking, on the records
    recall: float | None
    f1: float | None
    wrong_resolves: int  # records resolved to an option the user did not choose


@dataclass(frozen=True)
class Recalibration:
    kb: str
    records: int  # answered questions with a recorded verdict
    usable: int  # ... whose answer tells whether asking was needed
    needed: int
    before: OperatingPoint
    after: OperatingPoint
    changed: bool
    note: str

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def _label(record: RecordedDecision) -> tuple[float, int] | None:
    """(score, needed) of one record, or None when its answer says nothing."""
    try:
        verdict = json.loads(record.decision)
        score = float(verdict["score"])
    except (ValueError, KeyError, TypeError):
        return None
    if record.answer == "chosen":
        return score, int(tuple(record.chosen) != (verdict.get("top"),))
    if record.answer in ("both", "neither"):
        return score, 1
    return None


def _point(labelled: Sequence[tuple[float, int]], threshold: float) -> OperatingPoint:
    asked = [(s, y) for s, y in labelled if s >= threshold]
    needed = sum(y for _, y in labelled)
    hit = sum(y for _, y in asked)
    precision = hit / len(asked) if asked else None
    recall = hit / needed if needed else None
    f1 = (2 * precision * recall / (precision + recall)
          if precision is not None and recall is not None and precision + recall else None)
    return OperatingPoint(round(threshold, 6), len(asked), hit,
                          None if precision is None else round(precision, 4),
                          None if recall is None else round(recall, 4),
                          None if f1 is None else round(f1, 4),
                          sum(y for s, y in labelled if s < threshold))


def recalibrate(kb: str, log: ClarificationLog, base: ClarifyParams, *,
                current: float | None = None, min_records: int = MIN_RECORDS,
                dry_run: bool = False) -> Recalibration:
    """Choose the kb's threshold from its recorded answers and store it (unless ``dry_run``).

    The threshold belongs to the coefficient set that scored the records (``semantic``
    with the e5, ``lexical`` without); ``current`` is the threshold in force (None:
    that set's own in ``base``).

    Raises:
        InputError: fewer than ``min_records`` usable answers.
    """
    records = log.decisions(kb)
    labelled = [x for x in (_label(r) for r in records) if x is not None]
    # The set that scored most of the records (semantic or lexical, with or without the
    # candidates' own facets): its threshold is the one recalibrated.
    counts = Counter(_set_of(r) for r in records)
    key = max(sorted(counts), key=lambda k: counts[k]) if counts else "semantic"
    if key not in SET_KEYS:
        key = "semantic"
    semantic, facets_known = key.startswith("semantic"), not key.endswith("_without_own_facets")
    if current is None:
        current = base.threshold_for(semantic, facets_known)
    if len(labelled) < min_records:
        raise InputError(f"kb {kb!r} has {len(labelled)} answered clarifications with a recorded "
                         f"decision; recalibration needs at least {min_records}")
    before = _point(labelled, current)
    best = before
    for score in sorted({s for s, _ in labelled if s > current}):
        # Just above a recorded score, so that record resolves.
        candidate = _point(labelled, min(0.999999, score + 1e-6))
        if (candidate.f1 or 0.0) > (best.f1 or 0.0) + 1e-9:
            best = candidate
    changed = best.threshold != before.threshold
    note = ("threshold raised: fewer questions, the same or better F1 on the kb's answers"
            if changed else "the current threshold is already the best the answers support")
    report = Recalibration(kb, len(records), len(labelled), sum(y for _, y in labelled), before,
                           best, changed, note)
    if not dry_run:
        sets = {k: _coef_json(c) for k, c in base.sets().items()}
        scored_by = base.coefficients(semantic, facets_known)[0]
        sets[scored_by]["threshold"] = best.threshold
        params = {"sets": sets,
                  "threshold": sets["lexical"]["threshold"] or base.threshold,
                  "meta": {**dict(base.meta.get("meta", {})), "recalibrated_for": kb,
                           "recalibrated_set": scored_by, "from_threshold": before.threshold}}
        log.save_params(kb, json.dumps(params, sort_keys=True),
                        json.dumps(report.as_json(), sort_keys=True))
    return report


def _coef_json(c: Any) -> dict[str, Any]:
    return c.as_json()


def _set_of(record: RecordedDecision) -> str:
    try:
        return label_set(str(json.loads(record.decision).get("params", ""))) or ""
    except (ValueError, AttributeError):
        return ""
