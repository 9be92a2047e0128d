"""The access log: one JSON line per request, with route templates and keyed hashes, never raw ids.

A line reads::

    {"method": "PUT", "route": "/v1/sessions/{session_id}/keys/{key}",
     "ids": {"session_id": "3f9c0e1a2b7d4c55", "key": "a1b2c3d4e5f60718"},
     "status": 200, "ms": 1.84, "client": "9e8d7c6b5a493827"}

Session, conversation, board and every other id in a path become their route template and a
keyed hash (HMAC-SHA256, 16 hex digits); query strings are not logged at all; the client address
is hashed the same way. So the log never holds an id a ``forget`` would have to reach, while one
id still gives one hash, which is enough to follow a session through a run.

The key: ``ServerSettings(log_key=...)``, else ``$MEMSTACK_LOG_KEY``, else a random key made
when the process starts. The random default is deliberate: hashes of guessable ids (``user-42``)
cannot be reversed by anyone who reads the log, and they stop matching across restarts. Set
``MEMSTACK_LOG_KEY`` (kept secret, like any key) to follow ids across restarts and workers.
Requests that match no route are logged as route ``unmatched`` with a hash of the path.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
from typing import Any, Final

__all__ = ["KEY_ENV", "METHODS", "AccessLog", "method_of", "route_of"]

KEY_ENV: Final = "MEMSTACK_LOG_KEY"
METHODS: Final = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
"""The HTTP methods named as they are in logs and metrics; any other is ``OTHER``."""
UNMATCHED: Final = "unmatched"
MCP_ROUTE: Final = "/mcp"

access_log = logging.getLogger("memstack.access")


def method_of(scope: Any) -> str:
    """The request method if it is one of :data:`METHODS`, else ``OTHER`` (a closed set)."""
    method = scope.get("method")
    return method if method in METHODS else "OTHER"


def route_of(scope: Any) -> str:
    """The path template of the route that served ``scope`` (``/v1/sessions/{session_id}``), a
    mount's path (``/ui/static``), or ``unmatched``: never the raw path."""
    path = getattr(scope.get("route"), "path", None)
    if isinstance(path, str) and path:
        return path
    # The MCP endpoint is a plain ASGI route (no template is recorded for it) and its requests
    # may be answered before routing (a missing key): it has its own label all the same.
    return MCP_ROUTE if scope.get("path") == MCP_ROUTE else UNMATCHED


class AccessLog:
    """Writes access lines to the ``memstack.access`` logger with hashes keyed by ``key``."""

    def __init__(self, key: str | bytes | None = None) -> None:
        if key is None:
            key = os.environ.get(KEY_ENV) or secrets.token_bytes(32)
        self._key = key.encode() if isinstance(key, str) else key

    def digest(self, value: str) -> str:
        """The keyed hash of ``value`` (16 hex digits)."""
        raw = value.encode("utf-8", "surrogatepass")
        return hmac.new(self._key, raw, hashlib.sha256).hexdigest()[:16]

    def line(self, scope: Any, status: int, ms: float) -> dict[str, Any]:
        """The fields of one access line (see the module docstring)."""
        route = route_of(scope)
        params = scope.get("path_params") if route != UNMATCHED else None
        if isinstance(params, dict) and params:
            ids = {str(name): self.digest(str(value)) for name, value in params.items()}
        elif route == UNMATCHED:
            ids = {"path": self.digest(str(scope.get("path", "")))}
        else:
            ids = {}
        client = scope.get("client") or ("-", 0)
        return {
            "method": method_of(scope),
            "route": route,
            "ids": ids,
            "status": status,
            "ms": round(ms, 3),
            "client": self.digest(str(client[0])),
        }

    def write(self, scope: Any, status: int, ms: float) -> None:
        """Log one request (at INFO; nothing is computed when INFO is off)."""
        if access_log.isEnabledFor(logging.INFO):
            access_log.info(json.dumps(self.line(scope, status, ms)))
