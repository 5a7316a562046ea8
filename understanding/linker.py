"""Entity linking: each mention → ranked canonical candidates → one entity, or none.

An alias mention whose alias names one entity resolves to it. An alias shared
by several entities resolves only when the turn or the dialogue settles it:
a distinguishing word in the text (个人版), exactly one candidate already in
the dialogue's focus, or an asked attribute that only one candidate's type
has. Otherwise the link stays ambiguous and the caller asks the user.
Pronouns resolve against the focus entities (a place word such as 那边 or
"there" against the places in play); ordinals against the entities last
listed together. Every candidate records its score and how it was found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from common.language import cues
from kg.aliases import AliasSnapshot
from understanding.fit import context_fit, decide
from understanding.mentions import PLACE, Detection, Mention, MentionKind
from understanding.pieces import pointed_at

_PLURAL_PRONOUNS = cues.PLURAL_PRONOUNS
# "The two" / 两者: the focus and the other one of its kind talked about just before.
_DUAL_PRONOUNS = cues.DUAL_PRONOUNS
# Demonstratives a piece of a name may stand right before (江北那家).
_POINTERS = cues.POINTERS
# Where a clause ends: the words before a demonstrative are looked for inside its clause.
_CLAUSE_BREAK_RE = re.compile(r"[，,。？?！!；;：:\s]")


@dataclass(frozen=True)
class Candidate:
    entity_id: str
    score: float
    source: str  # exact | normalized | fuzzy | focus | listed, then how it was chosen

    @property
    def match(self) -> str:
        """How the mention matched this candidate, without how it was chosen after:
        ``exact``, ``normalized``, ``fuzzy``, ``focus``, ``listed``."""
        return self.source.split(",", 1)[0].strip()


@dataclass(frozen=True)
class Link:
    """The linker's decision for one mention."""

    mention: Mention
    candidates: tuple[Candidate, ...]
    entity_ids: tuple[str, ...]  # resolved ids (several for a plural pronoun); () if not resolved
    reason: str

    @property
    def ambiguous(self) -> bool:
        return not self.entity_ids and len(self.candidates) > 1


@dataclass(frozen=True)
class LinkResult:
    links: tuple[Link, ...]

    @property
    def resolved(self) -> tuple[str, ...]:
        """Resolved entity ids in the order they were mentioned, without repeats."""
        return tuple(dict.fromkeys(i for link in self.links for i in link.entity_ids))

    @property
    def ambiguous(self) -> tuple[Link, ...]:
        return tuple(link for link in self.links if link.ambiguous)


# Fit margin (IDF units) by which the best candidate must beat the next before
# the linker picks it instead of asking; tuned on the CLAQUA dev sets.
DEFAULT_FIT_MARGIN = 1.0

# 和 / 与 / 及 / 、 / 还是 / and / or between two names of one list.
_COORDINATION_RE = cues.COORDINATION_RE
# 和华北区比 / 比6.5版高 / compared with X: the span ``x`` is what the subject is compared with.
_COMPARISON_RES = cues.COMPARISON_RES


# The reason of a pronoun that means the one name said before it in the turn: the turn
# itself says which entity it is, so no other entity in focus is an antecedent.
NAMED_BEFORE_REASON = "pronoun → the one name said before it in the turn"
# The reason of a singular pronoun with several focus entities left to the clarify-or-resolve
# decision (the policy settles it by salience when they were not named side by side).
DEFERRED_PRONOUN_REASON = "left to the clarify-or-resolve decision: several focus entities"


@dataclass(frozen=True)
class _Around:
    """What the dialogue offers a reference: the focus, the entities last listed, the
    alternates, the recent turns' entities and the attributes asked."""

    focus: tuple[str, ...]
    listed: tuple[str, ...]
    alternates: tuple[str, ...]
    recent: tuple[str, ...]
    attributes: tuple[str | None, ...]
    # The entities the turn itself already pointed at by rank (the first one), with
    # where each ordinal ends: a pronoun after one of them may mean it.
    ranked: tuple[tuple[int, str], ...] = ()


class _NoReading:
    """A reading of a pronoun that does not hold: the next one is tried."""


_NO_READING = _NoReading()
_Reading = Link | None | _NoReading


class EntityLinker:
    """Links the mentions of one turn against one alias snapshot."""

    def __init__(self, *, fit_margin: float = DEFAULT_FIT_MARGIN, defer_fit: bool = False) -> None:
        """Args:
            fit_margin: how far the best context fit must lead to resolve by it.
            defer_fit: leave what only the context fit could settle ambiguous (the
                candidates ranked by fit) for a clarify-or-resolve model to decide.
        """
        self.fit_margin = fit_margin
        self.defer_fit = defer_fit

    def link(self, detection: Detection, snapshot: AliasSnapshot, *,
             focus: Sequence[str] = (), listed: Sequence[str] = (),
             alternates: Sequence[str] = (), recent: Sequence[str] = (),
             context_attributes: Sequence[str] = ()) -> LinkResult:
        """Resolve every alias, pronoun and ordinal mention of ``detection``.

        Args:
            detection: the turn's mentions.
            snapshot: the alias table this turn uses (one per turn).
            focus: the dialogue's focus entities, most salient first.
            listed: entities the previous turn listed together (for 前者/后者).
            alternates: earlier entities still in play (a bare name was said after
                them), which a pronoun may mean as well as the focus.
            recent: entities the recent turns named; with ``defer_fit``, a shared
                name whose other candidates were named there too is left open
                although one of them is the focus.
            recent: the entities of the last turns, most recent first ("the two" means
                the focus and the one before it).
            context_attributes: what the dialogue has been asking about; a turn that
                asks about no attribute of its own is taken to ask about these
                (课时余额 said before 用App在哪看 settles which App).
        """
        text_norm = snapshot.normalize(detection.text)
        attributes = [m.value for m in detection.of(MentionKind.ATTRIBUTE)] or list(context_attributes)
        links: list[Link] = []
        around = _Around(tuple(focus), tuple(listed), tuple(alternates), tuple(recent),
                         tuple(attributes))
        for mention in self._credible(detection, snapshot):
            if mention.kind is MentionKind.ALIAS:
                found = self._link_alias(mention, snapshot, text_norm, attributes, focus,
                                         detection.text, recent)
            elif mention.kind is MentionKind.PRONOUN:
                # Only a thing pronoun may mean what the turn named by rank (the first one).
                ranked = tuple((link.mention.end, link.entity_ids[0]) for link in links
                               if link.mention.kind is MentionKind.ORDINAL
                               and len(link.entity_ids) == 1
                               ) if mention.text.lower() in cues.THING_PRONOUNS else ()
                found = self._link_reference(mention, detection, snapshot,
                                             replace(around, ranked=ranked) if ranked else around)
            elif mention.kind is MentionKind.ORDINAL:
                found = self._link_ordinal(mention, listed)
            else:
                found = None
            if found is not None:
                links.append(found)
        links = self._guard_fuzzy(links, snapshot)
        links.extend(self._coordinated_variants(detection, snapshot, links))
        if focus and not any(link.mention.kind is MentionKind.ALIAS for link in links):
            variant = self._link_variant(detection, snapshot, focus)
            if variant is not None:
                links.append(variant)
        return LinkResult(tuple(links))

    def _link_reference(self, mention: Mention, detection: Detection, snapshot: AliasSnapshot,
                        around: _Around) -> Link | None:
        """A pronoun's link: the first reading of it that holds, in order (a place word,
        "the two", a determiner before a name, a piece of a name, the one name said
        before it, the focus); None when the reading that holds links nothing."""
        for reading in (self._as_place, self._as_the_two, self._as_determiner,
                        self._as_pointed, self._as_named_before, self._as_moved_there,
                        self._as_focus):
            found = reading(mention, detection, snapshot, around)
            if found is not _NO_READING:
                return found
        return None

    def _as_place(self, mention: Mention, detection: Detection, snapshot: AliasSnapshot,
                  around: _Around) -> _Reading:
        if mention.value != PLACE:
            return _NO_READING
        return self._link_place(mention, detection, snapshot,
                                [*around.focus, *around.alternates, *around.recent])

    def _as_the_two(self, mention: Mention, detection: Detection, snapshot: AliasSnapshot,
                    around: _Around) -> _Reading:
        if not (around.focus and mention.text.lower() in _DUAL_PRONOUNS):
            return _NO_READING
        pair = self._the_two(around.focus, around.recent, snapshot)
        if not pair:
            return None
        return Link(mention, tuple(Candidate(e, 1.0, "focus") for e in pair),
                    tuple(pair), "“the two”: the focus and the last one like it")

    def _as_determiner(self, mention: Mention, detection: Detection, snapshot: AliasSnapshot,
                       around: _Around) -> _Reading:
        # 那张星卡: the name that follows says what is meant.
        return None if self._determiner(mention, detection) else _NO_READING

    def _as_pointed(self, mention: Mention, detection: Detection, snapshot: AliasSnapshot,
                    around: _Around) -> _Reading:
        pointed = self._pointed(mention, detection, snapshot,
                                [*around.focus, *around.alternates, *around.recent])
        return _NO_READING if pointed is None else pointed

    def _as_named_before(self, mention: Mention, detection: Detection, snapshot: AliasSnapshot,
                         around: _Around) -> _Reading:
        said = self._named_before(mention, detection, around.ranked)
        if said is None:
            return _NO_READING
        return Link(mention, (Candidate(said, 1.0, "named before it"),), (said,),
                    NAMED_BEFORE_REASON)

    def _as_moved_there(self, mention: Mention, detection: Detection, snapshot: AliasSnapshot,
                        around: _Around) -> _Reading:
        # "drop it off there", 把它还到那边: a thing pronoun beside a place word of the same
        # turn is what goes to the place, not the place; with only that place in focus it
        # stands for something the kb does not name.
        if mention.value == PLACE or mention.text.lower() not in cues.THING_PRONOUNS:
            return _NO_READING
        place = next((m for m in detection.of(MentionKind.PRONOUN) if m.value == PLACE), None)
        found = self._link_place(place, detection, snapshot,
                                 [*around.focus, *around.alternates, *around.recent]) if place else None
        if found is not None and set(around.focus) <= set(found.entity_ids):
            return None
        return _NO_READING

    def _as_focus(self, mention: Mention, detection: Detection, snapshot: AliasSnapshot,
                  around: _Around) -> _Reading:
        if not around.focus:
            return _NO_READING
        return self._link_pronoun(mention, snapshot, list(around.attributes), around.focus,
                                  around.alternates, detection.text)

    @staticmethod
    def _link_ordinal(mention: Mention, listed: Sequence[str]) -> Link | None:
        """第一个, the latter: the entity of that rank among those last listed."""
        if len(listed) <= 1:
            return None
        index = int(mention.value)
        if not -len(listed) <= index < len(listed):
            return None
        chosen = listed[index]
        return Link(mention, (Candidate(chosen, 1.0, "listed"),), (chosen,),
                    "ordinal over the entities last listed")

    @staticmethod
    def _link_place(mention: Mention, detection: Detection, snapshot: AliasSnapshot,
                    in_play: Sequence[str]) -> Link | None:
        """那边 / 在那 / there: the place named just before it in the turn (江北客服中心那边),
        else the most salient place in play (the focus, the alternates, the recent
        turns'). A place is an entity whose type has a place's attribute (地址,
        address). None when no place is in play: the word then refers to nothing
        the kb knows, and the turn goes on as if it were not said."""
        def is_place(entity_id: str) -> bool:
            entity = snapshot.entities.get(entity_id)
            if entity is None:
                return False
            own = [*snapshot.type_attributes.get(entity.type, ()), *entity.attributes]
            return any(a.lower() in cues.PLACE_ATTRIBUTES for a in own)

        said = [m for m in detection.of(MentionKind.ALIAS)
                if m.end <= mention.start and len(m.entity_ids) == 1 and is_place(m.entity_ids[0])]
        if said:
            place = said[-1].entity_ids[0]
            return Link(mention, (Candidate(place, 1.0, "named before it"),), (place,),
                        "place word → the place named before it in the turn")
        place = next((e for e in dict.fromkeys(in_play) if is_place(e)), None)
        if place is None:
            return None
        return Link(mention, (Candidate(place, 1.0, "focus"),), (place,),
                    "place word → the most salient place in play")

    @staticmethod
    def _determiner(mention: Mention, detection: Detection) -> bool:
        """那张星卡, 回到刚才那个重疾险: a demonstrative right before a name only marks
        the name as the one talked about; it refers to nothing of its own."""
        return mention.text.lower() in _POINTERS and any(
            m.kind is MentionKind.ALIAS and m.start == mention.end for m in detection.mentions)

    @staticmethod
    def _pointed(mention: Mention, detection: Detection, snapshot: AliasSnapshot,
                 in_play: Sequence[str]) -> Link | None:
        """国际学生那个, 江北那家也能直付吗: the words right before a demonstrative (in its
        clause, after any name) hold a piece of the names of exactly one entity in play
        (the focus, the alternates, the recent turns'): that one is meant, not the focus.
        None when the words point at none of them, or at several."""
        if mention.text.lower() not in _POINTERS:
            return None
        left = max([0, *(m.end for m in detection.mentions if m.end <= mention.start)])
        words = _CLAUSE_BREAK_RE.split(detection.text[left:mention.start])[-1]
        playing = [e for e in dict.fromkeys(in_play) if e in snapshot.entities]
        # Besides the entities in play, those sharing a name with them (江北那家 after
        # 上海市第一人民医院, both 市一医院) are what such words tell apart.
        pool = list(dict.fromkeys([*playing, *(v for e in playing for v in snapshot.variants(e))]))
        if not words.strip() or len(pool) < 2:
            return None
        chosen = pointed_at(snapshot, words, pool)
        if chosen is None:
            return None
        candidates = tuple(sorted((Candidate(e, 1.0 if e == chosen else 0.0, "in play") for e in pool),
                                  key=lambda c: c.entity_id != chosen))
        # The words belong to the reference: 江北那家 is replaced whole by the name.
        start = mention.start - len(words) + (len(words) - len(words.lstrip()))
        mention = Mention(MentionKind.PRONOUN, detection.text[start:mention.end], start, mention.end)
        return Link(mention, candidates, (chosen,),
                    f"demonstrative → the one in play that “{words.strip()}” points at")

    @staticmethod
    def _named_before(pronoun: Mention, detection: Detection,
                      ranked: Sequence[tuple[int, str]] = ()) -> str | None:
        """沈墨舟是个成功的导演，他拿过…: a singular pronoun after the turn named exactly one
        entity (by a name only it has, or, for a thing pronoun, by its rank: going back to
        the first one, can I cancel it?) means that entity, not the dialogue's focus. Not
        inside what is compared with (2024版比它贵多少: 它 is the other one), nor right after
        a phrase that places the name beside it (Qingluo Garden next to it)."""
        if pronoun.text.lower() in _PLURAL_PRONOUNS or pronoun.text.lower() in _DUAL_PRONOUNS:
            return None
        if any(m.start("x") <= pronoun.start < m.end("x")
               for regex in _COMPARISON_RES for m in regex.finditer(detection.text)):
            return None
        anchored = cues.ANCHORED_BEFORE_PRONOUN_RE
        if anchored is not None and any(
                m.end <= pronoun.start and anchored.fullmatch(detection.text[m.end:pronoun.start])
                for m in detection.of(MentionKind.ALIAS)):
            return None  # Qingluo Garden next to it: it is where the name lies, not the name
        before = {m.entity_ids[0] for m in detection.of(MentionKind.ALIAS)
                  if m.end <= pronoun.start and len(m.entity_ids) == 1 and m.similarity == 100}
        before |= {entity for end, entity in ranked if end <= pronoun.start}
        shared = [m for m in detection.of(MentionKind.ALIAS)
                  if m.end <= pronoun.start and len(m.entity_ids) > 1]
        return next(iter(before)) if len(before) == 1 and not shared else None

    @staticmethod
    def _the_two(focus: Sequence[str], recent: Sequence[str], snapshot: AliasSnapshot) -> list[str]:
        """Two entities of one kind: the focus's two, or the focus and the most recent
        other entity of its type."""
        def kind(e: str) -> str | None:
            return snapshot.entities[e].type if e in snapshot.entities else None

        pool = list(dict.fromkeys([*focus, *recent]))
        first = focus[0]
        second = next((e for e in pool if e != first and kind(e) == kind(first)), None)
        return [first, second] if second else []

    @staticmethod
    def _coordinated_variants(detection: Detection, snapshot: AliasSnapshot,
                              links: Sequence[Link]) -> list[Link]:
        """A产品个人版和企业版: a variant word right after a named entity and a
        conjunction means that variant of the entity just named."""
        taken = [(m.start, m.end) for m in detection.mentions]
        out: list[Link] = []
        for link in links:
            if link.mention.kind is not MentionKind.ALIAS or len(link.entity_ids) != 1:
                continue
            entity_id = link.entity_ids[0]
            rest = detection.text[link.mention.end:]
            joiner = _COORDINATION_RE.match(rest)
            if joiner is None:
                continue
            start = link.mention.end + joiner.end()
            tail = snapshot.normalize_with_offsets(detection.text[start:start + 24])
            for other, words in snapshot.variants(entity_id).items():
                word = next((w for w in sorted(words, key=len, reverse=True)
                             if tail.text.startswith(w)), None)
                if word is None or other in link.entity_ids:
                    continue
                span = (start, start + tail.span(0, len(word))[1])
                if any(span[0] < e and s < span[1] for s, e in taken):
                    continue
                mention = Mention(MentionKind.ALIAS, detection.text[span[0]:span[1]], *span,
                                  (other,))
                out.append(Link(mention, (Candidate(other, 0.9, "variant of the entity before"),),
                                (other,), "names a variant of the entity just named"))
                taken.append(span)
                break
        return out

    def _link_variant(self, detection: Detection, snapshot: AliasSnapshot,
                      focus: Sequence[str]) -> Link | None:
        """个人版呢 / 那2023版呢: the turn names only what tells a variant of a focus
        entity apart (an edition, a version). Resolves when exactly one variant fits."""
        norm = snapshot.normalize_with_offsets(detection.text)
        found: dict[str, tuple[int, int]] = {}
        for focus_id in focus:
            for other, words in snapshot.variants(focus_id).items():
                if other in focus and any(w in norm.text for w in words):
                    return None  # 2024版 while both editions are in focus: names one of them
                if other in focus:
                    continue
                for word in words:
                    at = norm.text.find(word)
                    if at >= 0:
                        found.setdefault(other, norm.span(at, at + len(word)))
        if not found:
            found = self._english_variant(detection.text, snapshot, focus)
        if len(found) != 1:
            return None
        [(entity_id, (start, end))] = found.items()
        mention = Mention(MentionKind.ALIAS, detection.text[start:end], start, end, (entity_id,))
        return Link(mention, (Candidate(entity_id, 0.9, "variant of focus"),), (entity_id,),
                    "names a variant of the focus entity")

    @staticmethod
    def _english_variant(text: str, snapshot: AliasSnapshot,
                         focus: Sequence[str]) -> dict[str, tuple[int, int]]:
        """"And the Standard one?" after the Premium card: an English word that only the
        English names of one variant of a focus entity have (Standard, not Star)."""
        def words(entity_id: str) -> set[str]:
            entity = snapshot.entities.get(entity_id)
            return {w.lower() for a in (entity.all_aliases if entity else ()) if a.isascii()
                    for w in re.findall(r"[A-Za-z]{4,}", a)}

        found: dict[str, tuple[int, int]] = {}
        for focus_id in focus:
            others = [o for o in snapshot.variants(focus_id) if o not in focus]
            own = words(focus_id)
            for other in others:
                unique = words(other) - own - set().union(*(words(o) for o in others if o != other))
                for m in re.finditer(r"[A-Za-z]{4,}", text):
                    if m.group(0).lower() in unique:
                        found.setdefault(other, m.span())
        return found

    def implicit(self, detection: Detection, snapshot: AliasSnapshot, *,
                 focus: Sequence[str], alternates: Sequence[str]) -> Link:
        """A turn that names nothing ("What is the title song?") is about the focus;
        with alternates in play, about whichever fits the question clearly best,
        else it is ambiguous."""
        mention = Mention(MentionKind.IMPLICIT, "", 0, 0)
        if not alternates:
            return Link(mention, tuple(Candidate(e, 1.0, "focus") for e in focus), tuple(focus),
                        "names nothing: the focus entities")
        return self._choose_by_fit(mention, [focus[0], *alternates], snapshot, detection.text,
                                   source="focus")

    def settled_by_words(self, detection: Detection, snapshot: AliasSnapshot,
                         options: Sequence[str]) -> Link | None:
        """The option a turn that names nothing fits clearly best by its words (知道
        《潮汐》吗？ left unanswered, then 那可是很有名的摇滚乐队: the band, not the
        song); None when its words fit none of them clearly."""
        scores = context_fit(snapshot).scores(detection.text, options)
        chosen = decide(scores, margin=self.fit_margin)
        if chosen is None:
            return None
        mention = Mention(MentionKind.IMPLICIT, "", 0, 0)
        candidates = tuple(sorted((Candidate(e, scores[e], "asked about, context fit")
                                   for e in options), key=lambda c: c.entity_id != chosen))
        return Link(mention, candidates, (chosen,),
                    "a question left unanswered: the turn's words fit this option clearly best")

    @staticmethod
    def kept_focus(links: LinkResult, snapshot: AliasSnapshot, *, focus: Sequence[str],
                   negated: Sequence[str] = ()) -> Link | None:
        """这部电影是沈墨舟导演的 / the address is next to the riverside park: a turn that
        names what the knowledge base describes the focus with (its director, the park
        it lies in) still talks about the focus. The focus entities whose description
        names one of the turn's names stay, after the named ones; None when nothing
        stays. A variant or a confusable sibling of a named entity never stays (个人版
        after 企业版 replaces it), nor does anything when a pronoun of the turn already
        says what it is about."""
        named = [e for link in links.links if link.mention.kind is MentionKind.ALIAS
                 for e in link.entity_ids]
        if not named or any(link.mention.kind is MentionKind.PRONOUN and link.entity_ids
                            for link in links.links):
            return None  # a pronoun already says what the turn is about (林默…，他是…)

        def stays(entity_id: str) -> bool:
            if entity_id in named or entity_id in negated or entity_id not in snapshot.entities:
                return False
            tied = [n for n in named if n in snapshot.described_with(entity_id)]
            return bool(tied) and not any(
                entity_id in snapshot.variants(n) or entity_id in snapshot.confusable.get(n, ())
                for n in named)

        kept = tuple(e for e in focus if stays(e))
        if not kept:
            return None
        mention = Mention(MentionKind.IMPLICIT, "", 0, 0)
        return Link(mention, tuple(Candidate(e, 1.0, "focus") for e in kept), kept,
                    "the focus stays: the turn names what its description names")

    @staticmethod
    def _guard_fuzzy(links: list[Link], snapshot: AliasSnapshot) -> list[Link]:
        """A fuzzy match never lands on a confusable sibling of an entity the turn
        names exactly (综合意外险 written right beside 以外险 stays 意外险-free)."""
        exact = {e for link in links if link.mention.kind is MentionKind.ALIAS
                 and link.mention.similarity == 100 for e in link.entity_ids}
        banned = {s for e in exact for s in snapshot.confusable.get(e, ())} - exact
        if not banned:
            return links
        kept = []
        for link in links:
            if link.mention.similarity < 100 and set(c.entity_id for c in link.candidates) & banned:
                candidates = tuple(c for c in link.candidates if c.entity_id not in banned)
                if not candidates:
                    continue
                ids = tuple(e for e in link.entity_ids if e not in banned) or (
                    (candidates[0].entity_id,) if len(candidates) == 1 else ())
                link = Link(link.mention, candidates, ids, link.reason + "; confusable sibling dropped")
            kept.append(link)
        return kept

    @staticmethod
    def _credible(detection: Detection, snapshot: AliasSnapshot) -> list[Mention]:
        """Drop weak ambiguous alias mentions (a lower-case common word such as
        "zone" in "time zone", matching capitalised names it is the lower case of)
        when the turn has a stronger mention to work with. A short form the alias
        table gives the entities ("timetable" for the Class Timetable editions) is no
        accident of case: it stays."""
        def weak(m: Mention) -> bool:
            if m.kind is not MentionKind.ALIAS or len(m.entity_ids) < 2:
                return False
            said = m.alias or snapshot.normalize(m.text)  # the alias a near match was taken for
            return m.text.isascii() and m.text.islower() and all(
                snapshot.name(e) != snapshot.name(e).lower()
                and snapshot.normalize(snapshot.name(e)) == said for e in m.entity_ids)

        mentions = list(detection.mentions)
        strong = [m for m in mentions if m.kind is MentionKind.ALIAS and not weak(m)]
        return [m for m in mentions if not (strong and weak(m))]

    def _choose_by_fit(self, mention: Mention, ids: Sequence[str], snapshot: AliasSnapshot,
                       question: str, *, source: str) -> Link:
        scores = context_fit(snapshot).scores(question, ids, ignore=[mention.text])
        candidates = tuple(Candidate(e, scores[e], f"{source}, context fit") for e in ids)
        if self.defer_fit:
            return Link(mention, candidates, (), "left to the clarify-or-resolve decision")
        chosen = decide(scores, margin=self.fit_margin)
        if chosen is None:
            return Link(mention, candidates, (), "several candidates fit the question")
        return Link(mention, candidates, (chosen,), "fits the question clearly best")

    def _link_alias(self, mention: Mention, snapshot: AliasSnapshot, text_norm: str,
                    attributes: list[str], focus: Sequence[str], question: str,
                    recent: Sequence[str] = ()) -> Link:
        exact = any(mention.text == alias for eid in mention.entity_ids
                    for alias in snapshot.entities[eid].all_aliases)
        if mention.similarity < 100:
            score, source = round(0.9 * mention.similarity / 100, 3), "fuzzy"
        else:
            score, source = (1.0, "exact") if exact else (0.95, "normalized")
        candidates = tuple(Candidate(eid, score, source) for eid in mention.entity_ids)
        if len(candidates) == 1:
            return Link(mention, candidates, (candidates[0].entity_id,), f"{source} alias")
        ids = [c.entity_id for c in candidates]
        # A slip (托运行礼) is the alias it was taken for: the rest of each name tells apart.
        shared = snapshot.normalize(mention.alias or mention.text)

        # The user named what tells them apart (个人版, 企业版).
        marked = [eid for eid in ids
                  if any(w in text_norm for w in snapshot.distinguishing_words(eid, shared))]
        if len(marked) == 1:
            return Link(mention, candidates, (marked[0],), "distinguishing word in the turn")
        # The asked attribute exists for only one candidate's type: what the turn asks
        # outweighs what the dialogue was about (悦享 + 还款期限 after the membership card).
        if attributes:
            fit = [eid for eid in ids if any(snapshot.has_attribute(eid, a) for a in attributes)]
            if len(fit) == 1:
                return Link(mention, candidates, (fit[0],), "only type with the asked attribute")
        # One of them is what the dialogue is about (unless, deferring to the clarify
        # gate, the other readings were named in the recent turns too).
        in_focus = [eid for eid in ids if eid in focus]
        others_in_play = self.defer_fit and any(e in recent for e in ids if e not in in_focus)
        if len(in_focus) == 1 and not others_in_play:
            return Link(mention, candidates, (in_focus[0],), "already the dialogue's focus")
        # One of them is one relation away from what the dialogue is about (滨湖路网点
        # after a question about 江北: the branch located there).
        near = [eid for eid in ids if snapshot.related.get(eid, frozenset()) & set(focus)]
        if not in_focus and len(near) == 1:
            return Link(mention, candidates, (near[0],), "related to the dialogue's focus")
        return self._choose_by_fit(mention, ids, snapshot, question, source=source)

    def _link_pronoun(self, mention: Mention, snapshot: AliasSnapshot, attributes: list[str],
                      focus: Sequence[str], alternates: Sequence[str], question: str) -> Link:
        ranked = list(focus)
        fitting: list[str] = []
        if attributes:
            # Salience: an entity whose type has the asked attribute beats a more recent one.
            fitting = [eid for eid in ranked if any(snapshot.has_attribute(eid, a)
                                                    for a in attributes)]
            ranked = fitting + [eid for eid in ranked if eid not in fitting]
        candidates = tuple(Candidate(eid, round(1.0 - 0.1 * i, 3), "focus")
                           for i, eid in enumerate(ranked))
        if mention.text.lower() in _PLURAL_PRONOUNS:
            return Link(mention, candidates, tuple(ranked), "plural pronoun → all focus entities")
        if self.defer_fit and len(ranked) > 1 and not (
                attributes and len(fitting) == 1):
            # 它 after two entities were listed together: which one is for the decision.
            return Link(mention, candidates, (), DEFERRED_PRONOUN_REASON)
        others = [a for a in alternates if a not in ranked]
        if others:
            return self._choose_by_fit(mention, [ranked[0], *others], snapshot, question,
                                       source="focus")
        return Link(mention, candidates, (ranked[0],), "pronoun → most salient focus entity")
