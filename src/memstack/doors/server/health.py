"""``/healthz`` (the process answers) and ``/readyz`` (the storage engine answers too).

Both answer without a key, so neither ever shows the engine URL (which may carry a password) or
an error's own text: ``/readyz`` names the engine and says why it is not ready in words from a
fixed table. The server log has the full reason, credentials redacted, once per change of state.
"""

from __future__ import annotations

import logging
import threading
from typing import Final

from fastapi import FastAPI
from fastapi.responses import JSONResponse

from ... import __version__
from ...engines import Engine
from ...foundation import errors
from ...foundation.errors import MemstackError
from ...foundation.redact import redact
from . import problems
from .error_table import RETRY_AFTER_SECONDS

__all__ = ["REASONS", "install", "reason_of"]

log = logging.getLogger("memstack.doors.server")

# The first class of the error's MRO found here gives the reason (variation as data).
REASONS: Final[dict[type[BaseException], str]] = {
    errors.EngineFull: "it is out of memory or disk",
    errors.EngineUnavailable: "it cannot be reached (down, refusing connections or the credentials)",
    errors.EngineClosed: "it was closed",
    errors.NotReplicated: "too few replicas confirm writes",
    errors.EngineError: "it refused a command",
    MemstackError: "its check failed",
}


def reason_of(exc: BaseException) -> str:
    """Why an engine that raised ``exc`` is not ready, from :data:`REASONS` (never its message)."""
    for cls in type(exc).__mro__:
        reason = REASONS.get(cls)
        if reason is not None:
            return reason
    return "its check failed"


def install(app: FastAPI, engine: Engine) -> None:
    """Add ``GET /healthz`` and ``GET /readyz`` (503 problem when the engine does not answer)."""
    lock = threading.Lock()
    state = {"ready": True}

    def changed(ready: bool, exc: BaseException | None = None) -> None:
        with lock:
            was, state["ready"] = state["ready"], ready
        if was and exc is not None:
            log.warning("engine %r is not ready: %s", engine.name, redact(f"{type(exc).__name__}: {exc}"))
        elif not was and ready:
            log.warning("engine %r is ready again", engine.name)

    @app.get("/healthz", tags=["service"], summary="Liveness: the process answers", operation_id="healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok", "version": __version__}

    @app.get(
        "/readyz", tags=["service"], summary="Readiness: the storage engine answers", operation_id="readyz"
    )
    def readyz() -> JSONResponse:
        try:
            engine.ping()
        except MemstackError as exc:
            changed(False, exc)
            name = type(exc).__name__
            detail = f"engine {engine.name!r} is not ready: {reason_of(exc)}"
            response = problems.problem(503, name, detail, error=name, engine=engine.name)
            response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
            return response
        changed(True)
        return JSONResponse({"status": "ok", "engine": engine.name, "version": __version__})
