"""Editions of one thing told apart by the year or version number in their names, and the
one in force now (dialogue/policy/versions.py)."""

from __future__ import annotations

import json
from datetime import date

from dialogue.policy.versions import (CURRENT_REASON, current_edition, edition, relative_edition,
                                      settle_by_current, settle_by_relative_word)
from kg.aliases import AliasSnapshot
from understanding.linker import EntityLinker
from understanding.mentions import detect_mentions
from kg.ontology import parse_ontology


def entity(eid: str, name: str, aliases: list[str]) -> dict:
    return {"kind": "entity", "id": eid, "name": name, "type": "Doc", "aliases": aliases,
            "description": "", "parent": None, "attributes": {}}


ONTOLOGY = [
    {"kind": "type", "name": "Doc", "attributes": [], "parent": None},
    entity("fee.2024", "个人业务收费标准（2024版）", ["收费标准", "fee schedule"]),
    entity("fee.2025", "个人业务收费标准（2025版）", ["收费标准", "fee schedule"]),
    entity("fee.2099", "个人业务收费标准（2099版）", ["收费标准", "fee schedule"]),
    entity("app.6", "手机银行 6.5", ["手机银行", "the app"]),
    entity("app.7", "手机银行 7.0", ["手机银行", "the app"]),
    entity("card.gold", "畅行卡金卡", ["畅行卡"]),
    entity("card.plat", "畅行卡白金卡", ["畅行卡"]),
]
TODAY = date(2026, 6, 1)


def snapshot() -> AliasSnapshot:
    ontology = parse_ontology([json.dumps(line, ensure_ascii=False) for line in ONTOLOGY])
    return AliasSnapshot.from_ontology("t", 1, ontology)


def test_a_name_with_one_year_or_version_number_is_an_edition():
    assert edition("个人业务收费标准（2024版）") == ("个人业务收费标准（#版）", (2024,), True)
    assert edition("手机银行 6.5") == ("手机银行 #", (6, 5), False)
    assert edition("Mobile app v2") == ("Mobile app #", (2,), False)
    # No number, or two of them: not an edition of anything.
    assert edition("畅行卡白金卡") is None
    assert edition("2024年至2025年收费标准") is None
    # A number inside a longer one is no year.
    assert edition("电话95528") is None


def test_the_edition_in_force_is_the_latest_not_after_this_year():
    snap = snapshot()
    assert current_edition(["fee.2024", "fee.2025", "fee.2099"], snap, today=TODAY) == "fee.2025"
    assert current_edition(["fee.2024", "fee.2025"], snap, today=date(2024, 12, 31)) == "fee.2024"
    assert current_edition(["app.6", "app.7"], snap, today=TODAY) == "app.7"
    # Different things (cards of one series) are no editions: the decision is left alone.
    assert current_edition(["card.gold", "card.plat"], snap, today=TODAY) is None
    # Editions of different things are not compared.
    assert current_edition(["fee.2024", "app.7"], snap, today=TODAY) is None


def links_of(text: str, snap: AliasSnapshot):
    return EntityLinker().link(detect_mentions(text, snap), snap, focus=[], listed=[], alternates=[])


def test_a_word_for_now_settles_an_ambiguous_edition_in_either_language():
    snap = snapshot()
    for text in ("现在的收费标准是什么", "目前用的收费标准", "what is the current fee schedule",
                 "is the latest fee schedule out"):
        links = links_of(text, snap)
        assert links.ambiguous, text
        settled = settle_by_current(links, text, snap, today=TODAY)
        assert settled.resolved == ("fee.2025",), text
        assert settled.links[0].reason == CURRENT_REASON


def test_without_a_word_for_now_or_between_other_things_nothing_changes():
    snap = snapshot()
    for text in ("收费标准是什么", "what is the fee schedule", "现在畅行卡年费多少"):
        links = links_of(text, snap)
        assert links.ambiguous, text
        assert settle_by_current(links, text, snap, today=TODAY) is links


def test_older_is_the_edition_before_the_one_in_force_and_newer_the_newest():
    snap = snapshot()
    ids = ["fee.2024", "fee.2025", "fee.2099"]
    assert relative_edition(ids, -1, snap, today=TODAY) == "fee.2024"
    # An announced edition (after this year) is the new one, not the one in force.
    assert relative_edition(ids, 1, snap, today=TODAY) == "fee.2099"
    assert relative_edition(["app.6", "app.7"], -1, snap, today=TODAY) == "app.6"
    # Nothing before the oldest in force; cards of one series are no editions.
    assert relative_edition(["fee.2024", "fee.2025"], -1, snap, today=date(2024, 6, 1)) is None
    assert relative_edition(["card.gold", "card.plat"], -1, snap, today=TODAY) is None


def test_a_word_for_older_or_newer_right_before_a_shared_name_settles_it():
    snap = snapshot()
    for text, want in (("旧版收费标准里转账怎么收费", "fee.2024"),
                       ("以前的收费标准是什么", "fee.2024"),
                       ("what did the older fee schedule say about transfers", "fee.2024"),
                       ("新版收费标准什么时候生效", "fee.2099"),
                       ("is the new fee schedule out", "fee.2099")):
        links = links_of(text, snap)
        assert links.ambiguous, text
        settled = settle_by_relative_word(links, text, snap, today=TODAY)
        assert settled.resolved == (want,), text
        assert "edition" in settled.links[0].reason


def test_a_word_for_older_elsewhere_in_the_turn_settles_nothing():
    snap = snapshot()
    for text in ("以前办过的业务看收费标准哪一条", "the fee schedule for older accounts",
                 "收费标准是什么", "旧的畅行卡年费多少"):
        links = links_of(text, snap)
        assert links.ambiguous, text
        assert settle_by_relative_word(links, text, snap, today=TODAY) is links
