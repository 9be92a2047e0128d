"""Where a model call connects: straight to the endpoint, or through the proxy the environment
names (``HTTP_PROXY`` / ``HTTPS_PROXY``, lower case too, with ``NO_PROXY`` exempting hosts), the
same variables every HTTP client of the platform honours, so a model reachable only through a
proxy stays reachable.

An ``http://`` endpoint is asked through the proxy with its absolute URL as the request target; an
``https://`` endpoint through a ``CONNECT`` tunnel, so the proxy never sees the request or the key.
Credentials in the proxy URL are sent as ``Proxy-Authorization: Basic``.
"""

from __future__ import annotations

import base64
import http.client
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

__all__ = ["Route", "route_of"]


@dataclass(frozen=True, slots=True)
class Route:
    """How to reach one URL: the connection to open, the request target, the tunnel if any, and
    the headers for the proxy (on the tunnel's ``CONNECT``, else on the request itself)."""

    https: bool
    host: str
    port: int | None
    target: str
    tunnel: tuple[str, int | None] | None = None
    proxy_headers: dict[str, str] = field(default_factory=dict)

    def request_headers(self, headers: dict[str, str]) -> dict[str, str]:
        """``headers`` plus the proxy's, when the request itself goes to the proxy."""
        return headers if self.tunnel is not None else {**headers, **self.proxy_headers}

    def connect(self, timeout: float) -> http.client.HTTPConnection:
        """A connection (not yet opened) that follows this route."""
        kind = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        conn = kind(self.host, self.port, timeout=timeout)
        if self.tunnel is not None:
            conn.set_tunnel(*self.tunnel, headers=self.proxy_headers)
        return conn


def route_of(url: str) -> Route:
    """The route of ``url`` under the environment's proxy settings (read on every call)."""
    parts = urllib.parse.urlsplit(url)
    https = parts.scheme == "https"
    host = parts.hostname or ""
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(parts.scheme)
    if not proxy or urllib.request.proxy_bypass(host):  # NO_PROXY (from the environment)
        return Route(https, host, parts.port, path)
    via = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    headers = {}
    if via.username is not None:
        user = urllib.parse.unquote(via.username)
        password = urllib.parse.unquote(via.password or "")
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        headers["Proxy-Authorization"] = f"Basic {token}"
    proxy_host, proxy_port = via.hostname or "", via.port
    if https:
        # TLS to the endpoint inside the tunnel: HTTPSConnection to the proxy with set_tunnel
        return Route(True, proxy_host, proxy_port, path, (host, parts.port), headers)
    absolute = urllib.parse.urlunsplit(
        ("http", parts.netloc.rpartition("@")[2], parts.path or "/", parts.query, "")
    )
    return Route(False, proxy_host, proxy_port, absolute, None, headers)
