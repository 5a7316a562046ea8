"""Word lists the ontology suggestion (kg/suggest/) reads: what a document's kind, an organisation's
head word or a date looks like, in Chinese and English.

They describe the languages, not any one corpus: a title word such as 使用说明 or
FAQ says what kind of document it is, never what the document is about.
"""

from __future__ import annotations

import re

# The kind of document a title names after its subject (longest first when matched).
GENRE_SUFFIXES = (
    "资费及服务说明", "产品说明", "业务说明", "服务说明",
    "使用说明", "功能说明", "更新说明", "资费说明", "办理说明", "购买说明", "说明书", "说明",
    "使用指南", "业务指南", "服务指南", "办理指南", "就医指南", "值机指南", "选购指南", "指南",
    "常见问题汇总", "常见问题", "问答", "简介", "介绍", "概述", "须知", "管理规定", "管理办法",
    "实施细则", "服务信息", "服务", "公告", "通知", "新闻", "简报", "点评", "月报", "周报",
    "年报", "宣传页", "手册说明", "营业安排", "安排", "对比", "申请流程", "价格", "保险条款", "条款",
    " FAQ", " Terms", " terms", " Guide", " Manual", " Overview", " Notice", " Summary", " summary", " guide",
)
# Lead words of a title that are not part of its subject (关于X → X).
TITLE_LEADS = ("关于",)
# Words that make a title a statement about several things, not a name.
NOT_A_NAME_RE = re.compile(r"[与、,，;；:：?？!！。]|\bvs\b|以及|或者")
# Endings a name does not have (调整收费标准的 is the start of a clause).
NOT_NAME_ENDINGS = ("的", "了", "在", "和", "与", "及", "或")
# Head words of an organisation's name.
ORG_HEADS = ("银行", "集团", "公司", "通信", "航空", "医院", "保险", "电信", "大学", "学院",
             "Bank", "Group", "Inc", "Ltd", "Airlines", "Telecom", "Company")
# A bracketed qualifier: （个人版） (English) [2024].
BRACKET_RE = re.compile(r"[（(\[【]([^（）()\[\]【】]{1,20})[）)\]】]")
# A qualifier that dates or describes a document rather than telling things apart.
REVISION_RE = re.compile(r"\d{4}年\d{1,2}月(?:\d{1,2}日)?|修订|更新|English|英文|中文|Chinese")
# A year or version inside a name: 2024, 2024版, 2025年版, 7.0版, v2.
EDITION_RE = re.compile(
    r"(?<![0-9.])(?:(?:19|20)\d{2}年?版?|\d+(?:\.\d+)+版?|[vV]\d+)(?![0-9])")
# Dates and periods inside a title (华东区2025年5月销售月报 → 华东区).
DATE_RE = re.compile(
    r"(?:19|20)\d{2}年(?:\d{1,2}月(?:\d{1,2}日)?|第[一二三四1-4]季度)?|\d{1,2}月(?:\d{1,2}日)?"
    r"|第[一二三四1-4]季度|(?:January|February|March|April|May|June|July|August|September|"
    r"October|November|December)\s+(?:19|20)\d{2}|(?:19|20)\d{2}")
# Words that open a phrase after a name but are not what is said about it.
NOT_ATTRIBUTE_STARTS = ("是", "为", "的", "在", "和", "与", "及", "或", "由", "对", "将", "于", "也",
                        "已", "可", "需", "不", "都", "均", "还", "并", "等", "每", "从", "自", "同",
                        "向", "按", "如", "中", "上", "下", "内", "时", "后", "前", "用", "以")
NOT_ATTRIBUTES = frozenset({
    "位于", "面向", "提供", "支持", "包括", "包含", "适用", "可以", "需要", "用户", "客户", "服务",
    "办理", "申请", "使用", "相关", "业务", "产品", "问题", "说明", "规定", "情况", "方面", "一般",
    "目前", "同时", "主要", "如果", "已经", "没有", "全部", "其他", "所有", "每月", "每年", "每天"})
# Characters that end the phrase following a name.
PHRASE_END_RE = re.compile(r"[^\u4e00-\u9fff]|[是为的在和与及或可需不都均还并等每按]")
# A Latin name right before a bracketed Chinese one: Paid annual leave (年假).
LATIN_BEFORE_CJK_RE = re.compile(
    r"((?:[A-Z][\w'-]*|[a-z][\w'-]*)(?:[ -](?:[A-Za-z][\w'-]*|\d+[A-Za-z]*)){0,5})\s*[（(]"
    r"([\u4e00-\u9fff][^（）()]{0,20})[）)]")
# A Chinese name right before a bracketed Latin one: 意外险（accident insurance）.
CJK_BEFORE_LATIN_RE = re.compile(
    r"([\u4e00-\u9fffA-Za-z0-9]{2,20})[（(]([A-Za-z][A-Za-z0-9 '&.-]{1,60})[）)]")
# Another Chinese name in brackets after a name: 晴川App关怀版（大字版）.
CJK_BRACKETED_NAME_RE = re.compile(r"[（(]([\u4e00-\u9fff][\u4e00-\u9fffA-Za-z]{1,5})[）)]")
# First characters of a bracketed note that says something, not another name (（含宽带）, （仅限新用户）).
BRACKET_NOTE_STARTS = frozenset("含仅即包除限另非请见注约共")
# English words a bracketed Latin text must not start with to count as a name.
LATIN_STOP = frozenset({"the", "a", "an", "of", "for", "and", "or", "to", "in", "on", "is", "are",
                        "what", "how", "which", "when", "why", "do", "does", "can", "my", "your",
                        "i", "we", "you", "it", "this", "that", "q", "a:", "q:"})


# The rules' own marks, in the languages they read.
# Particles a short form never starts or ends with.
EDGE_WORDS = "的和与及或是在为之"
# Characters that may follow a name where it ends (青岚的…, 青岚在…), not more of a name.
AFTER_NAME = frozenset("的之是在为和与及或也都已将把对向从于自等")
# Particles between a name and the attribute said after it.
LINKING_PARTICLES = "的之"
# A figure a passage states about a name: a number and its unit.
FIGURE_RE = re.compile(r"\d[\d,.]*\s*(?:%|元|天|年|月|个|GB|M|小时|分钟|公里|件|公斤|万元|万)?")
# The label of a listed item at a line's or sentence's start: "万兆宽带：", "2. 北门营业厅停车:".
ITEM_LABEL_RE = re.compile(
    r"(?:^|(?<=[。；;！？!?]))[ \t]*(?:[-•*·][ \t]*|\d{1,2}[.、)）][ \t]*)?"
    r"([\u4e00-\u9fffA-Za-z0-9][\u4e00-\u9fffA-Za-z0-9（）()]{1,15})[：:]", re.M)
# Words of a clause, never of a name (以下情况不能办理…: what a list is about, not a thing).
CLAUSE_RE = re.compile(r"以下|以上|不能|不可|无法|可以|如何|怎么|是否|除外|为准|what|how|which", re.I)
# What a number before a colon is, rather than an item's name: 14:, 2.0版:, 2025年5月:.
NOT_A_LABEL_RE = re.compile(r"[\d.]+|\d.*[版年月日号]")
# A figure with its unit or currency: what a passage states of a thing (25元/天, 1GB, ¥30).
PRICE_RE = re.compile(r"\d[\d,.]*\s*(?:元|万元|%|GB|MB|G|M|分钟|小时|天|公斤|kg|公里|km|张|次|项)|[¥$€£]\s?\d")
# The separators of a list of attributes in a title's tail.
ATTRIBUTE_LIST_SPLIT_RE = re.compile(r"[与和及、]")
# "from <date> on": when a newer edition takes effect.
SINCE_RE = re.compile(r"自?((?:19|20)\d{2}年\d{1,2}月\d{1,2}日)(?:（含）)?起")
# The attribute an edition's start date is kept under.
VALID_FROM = "生效日期"
# The attribute listing the editions of the documents about one thing.
EDITIONS = "版本"
# A one- or two-character variant word before the edition mark at a name's end.
VARIANT_TAIL_RE = re.compile(r"[\u4e00-\u9fff]{1,2}版$")
# A dotted version at a name's end (App 6.0版, v2.1).
DOTTED_VERSION_TAIL_RE = re.compile(r"\s*(?:[vV])?(\d+(?:\.\d+)+)版?$")
# An edition's canonical name from its stem and its year or version.
EDITION_NAME = "{stem}（{edition}版）"
DOTTED_EDITION_NAME = "{stem} {edition}版"
# A head-word type narrowed to one organisation's members: 金卡（松涛）.
OWNED_TYPE_NAME = "{head}（{owner}）"
# How users run an edition into a shared short form.
EDITION_ALIAS_FORMS = ("{ed}版{alias}", "{alias}{ed}版", "{ed}年版{alias}", "{alias}{ed}")
# How a passage defines a name (X是……的消费贷款, "X is a family plan"): the words right after
# the name, as index keys (a passage holding name + key may define it) and as a pattern.
DEFINITION_KEYS = ("是", " is ")
DEFINITION_COPULA = r"\s*(?:是(?![否不])|\s+is\s+(?:an?|the)\s+)"
# Where an English definition's noun phrase ends (a deposit that pays…, a plan for…).
DEFINITION_TAIL_RE = re.compile(
    r"\s+(?:that|which|who|with|for|of|from|by|offered|in|at|to|and)\b", re.IGNORECASE)

# An FAQ's question (问：… ？, Q: …?): its subject, the words before what it asks, is
# what the FAQ is about.
FAQ_QUESTION_RE = re.compile(r"(?:^|[\s。！？!?])(?:问|Q)\s*[：:]\s*([^？?\n]{2,40})[？?]")
# Words that end a question's subject: question words, modal verbs, particles (积点转赠|怎么).
QUESTION_SUBJECT_ENDS = frozenset({
    "怎么", "怎样", "如何", "为什么", "可以", "可否", "能否", "能", "会", "要", "需要", "多少", "什么",
    "哪", "哪些", "哪个", "哪里", "几", "是否", "有没有", "有", "是", "的", "现在", "还", "和", "与",
    "或", "在", "去", "了", "吗", "呢", "不", "没", "都", "也", "就", "多久", "多长",
})
