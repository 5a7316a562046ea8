"""The rewrite fallback chain: the LLM's rewrite if one is configured and it
passes every check, else the rules rewrite if it passes, else the user's own words.

Every attempt is recorded (``trace["rewrite"]["tried"]``); a rewriter that
raises is an attempt that failed, never a failed turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from common.errors import ReferentError
from dialogue.classify import TurnKind, strip_correction_cue
from dialogue.events import DependencyDegraded, RewriteFellBack
from dialogue.models import RewriteInfo
from dialogue.rewrite import RuleRewriter
from dialogue.rewriter import Proposal, RewriteRequest, Rewriter
from dialogue.validate import RewriteValidator, Verdict

# Turns whose meaning depends on earlier ones: only these are worth an LLM call.
REFERS_BACK = frozenset({TurnKind.CONTINUATION, TurnKind.CORRECTION, TurnKind.REVISIT})


@dataclass(frozen=True)
class RewriteOutcome:
    """The proposal searched, how it was accepted, the trace of the attempts and
    the fallbacks taken (a rewriter that raised something unexpected)."""

    proposal: Proposal
    info: RewriteInfo
    trace: dict[str, Any]
    fallbacks: tuple[dict[str, str], ...] = field(default=())

    @property
    def events(self) -> tuple[RewriteFellBack | DependencyDegraded, ...]:
        """What the metrics count: a refused or failed LLM rewrite (the rules stood in),
        the user's own words searched, an LLM endpoint that failed."""
        tried = self.trace.get("tried") or []
        llm = [t for t in tried if t.get("source") == "llm"]
        out: list[RewriteFellBack | DependencyDegraded] = []
        if any("error" in t for t in llm):
            out.append(DependencyDegraded("llm"))
        if llm and self.info.source != "llm":
            out.append(RewriteFellBack("rules"))
        if "fallback" in self.trace:
            out.append(RewriteFellBack("original"))
        return tuple(out)


class RewriteChain:
    """LLM → rules → the user's own words, each proposal validated."""

    def __init__(self, rules: Rewriter | None = None, llm: Rewriter | None = None,
                 validator: RewriteValidator | None = None) -> None:
        self.rules = rules or RuleRewriter()
        self.llm = llm
        self.validator = validator or RewriteValidator()

    def run(self, request: RewriteRequest) -> RewriteOutcome:
        try:
            rules = self.rules.propose(request)
        except Exception as exc:  # noqa: BLE001 - a rule bug must not fail the turn
            return self._own_words(request, exc)
        tried: list[dict[str, Any]] = []
        if self.llm is not None and request.kind in REFERS_BACK:
            accepted = self._try_llm(replace(request, reference=rules), rules, tried)
            if accepted is not None:
                return accepted
        verdict = self._check(request, rules)
        tried.append({"source": "rules", "queries": list(rules.queries), "checks": verdict.checks})
        trace: dict[str, Any] = {"how": rules.how, "note": _note(rules, tried), "tried": tried}
        if verdict.accepted:
            return RewriteOutcome(rules, RewriteInfo(source="rules", accepted=True,
                                                     checks=verdict.checks), trace)
        trace["fallback"] = "the user's own words"
        words = replace(rules, source="original", queries=(request.text,), standalone=request.text)
        return RewriteOutcome(words, RewriteInfo(source="original", accepted=False,
                                                 checks=verdict.checks), trace)

    def _try_llm(self, request: RewriteRequest, rules: Proposal,
                 tried: list[dict[str, Any]]) -> RewriteOutcome | None:
        try:
            proposal = self.llm.propose(request)
            verdict = self._check(request, proposal, rules.queries)
        except ReferentError as exc:
            tried.append({"source": "llm", "error": str(exc)})
            return None
        except Exception as exc:  # noqa: BLE001 - an LLM client bug: the rules rewrite stands
            tried.append({"source": "llm", "error": f"{type(exc).__name__}: {exc}"})
            return None
        tried.append({"source": "llm", "queries": list(proposal.queries), "checks": verdict.checks})
        if not verdict.accepted:
            return None
        return RewriteOutcome(proposal, RewriteInfo(source="llm", accepted=True, checks=verdict.checks),
                              {"how": "llm", "tried": tried})

    def _check(self, request: RewriteRequest, proposal: Proposal,
               reference: tuple[str, ...] = ()) -> Verdict:
        asked = (strip_correction_cue(request.text) if request.kind is TurnKind.CORRECTION
                 else request.text)
        return self.validator.check(asked, proposal.queries, request.snapshot,
                                    entities=proposal.entities,
                                    allowed=request.allowed(proposal.entities),
                                    context=request.context(), reference=reference,
                                    excluded=request.excluded(proposal.entities))

    @staticmethod
    def _own_words(request: RewriteRequest, exc: Exception) -> RewriteOutcome:
        words = Proposal("original", (request.text,), request.text, request.links.resolved,
                         "rewrite failed: the user's own words")
        trace = {"how": words.how, "note": "", "tried": [], "fallback": "the user's own words"}
        return RewriteOutcome(words, RewriteInfo(source="original", accepted=False), trace,
                              ({"stage": "rewrite", "error": type(exc).__name__,
                                "fallback": "the user's own words"},))


def _note(rules: Proposal, tried: list[dict[str, Any]]) -> str:
    """The rules proposal's note, and why an LLM rewrite tried before it was not taken:
    the frame checks it failed, or its error."""
    llm = next((t for t in tried if t.get("source") == "llm"), None)
    if llm is None:
        return rules.note
    failed = [name for name, ok in (llm.get("checks") or {}).items() if not ok]
    why = (f"failed the frame checks ({', '.join(failed)})" if failed
           else f"failed ({llm.get('error', 'no answer')})")
    said = f"the LLM rewrite {why}: the rules standalone searched"
    return f"{rules.note}; {said}" if rules.note else said
