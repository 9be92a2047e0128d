"""The memstack service: HTTP API (FastAPI) and MCP server on one port. Needs the ``server`` extra.

Importing this package does not import FastAPI; :func:`create_app` and :class:`ServerSettings`
load it on first use, so ``memstack keys`` works without the extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import ServerSettings, create_app

__all__ = ["ServerSettings", "create_app"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import app

        return getattr(app, name)
    raise AttributeError(name)
