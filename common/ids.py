"""Validated identifiers.

Entity ids and kb names reach Cypher parameters, Milvus filter expressions and
collection names, so they are checked against a strict pattern once, at the
edge, and never pasted unchecked anywhere.
"""

from __future__ import annotations

import re

from common.errors import InvalidIdError

ENTITY_ID_RE = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
# A kb name becomes part of a Milvus collection name (letters, digits, '_').
KB_RE = re.compile(r"[A-Za-z0-9_]{1,64}")
SESSION_ID_RE = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
# An end user an assistant speaks for (X-Referent-Subject): an opaque id or an e-mail address.
SUBJECT_RE = re.compile(r"[A-Za-z0-9_.:@+-]{1,128}")


def check_entity_id(value: str) -> str:
    """Return ``value`` if it is a valid entity id, else raise InvalidIdError."""
    if not isinstance(value, str) or not ENTITY_ID_RE.fullmatch(value):
        raise InvalidIdError(
            f"invalid entity id {value!r}: use 1-128 characters from A-Z a-z 0-9 _ . : -")
    return value


def check_kb(value: str) -> str:
    """Return ``value`` if it is a valid knowledge base name, else raise InvalidIdError."""
    if not isinstance(value, str) or not KB_RE.fullmatch(value):
        raise InvalidIdError(
            f"invalid kb name {value!r}: use 1-64 characters from A-Z a-z 0-9 _")
    return value


def check_session_id(value: str) -> str:
    """Return ``value`` if it is a valid session id, else raise InvalidIdError."""
    if not isinstance(value, str) or not SESSION_ID_RE.fullmatch(value):
        raise InvalidIdError(
            f"invalid session id {value!r}: use 1-128 characters from A-Z a-z 0-9 _ . : -")
    return value


def check_subject(value: str, *, field: str = "X-Referent-Subject") -> str:
    """Return ``value`` if it is a valid end-user subject, else raise InvalidIdError."""
    if not isinstance(value, str) or not SUBJECT_RE.fullmatch(value):
        raise InvalidIdError(
            "invalid subject: use 1-128 characters from A-Z a-z 0-9 _ . : @ + -",
            field=field)
    return value
