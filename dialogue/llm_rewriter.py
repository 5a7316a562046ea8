"""The optional LLM rewriter: any OpenAI-compatible chat endpoint.

Asked for JSON (``{"queries": [...]}``) at temperature 0 with a short timeout,
given the entity names it may use. Its answer is never trusted as is: the
engine runs it through :class:`dialogue.validate.RewriteValidator` and falls
back to the rules rewrite. Answers are cached per (kb, session, turn, text).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping, Sequence

import openai

from common.errors import DependencyError, RetryableDependencyError
from common.jsonl import NestingError, loads
from dialogue.prompts import REWRITE_SYSTEM, REWRITE_USER
from dialogue.rewriter import Proposal, RewriteRequest


class LLMAnswerError(DependencyError):
    """The LLM answered, but not with ``{"queries": [non-empty strings]}``."""


class LLMRewriter:
    """Rewrites a turn with an LLM behind an OpenAI-compatible API."""

    def __init__(self, *, base_url: str, model: str, api_key: str | None = None,
                 timeout: float = 2.0, json_mode: bool = True, cache_size: int = 2048) -> None:
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed",
                                     timeout=timeout, max_retries=0)
        self._model = model
        self._json_mode = json_mode
        self._cache: OrderedDict[tuple[str, str, int, str], tuple[str, ...]] = OrderedDict()
        self._cache_size = cache_size

    def close(self) -> None:
        self._client.close()

    def propose(self, request: RewriteRequest) -> Proposal:
        """The :class:`dialogue.rewriter.Rewriter` protocol: the LLM's rewrite of the
        turn, about the entities of the rules proposal (``request.reference``).

        Raises:
            DependencyError: as :meth:`rewrite`.
        """
        state, snapshot = request.state, request.snapshot
        entities = request.reference.entities if request.reference else request.links.resolved
        queries = self.rewrite(
            kb=snapshot.kb, session_id=state.session_id, turn=request.turn, text=request.text,
            history=[*(f"(earlier) {line.text}" for line in state.summary),
                     *(record.user for record in state.recent)],
            allowed_names=[snapshot.name(e) for e in sorted(request.allowed(entities))],
            resolved_names=[snapshot.name(e) for e in entities],
            structure=request.structure(entities))
        return Proposal("llm", queries, queries[0], entities, "llm")

    def rewrite(self, *, kb: str, session_id: str, turn: int, text: str, history: Sequence[str],
                allowed_names: Sequence[str], resolved_names: Sequence[str],
                structure: Mapping[str, str] | None = None) -> tuple[str, ...]:
        """The LLM's standalone queries for ``text``.

        ``structure`` is what the turn resolved to, the same the rules rewriter builds
        from (entities, attribute, times, comparison, excluded entities, language, the
        rules draft); it goes into the prompt one ``key: value`` line each.

        Raises:
            RetryableDependencyError: timeout or connection failure.
            DependencyError: the endpoint answered with an error status.
            LLMAnswerError: the answer is not the JSON asked for.
        """
        key = (kb, session_id, turn, text)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        messages = [
            {"role": "system", "content": REWRITE_SYSTEM.render(
                allowed_entities="、".join(allowed_names) or "(none)")},
            {"role": "user", "content": REWRITE_USER.render(
                history="\n".join(f"- {h}" for h in history) or "(none)", turn=text,
                resolved_entities="、".join(resolved_names) or "(none)",
                structure="\n".join(f"- {k}: {v}" for k, v in (structure or {}).items() if v)
                or "(none)")},
        ]
        extra = {"response_format": {"type": "json_object"}} if self._json_mode else {}
        try:
            response = self._client.chat.completions.create(
                model=self._model, messages=messages, temperature=0, **extra)
        except openai.APITimeoutError as exc:
            raise RetryableDependencyError("the LLM did not answer within the timeout "
                                           "(REFERENT_LLM__TIMEOUT_SECONDS)", service="llm") from exc
        except openai.APIConnectionError as exc:
            raise RetryableDependencyError(f"cannot reach the LLM at REFERENT_LLM__BASE_URL: {exc}",
                                           service="llm") from exc
        except openai.APIStatusError as exc:
            raise DependencyError(f"the LLM endpoint answered {exc.status_code}: {exc.message}",
                                  service="llm") from exc
        except openai.OpenAIError as exc:
            raise DependencyError(f"the LLM call failed: {exc}", service="llm") from exc
        queries = _parse(response)
        self._cache[key] = queries
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return queries


def _parse(response) -> tuple[str, ...]:
    try:
        content = response.choices[0].message.content or ""
    except (AttributeError, IndexError) as exc:
        raise LLMAnswerError("the LLM answer has no message content") from exc
    text = content.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        data = loads(text, "the LLM answer")
    except NestingError as exc:
        raise LLMAnswerError(str(exc)) from exc
    except json.JSONDecodeError as exc:
        raise LLMAnswerError(f"the LLM answer is not JSON: {content[:80]!r}") from exc
    queries = data.get("queries") if isinstance(data, dict) else None
    if (not isinstance(queries, list) or not queries
            or not all(isinstance(q, str) and q.strip() for q in queries)):
        raise LLMAnswerError('the LLM answer lacks {"queries": [non-empty strings]}')
    return tuple(q.strip() for q in queries[:8])
