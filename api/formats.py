"""``/v1/schemas``: the JSON Schemas of the interchange formats (``docs/formats.md``).

The same files the importer, the ingest and ``referent eval`` check every line
with, so a tool outside the project can validate a file before sending it.
Any key may read them (query or admin): they hold nothing but the contract.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path
from fastapi.responses import JSONResponse

from api.auth import Caller, any_caller
from api.json_body import CheckedJsonRoute
from common.formats import FORMAT_NAMES, load_schema

SCHEMA_MEDIA = "application/schema+json"
FormatName = Literal["ontology", "corpus", "suite", "results"]
assert set(FormatName.__args__) == set(FORMAT_NAMES)

router = APIRouter(route_class=CheckedJsonRoute, prefix="/v1/schemas", tags=["formats"])


@router.get("", operation_id="listFormatSchemas", summary="The interchange formats")
def list_schemas(_: Annotated[Caller, Depends(any_caller)]) -> dict[str, Any]:
    """One entry per format: its name, title and where its schema is."""
    return {"schemas": [{"name": name, "title": load_schema(name)["title"],
                         "id": load_schema(name)["$id"], "href": f"/v1/schemas/{name}"}
                        for name in FORMAT_NAMES]}


@router.get("/{name}", operation_id="getFormatSchema",
            summary="The JSON Schema of one line of a format", response_class=JSONResponse)
def get_schema(name: Annotated[FormatName, Path(description="ontology, corpus, suite or results")],
               _: Annotated[Caller, Depends(any_caller)]) -> JSONResponse:
    """JSON Schema draft 2020-12 of one line of the format's JSON Lines files."""
    return JSONResponse(load_schema(name), media_type=SCHEMA_MEDIA)
