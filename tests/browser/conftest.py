"""Browser tests: headless Debian Chromium driven by Selenium through the system
chromedriver (given by path, so Selenium Manager never downloads anything),
against a real `uvicorn` server on a free port with the real Neo4j.

Chromium missing fails these tests with what to install, unless
REFERENT_SKIP_BROWSER_TESTS=1 opts out (never set in CI). Screenshots go to
``var/test/artifacts/admin-console/`` (REFERENT_TEST_ARTIFACTS overrides)."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import pytest

from tests.conftest import DEMO, REPO
from tests.services import ApiServer, ingest

OPT_OUT = "REFERENT_SKIP_BROWSER_TESTS"


def _browser_paths() -> tuple[str, str]:
    chromium = os.environ.get("REFERENT_CHROMIUM") or shutil.which("chromium") \
        or shutil.which("chromium-browser")
    driver = os.environ.get("REFERENT_CHROMEDRIVER") or shutil.which("chromedriver")
    if chromium and driver:
        return chromium, driver
    missing = [name for name, path in (("chromium", chromium), ("chromedriver", driver)) if not path]
    message = (f"the browser tests need {' and '.join(missing)}: install the Debian packages "
               "`chromium chromium-driver` (scripts/test.sh does as root), or point "
               "REFERENT_CHROMIUM / REFERENT_CHROMEDRIVER at them")
    if os.environ.get(OPT_OUT) == "1":
        pytest.skip(f"{message} ({OPT_OUT}=1 opts out)")
    pytest.fail(f"{message}; set {OPT_OUT}=1 to opt out on a machine without them")


@pytest.fixture(scope="session")
def artifacts() -> Path:
    base = Path(os.environ.get("REFERENT_TEST_ARTIFACTS", REPO / "var" / "test" / "artifacts"))
    path = base / "admin-console"
    path.mkdir(parents=True, exist_ok=True)
    for old in path.glob("*.png"):
        old.unlink()
    return path


@pytest.fixture(scope="module")
def browser():
    chromium, driver_path = _browser_paths()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1400,1000", "--lang=zh-CN", "--no-first-run",
                "--disable-extensions", "--disable-background-networking",
                "--disable-component-update", "--disable-sync"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def console_server(tmp_path_factory, neo4j_store):
    """The demo kb (ontology in Neo4j, corpus in the server's own Milvus Lite file)
    and one API server process; yields (kb, server)."""
    kb = f"t_console_{uuid.uuid4().hex[:8]}"
    lines = (DEMO / "ontology.jsonl").read_text(encoding="utf-8").splitlines()
    neo4j_store.import_ontology(kb, lines)
    data_dir = tmp_path_factory.mktemp("console-server")
    ingest(data_dir, kb, DEMO / "corpus.jsonl")
    yield from serve_kb(kb, data_dir, neo4j_store)


def serve_kb(kb: str, data_dir: Path, neo4j_store):
    """One API server process on ``data_dir``; yields (kb, server), then stops it and
    deletes the kb from Neo4j."""
    server = ApiServer(data_dir)
    try:
        yield kb, server
    finally:
        server.stop()
        neo4j_store.delete_kb(kb)
