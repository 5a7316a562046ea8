"""The language room: every cue vocabulary in one module per language, compiled once."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from common.language import cues, en, zh
from common.language.cues import time_expressions, wording

ROOT = Path(__file__).resolve().parents[3]
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")

# Modules outside the room that may hold Chinese text, and why: neither is a cue
# vocabulary read from the user's words.
ALLOWED_CHINESE = {
    "dialogue/prompts.py": "the LLM rewriter's prompt quotes examples of what to keep",
    "analytics/clarifications.py": "the analytics report's reasons, written in both languages",
}


def _names(module) -> set[str]:
    return {n for n in vars(module) if n.isupper()}


def test_every_language_defines_the_same_vocabularies():
    """A language module missing a vocabulary would silently drop that cue for it."""
    assert _names(zh) == _names(en)
    for name in _names(zh) - {"WORD_BOUNDARIES"}:
        assert type(getattr(zh, name)) is type(getattr(en, name)), name
    assert set(cues.LANGUAGES) == {"zh", "en"}


def _string_constants(tree: ast.AST):
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)):
            docstrings.add(id(body[0].value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node


@pytest.mark.parametrize("package", ["kg", "retrieval", "dialogue", "evaluation", "analytics", "common"])
def test_no_chinese_vocabulary_outside_the_language_room(package):
    """Chinese words in code (not docstrings or comments) belong in common/language/zh.py.
    A single character is a script range bound (\\u4e00 <= c), not a word."""
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("common/language/") or rel in ALLOWED_CHINESE:
            continue
        for node in _string_constants(ast.parse(path.read_text(encoding="utf-8"))):
            if len(node.value) > 1 and CJK.search(node.value):
                found.append(f"{rel}:{node.lineno}: {node.value[:40]!r}")
    assert found == []


def _english_cue_words() -> set[str]:
    words: set[str] = set()
    for name in ("PRONOUNS", "ORDINALS", "NEGATIONS", "ELLIPSIS_LEADS", "SWITCH", "CORRECTION_ANYWHERE",
                 "REVISIT_BACK", "REVISIT_AGAIN", "BOTH", "NEITHER", "SEPARATELY", "COMPARISONS"):
        for entry in getattr(en, name):
            words.update(re.findall(r"[a-z]{4,}", entry.replace("\\b", " ").lower()))
    return words


@pytest.mark.parametrize("package", ["kg", "retrieval", "dialogue", "evaluation", "analytics"])
def test_no_english_cue_pattern_outside_the_language_room(package):
    """A regular expression naming an English cue word (respectively, neither, what about)
    belongs in common/language/en.py."""
    cue_words = _english_cue_words()
    assert {"respectively", "neither", "about", "latter"} <= cue_words
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for node in _string_constants(ast.parse(path.read_text(encoding="utf-8"))):
            text = node.value
            if ("\\b" in text or "(?:" in text or "|" in text) and set(
                    re.findall(r"[a-z]{4,}", text.replace("\\b", " ").lower())) & cue_words:
                found.append(f"{rel}:{node.lineno}: {text[:60]!r}")
    assert found == []


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return out


# What retrieval may use of kg and understanding: the ontology itself (alias tables),
# tagging chunks with entities and linking the aliases found in them, never text utilities.
RETRIEVAL_MAY_IMPORT = {"kg.aliases", "understanding.tagging", "understanding.linker"}


def test_retrieval_takes_text_utilities_from_the_language_room_not_kg():
    used = {}
    for path in sorted((ROOT / "retrieval").glob("*.py")):
        for module in _imports(path):
            if module.split(".")[0] in {"kg", "understanding"}:
                used.setdefault(module, []).append(path.name)
    assert set(used) <= RETRIEVAL_MAY_IMPORT, used
    assert "kg.normalize" not in used and "understanding.mentions" not in used


def test_the_language_room_imports_only_below_it():
    for path in sorted((ROOT / "common" / "language").glob("*.py")):
        for module in _imports(path):
            assert module.split(".")[0] not in {"kg", "understanding", "retrieval", "dialogue", "evaluation",
                                                "analytics", "devservices", "api"}, (path.name, module)


@pytest.mark.parametrize("text, pronouns", [
    ("它们的保修期多久", ["它们"]),
    ("How long is its warranty and what about those?", ["its", "those"]),
    ("那么这个产品怎么申请", ["这个产品"]),  # 那么 is not a pronoun
])
def test_pronoun_patterns_of_each_language(text, pronouns):
    blocked = [(m.start(), m.end()) for m in cues.NOT_PRONOUN_RE.finditer(text)]
    found = [m.group(0) for regex in cues.PRONOUN_RES for m in regex.finditer(text)
             if not any(m.start() < e and s < m.end() for s, e in blocked)]
    assert found == pronouns


def test_ordinals_negations_and_times():
    (zh_re, zh_table), (en_re, en_table) = cues.ORDINAL_RES
    assert zh_table[zh_re.search("我要后者").group(0)] == -1
    assert en_table[en_re.search("The Latter please").group(0).lower()] == -1
    assert [m.group(0) for r in cues.NEGATION_RES for m in r.finditer("不能退 and I can't, not now")] \
        == ["不能", "n't", "not"]
    assert time_expressions("2024年7月的报告和去年 last year 的") == ["2024年7月", "去年", "last year"]


@pytest.mark.parametrize("text, switch, correction, revisit", [
    ("换个话题，年假几天", True, False, None),
    ("by the way, how many days of leave?", True, False, None),
    ("不对，我问的是华北区", False, True, None),
    ("No, I meant the north", False, True, None),
    ("回到刚才那个产品", False, False, "back"),
    ("show me that again", False, False, "again"),
    ("年假有几天", False, False, None),
])
def test_conversation_cues(text, switch, correction, revisit):
    assert bool(cues.SWITCH_RE.search(text)) is switch
    assert bool(cues.CORRECTION_RE.search(text)) is correction
    got = "back" if cues.REVISIT_BACK_RE.search(text) else "again" if cues.REVISIT_AGAIN_RE.search(text) else None
    assert got == revisit


def test_leading_cues_are_stripped_in_either_language():
    assert cues.LEADING_CUE_RE.sub("", "换个话题，退货政策是什么", count=1) == "退货政策是什么"
    assert cues.LEADING_CUE_RE.sub("", "let's go back to the premium plan", count=1) == "the premium plan"
    assert cues.CORRECTION_STRIP_RE.sub(" ", "不对，我问的是华北区").strip() == "华北区"


def test_clarification_answers_and_the_question_wording():
    assert cues.BOTH_RE.search("两个都要") and cues.BOTH_RE.search("Both, please")
    assert cues.NEITHER_RE.search("都不是") and cues.NEITHER_RE.search("none of them")
    assert cues.OPTION_NUMBER_RE.fullmatch("2号").group(1) == "2"
    assert cues.OPTION_NUMBER_RE.fullmatch("2 apples") is None
    assert wording("zh").clarify_ask_mention.format(mention="A产品") == "您说的“A产品”指的是哪一个？"
    assert wording("en").join(["A", "B"]) == "A and B" and wording("zh").join(["A", "B"]) == "A和B"
    assert wording("fr") == wording("en")


def test_intent_groups_pair_the_languages_question_words():
    how = next(g for g in cues.INTENT_GROUPS if "how" in g)
    assert {"怎么", "如何"} <= how
    assert len(cues.INTENT_GROUPS) == len(zh.INTENT_GROUPS) == len(en.INTENT_GROUPS)


def test_stop_words_by_script():
    assert "the" in cues.STOP_WORDS and "什么" not in cues.STOP_WORDS
    assert cues.STOP_WORDS_RE.split("什么产品") == ["", "产品"]
    assert "的" in cues.STOP_CHARS and "的" in cues.FUNCTION_CHARS
