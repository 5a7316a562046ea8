"""Mention detection: what in a turn's text may refer to something.

Finds, on the original text: alias spans from the snapshot (leftmost-longest,
non-overlapping), pronouns and demonstratives, ordinals (第一个, the latter),
attribute words from the type schemas, time and version expressions, negation
words and ellipsis cues (那…呢, what about…). Chinese and English, mixed too.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

from common.language import cues
from kg.aliases import AliasSnapshot, LongestMatcher
from kg.fuzzy import one_edit_apart
from understanding.reading import current as current_reading


# The value of a pronoun mention that points at a place (那边, 在那, there).
PLACE = "place"


class MentionKind(str, Enum):
    ALIAS = "alias"
    PRONOUN = "pronoun"
    ORDINAL = "ordinal"
    ATTRIBUTE = "attribute"
    TIME = "time"
    NEGATION = "negation"
    IMPLICIT = "implicit"  # zero-width: a turn that names nothing refers to the focus


@dataclass(frozen=True)
class Mention:
    """A span of the turn's text that may refer to something.

    ``entity_ids`` are the alias candidates (ALIAS only); ``value`` is the
    canonical attribute name (ATTRIBUTE), the ordinal's 0-based index, -1 for
    "the last" (ORDINAL), or ``PLACE`` for a pronoun that points at a place (那边,
    there)."""

    kind: MentionKind
    text: str
    start: int
    end: int
    entity_ids: tuple[str, ...] = ()
    value: str | int | None = None
    # ALIAS only: 100 for an exact (normalized) alias, lower for a fuzzy one,
    # with the alias it was taken for.
    similarity: float = 100.0
    alias: str | None = None


# The cue vocabularies (pronouns, ordinals, negations, times, the ellipsis cue) of
# every language live in common.language; detection runs them in language order.
_TIME_RE = cues.TIME_RE
_ELLIPSIS_RE = cues.ELLIPSIS_RE
# Pronoun words that are part of ordinary words rather than references.
_NOT_PRONOUN_CONTEXT = cues.NOT_PRONOUN_RE


@dataclass(frozen=True)
class Detection:
    """Every mention found in one turn's text, plus whether it reads as an ellipsis."""

    text: str
    mentions: tuple[Mention, ...]
    ellipsis: bool

    def of(self, kind: MentionKind) -> tuple[Mention, ...]:
        return tuple(m for m in self.mentions if m.kind is kind)


def _overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return any(span[0] < end and start < span[1] for start, end in taken)


class _Collector:
    """Mentions of one text, first come first served: a span already taken
    (an alias, a time) is not taken again by a shorter cue inside it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.mentions: list[Mention] = []
        self.taken: list[tuple[int, int]] = []

    def add(self, kind: MentionKind, start: int, end: int, **extra) -> None:
        if start < end and not _overlaps((start, end), self.taken):
            self.mentions.append(Mention(kind, self.text[start:end], start, end, **extra))
            self.taken.append((start, end))


_NUMBER_UNITS = cues.NUMBER_UNIT_CHARS
# What joins digits into one number, date or time (3.5, 21:00, 6/21, 2025-06-21).
_NUMBER_JOINERS = frozenset(".:：/-")


def _inside_number(text: str, start: int, end: int) -> bool:
    """Digits at ``text[start:end]`` that are part of a longer number, a date, a time
    or an amount: a digit, a decimal point or a separator beside them, or a unit after."""
    before = text[start - 1] if start > 0 else ""
    after = text[end] if end < len(text) else ""
    return (before.isdigit() or after.isdigit() or (before != "" and before in _NUMBER_JOINERS)
            or (after != "" and after in _NUMBER_JOINERS) or after in _NUMBER_UNITS)


def _find_aliases(found: _Collector, snapshot: AliasSnapshot, *, attributes: bool = True) -> None:
    norm = snapshot.normalize_with_offsets(found.text)
    names = []
    for n_start, n_end, key in snapshot.alias_matcher.find(norm):
        start, end = norm.span(n_start, n_end)
        if key.isdigit() and _inside_number(found.text, start, end):
            continue  # the 12 of 6月12日 or 1912 is no album called 12
        names.append((start, end, snapshot.by_norm[key]))
    asked = []
    if attributes:
        for n_start, n_end, key in snapshot.attribute_matcher.find(norm):
            start, end = norm.span(n_start, n_end)
            asked.append((start, end, snapshot.attribute_by_norm[key]))
    for start, end, ids in names:
        if not any(_word_of_attribute((start, end), ids, (a_start, a_end), value, names, snapshot)
                   for a_start, a_end, value in asked):
            found.add(MentionKind.ALIAS, start, end, entity_ids=ids)
    for start, end, ids in names:
        _find_conjoined(found, snapshot, start, end, ids)
    for start, end, value in asked:
        found.add(MentionKind.ATTRIBUTE, start, end, value=value)


# The longest word joined to a name that may share a part of it (滨江 of 滨江和萧山营业部),
# in characters.
_CONJUNCT_CHARS = 10


def _find_conjoined(found: _Collector, snapshot: AliasSnapshot, start: int, end: int,
                    ids: tuple[str, ...]) -> None:
    """A word joined to a name that shares a part of the name, written once: its head
    (滨江和萧山营业部, the basic and full cover) or its lead (A产品个人版和企业版). The word
    with that part is a name of another entity of the name's kind, and the word alone is
    then a mention of it."""
    text, name = found.text, found.text[start:end]
    kinds = {snapshot.entities[e].type for e in ids if e in snapshot.entities}

    def other(written: str) -> tuple[str, ...]:
        hit = snapshot.by_norm.get(snapshot.normalize(written), ())
        fits = hit and not set(hit) & set(ids) and all(
            e in snapshot.entities and snapshot.entities[e].type in kinds for e in hit)
        return tuple(hit) if fits else ()

    joiner = cues.SIDE_JOINER_END_RE.search(text, max(0, start - 12), start)
    if joiner is not None and joiner.end() == start:
        before = text[:joiner.start()].rstrip()
        for head in _parts(name, lead=False):
            for at in _word_starts(before):
                if hit := other(before[at:] + head):
                    _add_conjunct(found, at, len(before), hit)
                    return
    joiner = cues.SIDE_JOINER_START_RE.match(text, end)
    if joiner is not None:
        after = text[joiner.end():]
        lead_at = joiner.end() + len(after) - len(after.lstrip())
        after = after.lstrip()
        for lead in _parts(name, lead=True):
            for size in _word_ends(after):
                if hit := other(lead + after[:size]):
                    _add_conjunct(found, lead_at, lead_at + size, hit)
                    return


def _add_conjunct(found: _Collector, start: int, end: int, ids: tuple[str, ...]) -> None:
    """The joined word as a name of ``ids``; it replaces a name of another kind written
    with exactly these words (滨江 a district, in 滨江和萧山营业部 the outlet: the part
    shared applies to both words)."""
    same = [m for m in found.mentions if m.kind is MentionKind.ALIAS
            and (m.start, m.end) == (start, end)]
    for m in same:
        found.mentions.remove(m)
        found.taken.remove((start, end))
    found.add(MentionKind.ALIAS, start, end, entity_ids=ids)


def _parts(name: str, *, lead: bool) -> list[str]:
    """The parts of a name another name may share, longest first: its endings (heads)
    or beginnings (leads), cut between two Chinese characters or at a space."""
    cuts = [i for i in range(1, len(name) - 1)
            if name[i] == " " or name[i - 1] == " " or (_is_cjk(name[i]) and _is_cjk(name[i - 1]))]
    parts = [name[:i] for i in reversed(cuts)] if lead else [name[i:] for i in cuts]
    # One Chinese character is no part two names share (十 of 十三陵水库 and 十七孔桥).
    return [p for p in parts if p.strip() and not (len(p.strip()) == 1 and _is_cjk(p.strip()))]


def _word_starts(before: str) -> list[int]:
    """Where a word ending ``before`` may start, longest first (at a word's edge in
    letters and digits)."""
    return [at for at in range(max(0, len(before) - _CONJUNCT_CHARS), len(before))
            if before[at].isalnum() and (at == 0 or _is_cjk(before[at]) or not before[at - 1].isalnum())]


def _word_ends(after: str) -> list[int]:
    """How long a word opening ``after`` may be, longest first (to a word's edge)."""
    top = min(_CONJUNCT_CHARS, len(after))
    return [size for size in range(top, 0, -1)
            if after[size - 1].isalnum() and (size == len(after) or _is_cjk(after[size - 1])
                                              or not after[size].isalnum())]


def _word_of_attribute(name: tuple[int, int], inner: tuple[str, ...], attribute: tuple[int, int],
                       value: str, names: list[tuple[int, int, tuple[str, ...]]],
                       snapshot: AliasSnapshot) -> bool:
    """A name that is a word of a longer attribute the turn asks of another entity it
    names (报销 of 门诊附加险报销比例多少, where 报销比例 is an attribute of riders): part of
    the attribute, not a name of its own. Only when that other entity's type has the
    attribute and the inner name's entities' types do not."""
    a_start, a_end = attribute
    if not (a_start <= name[0] and name[1] <= a_end and a_end - a_start > name[1] - name[0]):
        return False

    def has_it(entity_id: str) -> bool:
        entity = snapshot.entities.get(entity_id)
        return entity is not None and value in snapshot.type_attributes.get(entity.type, ())

    if any(has_it(e) for e in inner):
        return False
    return any(has_it(e) for start, end, ids in names
               if end <= a_start or a_end <= start for e in ids)


def _find_fuzzy_aliases(found: _Collector, snapshot: AliasSnapshot) -> None:
    """Near matches of aliases in what no exact alias or cue covered (综合以外险)."""
    index = snapshot.fuzzy_index()
    if index is None:
        return
    norm = snapshot.normalize_with_offsets(found.text)
    free = [i for i in range(len(norm.text))
            if not _overlaps(norm.span(i, i + 1), found.taken)]
    runs, start = [], None
    for pos, i in enumerate(free):
        if start is None:
            start = i
        if pos + 1 == len(free) or free[pos + 1] != i + 1:
            runs.append((start, i + 1))
            start = None
    sound = snapshot.sound_index()
    for run_start, run_end in runs:
        best: list[tuple[float, int, int, str]] = []
        for length in index.fragment_lengths:
            for i in range(run_start, run_end - length + 1):
                for key, score in index.lookup(norm.text[i:i + length], threshold=snapshot.fuzzy_threshold)[:1]:
                    best.append((score, i, i + length, key))
        for length in (sound.fragment_lengths if sound is not None else ()):
            for i in range(run_start, run_end - length + 1):
                if length <= _SHORT_SLIP and not _stands_alone(found, *norm.span(i, i + length)):
                    continue
                key = _sound_slip(norm.text[i:i + length], sound, snapshot)
                if key is not None:
                    best.append((round(100.0 * (length - 1) / length, 1), i, i + length, key))
        for score, n_start, n_end, key in sorted(best, key=lambda b: (-b[0], -(b[2] - b[1]), b[1])):
            if not LongestMatcher.at_boundary(norm, n_start, n_end):
                continue
            start_o, end_o = norm.span(n_start, n_end)
            found.add(MentionKind.ALIAS, start_o, end_o, entity_ids=snapshot.by_norm[key],
                      similarity=score, alias=key)


# A slip in a name this short is taken only where a name stands on its own: after the
# start, punctuation or a cue, and before the end, punctuation, a particle, an asked
# attribute or the question (学废怎么交…, 星咔呢, 年修假有几天), not inside running text
# (时光电影 is not a misspelt singer 石光).
_SHORT_SLIP = 3
_LEFT_OK = cues.NAME_LEFT_CHARS
_RIGHT_OK = cues.NAME_RIGHT_CHARS


def _stands_alone(found: _Collector, start: int, end: int) -> bool:
    text = found.text
    # Right after another name, a short name stands on its own whatever follows: the name
    # before it is its owner or its place (城北店客伏部周六…: that branch's department).
    if any(m.kind is MentionKind.ALIAS and m.end == start for m in found.mentions):
        return True
    left = start == 0 or text[start - 1] in _LEFT_OK or not _is_cjk(text[start - 1])
    right = (end >= len(text) or text[end] in _RIGHT_OK or not _is_cjk(text[end])
             or any(m.kind is MentionKind.ATTRIBUTE and m.start == end for m in found.mentions))
    return left and right


def _is_cjk(char: str) -> bool:
    return "\u4e00" <= char <= "\u9fff"


def _sound_slip(fragment: str, sound, snapshot: AliasSnapshot) -> str | None:
    """The alias ``fragment`` misspells by one homophone, when that is unambiguous:
    every alias that close names the same one entity, or there is one such alias (a
    name several entities share is then as ambiguous as written right, and linked the
    same way); and no other entity the ontology marks confusable with them has an alias
    within one edit of the fragment (a slip between two confusable names is not
    guessed)."""
    keys = sound.lookup(fragment)
    if not keys:
        return None
    entities = {e for key in keys for e in snapshot.by_norm.get(key, ())}
    if len(entities) != 1 and len(keys) != 1:
        return None
    for entity_id in entities:
        for partner in set(snapshot.confusable.get(entity_id, ())) - entities:
            other = snapshot.entities.get(partner)
            if other is not None and any(one_edit_apart(fragment, snapshot.normalize(a))
                                         for a in other.all_aliases):
                return None
    return keys[0]


# A release number written right after a name: 掌上课堂7.0, iOS 17.2 (not 3.5%, 2.5元).
_VERSION_AFTER_NAME_RE = cues.VERSION_AFTER_NAME_RE


def _find_cues(found: _Collector) -> None:
    text = found.text
    for m in _TIME_RE.finditer(text):
        found.add(MentionKind.TIME, m.start(), m.end())
    for alias in [m for m in found.mentions if m.kind is MentionKind.ALIAS]:
        m = _VERSION_AFTER_NAME_RE.match(text, alias.end)
        if m:
            found.add(MentionKind.TIME, m.start() + (text[m.start()] == " "), m.end())
    for regex, table in cues.ORDINAL_RES:
        for m in regex.finditer(text):
            found.add(MentionKind.ORDINAL, m.start(), m.end(), value=table[m.group(0).lower()])
    blocked = [(m.start(), m.end()) for m in _NOT_PRONOUN_CONTEXT.finditer(text)]
    for regex, kind in ([(r, MentionKind.NEGATION) for r in cues.NEGATION_RES]
                        + [(r, MentionKind.PRONOUN) for r in cues.PRONOUN_RES]):
        for m in regex.finditer(text):
            if not _overlaps((m.start(), m.end()), blocked):
                found.add(kind, m.start(), m.end())
    for regex in cues.PLACE_PRONOUN_RES:
        for m in regex.finditer(text):
            found.add(MentionKind.PRONOUN, m.start(), m.end(), value=PLACE)


# -- the spaCy pipeline --------------------------------------------------------------------
#
# Mention detection runs as two registered spaCy components over a blank Chinese
# pipeline with the character segmenter (which also splits English and mixed
# text into characters, so every character offset is a token boundary):
#
#   referent_aliases  alias and attribute spans from the kb's alias snapshot
#                     (given to the component in ``initialize``)
#   referent_cues     pronouns, ordinals, times, negations and the ellipsis cue
#
# They write ``doc._.referent_mentions`` (our typed mentions, character offsets),
# ``doc._.referent_ellipsis`` and ``doc.spans["referent"]`` (labelled spaCy spans).

ALIASES_COMPONENT = "referent_aliases"
CUES_COMPONENT = "referent_cues"
FUZZY_COMPONENT = "referent_fuzzy_aliases"


class _SnapshotComponent:
    """A component that matches against the alias snapshot given in ``initialize``."""

    def __init__(self) -> None:
        self.snapshot: AliasSnapshot | None = None

    def initialize(self, get_examples=None, *, nlp=None, snapshot: AliasSnapshot | None = None) -> None:
        """Load the alias table this pipeline matches against."""
        self.snapshot = snapshot


class AliasComponent(_SnapshotComponent):
    """spaCy component: alias (and, unless turned off, attribute) mentions."""

    def __init__(self, *, attributes: bool = True) -> None:
        super().__init__()
        self.attributes = attributes

    def __call__(self, doc):
        found = _collector(doc)
        if self.snapshot is not None:
            _find_aliases(found, self.snapshot, attributes=self.attributes)
        return doc


class FuzzyAliasComponent(_SnapshotComponent):
    """spaCy component: near matches of aliases in what the exact aliases and
    cues left uncovered (runs last, so a cue word is never read as a typo)."""

    def __call__(self, doc):
        found = _collector(doc)
        if self.snapshot is not None:
            _find_fuzzy_aliases(found, self.snapshot)
            found.mentions.sort(key=lambda m: m.start)
        return doc


class CueComponent:
    """spaCy component: pronouns, ordinals, times, negations, ellipsis."""

    def __init__(self, *, max_ellipsis_chars: int = 40) -> None:
        self.max_ellipsis_chars = max_ellipsis_chars

    def __call__(self, doc):
        found = _collector(doc)
        _find_cues(found)
        found.mentions.sort(key=lambda m: m.start)
        doc._.referent_ellipsis = (bool(_ELLIPSIS_RE.match(doc.text))
                                   and len(doc.text) <= self.max_ellipsis_chars)
        doc.spans["referent"] = [span for m in found.mentions if m.start < m.end
                                 for span in [doc.char_span(m.start, m.end, label=m.kind.value,
                                                            alignment_mode="expand")]
                                 if span is not None]
        return doc


def _collector(doc) -> _Collector:
    found = doc._.referent_collector
    if found is None:
        found = doc._.referent_collector = _Collector(doc.text)
    doc._.referent_mentions = found.mentions
    return found


_registered = False


def _register() -> None:
    """Register the factories and Doc extensions once, on first use (not at import)."""
    global _registered
    if _registered:
        return
    from spacy.language import Language
    from spacy.tokens import Doc

    for ext in ("referent_collector", "referent_mentions", "referent_ellipsis"):
        if not Doc.has_extension(ext):
            Doc.set_extension(ext, default=None)
    if not Language.has_factory(ALIASES_COMPONENT):
        Language.factory(ALIASES_COMPONENT, assigns=["doc._.referent_mentions"],
                         default_config={"attributes": True},
                         func=lambda nlp, name, attributes: AliasComponent(attributes=attributes))
    if not Language.has_factory(CUES_COMPONENT):
        Language.factory(CUES_COMPONENT, requires=[], assigns=["doc._.referent_mentions",
                                                               "doc._.referent_ellipsis",
                                                               "doc.spans"],
                         default_config={"max_ellipsis_chars": 40},
                         func=lambda nlp, name, max_ellipsis_chars: CueComponent(
                             max_ellipsis_chars=max_ellipsis_chars))
    if not Language.has_factory(FUZZY_COMPONENT):
        Language.factory(FUZZY_COMPONENT, assigns=["doc._.referent_mentions"],
                         func=lambda nlp, name: FuzzyAliasComponent())
    _registered = True


def build_pipeline(snapshot: AliasSnapshot | None):
    """A spaCy pipeline detecting mentions against ``snapshot`` (cues only when None)."""
    import spacy

    _register()
    nlp = spacy.blank("zh", config={"nlp": {"tokenizer": {"segmenter": "char"}}})
    nlp.add_pipe(ALIASES_COMPONENT)
    nlp.add_pipe(CUES_COMPONENT)
    nlp.add_pipe(FUZZY_COMPONENT)
    nlp.get_pipe(ALIASES_COMPONENT).initialize(nlp=nlp, snapshot=snapshot)
    nlp.get_pipe(FUZZY_COMPONENT).initialize(nlp=nlp, snapshot=snapshot)
    return nlp


@lru_cache(maxsize=1)
def _cues_only_pipeline():
    return build_pipeline(None)


def mention_pipeline(snapshot: AliasSnapshot | None):
    """The pipeline of ``snapshot``, built once per snapshot (or the shared cues-only one)."""
    if snapshot is None:
        return _cues_only_pipeline()
    nlp = snapshot._derived.get("nlp")
    if nlp is None:
        nlp = snapshot._derived["nlp"] = build_pipeline(snapshot)
    return nlp


def detect_mentions(text: str, snapshot: AliasSnapshot | None) -> Detection:
    """Find every mention in ``text``. Aliases and times win over the short
    cue words they contain (这个月 is a time, not 这个).

    Within a turn's reading (:mod:`understanding.reading`) a text already read, in
    this turn or an earlier one of the conversation, is not parsed again."""
    reading = current_reading()
    if reading is None:
        return _detect(text, snapshot)
    detection = reading.get(text, snapshot)
    if detection is None:
        detection = _detect(text, snapshot)
        reading.parsed += 1
        reading.put(detection, snapshot)
    return detection


def _detect(text: str, snapshot: AliasSnapshot | None) -> Detection:
    doc = mention_pipeline(snapshot)(text)
    return Detection(text=text, mentions=tuple(doc._.referent_mentions),
                     ellipsis=bool(doc._.referent_ellipsis))
