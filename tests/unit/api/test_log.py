"""JSON log lines: the request context on every record, and no key or secret ever."""

from __future__ import annotations

import io
import json
import logging

import pytest

from api import log
from api.settings import Settings

KEY = "rk_" + "A1b2C3d4" * 5 + "xyz"


@pytest.fixture
def capture():
    """A logger writing through the JSON formatter (with two configured secrets) into a buffer."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(log.JsonFormatter(log.Redactor(["neo4j-secret-pw", 'to"ken\\x'])))
    handler.addFilter(log.ContextFilter())
    logger = logging.getLogger("test.referent.log")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    yield logger, buffer
    logger.removeHandler(handler)


def lines(buffer: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in buffer.getvalue().splitlines()]


def test_every_record_of_a_request_carries_its_context(capture):
    logger, buffer = capture
    context = log.RequestContext("req-1", "POST", "/v1/kbs/hr/sessions/s1/turns",
                                 route="/v1/kbs/{kb}/sessions/{session_id}/turns", kb="hr",
                                 session="s1", turn=3)
    token = log.bind(context)
    try:
        logger.info("turn %s done", 3, extra={"status": 200, "latency_ms": 12.5})
    finally:
        log.unbind(token)
    logger.info("outside a request")
    inside, outside = lines(buffer)
    assert inside["msg"] == "turn 3 done" and inside["level"] == "info"
    assert {k: inside[k] for k in ("request_id", "kb", "session", "turn", "route", "status",
                                   "latency_ms")} == {
        "request_id": "req-1", "kb": "hr", "session": "s1", "turn": 3,
        "route": "/v1/kbs/{kb}/sessions/{session_id}/turns", "status": 200, "latency_ms": 12.5}
    assert "request_id" not in outside
    assert inside["ts"].endswith("Z")


def test_keys_bearer_tokens_and_configured_secrets_are_masked_everywhere(capture):
    logger, buffer = capture
    logger.warning("header was Authorization: Bearer %s", "abc.def-ghi")
    logger.warning('quoted "Bearer %s" and "X-API-Key: %s"', "tok-in-quotes", "k-in-quotes")
    logger.warning("key %s in a message", KEY, extra={"detail": {"nested": [KEY]}})
    logger.warning("X-API-Key: %s", "some-opaque-value")
    logger.warning("connect failed for neo4j://neo4j:neo4j-secret-pw@db")
    logger.warning('token to"ken\\x leaked')
    try:
        raise RuntimeError(f"driver said {KEY}")
    except RuntimeError:
        logger.exception("boom")
    text = buffer.getvalue()
    for secret in ("abc.def-ghi", KEY, "some-opaque-value", "neo4j-secret-pw", "to\\\"ken",
                   "tok-in-quotes", "k-in-quotes"):
        assert secret not in text
    assert text.count(log.MASK) >= 9
    assert all(isinstance(line, dict) for line in lines(buffer))  # still one JSON object a line


def test_ordinary_words_are_not_masked():
    redact = log.Redactor(["abc"])  # too short to be masked without masking words
    assert redact("the abc of rk_ keys and bearer") == "the abc of rk_ keys and bearer"


def test_text_format_escapes_line_breaks_a_caller_could_send():
    formatter = log.TextFormatter()
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "GET %s 404", ("/a\nFAKE line",),
                               None)
    record.kb = "x\r\ny"
    out = formatter.format(record)
    assert "\n" not in out and "\r" not in out
    assert "/a\\x0aFAKE line" in out and "kb=x\\x0d\\x0ay" in out


def test_configured_secrets_come_from_the_settings():
    settings = Settings(neo4j={"password": "pw-123456"}, llm={"api_key": "sk-llm-000"},
                        embed={"api_key": "sk-emb-000"}, rerank={"api_key": "sk-rr-0000"},
                        milvus={"token": "root:Milvus"})
    assert set(log.configured_secrets(settings)) == {"pw-123456", "sk-llm-000", "sk-emb-000",
                                                      "sk-rr-0000", "root:Milvus"}


def test_configure_logging_routes_every_logger_through_one_json_handler():
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    stream = io.StringIO()
    try:
        log.configure_logging(Settings(neo4j={"password": "pw-secret-1"}), stream)
        logging.getLogger("uvicorn.error").info("Started server process")
        logging.getLogger("uvicorn.access").info("127.0.0.1 GET /x?key=%s", KEY)
        logging.getLogger("neo4j").warning("auth failed with pw-secret-1")
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved[0]:
            root.addHandler(handler)
        root.setLevel(saved[1])
        logging.getLogger("uvicorn.access").disabled = False
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [r["logger"] for r in records] == ["uvicorn.error", "neo4j"]  # access lines are ours
    assert "pw-secret-1" not in stream.getvalue()
