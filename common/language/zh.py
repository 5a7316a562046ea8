"""Chinese: every cue word and pattern the dialogue reads, and the words it writes.

Data only: :mod:`common.language.cues` compiles these once, together with the
English ones in :mod:`common.language.en`. A new cue word is added here (and its
English counterpart there); nothing else changes. Entries that are regular
expressions are marked so; the others are plain words, escaped when compiled.
Longer alternatives first where a list is a regex alternation: the regex engine
takes the first alternative that matches.
"""

from __future__ import annotations

# Chinese is written without spaces: its words are matched anywhere.
WORD_BOUNDARIES = False

# -- mention detection (understanding.mentions) ------------------------------------------------------

# Pronouns and demonstratives that may refer to an entity (plain words).
PRONOUNS = ["两者", "这两个", "这两张", "这两款", "它们", "他们", "她们", "这几个", "这些", "那些", "这款", "那款", "这种", "那种",
            "该产品", "此产品", "这个产品", "那个产品", "这项", "该", "此", "它", "他", "她",
            "这个", "那个", "这家", "那家", "这张", "那张", "这门", "那门"]
# Demonstratives a piece of a name may stand right before to say which one is meant
# (国际学生那个, 江北那家): that entity in play, not the focus.
POINTERS = ["这个", "那个", "这款", "那款", "这种", "那种", "这家", "那家", "这张", "那张", "这门", "那门"]
# Those of them whose measure word a noun follows (这张卡, 这家医院): the noun, when the name
# holds it, is part of the reference.
NOUN_POINTERS = ["这张", "那张", "这家", "那家", "这门", "那门", "这款", "那款"]
# Words too common in names and in replies to point at one entity by (none: a piece is
# two characters in a row, and those of a name are its own).
NAME_FILLERS: list[str] = []
# Plural pronouns: they resolve to every listed or focused entity, not one.
PLURAL_PRONOUNS = ["它们", "他们", "她们", "这些", "那些", "这几个"]
# Pronouns that say whose: none (它的 keeps its own 的).
POSSESSIVE_PRONOUNS: list[str] = []
# "The two": the focus and the other one of its kind talked about just before.
DUAL_PRONOUNS = ["两者", "这两个", "这两张", "这两款", "两个都"]
# Singular pronouns that say what they refer to: a person (他, 她) or a thing (它).
PERSON_PRONOUNS = ["他", "她"]
THING_PRONOUNS = ["它"]
# Person pronouns that say the person's sex, and the words (regexes) with which an entity's
# own passages speak of a man or a woman: 他 does not mean a woman whose passages say 她.
MALE_PRONOUNS = ["他"]
FEMALE_PRONOUNS = ["她"]
MALE_WORDS = [r"(?<!其)他(?!们)", r"男(?:演员|歌手|艺人|明星|导演|星)"]
FEMALE_WORDS = [r"她(?!们)", r"女(?:演员|歌手|艺人|明星|导演|星)"]
# A demonstrative whose measure word or noun says what it points at (regexes): 这首歌,
# 这张专辑, 这部电影, 此片, 这个景点 point at a thing; 这位, 这个演员 at a person.
THING_REFERENCES = [r"(?:这|那|此|该)一?(?:首|张|部|本|座|家|款|片|处)",
                    r"(?:这|那)个?(?:电影|影片|片子|歌曲|歌|专辑|景点|景区|地方|作品|公园)", r"本片"]
PERSON_REFERENCES = [r"(?:这|那)一?(?:位|名)",
                     r"(?:这|那)个?(?:人|演员|导演|歌手|艺人|明星|编剧|作者|家伙)"]
# Attributes only a person has: an entity whose own passages state one is a person
# (a type shared by films and the people in them cannot tell).
PERSON_ATTRIBUTES = ["出生日期", "出生地", "出生年月", "职业", "毕业院校", "身高", "体重", "星座",
                     "血型", "民族", "逝世日期", "配偶"]
# Words that point at a place talked about before (regexes): 那边, 那里 (not 那里面: "in
# it"; not after 它/他: 它那里 is the pronoun's), and 那 right after 在/去/到 (能在那办吗)
# when no measure word or time follows it (在那个网点 is 那个's; 在那之前 is a time).
PLACE_PRONOUNS = [r"(?<![它他她])(?:那边|那里(?!面)|那儿)",
                  r"(?<=[在去到])那(?![个些么样种款家边里儿之时年天次段以后])"]
# What stands between a pronoun and a name the pronoun's phrase describes (regexes, the
# whole gap): 它边上的松鹤寺, 这个景点附近的白鹭湾, 它边上还有个温泉 introduce the name beside
# the one talked about, which is only where it lies; the name is what the talk turns to.
ANCHORED_NAME_AFTER_PRONOUN = [r"[^，,。？?！!；;：:\s]{0,8}的[《“\"「【]?",
                               r"[^，,。？?！!；;：:\s的]{0,6}还?有一?[个座家处]?[《“\"「【]?"]
# What stands between a name and a pronoun after it that says the same (regexes): none in
# Chinese, which puts the describing phrase first.
ANCHORED_NAME_BEFORE_PRONOUN: list[str] = []
# Attributes only a place has: an entity whose type has one is a place (那边 may mean it).
# Opening hours count: what one can go to and find open is a place (a library, a hall).
PLACE_ATTRIBUTES = ["地址", "位置", "所在地", "地点", "办公地点", "营业时间", "开放时间", "开馆时间",
                    "办公时间"]
# Words that contain a pronoun character but refer to nothing (regex alternatives).
NOT_PRONOUN_CONTEXT = ["那么", "这里", "这样", "那样", "这么", "那么", "怎么", "什么", "这边",
                       "此外", "因此", "该怎么", "应该", "该如何", "该不该", "非常", "无论",
                       "那就", "那我", "那你", "那请", "那要",
                       # 此 inside a word: 正有此意 (just what I meant), 如此, 从此, 为此…
                       "此意", "如此", "从此", "彼此", "此时", "此刻", "此前", "此后", "为此",
                       "至此"]
# What may stand right before and right after a name for a one-character slip in a
# short name to be taken (the start, punctuation, a cue; a particle, the question).
NAME_LEFT_CHARS = "，,。.？?！!；;：:、 \t\n（(“\"'那和与及跟还"
NAME_RIGHT_CHARS = "，,。.？?！!；;：:、 \t\n）)”\"'呢吗吧啊呀怎多几是有能可要会"
# What makes the digits before it part of a date, a time or an amount (21日, 21岁):
# a name made of digits only is not taken there.
NUMBER_UNIT_CHARS = "年月日号点时分秒岁元万亿千百个%"
# What right after a number says what it counts (6月, 8.0版, 2024版, 30元): the number
# and its kind are matched together, so 8.0版 is not the 8.0 of "Android 8.0".
NUMBER_KIND_CHARS = "年月日号版期岁元天次个"
# A number that names an edition of something (regexes: 8.0版, 2024版, 2023年; not 84年,
# a date said in passing): a question about an edition no passage of the kb names is
# about something the kb does not hold.
EDITIONS = [r"\d+(?:\.\d+)?版", r"\d{4}年"]
# A request for the asker's own records (查一下我的…, 我的卡里还剩多少课时, 这张卡还欠多少):
# a knowledge base holds no one's account, so nothing in it answers (regexes).
OWN_RECORDS = [r"(?:查|看|核对)(?:一下|一查|查|下|看)?我(?:的|这|上|本|那)",
               r"我(?:的)?[^，,。？?！!]{0,8}?(?:还剩|还欠|欠了多少|余额)",
               # What the asker's own account holds (我的积分账户里还有多少分).
               r"我的[^，,。？?！!]{0,8}?(?:账户|账号|帐户|帐号)里?[^，,。？?！!]{0,4}?(?:有|剩|还有|剩下)多少",
               # The live state of the asker's own trip (我今晚那趟车会不会晚点): no document
               # holds it; a rule for such a trip (那班取消了怎么退) is asked otherwise.
               r"我[^，,。？?！!]{0,8}?那(?:班|趟)[^，,。？?！!]{0,6}?"
               r"(?:(?:会不会|有没有|是不是)(?:延误|晚点|取消|停运)|(?:延误|晚点|取消|停运)了?(?:吗|没有?))"]
# Whether a named thing has something (星卡有没有青春版, 安和有宠物险吗): what is asked
# for as ``x``, right after the name (regexes; the name is checked by the caller).
# Not a question about an event (有没有拿过奖: 过, 了) nor one with a question word (有什么奖项).
EXISTENCE = [r"^(?:也|还|都)?有没有(?![^，,。？?！!]*(?:什么|什麼|哪|几|幾|多少|怎么|怎麼))"
             r"(?P<x>[^，,。？?！!吗呢啊过了]{1,12})(?=[，,。？?！!吗呢啊]|$)",
             r"^(?:也|还|都)?有(?![^，,。？?！!]*(?:什么|什麼|哪|几|幾|多少|怎么|怎麼))"
             r"(?P<x>[^，,。？?！!没吗呢啊过了]{1,12})(?:吗|嘛)",
             # How many of a thing it has (那家店有几个车位): none written of, no count.
             r"^(?:一共|总共|大概)?有(?:几|幾|多少)(?:个|個|家|台|间|間|种|種|张|張|条|條|位|首|部|辆|輛|座|所|项|項|款|套|本|名)?"
             r"(?P<x>[^，,。？?！!吗呢啊嘛]{2,10})(?=[，,。？?！!吗呢啊嘛]|$)"]
# A question about what will happen (下学期会涨价吗, 会不会取消): with a later time said
# relative to now, only a passage that writes of that time answers it (regexes).
FORECAST = ["会不会", r"(?<![机体学协工社开聚约晚])会(?![员议计话费所场谈])", "将会", "将要"]
# The turn means the edition in force now (现在用的条款), when a name stands for several.
CURRENT = ["现在", "目前", "当前", "现行", "如今", "最新"]
# A question that asks for a price in general words (not a named fee such as 年费): what
# answers it is an amount of money, whatever the passage calls it (月费88元).
PRICE_QUESTION = ["价格", "价钱", "多少钱", "什么价"]
# An amount of money in a passage.
MONEY = [r"\d+(?:\.\d+)?\s*(?:万|千)?\s*(?:元|块)"]
# What kind of value a question asks for, and how a passage states one (regexes): how
# long (多久 → 5个工作日), at what time of day (几点 → 9:00), how many (几张 → 2张).
ASKS_DURATION = ["多久", "多长时间", "多少天", "几天", "多少个?工作日", "几个工作日", "要多长"]
STATES_DURATION = [r"\d+\s*个?\s*(?:工作日|自然日|天|日内|小时|分钟|周|个月)", "当天", "次日", "即时"]
ASKS_CLOCK = ["几点", "营业时间", "开门", "关门", "下班", "上班时间", "开放时间"]
STATES_CLOCK = [r"\d{1,2}\s*[:：]\s*\d{2}", r"\d{1,2}\s*点"]
ASKS_COUNT = ["几张", "几个", "几次", "几台", "多少张", "多少个", "多少次"]
STATES_COUNT = [r"\d+\s*(?:张|个|次|台|人)"]
# Ordinal word → 0-based index, -1 for the last.
ORDINALS = {"第一个": 0, "第二个": 1, "第三个": 2, "第四个": 3, "第1个": 0, "第2个": 1,
            "第3个": 2, "第4个": 3, "前者": 0, "后者": -1, "第一": 0, "第二": 1, "第三": 2,
            "最后一个": -1}
# Negation words (plain words).
NEGATIONS = ["不再", "不能", "不会", "不是", "不用", "无法", "没有", "除了", "免除", "不", "没",
             "未", "非", "无"]
# Negations that are part of a word, matched anywhere.
NEGATION_SUFFIXES: list[str] = []
# A negated verb (regexes, the verb as the group ``verb``): 标快也不能吗 after a question
# that asked 能 negates that question's 能.
NEGATED_VERBS = [r"(?:不|没)(?P<verb>能够|能|可以|会|需要|要|用|必须|是|有|包含|包括|含|支持|允许|收)"]
# A negation that says no verb, "cannot" (质量问题退换也不行吗): it negates the question's
# verb of ability, the first of ABILITY_NEGATED the question writes, as that table says.
NEGATED_ABILITY = [r"不行", r"不成", r"没法", r"没办法"]
ABILITY_NEGATED = {"能够": "不能够", "可以": "不可以", "能": "不能"}
# A question that says one of these is negative already: a negated follow-up keeps it.
NEGATIVE_QUESTION = [r"(?:不|没|未|无法)(?:能|可以|会|需要|要|用|必须|是|有|包含|包括|含|支持|允许|收)"]
# Where a question's verb may be negated (a regex with ``{verb}``): not after 不 or 没.
NEGATABLE_VERB = r"(?<![不没])(?:{verb})"
# Words that hold one of those verbs without being it (功能's 能, 会员's 会): a verb
# inside one of them is not negated.
NOT_VERB_WORDS = ["功能", "性能", "可能", "智能", "技能", "才能", "能力", "能源", "能量", "会员", "会议",
                  "机会", "社会", "协会", "学会", "年会", "会费", "重要", "主要", "要求", "摘要", "是否",
                  "但是", "还是", "就是", "总是", "于是", "是不是", "所有", "有效", "有限", "有关", "拥有",
                  "具有", "含有", "有没有", "费用", "使用", "用户", "适用", "信用", "用途", "作用", "应用",
                  "用量", "专用", "收费", "收入", "收益", "回收", "收件", "收货", "含量", "包含"]
# Time and version expressions (regex alternatives).
TIME = [r"[vV]?\d{1,2}(?:\.\d{1,2}){1,2}\s*版本?", r"\d{4}\s*年(?:\s*\d{1,2}\s*月)?", r"\d{1,2}\s*月份?", r"\d{4}\s*版",
        r"\d{4}(?=\s*(?:的|年度|版本|版))",
        "上半年", "下半年", "第[一二三四1-4]季度", "[Qq][1-4]", "上周", "本周", "这周", "下周",
        "上个月", "这个月", "本月", "下个月", "上月", "下月", "前一个月", "上一年", "前一年",
        "去年", "今年", "明年", "前年", "新版", "旧版", "最新版", "老版", "现在", "目前"]
# A named variant of a product (青春版, 企业版): the name is the group (regex alternatives).
VARIANT_NAMES = [r"([\u3400-\u9fff]{2})版(?!本)"]
# Times said relative to the one talked about (和前一个月比呢 after 2023年9月…): unit, offset.
RELATIVE_TIME = {"上个月": ("month", -1), "上月": ("month", -1), "前一个月": ("month", -1),
                 "下个月": ("month", 1), "下月": ("month", 1), "去年": ("year", -1),
                 "上一年": ("year", -1), "前一年": ("year", -1), "前年": ("year", -2),
                 "明年": ("year", 1)}
# Pieces of the vocabularies below, written once (lower case: no vocabulary of their own).
# 又如何 / 又怎么样 after a name: the last question, asked of it (a regex).
_again_how = "又(?:如何|怎么样|怎样)"
# 回到 with what it goes back to cut off by a comma (回到A产品，…; never 回到家后…).
_back_to_named = r"(?:那|我们)?回到(?=[^，,。？?！!]{1,20}[，,])"
# An ellipsis: a leading cue (那…呢), the rest, an optional trailing cue (regex alternatives).
ELLIPSIS_LEADS = ["那么?", "还有", "那如果是", "换成"]
ELLIPSIS_TAILS = ["呢", "吗", "怎么样", "如何", "会怎样"]
# A turn that ends in these alone (价格呢, 华南区又如何) is an ellipsis too (regexes); so is
# a piece of a name with 的 and "how is it" (本科的咋样: the undergraduate one).
_the_one_how = r"(?<=的)(?:咋样|怎么样|如何)"
ELLIPSIS_FINAL = ["呢", _again_how, _the_one_how]
# Acknowledgements that may open an ellipsis (好的，那X呢; regexes).
ACKNOWLEDGEMENTS = ["好的", "好吧", "嗯+", "哦+", "明白了", "知道了", "谢谢"]

# -- turn classification (dialogue.classify) ----------------------------------------------

# The ellipsis cue taken off before looking at what the user said of their own.
CUE_LEADS = ["那么?", "还有"]
CUE_TAILS = [_again_how + "呢?", "呢", _the_one_how, "怎么样"]
# Ellipsis tails whose question word asks nothing of its own (华南区又如何 asks what the
# last question asked): a rewrite need not keep it. 怎么样 alone may ask for an opinion.
ASKLESS_TAILS = [_again_how + "呢?", _the_one_how]
# An explicit topic switch (regex alternatives).
SWITCH = ["换个话题", "换一个话题", r"另外(?:想|再)?问(?:一下|下|个)?", "顺便问一下", "顺便问下",
          "我想问别的",
          r"算了[，,。!！\s]*(?:我)?(?:直接|还是|就)?(?:问|说)",
          # Setting the question at hand aside (这个先放一放，…).
          r"先不(?:管|说|问|提)(?:这个|那个)了?", r"(?:这个|那个)先不(?:管|说|问)了?",
          r"不管(?:这个|那个)了", "先放一放", "回头再说"]
# A correction: "that's wrong", "what I asked was", and 不是A，是B anywhere (regexes).
CORRECTION_WRONG = ["不对", "不是的", "错了", "(?:说|搞|打|写|问)错了", "不是这个", "不是那个"]
CORRECTION_ASKED = [r"我(?:想|要|是)?(?:问|说|指|找|去|查|办)的是", "我是说", "我是想问"]
# Interjections that may open a correction (哦，我说的是…).
# An apology (不好意思说错了，…) opens one as well.
CORRECTION_INTERJECTIONS = ["不好意思", "抱歉", "对不起", "哦", "噢", "啊", "呃", "嗯", "唉", "哎"]
CORRECTION_ANYWHERE = [r"不是.{1,20}?[，,、\s]*(?:而)?是"]
# What retracts the last turn's subject when only a name follows it (其实是滨江图书馆;
# regexes): a correction to that name. With more words it is a question of its own.
RETRACTIONS = [r"其实(?:是|我问的是)?", r"应该是", r"等等[，,\s]*(?:是)?", r"等一下[，,\s]*(?:是)?"]
# Particles that may close a bare name (其实是西院吧) and add nothing of their own.
CLOSING_PARTICLES = "吧呢啊呀"
# What opens a correction whose wrong part follows (是南校区不是北校区, 我问的不是北校区，是南校区):
# taken off with the cue, never a correction by itself (regexes).
CORRECTION_LEADS = [r"是(?=[^，,。？?！!]{1,20}?不是)", r"我(?:想|要|是)?(?:问|说|指|找|查|办)的(?=不是)"]
# A revisit: back to an earlier topic, or the same one again (regexes).
REVISIT_BACK = [r"回到(?:刚才|之前|前面|上面)", r"(?:刚才|之前|前面|上面)(?:说|问|提到)?的?那个",
                r"^\s*(?:再|还是|我们)?(?:说|聊|问|绕)回(?:到|来)?", r"^\s*" + _back_to_named]
REVISIT_AGAIN = [r"再(?:给我|发我)?(?:看看|看一下|发一下|说一遍|讲一遍)", r"再(?:给我|发我)一下",
                 r"再发(?:给)?我一下", r"再发一[遍次]",
                 r"重新(?:发|给)",
                 r"(?:刚才|之前|前面|上面)[^，,。？?]{0,12}那(?:条|段|个)[^，,。？?]{0,4}再"]
# Asking for more on the same topic, nothing shown before (还有呢, 其他的; regexes).
MORE = [r"^\s*(?:那|那么)?还有(?:呢|吗|没有|别的|其他|其它)",
        r"(?:别的|其他的?|其它的?|另外的)(?:呢|吗|还有吗)?\s*[?？。!！]*\s*$",
        r"还有(?:别的|其他|其它)", r"更多"]
# Openers at the front of a turn that are about the talk, not what is searched (对了，…:
# "oh, right"): taken off the query; they switch nothing, since in chat the question
# after them is as often about the same subject as about a new one (regexes).
OPENERS = [r"对了(?=[，,。!！\s])"]
# "The other one" of a pair in play (另一个呢, 另外那个; regexes).
OTHER_ONE = [r"另(?:外)?(?:一|那)(?:个|家|张|款|种|位|所|版)"]
# Revisit cues at the front of a query, stripped before searching (regexes).
LEADING_REVISIT = [r"回到(?:刚才|之前|前面|上面)(?:说|问|提到)?的?",
                   _back_to_named,
                   r"(?:再|还是|我们)?(?:说|聊|问|绕)回(?:到|来)?(?:刚才|之前|前面|上面)?(?:说|问|提到)?的?[，,：:\s]*",
                   r"(?:请)?再(?:给我)?(?:看看|看一下|发一下|说一遍|讲一遍)(?:刚才|之前|前面|上面)?"
                   r"(?:说|问|提到)?的?(?:那个|那些)?[，,：:\s]*"]

# Question words: where the question of a query starts (regex alternatives, longer first).
QUESTION_WORDS = ["为什么", "为何", "怎么", "如何", "多少", "几", "哪些", "哪个", "哪", "是否", "能否",
                  "什么", "谁", "何时"]
# Particles that make a question of what the user added (那怎么办呢 … 吗).
QUESTION_PARTICLES = ["吗"]
# The subject of a question that names nothing, where the names go (English only).
SUBJECT: list[str] = []
# Particles and modal verbs a short follow-up is made of besides its names (青春版能加吗;
# regex alternatives).
LIGHT_WORDS = ["[吗呢吧啊么的了也还]", "能", "可以", "会", "要", "是", "有", "那个", "这个", "那", "呢"]
# What in a short follow-up says it has a topic of its own (…的…, 怎么样, 有…吗; regexes).
OWN_TOPIC = ["的", "怎么样", "如何", "是什么", "什么样", "有.{1,8}吗", r"呢\s*[?？]*\s*$",
             # A subject of its own before 是 + a question word (分班考试是哪天).
             r"[\u3400-\u9fff]{3,}是(?:哪|几|多少|什么)",
             # A count of people (最多几个人, 限几人): the subject's own capacity, asked of
             # it, never of the fee, time or password asked before. A count of times or
             # days (输错几次, 要几天) may be of what was asked, and is not one.
             r"(?:几|多少)(?:个|位|名)?人"]
# "Both versions" (两个版本, 两年): the last two versions or times named (regexes).
BOTH_VERSIONS = ["两个?版本?", "两年", "两期"]
# A continuation cue in front of a name (那掌上课堂长者版…), not part of the question (regexes).
FOLLOW_UP_LEADS = ["那么", "还有", r"那(?=[，,\s])", r"对了[，,\s]*"]
CUES_BEFORE_NAME = ["那么?", "还有"]
# "The one from before" inside a turn (把之前…那段再给我看看), and its "again" tail (regexes).
# A recall word right before a demonstrative (刚才那个奖学金): the pointer says "the one
# from before"; once the name is written for it, the recall word goes with it (a regex
# that ends where the demonstrative starts).
RECALL_BEFORE_POINTER = [r"(?:刚才|刚刚|之前|前面|上面)(?:说|问|提到|讲)?(?:过)?的?"]
RECALL = [r"把?(?:刚才|之前|前面|上面)(?:讲|说|问|提到|发)?(?:过)?的?(?:那[条段篇个](?!月))?"]
AGAIN_TAIL = [r"的?那(?:条|段|篇|些|个)?\s*再(?:给我)?(?:发|看|说|讲)(?:给)?我?(?:一下|一遍|一次|看看)?",
              r"再(?:给我)?发(?:给)?我?一下"]
# Units after a number that make it a quantity, not a release (3.5元, 2.5倍; regexes).
QUANTITY_UNITS = ["元", "块", "%", "倍", "万", "亿", "个", "天", "年", "月", "分", "米"]
# What stands between an attribute and the value a turn gives for it (地址在…, 导演是…;
# regex alternatives, longer first).
VALUE_LEADS = ["是在", "在", "是", "为", "：", ":"]
# What may stand between such a word and a name that is the whole value (regexes): 是《X》.
VALUE_NAME_GAPS = [r"\s*[《“\"「【(（]?"]
# Words between two names listed side by side (A和B, A还是B; regex alternatives).
LISTED_TOGETHER = ["和", "与", "跟", "及", "以及", "还是", "或", "或者", "、", ",", "，"]

# -- linking (understanding.linker) and context fit (understanding.fit) -----------------------------------------

# Words between two names of one list (regex alternatives).
COORDINATION = ["和", "与", "跟", "及", "以及", "还有", "还是", "或", "或者", "、", ",", "，"]
# Words that say nothing about which candidate is meant (regex alternatives).
FIT_STOP_WORDS = ["什么", "怎么", "怎样", "多少", "哪些", "哪个", "哪里", "请问", "一下", "这个", "那个",
                  "是不是", "可以", "能不能"]
FIT_STOP_CHARS = "的了吗呢吧啊是在和与及或"

# -- retrieval (retrieval.search) ---------------------------------------------------------

# Characters that carry no topic: question words, particles, pronouns. A query
# bigram made only of these does not count towards coverage.
FUNCTION_CHARS = "的了吗呢吧啊呀么是什怎多少哪几谁请问我你他她它们这那个有在和与及或也都就还要会能可以吗嘛哦嗯"

# -- topic phrases (common.language.phrases) ----------------------------------------------

# What ends a topic phrase besides the stop words and the function characters: talk about
# the talk (有意思, 详细说说) and light verbs, never what a turn is about.
TOPIC_BREAKS = ["有意思", "好的", "谢谢", "请问", "一下", "告诉我", "说说", "讲讲", "详细", "具体",
                "介绍", "知道", "想问", "想要", "想", "需要", "应该", "觉得", "是不是", "能不能",
                "可不可以", "有没有", "为什么", "怎么样", "怎么", "什么", "哪些", "哪个", "哪里",
                "多少", "如何", "这个", "那个", "这些", "那些", "它们", "他们", "她们", "我们",
                "你们", "其他", "还有", "那么", "一些", "有点", "比较", "非常", "真的"]
TOPIC_BREAK_ENDINGS: list[str] = []
TOPIC_JOINERS: list[str] = []

# -- clarification (dialogue.clarify) -----------------------------------------------------

# The answer "both" / "neither" to a clarification (regex alternatives).
BOTH = ["都要", "两个都", "都需要", "都问", "全部", "都可以"]
NEITHER = ["都不是", "都不", "两个都不"]
# What may follow a bare option number ("2号").
OPTION_NUMBER_MARKS = "。号"
# An answer that picks the newer or the older of editions offered (新的那个, 旧版; regexes).
NEWER_CHOICE = ["新的", "新版", "最新", "新一点", "后来的"]
OLDER_CHOICE = ["旧的", "旧版", "老的", "老版", "以前的", "之前的", "原来的"]

# -- rewriting (dialogue.rewrite, dialogue.slots) and validation (dialogue.validate) ------

# One query per entity: A和B分别怎么申请 (regex alternatives).
SEPARATELY = ["分别", "各自", "各是"]
# A joining word left at the front of the question after the last name.
LEADING_JOINERS = ["的", "和", "与", "及"]
# "和华北区比", "跟去年相比", "与个人版对比", "比华南区高": the compared-with target as ``x``.
COMPARISONS = [r"(?:和|跟|与|同|相对于|相较于)(?P<x>[^，,。？?！!]{1,24}?)"
               r"(?:相比|比较|对比|比起来|比)",
               r"(?<![对相])比(?P<x>[^，,。？?！!]{1,16}?)(?:高|低|多|少|好|差|大|小|快|慢|贵|便宜|强|弱)"]
# A condition said before the question (要是已经理赔过一次呢，还退钱吗): what it names is
# a circumstance of the question about the entity in focus, not a new subject; the
# condition as ``x``, up to the comma that ends it (regexes).
CONDITIONS = [r"(?:要是|如果|假如|假设|万一|若是|倘若)(?P<x>[^，,。？?！!]{1,24})[，,]",
              # Who the asker is (我是年卡会员，能带朋友吗): a circumstance of the question
              # about the subject in focus, not a new subject. Not 我是说 / 我是想问 (a
              # correction) nor 我是问 (a question restated).
              r"(?:^|[，,。！!\s])我是(?![说想问指要])(?P<x>[^，,。？?！!]{1,12})[，,]",
              # Who is asked about, by what they travel in or hold (坐头等舱的人, 持年卡的客人):
              # the people, not what they hold, are the question's circumstance.
              r"(?:乘坐|坐|持有|持|买了|办了)(?P<x>[^，,。？?！!的]{1,10})的(?:人|乘客|旅客|会员|用户|客人)"]
# Right after a name, "too" (金卡也要付吗, 年卡还能多带吗; regexes): the question asked a
# moment ago, asked of that name as well; the subject talked about stays.
ADDITIVE_AFTER_NAME = [r"(?:也|还|都)(?=要|能|可以|得|需要|会|是|有|用|收|免)"]
# Something the subject goes with (跟国奖可以同时拿吗, 和优惠券能叠加吗): what it names is
# beside the subject in focus, not a new subject; as ``x`` (regexes).
JOINTS = [r"(?:和|跟|与|同)(?P<x>[^，,。？?！!]{1,24}?)(?:可以|能|能否|可否|是否|还能|也能)?"
          r"(?:同时|一起|一块|兼得|叠加|同享|共用|通用)"]
# Question words a rewrite must keep, in groups of synonyms (the English ones join them).
INTENT_GROUPS = [["为什么", "为何"], ["怎么", "如何"], ["多少", "几"], ["哪些", "哪个", "哪"], ["谁"],
                 ["什么时候", "何时"], []]

# -- the sides a turn names, what it corrects, which edition (dialogue/policy/sides.py) ----

# Words that join the sides a turn names together (北校区和南校区的图书馆, 2023版和2024版).
SIDE_JOINERS = ["以及", "还是", "和", "与", "跟", "及", "或", "同", "、"]
# What may stand between the last side and the name the sides qualify (北校区和南校区的图书馆).
SIDE_LINKS = ["的"]
# What a correction says was wrong, as ``x`` (regexes): 不是北校区，是南校区; 不是北校区啦，南校区
# (at the start); 南校区，不是北校区 / 是南校区不是北校区 (at the end, never 是不是). Only the
# first form is a correction by itself; the others are when ``x`` names something
# (dialogue.classify).
CORRECTED = [r"不是(?P<x>[^，,。？?！!]{1,20}?)[，,、\s]*(?:而)?是",
             r"^\s*(?:(?:不好意思|抱歉|对不起|哦|噢|呃|嗯)[，,。！!\s]*)?不是(?!说|吗|要|有)"
             r"(?P<x>[^，,。？?！!吗呢吧]{1,20}?)[啦呀哦嘛]*[，,、\s]+",
             r"(?<!是)不是(?P<x>[^，,。？?！!吗呢吧]{1,20}?)[啦呀哦嘛]*[。!！]?\s*$"]
# An edition before / after the one talked about (老版本呢, 新版改了什么).
OLDER_EDITION = ["上一版", "上个版本", "之前的版本", "以前的版本", "前一版", "旧版", "老版"]
NEWER_EDITION = ["最新版", "新版", "下一版", "新的版本"]
# What follows a year or a version number said as an edition (2026年, 2023版, 7.0版).
EDITION_MARKS = ["年", "版"]

# -- what the dialogue writes -------------------------------------------------------------

# Names joined in a query.
JOINER = "和"
# A name written for a possessive pronoun (none in Chinese).
POSSESSIVE = "{name}"
# A query that keeps the compared-with entities of the conversation.
COMPARED_WITH = "（与{names}相比）"
# The clarification question: the ask (with or without the mention), then the options.
CLARIFY_ASK_MENTION = "您说的“{mention}”指的是哪一个？"
CLARIFY_ASK = "您问的是哪一个？"
CLARIFY_OPTION = "{number}. {name}"
CLARIFY_DESCRIPTION = "（{description}）"
CLARIFY_SEPARATOR = "；"
