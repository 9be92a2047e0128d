"""``GET /v1/shared/{name}/events``: watching a shared board over server-sent events.

A stream is no operation of the registry (every door of those answers once, with JSON): it is the
inspector's board stream (:func:`memstack.doors.server.ui.board_events`) at an address of the API, so
clients (the TypeScript client's ``shared.watch``) follow a board with the caller's key and tenant.
Each event's data is a JSON object whose ``event`` names it: ``snapshot`` first, then one
``change`` per write.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from ..app import TenantMemory
from ..ui import board_stream
from ._common import ERRORS, client_route

router = APIRouter(prefix="/v1/shared", tags=["shared"], responses=ERRORS)

_TIME = {"type": "string", "description": "When (ISO 8601, UTC, Z)."}
_DATA: dict[str, Any] = {
    "oneOf": [
        {
            "type": "object",
            "title": "BoardSnapshot",
            "properties": {
                "event": {"type": "string", "enum": ["snapshot"]},
                "name": {"type": "string"},
                "snapshot": {"type": "object", "additionalProperties": True},
            },
            "required": ["event", "name", "snapshot"],
        },
        {
            "type": "object",
            "title": "BoardChange",
            "properties": {
                "event": {"type": "string", "enum": ["change"]},
                "key": {"type": "string"},
                "value": {"description": "The new value (absent: the key was deleted)."},
                "previous": {"description": "The value before (absent: the key was new)."},
                "writer": {"type": "string"},
                "network_name": {"type": "string"},
                "timestamp": _TIME,
                "correlation_id": {"type": "string"},
            },
            "required": ["event", "key", "timestamp"],
        },
    ]
}
# The schema of one server-sent event (its fields, as schemathesis and OpenAPI 3.2 read a stream):
# the data is JSON text, whose own schema is _DATA.
_EVENT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "event": {"type": "string", "enum": ["snapshot", "change"]},
        "data": {"type": "string", "contentMediaType": "application/json", "contentSchema": _DATA},
        "id": {"type": "string"},
        "retry": {"type": "integer"},
    },
    "required": ["event", "data"],
}


@client_route(
    router.get,
    "/{name}/events",
    "shared_watch",
    "shared.watch",
    summary="Watch a board: its snapshot, then one change event per write (server-sent events)",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {"schema": _EVENT}}, "description": "The events."}},
)
def watch(request: Request, name: str, mem: TenantMemory) -> StreamingResponse:
    return board_stream(request, mem, str(request.state.tenant), name)
