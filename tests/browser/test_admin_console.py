"""The admin console in a real headless Chromium, against a real server and Neo4j.

The tests share one browser and one kb, each starting from a freshly loaded
page: sign in, search by alias, a conflicting alias (warned, nothing saved until
confirmed), a valid alias that the next turn uses and its audit entry, confusable
pairs, clarification analytics, English and the keyboard. Each screen is saved
as a PNG under var/test/artifacts/admin-console/."""

from __future__ import annotations

import time
import uuid

import pytest
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.conftest import ADMIN, ADMIN_KEY, QUERY, QUERY_KEY

pytestmark = [pytest.mark.browser, pytest.mark.neo4j, pytest.mark.milvus]


# -- helpers -------------------------------------------------------------------------------

@pytest.fixture
def page(browser, console_server, artifacts):
    kb, server = console_server
    return Page(browser, kb, server, artifacts)


class Page:
    def __init__(self, driver, kb, server, artifacts) -> None:
        self.driver, self.kb, self.server, self.artifacts = driver, kb, server, artifacts
        self.admin_url = f"/v1/kbs/{kb}/admin"

    # browser
    def open(self) -> None:
        self.driver.get(f"{self.server.url}/admin")
        self.wait(lambda d: d.execute_script("return document.readyState") == "complete")

    def find(self, css: str):
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def wait(self, condition, timeout: float = 15):
        try:
            # A condition that reads an element the page just re-rendered is asked again.
            return WebDriverWait(self.driver, timeout,
                                 ignored_exceptions=[StaleElementReferenceException]).until(condition)
        except TimeoutException:
            self.shot("failed")
            raise

    def visible(self, css: str):
        return self.wait(ec.visibility_of_element_located((By.CSS_SELECTOR, css)))

    def text_in(self, css: str, text: str) -> None:
        self.wait(ec.text_to_be_present_in_element((By.CSS_SELECTOR, css), text))

    def type(self, css: str, text: str, enter: bool = False) -> None:
        field = self.visible(css)
        field.clear()
        field.send_keys(text + (Keys.ENTER if enter else ""))

    def focused_id(self) -> str:
        return self.driver.execute_script("return document.activeElement && document.activeElement.id")

    def shot(self, name: str) -> None:
        self.driver.save_screenshot(str(self.artifacts / f"{name}.png"))

    def errors(self) -> list[str]:
        """Script errors and policy violations the page logged (failed requests the
        page handles, such as the 409 of a conflicting alias, are expected)."""
        return [e["message"] for e in self.driver.get_log("browser")
                if e["level"] == "SEVERE" and "Failed to load resource" not in e["message"]]

    def sign_in(self) -> None:
        """Signed in, on a freshly loaded page, in Chinese (each test starts from here)."""
        self.open()
        self.driver.execute_script("localStorage.setItem('referent.console.lang', 'zh')")
        self.open()
        self.wait(lambda d: self.find("#app").is_displayed() or self.find("#login").is_displayed())
        if self.find("#app").is_displayed():
            return
        self.type("#login-kb", self.kb)
        self.type("#login-key", ADMIN_KEY, enter=True)
        self.visible("#app")

    def tab(self, name: str) -> None:
        self.find(f'#tabs button[data-tab="{name}"]').click()

    def search(self, query: str, mode: str = "fuzzy") -> None:
        self.tab("search")
        Select(self.find("#search-mode")).select_by_value(mode)
        self.type("#search-q", query, enter=True)
        self.wait(lambda d: d.execute_script(
            "const r = document.getElementById('results');"
            "return r.dataset.query === arguments[0] && !r.hasAttribute('aria-busy')", query))

    def hits(self) -> list[str]:
        return [b.get_attribute("data-id")
                for b in self.driver.find_elements(By.CSS_SELECTOR, "#results button")]

    def open_entity(self, query: str, entity_id: str) -> None:
        self.search(query)
        self.wait(lambda d: entity_id in self.hits())
        self.find(f'#results button[data-id="{entity_id}"]').click()
        self.wait(lambda d: entity_id in self.find("#entity-facts").text)

    # API
    def entity(self, entity_id: str) -> dict:
        resp = self.server.client.get(f"{self.admin_url}/entities/{entity_id}", headers=ADMIN)
        assert resp.status_code == 200, resp.text
        return resp.json()

    def turn(self, session: str, text: str) -> dict:
        resp = self.server.client.post(f"/v1/kbs/{self.kb}/sessions/{session}/turns",
                                       json={"text": text}, headers=QUERY)
        assert resp.status_code == 200, resp.text
        return resp.json()


# -- the console ---------------------------------------------------------------------------

def test_sign_in_refuses_a_query_key_and_keeps_the_admin_key_in_the_tab_only(page):
    page.open()
    # The interface follows the browser's language; these tests start in Chinese.
    page.driver.execute_script("sessionStorage.clear(); localStorage.clear();"
                               "localStorage.setItem('referent.console.lang', 'zh')")
    page.open()
    assert page.focused_id() == "login-key"
    page.text_in("#login-title", "管理员密钥")
    page.type("#login-kb", page.kb)
    page.type("#login-key", QUERY_KEY, enter=True)
    page.text_in("#login-error", "不是管理员密钥")
    page.shot("01-sign-in-refused")

    page.type("#login-key", ADMIN_KEY, enter=True)
    page.visible("#app")
    page.text_in("#kb-summary", page.kb)
    page.text_in("#kb-summary", "42 个实体")
    assert page.focused_id() == "search-q"
    assert page.find("#login-key").get_attribute("value") == ""
    stored = page.driver.execute_script("return [sessionStorage.getItem('referent.console.key'),"
                                        " document.cookie]")
    assert stored == [ADMIN_KEY, ""]
    assert ADMIN_KEY not in page.driver.execute_script(
        "return JSON.stringify(Object.assign({}, localStorage))")
    page.shot("02-signed-in")
    assert page.errors() == []


def test_search_by_any_alias_fuzzy_and_open_the_entity(page):
    page.sign_in()
    page.search("a产品")  # an alias shared by two entities, typed in lower case
    assert {"prod.a.personal", "prod.a.enterprise"} <= set(page.hits()[:2])
    assert page.find('#results button[data-id="prod.a.personal"] .badge').text == "多义"
    page.search("综合意外保线")  # a typo of 综合意外保险
    assert page.hits()[0] == "ins.accident.comprehensive"
    page.search("annual leave", mode="exact")
    assert page.hits() == ["hr.leave.annual"]

    page.open_entity("A产品个人", "prod.a.personal")
    assert page.focused_id() == "entity-title"
    assert page.find("#entity-title").text == "A产品（个人版）"
    facts = page.find("#entity-facts").text
    assert "Product" in facts and "prod.a" in facts
    aliases = page.find("#aliases").text
    assert "A产品个人版" in aliases and "A个人版" in aliases
    assert "PART_OF" in page.find("#relations").text
    assert "UPGRADE_OF" in page.find("#relations").text
    assert "prod.a.enterprise" in page.find("#confusables").text or \
        "A产品（企业版）" in page.find("#confusables").text
    page.shot("03-entity")
    assert page.errors() == []


def test_a_conflicting_alias_is_warned_about_and_not_saved_until_confirmed(page):
    page.sign_in()
    page.open_entity("华南", "region.south")
    page.type("#alias-input", "华东", enter=True)
    page.visible("#alias-warning")
    warning = page.find("#alias-warning-text").text
    assert "华东区" in warning and "region.east" in warning and "尚未保存" in warning
    assert page.focused_id() == "alias-warning"
    page.shot("04-conflict-warning")
    assert "华东" not in page.entity("region.south")["aliases"]

    page.find("#alias-cancel").click()
    page.wait(lambda d: not page.find("#alias-warning").is_displayed())
    page.text_in("#status", "未保存")
    assert "华东" not in page.entity("region.south")["aliases"]

    # Confirmed, it is saved as shared: a turn naming only 华东 now asks which one.
    page.type("#alias-input", "华东", enter=True)
    page.visible("#alias-warning")
    page.find("#alias-confirm").click()
    page.text_in("#status", "共享别名")
    assert "华东" in page.entity("region.south")["aliases"]
    assert page.turn(f"c-{uuid.uuid4().hex[:8]}", "华东的销售额是多少")["action"] == "clarify"

    # Removed again from the page.
    page.find('#aliases button[aria-label="删除别名 华东"]').click()
    page.text_in("#status", "已从 华南区 删除别名“华东”")
    assert "华东" not in page.entity("region.south")["aliases"]
    assert page.errors() == []


def test_a_valid_alias_is_saved_used_by_the_next_turn_and_audited(page):
    page.sign_in()
    assert "prod.a.personal" not in page.turn(f"v-{uuid.uuid4().hex[:8]}", "A个人款怎么申请")["entities"]
    page.open_entity("A个人版", "prod.a.personal")
    page.type("#alias-input", "A个人款", enter=True)
    page.text_in("#status", "已为 A产品（个人版） 添加别名“A个人款”")
    page.text_in("#aliases", "A个人款")
    assert not page.find("#alias-warning").is_displayed()
    assert page.focused_id() == "alias-input"
    page.shot("05-alias-added")
    assert "A个人款" in page.entity("prod.a.personal")["aliases"]

    turn = page.turn(f"v-{uuid.uuid4().hex[:8]}", "A个人款怎么申请")
    assert turn["action"] == "retrieve"
    assert turn["entities"] == ["prod.a.personal"]
    assert all("prod.a.personal" in e["entity_ids"] for e in turn["evidence"])

    # The audit log names who added it, and what changed.
    page.tab("audit")
    page.type("#audit-action", "alias.add")
    page.type("#audit-target", "prod.a.personal", enter=True)
    # Each filter field reloads the table: read the rows in one script, so that a reload
    # between finding a row and reading its cells cannot leave a stale element.
    rows_js = ("return Array.from(document.querySelectorAll('#audit-rows tr[data-seq]'))"
               ".map(r => Array.from(r.querySelectorAll('td')).map(c => c.innerText.trim()))")
    rows = page.wait(lambda d: [r for r in d.execute_script(rows_js)
                                if len(r) > 5 and "A个人款" in r[5]] or False)
    cells = rows[0]
    assert cells[2] == "test-admin" and cells[3] == "alias.add" and cells[4] == "prod.a.personal"
    assert '+"A个人款"' in cells[5]
    page.shot("06-audit")
    assert page.errors() == []


def test_mark_and_unmark_a_confusable_pair(page):
    page.sign_in()
    page.open_entity("华北", "region.north")
    page.type("#confusable-with", "region.east")
    page.type("#confusable-note", "都在北方", enter=True)
    page.text_in("#status", "已标记 region.north 与 region.east")
    page.text_in("#confusables", "都在北方")
    pairs = page.server.client.get(f"{page.admin_url}/confusables", headers=ADMIN).json()["pairs"]
    assert {"a": "region.east", "b": "region.north", "note": "都在北方"} in pairs or \
        {"a": "region.north", "b": "region.east", "note": "都在北方"} in pairs

    page.tab("confusables")
    page.text_in("#pairs", "都在北方")
    page.shot("07-confusables")
    page.find('#pairs button[aria-label="取消标记 region.north 与 region.east"]').click()
    page.text_in("#status", "已取消标记")
    page.wait(lambda d: "都在北方" not in page.find("#pairs").text)
    assert not page.entity("region.north")["confusables"] or all(
        c["with"] != "region.east" for c in page.entity("region.north")["confusables"])
    assert page.errors() == []


def test_clarification_analytics_suggest_pointing_a_dominant_alias(page):
    page.sign_in()
    answers = ["个人版"] * 5 + ["企业版", "年假有几天"]
    for answer in answers:
        session = f"a-{uuid.uuid4().hex[:8]}"
        assert page.turn(session, "A产品怎么申请")["action"] == "clarify"
        page.turn(session, answer)
    # Recorded in the background: wait until all seven questions are in Neo4j.
    deadline = time.monotonic() + 15
    while True:
        data = page.server.client.get(f"{page.admin_url}/clarifications", headers=ADMIN).json()
        group = next((g for g in data["groups"] if g["alias"] == "a产品"), None)
        if group and group["asked"] >= 7 and group["answers"]["new_question"] >= 1:
            break
        assert time.monotonic() < deadline, data
        time.sleep(0.2)
    assert group["chosen"] == {"prod.a.personal": 5, "prod.a.enterprise": 1}
    assert group["suggestion"]["action"] == "point_alias"
    assert group["suggestion"]["changes"] == [
        {"op": "remove_alias", "entity": "prod.a.enterprise", "alias": "A产品"}]

    page.tab("analytics")
    row = page.visible('#analytics-rows tr[data-alias="a产品"]')
    page.wait(lambda d: "修改别名指向" in row.text)
    text = row.text
    assert "A产品" in text and "A产品（个人版）：5" in text and "换了问题：1" in text
    assert "83%" in text and "从 A产品（企业版） 删除别名“A产品”" in text
    recent = page.find("#recent-rows").text
    assert "选择了 A产品（个人版）" in recent and "换了问题" in recent
    page.shot("08-analytics")

    page.find("#lang").click()  # the reasoning in English
    page.text_in('#analytics-rows tr[data-alias="a产品"]', "point the alias")
    page.text_in('#analytics-rows tr[data-alias="a产品"]', "5 of 6 answers (83%)")
    page.shot("09-analytics-english")
    assert page.errors() == []


def test_english_interface_and_keyboard_only_use(page):
    page.sign_in()
    page.find("#lang").click()
    page.text_in("#tabs", "Clarifications")
    assert page.driver.execute_script("return document.documentElement.lang") == "en"
    page.tab("audit")

    # Keyboard only: tab to the search tab, Enter, type, Enter; the focus ring shows.
    page.find('#tabs button[data-tab="search"]').send_keys(Keys.ENTER)
    page.wait(lambda d: page.focused_id() == "search-q")
    active = page.driver.switch_to.active_element
    active.send_keys("华南大区", Keys.ENTER)
    page.wait(lambda d: "region.south" in page.hits())
    active = page.driver.switch_to.active_element
    active.send_keys(Keys.TAB)  # the match select
    assert page.focused_id() == "search-mode"
    page.driver.switch_to.active_element.send_keys(Keys.TAB)
    assert page.focused_id() == "search-submit"
    outline = page.driver.execute_script(
        "return getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("", "none")
    page.driver.switch_to.active_element.send_keys(Keys.TAB)  # the first hit
    first = page.driver.switch_to.active_element
    assert first.get_attribute("data-id") == "region.south"
    first.send_keys(Keys.ENTER)
    page.wait(lambda d: page.focused_id() == "entity-title")
    page.text_in("#entity-facts", "SalesRegion")
    page.text_in("#aliases-title", "Aliases")
    page.shot("10-entity-english-keyboard")

    page.find("#signout").click()
    page.visible("#login")
    page.text_in("#login-title", "Sign in with an admin key")
    assert page.driver.execute_script("return sessionStorage.getItem('referent.console.key')") is None
    assert page.errors() == []
