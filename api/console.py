"""The admin console: one static page at ``/admin`` (HTML, CSS and plain JavaScript
shipped in ``api/static/``, nothing fetched from elsewhere).

The page itself holds no data and needs no key; it asks for an admin key and
sends it with each call to the admin API, keeping it in the tab's
``sessionStorage`` only (gone when the tab closes, or on "Sign out"). A strict
Content-Security-Policy lets the page run its own script and talk to this
server only.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, RedirectResponse

from api.json_body import CheckedJsonRoute

STATIC = Path(__file__).resolve().parent / "static"

_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
                               "connect-src 'self'; img-src 'self' data:; form-action 'self'; "
                               "base-uri 'none'; frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache",
}
_FILES = {"admin.js": "text/javascript; charset=utf-8", "admin.css": "text/css; charset=utf-8"}

router = APIRouter(route_class=CheckedJsonRoute, include_in_schema=False)


@router.get("/admin")
def console() -> FileResponse:
    return FileResponse(STATIC / "admin.html", media_type="text/html; charset=utf-8",
                        headers=_HEADERS)


@router.get("/admin/")
def console_slash() -> RedirectResponse:
    return RedirectResponse("/admin", status_code=308)


@router.get("/admin/static/admin.js")
def console_js() -> FileResponse:
    return FileResponse(STATIC / "admin.js", media_type=_FILES["admin.js"], headers=_HEADERS)


@router.get("/admin/static/admin.css")
def console_css() -> FileResponse:
    return FileResponse(STATIC / "admin.css", media_type=_FILES["admin.css"], headers=_HEADERS)
