"""A name two owners share settles on the one under the owner the dialogue is about.

A kb may hold several owners side by side (a ferry line and a museum, each a tree of
``parent`` links), and a short name may be used by both (年卡: the ferry line's pass and
the museum's). After 渡轮的随身行李限额是多少, 那年卡能多带几件 means the ferry line's pass:
the talk is under the ferry line, and nothing names the museum. The owner of an entity
is the top of its ``parent`` chain.

The weakest of the links' evidence, so it runs last: the words of the turn (an
attribute only one candidate has, a question only one's passages answer) and the
nearer ontology neighbours settle a name first. It settles only when exactly one
candidate shares the owner of an entity the dialogue talked about (the focus, then the
recent turns, less what the user corrected away from); candidates under one owner, a
talk that went under several of the candidates' owners and a turn that switched topic
are left to the clarify gate.
"""

from __future__ import annotations

from dialogue.policy.nearby import talked_about
from dialogue.resolvers import DialogueContext, Resolved
from kg.aliases import AliasSnapshot
from understanding.linker import Link, LinkResult
from understanding.mentions import MentionKind

REASON = "the one candidate under the owner the dialogue is about"
# A parent chain longer than this is treated as ending there (a cycle in bad data).
_MAX_DEPTH = 32


def owner(entity_id: str, snapshot: AliasSnapshot) -> str:
    """The top of ``entity_id``'s parent chain (itself when it has no parent)."""
    current, seen = entity_id, {entity_id}
    for _ in range(_MAX_DEPTH):
        entity = snapshot.entities.get(current)
        parent = entity.parent if entity is not None else None
        if parent is None or parent in seen:
            break
        seen.add(parent)
        current = parent
    return current


def settle(link: Link, pool: list[str], snapshot: AliasSnapshot) -> Link | None:
    """``link`` settled by the owner of the first entity of ``pool`` that tells its
    candidates apart; None when none does."""
    owners = {c.entity_id: owner(c.entity_id, snapshot) for c in link.candidates}
    if len(set(owners.values())) < 2:
        return None
    talked = {owner(anchor, snapshot) for anchor in pool}
    if len(talked & set(owners.values())) > 1:
        return None  # the talk went under several of the owners: the gate asks which
    for anchor in pool:
        under = [c for c, o in owners.items() if o == owner(anchor, snapshot)]
        if len(under) == 1:
            return Link(link.mention, link.candidates, (under[0],), f"{REASON}: {anchor}")
        if under:
            return None  # several under the dialogue's owner: the gate asks which
    return None


class SameOwner:
    name = "same_owner"

    def resolve(self, links: LinkResult, context: DialogueContext) -> Resolved | None:
        if not context.going_on:
            return None
        pool = talked_about(context.state)
        out, settled = list(links.links), False
        for i, link in enumerate(out):
            if link.mention.kind is MentionKind.ALIAS and link.ambiguous and pool:
                chosen = settle(link, pool, context.snapshot)
                if chosen is not None:
                    out[i], settled = chosen, True
        return Resolved(LinkResult(tuple(out)), REASON) if settled else None


RESOLVER = SameOwner()
