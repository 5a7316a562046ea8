"""The HTTP/1.1 protocol `referent serve` runs: uvicorn's h11 protocol, with the
problem+json shape for the requests it cannot parse.

uvicorn answers a request that h11 refuses before the app sees it (raw non-ASCII
bytes in the URL, such as ``?q=华东`` sent unencoded; a malformed request line or
header; headers over h11's 16 KiB limit; an unsupported upgrade) with a
``text/plain`` 400 of its own. This subclass sends the API's problem shape
instead, with a request id that the log line carries too.

What it cannot cover: a connection that breaks before a request line (nothing
to answer), and any proxy in front (nginx answers its own 400 pages).
"""

from __future__ import annotations

import json
import uuid

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from api.errors import PROBLEM

_DETAIL = ("the HTTP request could not be parsed, so it never reached the API. The most "
           "common cause is a URL with raw non-ASCII characters or spaces: percent-encode "
           "the path and the query (curl -G URL --data-urlencode 'q=华东地区'); otherwise a "
           "malformed request line or header, or headers over 16 KiB")


class ProblemH11Protocol(H11Protocol):
    """uvicorn's h11 protocol whose own 400 answers are problem+json."""

    def send_400_response(self, msg: str) -> None:
        request_id = uuid.uuid4().hex
        self.logger.warning("malformed HTTP request answered 400 (request id %s): %s",
                            request_id, msg)
        body = json.dumps({"type": "about:blank", "title": "Bad Request", "status": 400,
                           "detail": _DETAIL, "request_id": request_id},
                          ensure_ascii=False).encode("utf-8")
        headers = [(b"content-type", PROBLEM.encode()), (b"connection", b"close"),
                   (b"content-length", str(len(body)).encode()),
                   (b"x-request-id", request_id.encode())]
        for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                      h11.Data(data=body), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self.transport.close()
