"""``/healthz`` (the process answers) and ``/readyz`` (the storage engine answers too)."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.responses import JSONResponse

from .. import __version__
from ..engines import Engine
from ..errors import MemstackError
from . import problems

__all__ = ["install"]


def install(app: FastAPI, engine: Engine) -> None:
    """Add ``GET /healthz`` and ``GET /readyz`` (503 problem when the engine does not answer)."""

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
            name = type(exc).__name__
            return problems.problem(503, name, f"engine {engine.name!r} is not ready: {exc}", error=name)
        return JSONResponse({"status": "ok", "engine": engine.name, "version": __version__})
