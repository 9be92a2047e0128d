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
from ...tiers.shared import MemoryChange, SharedMemory
from .auth import Authenticator

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


async def board_events(request: Request, memory: Memory, name: str) -> AsyncIterator[str]:
    """A board's snapshot, then one ``change`` event per write, as server-sent events.

    Raises:
        InvalidKey: a malformed board name (before the stream starts).
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    shared = SharedMemory(memory.engine, name, enable_cache=False)

    def on_change(change: MemoryChange) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, change.to_dict())

    # Subscribe before the snapshot so no write falls between the two.
    shared.subscribe_pattern("*", on_change)
    subscriptions = request.app.state.metrics.subscriptions
    subscriptions.inc()
    try:
        structured = shared.to_dict()
        # Flat (reserved keys, then custom ones), as each change names one key.
        snapshot = {key: value for key, value in structured.items() if key != "custom"}
        snapshot.update(structured.get("custom") or {})
        yield _event("snapshot", {"name": name, "snapshot": snapshot})
        while True:
            try:
                change = await asyncio.wait_for(queue.get(), KEEPALIVE_SECONDS)
            except TimeoutError:
                yield ": keep-alive\n\n"
                continue
            yield _event("change", change)
    finally:
        subscriptions.dec()
        shared.close()


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
        SharedMemory(memory.engine, name, enable_cache=False).close()  # a bad name fails before streaming
        return StreamingResponse(
            board_events(request, memory, name),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
