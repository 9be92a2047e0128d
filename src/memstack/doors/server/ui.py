"""The memory inspector at ``/ui``: static files shipped in the package, plus one live-board stream.

The page signs in with the same bearer key as the API (kept in the tab's sessionStorage, sent
in the Authorization header, never in a URL) and reads everything through ``/v1``. Two endpoints
are its own: ``/ui/api/whoami`` says whether the server needs a key and which tenant the tab
acts for (a keyless server opens without a sign-in and shows the tenant it really uses), and
``/ui/api/shared/{name}/events`` streams a board's changes as server-sent events (read with
``fetch`` so the key can travel in a header).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles

from ...services.memory import Memory
from ...tiers.shared import SharedMemory
from .auth import Authenticator
from .watch_hub import WatchHub

__all__ = ["KEEPALIVE_SECONDS", "STATIC_DIR", "install"]

STATIC_DIR = Path(str(resources.files(__package__) / "ui"))
KEEPALIVE_SECONDS = 15.0
# The page is static; a strict policy keeps any injected markup from loading or sending anything.
_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)
_HEADERS = {"Content-Security-Policy": _CSP, "X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}


def _event(kind: str, data: dict[str, Any]) -> str:
    # The data names its event too: a reader that keeps only the data still knows what it got.
    return f"event: {kind}\ndata: {json.dumps({'event': kind, **data}, ensure_ascii=False)}\n\n"


def key_of(request: Request) -> str:
    """The id of the caller's key (``msk_<id>_…``), or ``-`` without one: what stream caps count."""
    scheme, _, token = (request.headers.get("authorization") or "").partition(" ")
    parts = token.strip().split("_", 2)
    return parts[1] if scheme.lower() == "bearer" and len(parts) == 3 else "-"


def board_stream(request: Request, memory: Memory, tenant: str, name: str) -> StreamingResponse:
    """The event stream of board ``name`` (both doors); a bad name or a full cap fails here,
    before the stream starts.

    Raises:
        InvalidKey: a malformed board name.
        HTTPException: 429 when the caller's key or tenant holds its cap of streams.
    """
    SharedMemory(memory.engine, name, enable_cache=False).close()
    hub: WatchHub = request.app.state.watch_hub
    hub.check(tenant, key_of(request))
    return StreamingResponse(
        board_events(request, memory, tenant, name),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def board_events(request: Request, memory: Memory, tenant: str, name: str) -> AsyncIterator[str]:
    """A board's snapshot, then one ``change`` event per write, as server-sent events, through
    the server's one subscription of the board (:mod:`memstack.doors.server.watch_hub`)."""
    hub: WatchHub = request.app.state.watch_hub
    key = key_of(request)
    watcher = hub.open(tenant, key, memory, name)  # subscribed before the snapshot: no write between
    subscriptions = request.app.state.metrics.subscriptions
    subscriptions.inc()
    try:
        assert watcher.shared is not None
        structured = await asyncio.to_thread(watcher.shared.to_dict)
        # Flat (reserved keys, then custom ones), as each change names one key.
        snapshot = {key: value for key, value in structured.items() if key != "custom"}
        snapshot.update(structured.get("custom") or {})
        yield _event("snapshot", {"name": name, "snapshot": snapshot})
        idle = 0.0
        while idle < hub.idle_seconds:
            try:
                change = await asyncio.wait_for(watcher.queue.get(), KEEPALIVE_SECONDS)
            except TimeoutError:
                idle += KEEPALIVE_SECONDS
                yield ": keep-alive\n\n"
                continue
            if change is None:
                return  # fell too far behind: ended, the client reconnects
            idle = 0.0
            yield _event("change", change)
    finally:
        subscriptions.dec()
        hub.close(tenant, key, name, watcher)


def _tenant(request: Request) -> str:
    """The caller's tenant, resolved as for ``/v1`` (401/404 as there; the app's
    ``resolve_tenant`` is this same call on the authenticator the app installs)."""
    headers = request.headers
    auth: Authenticator = request.app.state.auth
    return auth.tenant(headers.get("authorization"), headers.get("x-memstack-tenant"))


def _tenant_memory(request: Request) -> Memory:
    """The caller's tenant Memory, resolved as for ``/v1`` (401/404 as there)."""
    memory: Memory = request.app.state.tenants.get(_tenant(request))
    return memory


def whoami(request: Request) -> JSONResponse:
    """``{"auth": "none" | "keys", "tenant": ...}``: the tenant this caller acts for, or null in
    keys mode when it sent no key (so a page can offer its sign-in without a refused request).

    Raises:
        HTTPException: 401 for a key that is not valid, 404 for a tenant it may not use, as ``/v1``.
    """
    mode = request.app.state.auth.mode
    if mode == "keys" and not request.headers.get("authorization"):
        return JSONResponse({"auth": mode, "tenant": None}, headers={"Cache-Control": "no-store"})
    return JSONResponse({"auth": mode, "tenant": _tenant(request)}, headers={"Cache-Control": "no-store"})


def install(app: FastAPI) -> None:
    """Serve the inspector at ``/ui`` and its board stream (needs ``app.state.metrics``)."""
    app.mount("/ui/static", StaticFiles(directory=STATIC_DIR), name="ui-static")

    @app.get("/ui", include_in_schema=False)
    def ui_redirect() -> RedirectResponse:
        return RedirectResponse("/ui/", status_code=307)

    @app.get("/ui/", include_in_schema=False)
    def ui_index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html", headers=_HEADERS)

    app.get("/ui/api/whoami", include_in_schema=False)(whoami)

    @app.get("/ui/api/shared/{name}/events", include_in_schema=False)
    def ui_board_events(
        request: Request, name: str, memory: Annotated[Memory, Depends(_tenant_memory)]
    ) -> StreamingResponse:
        return board_stream(request, memory, _tenant(request), name)
