"""Offline API docs: ``/docs`` (Swagger UI) and ``/redoc`` with their assets served by this server.

FastAPI's own pages load their scripts from a CDN, so they are blank without a network. The
assets come from the installed ``fastapi-offline`` package (part of the ``server`` extra); they
are served from that package's directory, never copied into this repository.

Each page carries a Content-Security-Policy built from its own markup (:func:`page_policy`):
scripts and styles from this server only, the page's one inline script or style allowed by its
SHA-256 hash, no framing (``frame-ancestors 'none'``), no other host. What each page needs
beyond that, found by loading it in Chromium under the policy: Swagger UI draws its icons as
``data:`` images; ReDoc injects its styles at run time (styled-components), so its page allows
inline styles (never inline scripts) and runs its search index in a ``blob:`` worker.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Final

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

__all__ = ["ASSETS_URL", "assets_dir", "install", "page_policy"]

ASSETS_URL = "/docs-assets"
_INLINE: Final = re.compile(rb"<(script|style)>(.*?)</\1>", re.S)


def page_policy(html: bytes, *, runtime_styles: bool = False) -> str:
    """The Content-Security-Policy of ``html``: this server's scripts, styles, images and fonts,
    plus each inline ``<script>``/``<style>`` by its hash; ``runtime_styles`` allows the inline
    styles a script injects (no hash can name those, and a hash would switch them off)."""
    hashes: dict[bytes, list[str]] = {b"script": [], b"style": []}
    for kind, body in _INLINE.findall(html):
        digest = base64.b64encode(hashlib.sha256(body).digest()).decode()
        hashes[kind].append(f"'sha256-{digest}'")
    styles = ["'unsafe-inline'"] if runtime_styles else hashes[b"style"]
    return "; ".join(
        [
            "default-src 'none'",
            " ".join(["script-src 'self'", *hashes[b"script"]]),
            " ".join(["style-src 'self'", *styles]),
            "img-src 'self' data:",
            "font-src 'self'",
            "connect-src 'self'",
            "worker-src 'self' blob:",
            "frame-ancestors 'none'",
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )


def _with_policy(page: HTMLResponse, *, runtime_styles: bool = False) -> HTMLResponse:
    page.headers["Content-Security-Policy"] = page_policy(bytes(page.body), runtime_styles=runtime_styles)
    page.headers["X-Content-Type-Options"] = "nosniff"
    return page


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

    def docs_page(
        request: Request, render: Callable[..., HTMLResponse], title: str, **paths: str
    ) -> HTMLResponse:
        """``render``'s page with every URL it loads (the schema, ``paths``) under the root path
        the app is mounted at."""
        root = str(request.scope.get("root_path", ""))
        urls = {name: root + path for name, path in paths.items()}
        return render(openapi_url=f"{root}{app.openapi_url}", title=f"{app.title} - {title}", **urls)

    @app.get("/docs", include_in_schema=False)
    def swagger_ui(request: Request) -> HTMLResponse:
        page = docs_page(
            request,
            get_swagger_ui_html,
            "API docs",
            oauth2_redirect_url=redirect_url,
            swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS_URL}/favicon.png",
        )
        return _with_policy(page)

    @app.get(redirect_url, include_in_schema=False)
    def swagger_redirect() -> HTMLResponse:
        return _with_policy(get_swagger_ui_oauth2_redirect_html())

    @app.get("/redoc", include_in_schema=False)
    def redoc(request: Request) -> HTMLResponse:
        page = docs_page(
            request,
            partial(get_redoc_html, with_google_fonts=False),
            "API reference",
            redoc_js_url=f"{ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{ASSETS_URL}/favicon.png",
        )
        return _with_policy(page, runtime_styles=True)

    return True
