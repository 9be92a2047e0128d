"""Offline API docs: ``/docs`` (Swagger UI) and ``/redoc`` with their assets served by this server.

FastAPI's own pages load their scripts from a CDN, so they are blank without a network. The
assets come from the installed ``fastapi-offline`` package (part of the ``server`` extra); they
are served from that package's directory, never copied into this repository.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

__all__ = ["ASSETS_URL", "assets_dir", "install"]

ASSETS_URL = "/docs-assets"


def assets_dir() -> Path | None:
    """The directory holding the Swagger UI and ReDoc bundles, or None when the package is absent."""
    try:
        root = resources.files("fastapi_offline") / "static"
    except ModuleNotFoundError:  # the server extra was not installed in full
        return None
    path = Path(str(root))
    return path if (path / "swagger-ui-bundle.js").is_file() else None


def install(app: FastAPI) -> bool:
    """Serve ``/docs``, ``/docs/oauth2-redirect`` and ``/redoc`` from local assets.

    The app must have been created with ``docs_url=None, redoc_url=None``. Returns False (and
    adds nothing) when the assets package is not installed.
    """
    directory = assets_dir()
    if directory is None:
        return False
    app.mount(ASSETS_URL, StaticFiles(directory=directory), name="docs-assets")
    redirect_url = "/docs/oauth2-redirect"

    def base(request: Request) -> str:
        return str(request.scope.get("root_path", ""))

    @app.get("/docs", include_in_schema=False)
    def swagger_ui(request: Request) -> HTMLResponse:
        root = base(request)
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title} - API docs",
            oauth2_redirect_url=f"{root}{redirect_url}",
            swagger_js_url=f"{root}{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
        )

    @app.get(redirect_url, include_in_schema=False)
    def swagger_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    def redoc(request: Request) -> HTMLResponse:
        root = base(request)
        return get_redoc_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title} - API reference",
            redoc_js_url=f"{root}{ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
            with_google_fonts=False,
        )

    return True
