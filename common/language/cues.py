"""The cue vocabularies of every language, compiled once.

Each language module (:mod:`common.language.zh`, :mod:`common.language.en`)
holds its words and patterns as data under the same names; this module joins
them, in the order of :data:`LANGUAGES`, into the regular expressions and sets
that mention detection, linking, classification, clarification, rewriting,
validation and retrieval use. Adding a language is adding a module with those
names and listing it here; adding a cue word is one line in its language's
module.

The compiled patterns are module attributes (``SWITCH_RE``); the per-language
ones that mention detection runs one after the other are tuples in language
order (``PRONOUN_RES``). What the dialogue writes back in the user's language
is a :class:`Wording` (``wording("zh")``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType

from common.language import en, zh

# In the order the per-language patterns run: the first to claim a span keeps it.
LANGUAGES: dict[str, ModuleType] = {"zh": zh, "en": en}
# Languages whose words are matched on word boundaries (spaces between words).
_BOUNDED = {lang: module.WORD_BOUNDARIES for lang, module in LANGUAGES.items()}


def _all(name: str) -> list:
    """The list ``name`` of every language, joined in language order."""
    return [item for module in LANGUAGES.values() for item in getattr(module, name)]


def _alt(name: str) -> str:
    """The regex alternatives ``name`` of every language as one alternation body."""
    return "|".join(_all(name))


def _words(words: Sequence[str], bounded: bool, suffixes: Sequence[str] = ()) -> re.Pattern[str]:
    """Plain words as one regex, longer ones first; on word boundaries when ``bounded``;
    ``suffixes`` match anywhere (n't)."""
    body = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    pattern = rf"\b(?:{body})\b" if bounded else f"(?:{body})"
    if suffixes:
        pattern += "|" + "|".join(re.escape(s) for s in suffixes)
    return re.compile(pattern, re.IGNORECASE)


# -- mention detection --------------------------------------------------------------------

#: Pronouns and demonstratives, one pattern per language.
PRONOUN_RES: tuple[re.Pattern[str], ...] = tuple(
    _words(m.PRONOUNS, _BOUNDED[lang]) for lang, m in LANGUAGES.items())
#: What may stand right before / after a short name for a one-character slip in it to count.
NAME_LEFT_CHARS: frozenset[str] = frozenset("".join(m.NAME_LEFT_CHARS for m in LANGUAGES.values()))
NAME_RIGHT_CHARS: frozenset[str] = frozenset("".join(m.NAME_RIGHT_CHARS for m in LANGUAGES.values()))
#: What right after digits makes them part of a date, a time or an amount (21日, 21%).
NUMBER_UNIT_CHARS: frozenset[str] = frozenset("".join(m.NUMBER_UNIT_CHARS for m in LANGUAGES.values()))
#: What right after a number says what it counts (6月, 8.0版): matched with the number.
NUMBER_KIND_CHARS: frozenset[str] = frozenset("".join(m.NUMBER_KIND_CHARS for m in LANGUAGES.values()))
#: A number that names an edition (8.0版, 2023年), matched whole, not inside a longer number.
EDITION_RE = re.compile(rf"(?<![0-9.])(?:{_alt('EDITIONS')})") if _all("EDITIONS") else None
#: A request for the asker's own records (查一下我的…, check my balance).
OWN_RECORDS_RE = re.compile(_alt("OWN_RECORDS"), re.IGNORECASE)
#: Whether a thing just named has something, what is asked for as ``x`` (有没有青春版).
EXISTENCE_RES: tuple[re.Pattern[str], ...] = tuple(re.compile(p, re.IGNORECASE)
                                                   for p in _all("EXISTENCE"))
#: A question about what will happen (下学期会涨价吗, will it go up next year).
FORECAST_RE = re.compile(_alt("FORECAST"), re.IGNORECASE)
#: The turn means the edition in force now (现在用的条款, the current terms).
CURRENT_RE = re.compile(_alt("CURRENT"), re.IGNORECASE)
#: Pronouns that stand for several entities (它们, these).
PLURAL_PRONOUNS: frozenset[str] = frozenset(_all("PLURAL_PRONOUNS"))
#: Pronouns that say whose (its): the name written for one is its possessive.
POSSESSIVE_PRONOUNS: frozenset[str] = frozenset(w.lower() for w in _all("POSSESSIVE_PRONOUNS"))
#: "The two" (两者, both): the focus and the other one of its kind talked about just before.
DUAL_PRONOUNS: frozenset[str] = frozenset(_all("DUAL_PRONOUNS"))
#: Demonstratives a piece of a name may stand right before (江北那家: the one in 江北).
POINTERS: frozenset[str] = frozenset(w.lower() for w in _all("POINTERS"))
#: Those a noun follows (这张卡): the noun inside the name is part of the reference.
NOUN_POINTERS: frozenset[str] = frozenset(w.lower() for w in _all("NOUN_POINTERS"))
#: Words too common in names and replies to point at one entity by (the, one, card).
NAME_FILLERS: frozenset[str] = frozenset(w.lower() for w in _all("NAME_FILLERS"))
#: Singular pronouns that refer to a person (他, she) and to a thing (它, it), lower case.
PERSON_PRONOUNS: frozenset[str] = frozenset(w.lower() for w in _all("PERSON_PRONOUNS"))
THING_PRONOUNS: frozenset[str] = frozenset(w.lower() for w in _all("THING_PRONOUNS"))
#: Words that point at a place talked about before (那边, 在那, there), one pattern per
#: language (regexes).
PLACE_PRONOUN_RES: tuple[re.Pattern[str], ...] = tuple(
    re.compile("|".join(m.PLACE_PRONOUNS), re.IGNORECASE) for m in LANGUAGES.values() if m.PLACE_PRONOUNS)
#: Attributes only a place has (地址, address), lower case: a type with one is a place's.
PLACE_ATTRIBUTES: frozenset[str] = frozenset(w.lower() for w in _all("PLACE_ATTRIBUTES"))
#: Person pronouns that say a man (他, he) or a woman (她, she), lower case; and the words
#: an entity's own passages speak of a man or a woman with.
MALE_PRONOUNS: frozenset[str] = frozenset(w.lower() for w in _all("MALE_PRONOUNS"))
FEMALE_PRONOUNS: frozenset[str] = frozenset(w.lower() for w in _all("FEMALE_PRONOUNS"))
MALE_WORDS_RE = re.compile(_alt("MALE_WORDS"), re.IGNORECASE)
FEMALE_WORDS_RE = re.compile(_alt("FEMALE_WORDS"), re.IGNORECASE)
#: A demonstrative whose word says it points at a thing (这首歌, this album) or a person (这位).
THING_REFERENCE_RE = re.compile(_alt("THING_REFERENCES"), re.IGNORECASE)
PERSON_REFERENCE_RE = re.compile(_alt("PERSON_REFERENCES"), re.IGNORECASE)


def reference_kind(text: str, at: int | None = None) -> bool | None:
    """What a demonstrative in ``text`` says it points at: True a person (这位, this
    actor), False a thing (这首歌, 此片, this album), None when it says neither or both.
    With ``at``, only a demonstrative that starts there counts (the one a pronoun
    mention begins: 这个 of 这个电影)."""
    def found(regex: re.Pattern[str]) -> bool:
        return any(at is None or m.start() == at for m in regex.finditer(text))

    person, thing = found(PERSON_REFERENCE_RE), found(THING_REFERENCE_RE)
    return None if person == thing else person


#: Attributes only a person has (出生日期, occupation), lower case: an entity whose own
#: passages state one is a person.
PERSON_ATTRIBUTES: frozenset[str] = frozenset(w.lower() for w in _all("PERSON_ATTRIBUTES"))
#: What stands right after an attribute when the turn gives its value (地址在, address is).
VALUE_LEAD_RE = re.compile(rf"\s*(?:{_alt('VALUE_LEADS')})", re.IGNORECASE)
#: What may stand between such a word and a name that is the whole value (是《X》, is the X).
VALUE_NAME_GAP_RE = re.compile(rf"(?:{_alt('VALUE_NAME_GAPS')})", re.IGNORECASE)
#: The gap between a pronoun and a name after it (它边上的松鹤寺, its neighbour X), or
#: between a name and a pronoun after it (X next to it), when the pronoun's phrase only
#: says where the name lies: the name is what the talk turns to.
ANCHORED_AFTER_PRONOUN_RE = re.compile(rf"(?:{_alt('ANCHORED_NAME_AFTER_PRONOUN')})",
                                       re.IGNORECASE)
ANCHORED_BEFORE_PRONOUN_RE = (re.compile(rf"(?:{_alt('ANCHORED_NAME_BEFORE_PRONOUN')})",
                                         re.IGNORECASE)
                              if _all("ANCHORED_NAME_BEFORE_PRONOUN") else None)
#: Words containing a pronoun character that refer to nothing (那么, 怎么).
NOT_PRONOUN_RE = re.compile(_alt("NOT_PRONOUN_CONTEXT"))
#: Ordinals, one (pattern, word → 0-based index or -1 for the last) pair per language;
#: the table's keys are lower case.
ORDINAL_RES: tuple[tuple[re.Pattern[str], dict[str, int]], ...] = tuple(
    (_words(list(m.ORDINALS), _BOUNDED[lang]), m.ORDINALS) for lang, m in LANGUAGES.items())
#: Negations, one pattern per language.
NEGATION_RES: tuple[re.Pattern[str], ...] = tuple(
    _words(m.NEGATIONS, _BOUNDED[lang], m.NEGATION_SUFFIXES)
    for lang, m in LANGUAGES.items())
#: A negated verb, the verb as the group ``verb`` (不能, can't), every language's.
NEGATED_VERB_RES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE) for p in _all("NEGATED_VERBS"))


#: A negation that says no verb (不行, cannot), every language's.
NEGATED_ABILITY_RE = (re.compile(_alt("NEGATED_ABILITY"), re.IGNORECASE)
                      if _all("NEGATED_ABILITY") else None)


def ability_negated(lang: str) -> dict[str, str]:
    """The verbs of ability a question in ``lang`` may write, each with its negated form,
    in the order they are looked for."""
    return dict(LANGUAGES.get(lang, LANGUAGES["zh"]).ABILITY_NEGATED)


#: A question that is negative already (不能, not), every language's.
NEGATIVE_QUESTION_RE = re.compile(_alt("NEGATIVE_QUESTION"), re.IGNORECASE)
#: Words that hold a negatable verb without being it (功能's 能), every language's.
NOT_VERB_WORDS_RE = _words(_all("NOT_VERB_WORDS"), False) if _all("NOT_VERB_WORDS") else None


@lru_cache(maxsize=256)
def negatable_verb_re(lang: str, verb: str) -> re.Pattern[str]:
    """Where a question in ``lang`` may write ``verb`` to be negated."""
    module = LANGUAGES.get(lang, LANGUAGES["zh"])
    return re.compile(module.NEGATABLE_VERB.format(verb=re.escape(verb)), re.IGNORECASE)


#: Time and version expressions (7月, 2024版, last year).
TIME_RE = re.compile(f"(?:{_alt('TIME')})", re.IGNORECASE)
#: Acknowledgements before an ellipsis's cue (好的，那X呢; ok, and X): they say nothing.
_ACK = rf"(?:(?:{_alt('ACKNOWLEDGEMENTS')})[，,。.!！\s]+)*"
#: A turn that reads as an ellipsis (那华南区呢, what about X).
ELLIPSIS_RE = re.compile(
    rf"^\s*{_ACK}(?:{_alt('ELLIPSIS_LEADS')})\s*(?P<x>.+?)\s*"
    rf"(?:{_alt('ELLIPSIS_TAILS')})?\s*[?？。!！]*\s*$"
    rf"|^\s*(?P<y>.+?)\s*(?:{_alt('ELLIPSIS_FINAL')})\s*[?？]*\s*$", re.IGNORECASE)


#: A named variant (青春版, the Youth edition); group 1 is its name.
VARIANT_RES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern, re.IGNORECASE) for pattern in _all("VARIANT_NAMES"))


def time_expressions(text: str) -> list[str]:
    """The time and version expressions of ``text``, in order (7月, 2024版)."""
    return [m.group(0) for m in TIME_RE.finditer(text)]


# -- turn classification ------------------------------------------------------------------

#: The ellipsis cue at either end of a turn, taken off to see what else the user said.
ELLIPSIS_CUE_RE = re.compile(rf"^\s*{_ACK}(?:{_alt('CUE_LEADS')})\s*|\s*(?:{_alt('CUE_TAILS')})\s*[?？]*\s*$",
                             re.IGNORECASE)
#: The part of an ellipsis cue whose question word asks nothing (how about, 又如何): the
#: leads and the askless tails.
ASKLESS_CUE_RE = re.compile(rf"^\s*{_ACK}(?:{_alt('CUE_LEADS')})\s*|\s*(?:{_alt('ASKLESS_TAILS')})\s*[?？]*\s*$",
                            re.IGNORECASE)
#: Explicit topic-switch cues (regex alternatives, for use inside a larger pattern).
SWITCH_CUES = _alt("SWITCH")
SWITCH_RE = re.compile(SWITCH_CUES, re.IGNORECASE)

_WRONG = f"(?:{_alt('CORRECTION_WRONG')})"
_ASKED = f"(?:{_alt('CORRECTION_ASKED')})"
_ANYWHERE = _alt("CORRECTION_ANYWHERE")
#: A correction: 不对 / 我问的是… at the start, or 不是A，是B / I meant B / not A but B.
_OH = rf"(?:(?:{_alt('CORRECTION_INTERJECTIONS')})[，,。!！\s]*)?"
CORRECTION_RE = re.compile(rf"^\s*{_OH}(?:{_WRONG}|{_ASKED})|{_ANYWHERE}", re.IGNORECASE)
#: A retraction opening a turn (其实是…, Actually, …): with only a name after it, a correction.
RETRACTION_RE = re.compile(rf"^\s*(?:{_alt('RETRACTIONS')})[，,。:：!！\s]*", re.IGNORECASE)
#: Particles that may close a bare name and add nothing of their own (吧, 呢).
CLOSING_PARTICLES: frozenset[str] = frozenset("".join(_all("CLOSING_PARTICLES")))
#: The correction's cue itself, to take off what the correction asks.
CORRECTION_STRIP_RE = re.compile(
    rf"^\s*{_OH}(?:{_WRONG}[，,。!！\s]*)*{_ASKED}|^\s*{_OH}(?:{_WRONG}[，,。!！\s]*)+|{_ANYWHERE}"
    rf"|^\s*(?:{_alt('CORRECTION_LEADS')})|^\s*(?:{_alt('RETRACTIONS')})[，,。:：!！\s]*"
    rf"|{_alt('CORRECTED')}".replace("?P<x>", "?:"),
    re.IGNORECASE)
#: Back to an earlier topic (回到刚才…, go back to).
REVISIT_BACK_RE = re.compile(_alt("REVISIT_BACK"), re.IGNORECASE)
#: The same topic again (再给我看看, show me that again).
REVISIT_AGAIN_RE = re.compile(_alt("REVISIT_AGAIN"), re.IGNORECASE)
#: More on the same topic, nothing shown before (还有呢 / 其他的 / what else / more).
MORE_RE = re.compile(_alt("MORE"), re.IGNORECASE)
#: A revisit or switch cue at the front of a query: about the conversation, not the search.
LEADING_CUE_RE = re.compile(
    rf"^\s*(?:{_alt('LEADING_REVISIT')}|(?:{SWITCH_CUES}|{_alt('OPENERS')})[，,：:。.!！\s]*)",
    re.IGNORECASE)

#: What an ellipsis varies once its cue is gone: 那周卡呢 → 周卡, what about texting → texting.
ELLIPSIS_BODY_RE = re.compile(
    rf"^\s*{_ACK}(?:{_alt('ELLIPSIS_LEADS')})?\s*(?P<x>.+?)\s*"
    rf"(?:{_alt('ELLIPSIS_TAILS')})?\s*[?？。!！]*\s*$", re.IGNORECASE)
_QUESTION_WORDS = "|".join(
    (rf"\b(?:{'|'.join(m.QUESTION_WORDS)})\b" if _BOUNDED[lang] else "|".join(m.QUESTION_WORDS))
    for lang, m in LANGUAGES.items() if m.QUESTION_WORDS)
#: Where the question of a query starts: its question word.
QUESTION_START_RE = re.compile(_QUESTION_WORDS, re.IGNORECASE)
#: A question word or particle in what the user added makes a question of its own.
ASKS_RE = re.compile("|".join(filter(None, [_QUESTION_WORDS, _alt("QUESTION_PARTICLES")])),
                     re.IGNORECASE)
#: The subject of a question that names nothing (the transfer): where the names go.
SUBJECT_RE = re.compile(_alt("SUBJECT"), re.IGNORECASE)
#: Particles and modal verbs a short follow-up is made of besides its names.
LIGHT_RE = re.compile(_alt("LIGHT_WORDS"), re.IGNORECASE)
#: A short follow-up that has a topic of its own.
OWN_TOPIC_RE = re.compile(_alt("OWN_TOPIC"), re.IGNORECASE)
#: "Both versions": the last two versions or times named.
BOTH_VERSIONS_RE = re.compile(_alt("BOTH_VERSIONS"), re.IGNORECASE)
#: A continuation cue in front of a name, with what follows it.
FOLLOW_UP_LEAD_RE = re.compile(rf"^\s*(?:{_alt('FOLLOW_UP_LEADS')})[，,\s]*")
CUE_BEFORE_NAME_RE = re.compile(rf"^\s*(?:{_alt('CUES_BEFORE_NAME')})\s*")
#: "The one from before" inside a turn, and its "again" tail.
RECALL_RE = re.compile(_alt("RECALL"), re.IGNORECASE)
#: "The other one" of a pair in play (另一个, the other one).
OTHER_ONE_RE = re.compile(_alt("OTHER_ONE"), re.IGNORECASE)
#: A recall word ending right where a demonstrative starts (刚才|那个): it goes with it.
RECALL_BEFORE_POINTER_RE = re.compile(rf"(?:{_alt('RECALL_BEFORE_POINTER')})$", re.IGNORECASE) \
    if _all("RECALL_BEFORE_POINTER") else None
AGAIN_TAIL_RE = re.compile(_alt("AGAIN_TAIL"), re.IGNORECASE)
#: A question asking for a price in general words (价格, how much), and an amount of money.
PRICE_QUESTION_RE = re.compile(_alt("PRICE_QUESTION"), re.IGNORECASE)
MONEY_RE = re.compile(_alt("MONEY"), re.IGNORECASE)
#: What kind of value a question asks for (how long, at what time, how many), each with
#: how a passage states one: (asks, states) pairs.
ANSWER_TYPES: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = tuple(
    (re.compile(_alt(f"ASKS_{kind}"), re.IGNORECASE), re.compile(_alt(f"STATES_{kind}"), re.IGNORECASE))
    for kind in ("DURATION", "CLOCK", "COUNT"))
#: A release number right after a name (掌上课堂7.0, iOS 17.2), not a quantity (3.5%, 2.5元).
VERSION_AFTER_NAME_RE = re.compile(r"\s?[vV]?\d{1,2}(?:\.\d{1,2}){1,2}(?![\d.%])"
                                   rf"(?!\s*(?:{_alt('QUANTITY_UNITS')}))")
#: What stands between two names listed side by side (A和B, A还是B, A and B), alone.
LISTED_TOGETHER_RE = re.compile(rf"\s*(?:{_alt('LISTED_TOGETHER')})\s*$", re.IGNORECASE)

# -- linking and context fit --------------------------------------------------------------

#: Between two names of one list (和, 、, or, vs.).
COORDINATION_RE = re.compile(
    rf"\s*(?:{_alt('COORDINATION')})\s*", re.IGNORECASE)
#: Stop words of the languages written with spaces, matched as whole lower-case words.
STOP_WORDS: frozenset[str] = frozenset(
    w for lang, m in LANGUAGES.items() if _BOUNDED[lang] for w in m.FIT_STOP_WORDS)
#: Stop words of the languages written without spaces: a run of text is split on them.
STOP_WORDS_RE = re.compile("|".join(
    w for lang, m in LANGUAGES.items() if not _BOUNDED[lang] for w in m.FIT_STOP_WORDS))
#: Characters of the languages written without spaces that say nothing on their own.
STOP_CHARS: frozenset[str] = frozenset("".join(m.FIT_STOP_CHARS for m in LANGUAGES.values()))

# -- retrieval ----------------------------------------------------------------------------

#: Characters that carry no topic (question words, particles, pronouns): a query
#: bigram made only of these does not count towards coverage.
FUNCTION_CHARS: frozenset[str] = frozenset("".join(m.FUNCTION_CHARS for m in LANGUAGES.values()))

# -- clarification ------------------------------------------------------------------------

#: The answer "both" to a clarification (都要, both).
BOTH_RE = re.compile(_alt("BOTH"), re.IGNORECASE)
#: The answer "neither" (都不是, none of them).
NEITHER_RE = re.compile(_alt("NEITHER"), re.IGNORECASE)
#: An answer picking the newer / the older of the editions offered (新的那个, the older one).
NEWER_CHOICE_RE = re.compile(_alt("NEWER_CHOICE"), re.IGNORECASE)
OLDER_CHOICE_RE = re.compile(_alt("OLDER_CHOICE"), re.IGNORECASE)
#: A bare option number ("2", "2号"): the number as group 1.
OPTION_NUMBER_RE = re.compile(rf"\s*([1-9])\s*[.{''.join(m.OPTION_NUMBER_MARKS for m in LANGUAGES.values())}]?\s*")

# -- rewriting and validation -------------------------------------------------------------

#: One query per entity (分别, respectively).
SEPARATELY_RE = re.compile(_alt("SEPARATELY"), re.IGNORECASE)
#: A joining word left at the front of what follows the last name (的, and).
LEADING_JOINER_RE = re.compile(rf"^\s*(?:{_alt('LEADING_JOINERS')})\s*", re.IGNORECASE)
#: What a turn compares its subject with, as the group ``x`` (和华北区比, compared with X).
COMPARISON_RES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE) for p in _all("COMPARISONS"))
#: A condition said before the question, as the group ``x`` (要是X呢，…; if X, …).
CONDITION_RES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE) for p in _all("CONDITIONS"))
#: Something the subject goes with, as the group ``x`` (跟X可以同时拿吗, together with X).
JOINT_RES: tuple[re.Pattern[str], ...] = tuple(re.compile(p, re.IGNORECASE) for p in _all("JOINTS"))
#: Right after a name, "too" (也要, also): the previous question asked of that name as well.
ADDITIVE_AFTER_NAME_RE = re.compile(f"(?:{_alt('ADDITIVE_AFTER_NAME')})", re.IGNORECASE)
#: Question words in groups of synonyms across the languages (怎么 = 如何 = how).
INTENT_GROUPS: tuple[frozenset[str], ...] = tuple(
    frozenset(w for group in groups for w in group)
    for groups in zip(*(m.INTENT_GROUPS for m in LANGUAGES.values()), strict=True))


# -- what the dialogue writes -------------------------------------------------------------

@dataclass(frozen=True)
class Wording:
    """What the dialogue writes in one language: the word joining names, the
    compared-with note of a query, and the clarification question's parts."""

    joiner: str
    compared_with: str
    clarify_ask_mention: str
    clarify_ask: str
    clarify_option: str
    clarify_description: str
    clarify_separator: str
    possessive: str

    def join(self, names: Iterable[str]) -> str:
        """Names joined as one phrase (A和B, A and B)."""
        return self.joiner.join(names)


def _wording(module: ModuleType) -> Wording:
    return Wording(joiner=module.JOINER, compared_with=module.COMPARED_WITH,
                   clarify_ask_mention=module.CLARIFY_ASK_MENTION, clarify_ask=module.CLARIFY_ASK,
                   clarify_option=module.CLARIFY_OPTION,
                   clarify_description=module.CLARIFY_DESCRIPTION,
                   clarify_separator=module.CLARIFY_SEPARATOR, possessive=module.POSSESSIVE)


_WORDINGS = {lang: _wording(module) for lang, module in LANGUAGES.items()}


# -- the sides a turn names, what it corrects, which edition ---------------------------------

def _plain(name: str) -> str:
    return "|".join(re.escape(w) for w in sorted(_all(name), key=len, reverse=True))


#: What stands between two sides named together (和, 、, and, or): nothing else.
SIDE_GAP_RE = re.compile(rf"^[\s,，]*(?:{_plain('SIDE_JOINERS')})[\s,，]*$", re.IGNORECASE)
#: A joining word at the end of a text (滨江和|萧山营业部: the joiner before a name).
SIDE_JOINER_END_RE = re.compile(rf"(?:{_plain('SIDE_JOINERS')})\s*$", re.IGNORECASE)
#: A joining word at the start of a text (A产品个人版|和企业版: the joiner after a name).
SIDE_JOINER_START_RE = re.compile(rf"\s*(?:{_plain('SIDE_JOINERS')})", re.IGNORECASE)
#: What may stand between the last side and the name it qualifies (的, the).
SIDE_LINK_RE = re.compile(rf"^\s*(?:(?:{_plain('SIDE_LINKS')})\s*)?$", re.IGNORECASE)
#: The wrong part of a correction, as the group ``x`` (不是北校区，是南校区; not A but B).
CORRECTED_RES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE) for p in _all("CORRECTED"))
#: An edition before / after the one talked about (旧版, the previous version; 新版, newer).
OLDER_EDITION_RE = re.compile("|".join(_words(m.OLDER_EDITION, _BOUNDED[lang]).pattern
                                       for lang, m in LANGUAGES.items()), re.IGNORECASE)
#: A year or a version number said as an edition (2026年, 2023版, 7.0版, the 2026 edition).
EDITION_SAID_RE = re.compile(rf"(?<![0-9.])(?:(?:19|20)\d{{2}}|\d+(?:\.\d+)+)\s*(?:{_plain('EDITION_MARKS')})",
                             re.IGNORECASE)
NEWER_EDITION_RE = re.compile("|".join(_words(m.NEWER_EDITION, _BOUNDED[lang]).pattern
                                       for lang, m in LANGUAGES.items()), re.IGNORECASE)


def wording(lang: str) -> Wording:
    """The wording of ``lang`` ('zh', 'en'; anything else gets English)."""
    return _WORDINGS.get(lang, _WORDINGS["en"])


def _scaffold() -> re.Pattern[str]:
    parts = {piece.strip() for module in LANGUAGES.values()
             for piece in module.COMPARED_WITH.split("{names}") if piece.strip()}
    return re.compile("|".join(re.escape(p) for p in sorted(parts, key=len, reverse=True)))


#: The words the dialogue itself writes around names in a query (（与…相比）, (compared
#: with …)): not words the user asked, so not matched against passages.
SCAFFOLD_RE = _scaffold()
