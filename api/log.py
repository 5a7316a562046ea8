"""Structured logs: one JSON object per line, stdlib ``logging`` only.

Every record written while a request is served carries that request's id,
method and route, and the kb, session and turn ids once they are known
(:class:`RequestContext`, kept in a context variable that the request
middleware sets). The access line of each request adds the status and the
latency.

What never reaches a log line: request headers (so no ``Authorization`` or
``X-API-Key``), query strings, and the user's turn text unless
``REFERENT_LOG__INCLUDE_TEXT=true`` (by default a turn logs the text's length).
As a second guard the formatter masks anything shaped like an API key or a
bearer token, and the configured secrets (Neo4j password, Milvus token, LLM,
embedder and reranker keys), wherever they appear in a message or a traceback.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, TextIO

from api.settings import LogSettings, Settings

ACCESS_LOGGER = "referent.access"

#: The fields of a record's context, in the order they are written.
CONTEXT_FIELDS = ("request_id", "method", "route", "kb", "session", "turn")


@dataclass
class RequestContext:
    """What the logs say about the request being served.

    One mutable object per request: the middleware creates it, the routes fill
    in what they learn (kb, session, turn, action), and because a copied context
    still points at the same object, routes run in the thread pool fill in the
    same one the middleware reads for the access line.
    """

    request_id: str
    method: str
    path: str
    route: str | None = None
    kb: str | None = None
    session: str | None = None
    turn: int | None = None
    # Further fields for the access line (action, text_chars, ...).
    extra: dict[str, Any] = field(default_factory=dict)


_current: ContextVar[RequestContext | None] = ContextVar("referent_request", default=None)


def current() -> RequestContext | None:
    """The context of the request being served, or None outside a request."""
    return _current.get()


def bind(context: RequestContext):
    """Make ``context`` the current one; returns the token for :func:`unbind`."""
    return _current.set(context)


def unbind(token) -> None:
    _current.reset(token)


# An API key of ours (rk_ + 43 URL-safe characters), a bearer token, an X-API-Key header.
# A token ends at a quote or a backslash too: the lines are masked as JSON text.
_KEY_SHAPES = re.compile(r"\brk_[A-Za-z0-9_-]{8,}|(?i:bearer)\s+[^\s\"',;\\]+|"
                         r"(?i:x-api-key)[\"']?\s*[:=]\s*[\"']?[^\s\"',;\\]+")
MASK = "[redacted]"


class Redactor:
    """Masks key-shaped strings and the given secret values in text."""

    def __init__(self, secrets: list[str] | tuple[str, ...] = ()) -> None:
        # Short values (a 3-letter password) would mask ordinary words; they are
        # weak secrets anyway, and production refuses the default one.
        kept = {s for s in secrets if s and len(s) >= 6}
        # Also as they appear inside a JSON string (quotes and backslashes escaped).
        kept |= {json.dumps(s, ensure_ascii=False)[1:-1] for s in kept}
        self._secrets = sorted(kept, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        return _KEY_SHAPES.sub(MASK, text)


def configured_secrets(settings: Settings) -> list[str]:
    """Every secret value the settings hold (never logged, even inside an error message)."""
    return [s for s in (settings.neo4j.password, settings.milvus.token, settings.llm.api_key,
                        settings.embed.api_key, settings.rerank.api_key) if s]


class ContextFilter(logging.Filter):
    """Copies the current request's context onto every record (as attributes)."""

    def filter(self, record: logging.LogRecord) -> bool:
        context = _current.get()
        if context is not None:
            for name in CONTEXT_FIELDS:
                if getattr(record, name, None) is None:
                    setattr(record, name, getattr(context, name))
        return True


# LogRecord's own attributes: everything else on a record came from ``extra=``.
# uvicorn adds ``color_message`` (the message with terminal colours) to its records.
_RESERVED = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message", "asctime", "taskName", "color_message"}
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, the request context,
    the record's ``extra`` fields and the traceback, all passed through the redactor."""

    def __init__(self, redactor: Redactor | None = None) -> None:
        super().__init__()
        self._redact = redactor or Redactor()

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, timezone.utc)
                          .isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for name, value in vars(record).items():
            if name not in _RESERVED and value is not None:
                out[name] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        # Masked after serializing, so nested values and tracebacks are covered too.
        return self._redact(json.dumps(out, ensure_ascii=False, default=str))


class TextFormatter(logging.Formatter):
    """The same content for people reading a terminal: message, then key=value pairs.

    Control characters in the message and the values are escaped (``\\x0a``), so a
    path or a text sent by a caller cannot start a forged log line."""

    def __init__(self, redactor: Redactor | None = None) -> None:
        super().__init__()
        self._redact = redactor or Redactor()

    def format(self, record: logging.LogRecord) -> str:
        pairs = "".join(f" {name}={_escaped(str(value))}" for name, value in vars(record).items()
                        if name not in _RESERVED and value is not None)
        line = (f"{self.formatTime(record)} {record.levelname} {record.name} "
                f"{_escaped(record.getMessage())}{pairs}")
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return self._redact(line)


def _escaped(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def configure_logging(settings: Settings, stream: TextIO | None = None) -> logging.Handler:
    """Send every logger (Referent's, uvicorn's, the drivers') through one handler on
    ``stream`` (stderr) with the configured format; returns the handler.

    Called by ``referent serve`` (not by :func:`api.app.create_app`, so tests and
    embedding applications keep their own logging).
    """
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(make_formatter(settings.log, Redactor(configured_secrets(settings))))
    handler.addFilter(ContextFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(settings.log.level)
    route_library_loggers()
    # uvicorn's loggers write through the root handler; its access lines are replaced
    # by ours (which carry the request id and never the query string).
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    logging.getLogger("uvicorn.access").disabled = True
    return handler


def route_library_loggers() -> None:
    """Make every logger that exists now write through the root handler only.

    Some libraries give their loggers a handler of their own at import and stop
    propagation (pymilvus writes its multi-line RPC tracebacks to stderr that way):
    their records would reach the log stream as raw lines beside the JSON ones.
    Called by :func:`configure_logging`, after ``referent serve`` has imported the
    server (and so its drivers)."""
    for logger in list(logging.root.manager.loggerDict.values()):
        if not isinstance(logger, logging.Logger):
            continue  # a placeholder for loggers not made yet: they propagate
        for own in [h for h in logger.handlers if not isinstance(h, logging.NullHandler)]:
            logger.removeHandler(own)
        logger.propagate = True


def make_formatter(log: LogSettings, redactor: Redactor) -> logging.Formatter:
    return JsonFormatter(redactor) if log.format == "json" else TextFormatter(redactor)
