"""Where the turn's subject comes from when the dialogue supplies it, one of three ways:

- a continuation (or revisit) that names nothing and resolves nothing is about the focus;
- with nothing in focus, after a question about a name left unanswered, the options are
  still what the talk is about, and the turn's words may say which;
- a turn that names what the focus is described with (its director, the park it lies
  in) keeps the focus beside that name; a bare name ("the Night Owls") keeps the earlier
  focus its own way, as an alternate a pronoun may mean.
"""

from __future__ import annotations

from dialogue.classify import TurnKind, is_bare_mention, is_ellipsis
from dialogue.policy.policy import open_options
from dialogue.resolvers import DialogueContext, Resolved
from understanding.linker import LinkResult


class SubjectFromDialogue:
    name = "subject_from_dialogue"

    def resolve(self, links: LinkResult, context: DialogueContext) -> Resolved | None:
        kind, turn, state, snapshot = context.kind, context.turn, context.state, context.snapshot
        unsettled = not links.resolved and not links.ambiguous
        if kind in (TurnKind.CONTINUATION, TurnKind.REVISIT) and state.focus and unsettled:
            implicit = context.linker.implicit(turn.detection, snapshot, focus=state.focus,
                                               alternates=state.alternates)
            return Resolved(LinkResult((*links.links, implicit)), "names nothing: the focus")
        if kind is TurnKind.CONTINUATION and not state.focus and open_options(state) and unsettled:
            settled = context.linker.settled_by_words(turn.detection, snapshot, open_options(state))
            if settled is None:
                return None
            return Resolved(LinkResult((*links.links, settled)),
                            "the options of a question left unanswered, by the turn's words")
        if (kind in (TurnKind.CONTINUATION, TurnKind.NEW_TOPIC) and state.focus
                and not is_ellipsis(turn.detection, links)
                and not is_bare_mention(turn.detection, links)):
            kept = context.linker.kept_focus(links, snapshot, focus=state.focus,
                                             negated=state.negated)
            if kept is None:
                return None
            return Resolved(LinkResult((*links.links, kept)),
                            "names what the focus is described with: the focus stays beside it")
        return None


RESOLVER = SubjectFromDialogue()
