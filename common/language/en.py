"""English: every cue word and pattern the dialogue reads, and the words it writes.

Data only, in the same names as :mod:`common.language.zh`; see there. Plain
words are matched case-insensitively on word boundaries; entries that are
regular expressions are marked so.
"""

from __future__ import annotations

# English words are matched on word boundaries.
WORD_BOUNDARIES = True

# -- mention detection (understanding.mentions) ------------------------------------------------------

PRONOUNS = ["the two", "both", "this product", "that product", "this person", "this one", "that one",
            "these", "those", "they", "them", "their", "its", "it",
            "he", "him", "his", "she", "her"]
POINTERS: list[str] = []
NOUN_POINTERS: list[str] = []
# Words too common in names and in replies to point at one entity by (the enterprise one).
NAME_FILLERS = ["the", "one", "a", "an", "that", "this", "i", "mean", "meant", "please", "of",
                "version", "edition", "card", "plan", "it", "is", "for"]
PLURAL_PRONOUNS = ["they", "them", "their", "these", "those"]
# Pronouns that say whose (its benefits): the name written for one is its possessive.
POSSESSIVE_PRONOUNS = ["its", "his", "their"]
# "The two": the focus and the other one of its kind talked about just before.
DUAL_PRONOUNS = ["the two", "both"]
# Singular pronouns that say what they refer to: a person or a thing.
PERSON_PRONOUNS = ["he", "him", "his", "she", "her", "this person"]
THING_PRONOUNS = ["it", "its"]
# Person pronouns that say the person's sex, and the words (regexes) of passages about one.
MALE_PRONOUNS = ["he", "him", "his"]
FEMALE_PRONOUNS = ["she", "her"]
MALE_WORDS = [r"\b(?:he|him|his)\b"]
FEMALE_WORDS = [r"\b(?:she|her|hers|actress)\b"]
# A demonstrative whose noun says what it points at (regexes).
THING_REFERENCES = [r"\b(?:this|that)\s+(?:film|movie|song|album|record|place|sight|park|book|work)\b"]
PERSON_REFERENCES = [r"\b(?:this|that)\s+(?:person|man|woman|guy|actor|actress|singer|director"
                     r"|artist|writer)\b"]
# Attributes only a person has.
PERSON_ATTRIBUTES = ["date of birth", "birth date", "birthday", "birthplace", "place of birth",
                     "occupation", "alma mater", "height", "spouse", "date of death"]
# "there" as a place: at the end of a clause (get there, open there?), not "is there?" nor
# "there is", nor a title that starts with it (regexes).
# A name introduced beside the one talked about (regexes, the whole gap): "the Summer
# Palace next to it" puts the pronoun after the name; "its neighbour, the Summer Palace"
# before it.
ANCHORED_NAME_AFTER_PRONOUN = [r"\s+(?:neighbou?r|next-door neighbou?r)[,:]?\s+(?:the\s+)?"]
ANCHORED_NAME_BEFORE_PRONOUN = [r"\s+(?:next to|near|beside|close to|around)\s+"]
PLACE_PRONOUNS = [r"(?<!\bis )(?<!\bare )(?<!\bwas )(?<!\bwere )\bthere\b"
                  r"(?=\s*(?:[?.!,;]|$|(?:on|at|in|after|before|during|until|by|today|tonight"
                  r"|tomorrow|anymore)\b))"]
PLACE_ATTRIBUTES = ["address", "location", "opening hours", "business hours", "office hours"]
# "it" that stands for nothing: the subject of a cost, a duration or a judgement whose
# real subject is the to-clause or that-clause after it (how much does it cost to get X,
# it takes three days for X to arrive, is it possible to move X). Regexes over "it".
NOT_PRONOUN_CONTEXT = [
    r"(?i:\bit(?=(?:\s+(?:is|was|will\s+be|would\s+be)|'s)?\s+(?:really\s+|still\s+|also\s+)?"
    r"(?:costs?|takes?|took|possible|necessary|ok|okay|allowed|true|worth|required|mandatory|safe"
    r"|hard|easy|free)\b[^.?!]*?\b(?:to\s+[a-z]|that\b)))"]
NAME_LEFT_CHARS = ""
NAME_RIGHT_CHARS = ""
# What makes the digits before it part of a date, a time or an amount (21st, 21%).
NUMBER_UNIT_CHARS = "%"
# What right after a number says what it counts (none in English: "the 2024 edition").
NUMBER_KIND_CHARS = ""
EDITIONS: list[str] = []
OWN_RECORDS = [r"\b(?:check|look up) my\b", r"\bmy (?:current )?(?:balance|bill|gpa)\b",
               r"\bhow much do i (?:still )?owe\b"]
# Whether a named thing has something (does the Riverside Club have a pool): what is asked
# for as ``x``, right after the name, in lower case (regexes). Judged only in a kb
# written in English: an English word a Chinese kb never writes says nothing of it.
EXISTENCE = [r"^\s+(?:have|has|offer|offers|provide|provides)\s+(?:an?\s+|any\s+)?"
             r"(?P<x>[a-z][a-z -]{1,30}?)\s*(?:[?.!]|$)"]
# A question about what will happen (will the fee go up next year?).
FORECAST = [r"\bwill\b", r"\bgoing to\b"]
# The turn means the edition in force now (the current terms), when a name stands for several.
CURRENT = [r"\bcurrent(?:ly)?\b", r"\bnow\b", r"\blatest\b", r"\bnewest\b", r"\bin force\b"]
# A question that asks for a price in general words: an amount of money answers it.
PRICE_QUESTION = [r"\bhow much\b", r"\bprice[sd]?\b", r"\bcosts?\b"]
# An amount of money in a passage.
ASKS_DURATION = [r"\bhow long\b", r"\bhow many (?:days|hours|minutes|weeks|months)\b"]
STATES_DURATION = [r"\d+\s*(?:working |business |calendar )?(?:days?|hours?|minutes?|weeks?|months?)\b",
                   r"\bsame day\b", r"\binstantly\b"]
ASKS_CLOCK = [r"\bwhat time\b", r"\bopening hours\b", r"\bwhen (?:does|do|is) .{0,30}\b(?:open|close)\b"]
STATES_CLOCK = [r"\d{1,2}:\d{2}", r"\d{1,2}\s*(?:am|pm)\b"]
ASKS_COUNT = [r"\bhow many (?!days|hours|minutes|weeks|months)\w+"]
STATES_COUNT = [r"\b\d+\s+[a-z]+s\b"]
MONEY = [r"(?:\bRMB|\bCNY|\bUSD|[$¥])\s*\d", r"\d\s*(?:yuan|dollars?)\b"]
ORDINALS = {"the first": 0, "the second": 1, "the third": 2, "the former": 0,
            "the latter": -1, "the last": -1, "first one": 0, "second one": 1,
            "the first one": 0, "the second one": 1, "the third one": 2, "the last one": -1,
            "first": 0, "second": 1}
# Negation: the words on word boundaries, the contraction anywhere.
NEGATIONS = ["no longer", "not", "never", "except", "without", "no"]
NEGATION_SUFFIXES = ["n't"]
# A negated verb (regexes, the verb as the group ``verb``): "not the basic plan either,
# can't it?" after a question that asked "can" negates that question's "can".
NEGATED_VERBS = [r"\b(?P<verb>can|could|is|are|was|were|does|do|did|will|would|should|has|have)"
                 r"(?:n't|\s+not)\b", r"\b(?P<verb>can)(?:not|'t)\b"]
# A negation that says no verb, "cannot": English says the verb (can't, isn't), so none.
NEGATED_ABILITY: list[str] = []
ABILITY_NEGATED = {"could": "couldn't", "can": "can't"}
# A question that says one of these is negative already: a negated follow-up keeps it.
NEGATIVE_QUESTION = [r"\bnot\b", r"n't\b", r"\bnever\b", r"\bno longer\b", r"\bcannot\b"]
# Where a question's verb may be negated (a regex with ``{verb}``): as a word of its own.
NEGATABLE_VERB = r"\b(?:{verb})\b(?!\s+not\b|n't)"
# Words that hold one of those verbs without being it (none: English verbs are words).
NOT_VERB_WORDS: list[str] = []
# Time expressions (regex alternatives).
TIME = [r"\b(?:19|20)\d{2}\b",
        r"\b(?:now|currently|(?:last|previous) (?:week|month|year)|this (?:week|month|year)"
        r"|next (?:week|month|year)|(?:January|February|March|April|May|June|July|August|September"
        r"|October|November|December))\b"]
# A named variant of a product (the Diamond edition): the name is the group.
VARIANT_NAMES = [r"\b([a-z]+)\s+(?:edition|version|tier)\b"]
# Times said relative to the one talked about (compared with last month): unit, offset.
RELATIVE_TIME = {"last month": ("month", -1), "previous month": ("month", -1),
                 "next month": ("month", 1), "last year": ("year", -1),
                 "previous year": ("year", -1), "next year": ("year", 1)}
ELLIPSIS_LEADS = [r"and\s+(?:what|how)\s+about", "and", "what about", "how about",
                  r"(?:and\s+)?(?:the\s+)?same(?:\s+question|\s+thing)?(?:,?\s+but)?\s+for",
                  r"same goes for",
                  # Is that also true for X? Does the same apply to X?
                  r"(?:is|does)\s+(?:that|this|the\s+same)\s+(?:also\s+)?(?:true|apply|go|hold)\s+(?:for|to)"]
# Acknowledgements that may open an ellipsis (ok, and X; hmm, what about X; regexes).
ACKNOWLEDGEMENTS = [r"ok(?:ay)?", r"hmm+", r"right", r"alright", r"thanks", r"cool", r"got it", r"i see"]
ELLIPSIS_TAILS: list[str] = []
# A fragment that ends on a bare auxiliary, negated or with "too" (Basic members can't?
# The Riverside Club does too?): the last question, asked of what it names (regexes). A
# bare "is?" ends many questions of their own (what type its content is?): not a cue.
_bare_auxiliary = (r"\b(?:(?:can(?:not|'t)|couldn't|doesn't|don't|didn't|isn't|aren't|wasn't|"
                   r"won't|wouldn't|shouldn't|hasn't|haven't)(?:\s+either)?|"
                   r"(?:can|could|does|do|did|is|are|was|will|would|should|has|have)\s+(?:too|also))")
ELLIPSIS_FINAL: list[str] = [_bare_auxiliary]

# -- turn classification (dialogue.classify) ----------------------------------------------

CUE_LEADS = ELLIPSIS_LEADS
CUE_TAILS: list[str] = [_bare_auxiliary]
ASKLESS_TAILS: list[str] = []
SWITCH = [r"\bby the way\b", r"\bbtw\b", r"\banother question\b", r"\bchanging the subject\b",
          r"\bnever ?mind(?: that)?\b", r"\bforget (?:it|that)\b", r"\bleave that aside\b",
          # Opening the turn: "Different question: …", "Unrelated, but …", "On another note, …".
          r"^\s*(?:a\s+)?(?:different|separate|unrelated|new)\s+(?:question|topic)\b",
          r"^\s*unrelated(?:\s*,?\s*but)?\b", r"^\s*on (?:a different|another) note\b"]
CORRECTION_WRONG = [r"no(?=\s*[,.!])", r"nope\b", r"wrong one\b", r"not that one\b",
                    r"scratch that\b", r"my (?:bad|mistake)\b",
                    r"that'?s (?:wrong|not (?:it|right|the one))\b"]
CORRECTION_ASKED = [r"i (?:was|am|'m) (?:asking|talking) about\b", r"i asked about\b", r"i meant\b",
                    r"i said\b", r"what i (?:meant|asked about) (?:is|was)\b"]
CORRECTION_ANYWHERE = [r"^\s*(?:(?:no|sorry|oops)[,.]?\s+)?i\s+meant?\b", r"\bnot\s+.{1,40}?,?\s+but\b"]
CORRECTION_INTERJECTIONS = ["oh", "sorry", "oops"]
RETRACTIONS = [r"actually\b", r"(?:oh\s+)?wait\b", r"rather\b", r"make that\b"]
CLOSING_PARTICLES = ""
CORRECTION_LEADS: list[str] = []
REVISIT_BACK = [r"\b(?:go(?:ing)?|get(?:ting)?|com(?:e|ing)) back to\b", r"\bback to (?:the|that)\b",
                r"\bthe (?:earlier|previous) one\b"]
REVISIT_AGAIN = [r"\bshow (?:me )?(?:that|it) again\b", r"\bonce more\b", r"\brepeat that\b"]
MORE = [r"\bwhat else\b", r"\banything else\b", r"\b(?:tell|show|give) me more\b",
        r"\bany (?:more|others?)\b", r"\bother (?:ones|options)\b",
        r"^\s*(?:and\s+)?more(?:\s+please)?\s*[?.!]*\s*$"]
OPENERS: list[str] = []
OTHER_ONE = [r"\bthe other one\b"]
LEADING_REVISIT = [r"(?:let'?s\s+)?(?:(?:go(?:ing)?|get(?:ting)?|com(?:e|ing))\s+)?back to\s+"]

QUESTION_WORDS = ["what", "why", "how", "which", "who", "when", "where", "whether"]
QUESTION_PARTICLES: list[str] = []
# The subject of a question that names nothing (the transfer): where the names go (regexes).
SUBJECT = [r"\b(?:the|this|that)\s+(?!two\b|both\b)([A-Za-z-]+)"]
LIGHT_WORDS = [r"\b(?:can|is|it|does|do|the|one)\b"]
OWN_TOPIC: list[str] = []
BOTH_VERSIONS = [r"\b(?:both|the two) (?:versions|editions|years)\b"]
FOLLOW_UP_LEADS: list[str] = []
CUES_BEFORE_NAME: list[str] = []
RECALL_BEFORE_POINTER: list[str] = []
RECALL: list[str] = []
AGAIN_TAIL: list[str] = []
QUANTITY_UNITS = [r"[GMK]B?\b"]
VALUE_LEADS = [r"\bis\b", r"\bare\b", r"\bwas\b", ":"]
VALUE_NAME_GAPS = [r"\s*(?:the\s+)?[\"(]?"]
LISTED_TOGETHER = ["and", "or", r"vs\.?"]

# -- linking (understanding.linker) and context fit (understanding.fit) -----------------------------------------

COORDINATION = ["and", "or", r"vs\.?"]
FIT_STOP_WORDS = """
a an the of in on at to for by with from and or is are was were be been being do does did
what which who whom whose when where why how name state tell give list me please this that
these those it its they them their he she his her him there here any some about as into
than then also can could would should will shall may might must has have had not no yes
related kind type sort one ones person people thing things called known
""".split()
FIT_STOP_CHARS = ""

# -- retrieval (retrieval.search) ---------------------------------------------------------

FUNCTION_CHARS = ""

# -- topic phrases (common.language.phrases) ----------------------------------------------

# Words that end a topic phrase besides the stop words: what a turn says about the talk
# ("interesting", "tell me more", "amazing", "I wonder if"), light and common verbs (their
# -ing forms stay: "running" and "skiing" are topics), time and degree adverbs ("ever",
# "now", "almost"), conjunctions and vague nouns, never what it is about.
TOPIC_BREAKS = """
i i'm i've i'd you you're your yours we our us my mine myself let let's
okay ok cool wow woah oh ah hmm yeah yes sure great nice interesting really right thanks
thank fine good bad well so but just very quite rather too much many more most less
all each every other another both either neither same such own only even still
out not also again already actually maybe perhaps probably
get got make made do doing done go going went come take took put give want wanted need
needed like liked know knew think thought say said tell told ask asked mean meant see
seen look looking try trying heard hear remember help find found use used let
consider recommend suggest explain describe
something anything everything nothing someone anyone lot lots bit way ways things stuff
question answer information info details detail example examples specific
if whether because since while though although unless until whereas
ever never now then next before after later soon often always sometimes usually once
yet else here nowadays today tonight tomorrow yesterday almost nearly roughly especially
awesome amazing incredible fantastic wonderful beautiful fun hmm huh fair enough
best better worse worst likely possible important relevant different similar special
general true false safe legit sad shame deep due last year years month months week weeks
day days
""".split() + [w for verb in """
happen feel love hate care sound seem learn teach visit live play talk speak argue assume
add mix compare prevent avoid explore exist buy move offer mention wonder expect prefer
enjoy stop start begin keep leave set meet reach work build bring call show turn stand die
""".split() for w in (verb, verb + "s", verb + "ed", verb + "d")] + """
made bought thought saw taught built brought kept left met began ran felt spoke
talking thinking asking wondering meaning saying wanting hoping
""".split()
# Word endings that never carry a topic (regexes): manner adverbs ("currently",
# "specifically", "unfortunately").
TOPIC_BREAK_ENDINGS = [r"[a-z]{3,}(?:ally|ently|antly|ately|ously|ively|fully|edly)"]
# Where a phrase may run across: an "of" inside a name ("Conference of Parties").
TOPIC_JOINERS = ["of"]

# -- clarification (dialogue.clarify) -----------------------------------------------------

BOTH = [r"\bboth\b", r"\ball of them\b"]
NEITHER = [r"\bneither\b", r"\bnone of (?:them|these)\b"]
OPTION_NUMBER_MARKS = ""
# An answer that picks the newer or the older of editions offered (the newer one; regexes).
NEWER_CHOICE = [r"\bnew(?:er|est)?\b", r"\blatest\b", r"\bmost recent\b", r"\bcurrent\b"]
OLDER_CHOICE = [r"\bold(?:er|est)?\b", r"\bprevious\b", r"\bearlier\b", r"\bformer\b"]

# -- rewriting (dialogue.rewrite, dialogue.slots) and validation (dialogue.validate) ------

SEPARATELY = [r"\brespectively\b", r"\beach\b"]
LEADING_JOINERS = ["and"]
COMPARISONS = [r"\b(?:compared (?:with|to)|versus|vs\.?|than)\s+(?P<x>[^,.?!]{1,40})"]
CONDITIONS = [r"\b(?:if|in case|suppose)\s+(?P<x>[^,.?!]{1,60}),",
              # Who the asker is (I'm a student, can I…?): a circumstance, not a new subject.
              r"(?:^|[.!?]\s+)i(?:'m| am) an? (?P<x>[^,.?!]{1,40})[,.]\s*(?=\S)"]
# Right after a name, "too" (Gold members also pay?): the question asked of it as well.
ADDITIVE_AFTER_NAME = [r"\s+(?:also|too)\b"]
JOINTS = [r"\b(?:together|along|combined|at the same time) with\s+(?P<x>[^,.?!]{1,40})",
          r"\bwith\s+(?P<x>[^,.?!]{1,40}?)\s+at the same time"]
INTENT_GROUPS = [["why"], ["how"], ["how much", "how many"], ["which"], ["who"], ["when"],
                 ["where"]]

# -- the sides a turn names, what it corrects, which edition (dialogue/policy/sides.py) ----

SIDE_JOINERS = ["and", "or", "versus", "vs.", "vs"]
SIDE_LINKS = ["the"]
CORRECTED = [r"\bnot\s+(?P<x>[^,.?!]{1,40}?),?\s+but\b",
             r"^\s*(?:(?:no|sorry|oops|oh)[,.!]?\s+)?not\s+(?P<x>[^,.?!]{1,40}?)\s*[,;]\s*",
             r"[,;]?\s+(?:not|rather than|instead of)\s+(?P<x>[^,.?!]{1,40}?)\s*[.!]?\s*$"]
OLDER_EDITION = ["previous version", "previous edition", "older version", "old version",
                 "old edition", "earlier version", "earlier edition"]
NEWER_EDITION = ["newer version", "new version", "new edition", "latest version", "latest edition"]
EDITION_MARKS = ["edition", "version"]

# -- what the dialogue writes -------------------------------------------------------------

JOINER = " and "
# A name written for a possessive pronoun (its benefits → Wayfare Gold's benefits).
POSSESSIVE = "{name}'s"
COMPARED_WITH = " (compared with {names})"
CLARIFY_ASK_MENTION = "Which “{mention}” do you mean? "
CLARIFY_ASK = "Which one do you mean? "
CLARIFY_OPTION = "{number}. {name}"
CLARIFY_DESCRIPTION = " ({description})"
CLARIFY_SEPARATOR = "; "
