"""Resolvers: the steps that settle a turn's links from what the turn and the dialogue say.

One protocol for all of them (:class:`Resolver`): the links of the turn as settled so
far and the dialogue context in; the changed links and the reason out, or None when
the resolver changes nothing. Each resolver is one module of this package that
defines ``RESOLVER``; the order they run in is data (``order.json``), which the policy
loads by name and runs in a loop before the clarify gate (dialogue/policy/policy.py).
A new behaviour is a new module here and a row in ``order.json``. See
docs/understanding.md.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from common.errors import ConfigurationError
from dialogue.classify import TurnKind
from dialogue.state import SessionState
from kg.aliases import AliasSnapshot
from retrieval.entity_facts import EntityFacts
from understanding.linker import EntityLinker, LinkResult

if TYPE_CHECKING:  # pragma: no cover  (the policy package imports this one)
    from dialogue.policy.decision import UnderstoodTurn

ORDER_FILE = Path(__file__).with_name("order.json")


@dataclass(frozen=True)
class DialogueContext:
    """What a resolver may read: the turn's kind and words, the session, the aliases,
    the kb's entity facts (None: not known) and the linker."""

    kind: TurnKind
    turn: UnderstoodTurn
    state: SessionState
    snapshot: AliasSnapshot
    facts: EntityFacts | None
    linker: EntityLinker

    @property
    def going_on(self) -> bool:
        """The turn goes on about the same talk (a continuation, or a new name in it)."""
        return self.kind in (TurnKind.CONTINUATION, TurnKind.NEW_TOPIC)


@dataclass(frozen=True)
class Resolved:
    links: LinkResult
    reason: str


class Resolver(Protocol):
    name: str

    def resolve(self, links: LinkResult, context: DialogueContext) -> Resolved | None:
        """The links after this step and why; None when it changes nothing."""


def changed(before: LinkResult, after: LinkResult, reason: str) -> Resolved | None:
    """``Resolved`` when a settling function changed the links (it returns them
    unchanged, the same object, when it does not)."""
    return None if after is before else Resolved(after, reason)


def configured_order(path: Path = ORDER_FILE) -> list[str]:
    """The resolver names of ``path``, in the order they run."""
    try:
        names = json.loads(path.read_text(encoding="utf-8"))["resolvers"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigurationError(f"{path}: cannot read the resolver order ({exc}); it must be a "
                                 'JSON object {"resolvers": ["name", ...]}') from exc
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ConfigurationError(f'{path}: "resolvers" must be a list of resolver names')
    return names


def load_resolvers(names: Sequence[str] | None = None) -> tuple[Resolver, ...]:
    """The resolvers called ``names`` (default: ``order.json``'s), in that order."""
    out = []
    for name in configured_order() if names is None else names:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            raise ConfigurationError(f"no resolver {name!r}: each resolver is a module of "
                                     f"{__name__} (dialogue/resolvers/{name}.py)") from exc
        resolver = getattr(module, "RESOLVER", None)
        if resolver is None or getattr(resolver, "name", None) != name:
            raise ConfigurationError(f"dialogue/resolvers/{name}.py must define RESOLVER "
                                     f"with name {name!r}")
        out.append(resolver)
    return tuple(out)
