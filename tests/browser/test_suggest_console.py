"""The suggestion screen of the admin console in a real headless Chromium, against a
real server, Neo4j and Milvus Lite: a kb with ingested documents and no ontology yet
is signed into, its suggestion reviewed (one entity rejected, one renamed, two merged),
checked by a dry run that writes nothing, imported, and a turn naming a suggested
ambiguous alias is asked back. Screens are saved under var/test/artifacts/admin-console/."""

from __future__ import annotations

import json
import uuid

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.browser.conftest import serve_kb
from tests.browser.test_admin_console import Page
from tests.conftest import ADMIN
from tests.services import ingest
from tests.unit.test_suggest import CORPUS

pytestmark = [pytest.mark.browser, pytest.mark.neo4j, pytest.mark.milvus]

REJECTED, RENAMED, NEW_NAME = "家财险", "青禾保险", "青禾财产保险"
# How long a click that asks the server (suggest, dry run, import) may take to be answered.
SERVER_WORK = 120


@pytest.fixture(scope="module")
def suggest_server(tmp_path_factory, neo4j_store):
    """A kb with the invented insurance corpus ingested and no ontology; yields (kb, server)."""
    kb = f"t_suggest_{uuid.uuid4().hex[:8]}"
    data_dir = tmp_path_factory.mktemp("suggest-server")
    ingest(data_dir, kb, [json.loads(x) for x in CORPUS])
    yield from serve_kb(kb, data_dir, neo4j_store)


@pytest.fixture
def page(browser, suggest_server, artifacts):
    kb, server = suggest_server
    return SuggestPage(browser, kb, server, artifacts)


class SuggestPage(Page):
    def rows(self) -> dict[str, dict]:
        """The screen's rows by name: id, decision, aliases, type, confidence, evidence."""
        return {r["name"]: r for r in self.driver.execute_script(
            "return Array.from(document.querySelectorAll('#suggest-rows tr[data-id]')).map(r => ({"
            " id: r.dataset.id, name: r.querySelector('input.rename').value,"
            " decision: r.querySelector('select.decision').value,"
            " aliases: Array.from(r.querySelectorAll('.chips li')).map(li => li.textContent),"
            " type: r.cells[4].innerText.trim(), confidence: r.cells[5].innerText.trim(),"
            " evidence: r.cells[6].innerText.trim()}))")}

    def row(self, name: str):
        entity_id = self.rows()[name]["id"]
        return self.find(f'#suggest-rows tr[data-id="{entity_id}"]')

    def answered(self, button: str) -> str:
        """Click ``button`` and wait until the screen has handled what it asked the server
        (the status line says something new and no suggestion is running); the status.

        A suggestion or an import is server work, and on a loaded machine the first
        suggestion of a server took 10 s of the 15 s a screen change is given: the
        wait is on the answer, bounded only by ``SERVER_WORK``. The status must differ
        from the one before the click."""
        before = self.find("#status").text
        self.find(button).click()
        self.wait(lambda d: self.find("#status").text != before
                  and self.find("#suggest-run").is_enabled(), SERVER_WORK)
        return self.find("#status").text

    def suggest(self) -> dict[str, dict]:
        status = self.answered("#suggest-run")
        assert "建议了" in status, status
        return self.rows()

    def held(self) -> dict[str, dict]:
        resp = self.server.client.get(f"{self.admin_url}/export", headers=ADMIN)
        if resp.status_code == 404:
            return {}
        assert resp.status_code == 200, resp.text
        return {e["name"]: e for e in map(json.loads, resp.text.splitlines()) if e["kind"] == "entity"}


def test_select_all_merge_and_a_bad_name_shown_by_line_and_field_with_nothing_written(page):
    # Runs first: it leaves the kb without an ontology for the next test.
    page.sign_in()
    rows = page.suggest()
    shared = page.driver.execute_script(
        "return Array.from(document.querySelectorAll('#suggest-rows li.shared')).map(li => li.textContent)")
    assert "安居家财险" in shared, "an alias two accepted entities share is marked"

    page.find("#suggest-all").click()
    page.find("#suggest-reject").click()
    page.text_in("#status", f"{len(rows)} 条已标为“拒绝”")
    assert {r["decision"] for r in page.rows().values()} == {"reject"}
    assert page.answered("#suggest-dry") == "没有已接受的实体。"

    page.find("#suggest-all").click()
    page.find("#suggest-accept").click()
    # Merge the two editions of the rate table into one entity: aliases united, one row left.
    for name in ("安居家财险费率表（2024版）", "安居家财险费率表（2025版）"):
        page.row(name).find_element(By.CSS_SELECTOR, "input[type=checkbox]").click()
    page.find("#suggest-merge").click()
    page.text_in("#status", "合并进")
    rows = page.rows()
    assert len([n for n in rows if n.startswith("安居家财险费率表")]) == 1
    kept = next(r for n, r in rows.items() if n.startswith("安居家财险费率表"))
    assert {"安居家财险费率表2024版", "安居家财险费率表2025版"} <= set(kept["aliases"])

    # A name pasted with a control character: the dry run names its line and field.
    field = page.row(RENAMED).find_element(By.CSS_SELECTOR, "input.rename")
    page.driver.execute_script("arguments[0].value = arguments[1];"
                               "arguments[0].dispatchEvent(new Event('change'))", field, "青禾\u0007保险")
    assert "失败" in page.answered("#suggest-dry")
    assert page.find("#suggest-errors").is_displayed()
    error = page.find("#suggest-errors").text
    assert "行" in error and "字段 name" in error and "青禾\u0007保险" in error, error
    assert page.focused_id() == "suggest-errors"
    assert not page.find("#suggest-import").is_enabled()
    page.shot("11-suggest-error")
    assert page.held() == {}


def test_suggest_review_import_then_a_turn_asks_on_a_suggested_ambiguous_alias(page):
    page.sign_in()
    # No ontology yet: the console opens on the suggestion screen instead of refusing the kb.
    page.text_in("#status", "还没有本体")
    assert page.find("#panel-suggest").is_displayed() and page.focused_id() == "suggest-run"
    rows = page.suggest()
    assert {REJECTED, RENAMED, "安居家财险（基础款）", "安居家财险（尊享款）"} <= set(rows)
    assert "青禾" in rows[RENAMED]["aliases"] and rows[RENAMED]["type"] == "Organization"
    basic = rows["安居家财险（基础款）"]
    assert "安居家财险" in basic["aliases"] and "home-basic#0" in basic["evidence"]
    assert 0 < float(basic["confidence"]) <= 1 and all(r["decision"] == "accept" for r in rows.values())
    page.shot("12-suggestions")

    page.row(REJECTED).find_element(By.CSS_SELECTOR, "input[type=checkbox]").click()
    page.find("#suggest-reject").click()
    page.text_in("#status", "1 条已标为“拒绝”")
    name = page.row(RENAMED).find_element(By.CSS_SELECTOR, "input.rename")
    name.clear()
    name.send_keys(NEW_NAME, Keys.TAB)
    page.text_in("#status", f"已把 {RENAMED} 改名为 {NEW_NAME}")
    rows = page.rows()
    assert rows[REJECTED]["decision"] == "reject"
    assert NEW_NAME in rows and RENAMED in rows[NEW_NAME]["aliases"]

    assert not page.find("#suggest-import").is_enabled(), "the import waits for a dry run"
    assert "试导入通过" in page.answered("#suggest-dry")
    assert "试导入通过" in page.find("#suggest-report").text
    assert page.held() == {}, "a dry run writes nothing"
    page.shot("13-dry-run")
    assert "已导入" in page.answered("#suggest-import")
    held = page.held()
    assert REJECTED not in held and RENAMED not in held
    assert RENAMED in held[NEW_NAME]["aliases"] and "青禾" in held[NEW_NAME]["aliases"]
    assert {"安居家财险（基础款）", "安居家财险（尊享款）"} <= set(held)
    page.shot("14-imported")

    turn = page.turn(f"s-{uuid.uuid4().hex[:8]}", "安居家财险的保费是多少")
    assert turn["action"] == "clarify", turn
    assert {"安居家财险（基础款）", "安居家财险（尊享款）"} <= {
        o["name"] for o in turn["clarification"]["options"]}
    assert page.errors() == []
