"""Redis engine URLs, read once into what the transport needs.

| URL | meaning |
|---|---|
| ``redis://[user:password@]host[:port][/db]`` | a standalone server (``rediss://``: TLS) |
| ``unix:///path/to/socket[?db=N]`` | a standalone server on a Unix socket |
| ``redis+cluster://host1:port1[,host2:port2…]`` | a Redis Cluster from these seeds (TLS: ``rediss+``) |

Query parameters: ``db`` (standalone), ``wait_replicas`` and ``wait_ms`` (durability: ``WAIT`` after
each write batch), and for TLS ``ssl_cert_reqs``, ``ssl_ca_certs``, ``ssl_certfile``,
``ssl_keyfile``, ``ssl_check_hostname``. Anything else is refused: a misspelt option must not be
ignored silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import parse_qs, urlencode, urlsplit

import redis.connection as redis_connection

from ...foundation.errors import InvalidUrl
from ...foundation.redact import redact_url

__all__ = ["SCHEMES", "Address", "RedisUrl", "parse"]

SCHEMES: Final = ("redis", "rediss", "unix", "redis+cluster", "rediss+cluster")
Address = tuple[str, int]
"""A node: host and port (a Unix socket: its path and 0)."""

_DEFAULT_PORT: Final = 6379
_TLS_PARAMS: Final = frozenset(
    {"ssl_cert_reqs", "ssl_ca_certs", "ssl_certfile", "ssl_keyfile", "ssl_check_hostname"}
)
_WAIT_PARAMS: Final = frozenset({"wait_replicas", "wait_ms"})
# redis-py leaves parse_url unannotated in some releases and annotates it in others; called
# through Any so that mypy --strict passes on every redis-py the bounds allow.
_parse_url: Any = redis_connection.parse_url


@dataclass(frozen=True, slots=True)
class RedisUrl:
    """A parsed engine URL.

    Attributes:
        clustered: a ``+cluster`` scheme.
        seeds: the nodes named in the URL, in order (one for a standalone server).
        options: redis-py connection settings shared by every node (class, auth, TLS, database),
            without host and port.
        wait_replicas: replicas ``WAIT`` must hear from after a write batch (0: no ``WAIT``).
        wait_ms: the ``WAIT`` timeout in milliseconds.
    """

    clustered: bool
    seeds: tuple[Address, ...]
    options: dict[str, Any] = field(default_factory=dict)
    wait_replicas: int = 0
    wait_ms: int = 0

    def node_options(self, address: Address) -> dict[str, Any]:
        """Connection settings for ``address`` (redis-py ``Connection`` keyword arguments)."""
        if "path" in self.options:
            return dict(self.options)
        return {**self.options, "host": address[0], "port": address[1]}


def parse(url: str) -> RedisUrl:
    """Read a Redis engine URL.

    Raises:
        InvalidUrl: another scheme, a malformed host list or port, several hosts without
            ``+cluster``, a database other than 0 on a cluster, an unknown or repeated query
            parameter, or a bad ``wait_replicas`` / ``wait_ms``.
    """
    shown = redact_url(url)  # what every message names: the URL without its credentials
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # e.g. an unclosed IPv6 bracket
        raise InvalidUrl(f"engine URL {shown!r}: malformed host ({exc})") from exc
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise InvalidUrl(f"engine URL {shown!r}: not a Redis URL (expected one of {', '.join(SCHEMES)})")
    clustered = scheme.endswith("+cluster")
    base = scheme.removesuffix("+cluster")
    query = _query(shown, parts.query, base, clustered)
    replicas = _count(shown, query.pop("wait_replicas", None), "wait_replicas", 0)
    wait_ms = _count(shown, query.pop("wait_ms", None), "wait_ms", 100 if replicas else 0)
    if replicas and wait_ms < 1:
        raise InvalidUrl(f"engine URL {shown!r}: wait_ms must be at least 1 (WAIT 0 would block forever)")
    if base == "unix":
        options = _redis_py_options(shown, f"unix://{parts.netloc}{parts.path}?{urlencode(query)}")
        return RedisUrl(False, ((str(options.get("path", "")), 0),), options, replicas, wait_ms)
    userinfo, _, hosts = parts.netloc.rpartition("@")
    seeds = tuple(_address(shown, host) for host in hosts.split(","))
    if len(seeds) > 1 and not clustered:
        raise InvalidUrl(f"engine URL {shown!r}: several hosts need a redis+cluster:// URL")
    if clustered and parts.path.strip("/") not in ("", "0"):
        raise InvalidUrl(f"engine URL {shown!r}: a Redis Cluster has only database 0")
    auth = f"{userinfo}@" if userinfo else ""
    host, port = seeds[0]
    netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    options = _redis_py_options(shown, f"{base}://{auth}{netloc}{parts.path}?{urlencode(query)}")
    options.pop("host", None)
    options.pop("port", None)
    return RedisUrl(clustered, seeds, options, replicas, wait_ms)


def _query(url: str, text: str, base: str, clustered: bool) -> dict[str, str]:
    allowed = set(_WAIT_PARAMS)
    if base == "rediss":
        allowed |= _TLS_PARAMS
    if not clustered:
        allowed.add("db")
    try:
        fields = parse_qs(text, keep_blank_values=True, strict_parsing=bool(text))
    except ValueError as exc:
        raise InvalidUrl(f"engine URL {url!r}: malformed query ({exc})") from exc
    for name, values in fields.items():
        if name not in allowed:
            raise InvalidUrl(
                f"engine URL {url!r}: unknown parameter {name!r}; allowed: {', '.join(sorted(allowed))}"
            )
        if len(values) > 1:
            raise InvalidUrl(f"engine URL {url!r}: parameter {name!r} is given {len(values)} times")
    return {name: values[0] for name, values in fields.items()}


def _count(url: str, text: str | None, name: str, default: int) -> int:
    if text is None:
        return default
    if not text.isascii() or not text.isdigit() or len(text) > 9:
        raise InvalidUrl(f"engine URL {url!r}: {name} must be a whole number below 10**9, got {text!r}")
    return int(text)


def _address(url: str, text: str) -> Address:
    """``host``, ``host:port`` or ``[ipv6]:port``."""
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        port_text = rest.removeprefix(":") if sep else ""
        if not sep or (rest and not rest.startswith(":")):
            raise InvalidUrl(f"engine URL {url!r}: malformed host {text!r}")
    else:
        host, _, port_text = text.partition(":")
    if not host:
        raise InvalidUrl(f"engine URL {url!r}: a host is missing in {text!r}")
    if not port_text:
        return host, _DEFAULT_PORT
    if not port_text.isascii() or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise InvalidUrl(f"engine URL {url!r}: port {port_text!r} of {text!r} is not in 1..65535")
    return host, int(port_text)


def _redis_py_options(url: str, single: str) -> dict[str, Any]:
    try:
        options: dict[str, Any] = dict(_parse_url(single))
    except ValueError as exc:
        raise InvalidUrl(f"engine URL {url!r}: {exc}") from exc
    if "db" in options and not isinstance(options["db"], int):
        raise InvalidUrl(f"engine URL {url!r}: db must be a whole number")
    return options
