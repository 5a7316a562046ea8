"""JSON request bodies read with the same nesting limit as every other JSON reader
(:func:`common.jsonl.loads`): every route of the app uses :class:`CheckedJsonRoute`.

A body nested deeper than :data:`common.jsonl.MAX_NESTING` is refused with a 400
that says so, before it is parsed; pydantic, the stores and the log formatter never
see it.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException

from common.jsonl import NestingError, loads


class BodyNestingError(HTTPException):
    """A request body nested too deeply (answered 400 "Malformed JSON" by :mod:`api.errors`)."""

    def __init__(self, detail: str) -> None:
        super().__init__(400, detail)


class CheckedJsonRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            try:
                self._json = loads(await self.body(), "the request body")
            except NestingError as exc:
                raise BodyNestingError(str(exc)) from exc
        return self._json


class CheckedJsonRoute(APIRoute):
    """An APIRoute whose handler reads JSON bodies through :class:`CheckedJsonRequest`."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def checked(request: Request) -> Response:
            return await handler(CheckedJsonRequest(request.scope, request.receive))

        return checked
