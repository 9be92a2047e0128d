"""PostgreSQL engine URLs, read once into libpq connection settings.

``postgresql://[user[:password]@]host[:port][/dbname][?param=value&…]`` (``postgres://`` too):
every libpq parameter works (``sslmode``, ``sslrootcert``, ``connect_timeout``, ``options``,
``application_name``, ``target_session_attrs``, several hosts…), plus memstack's own ``schema``
(default ``memstack``): the schema that holds memstack's tables, so several independent memstack
stores can share one database. libpq refuses any other parameter: a misspelt option is never
ignored silently.

The engine adds what it relies on to every connection (a parameter given in the URL wins where
the two overlap, but the client encoding is always UTF-8): ``extra_float_digits=1`` (doubles in
replies read back exactly), the statement timeout, TCP keepalives and ``tcp_user_timeout`` (a
dead peer is noticed),
``connect_timeout`` and ``application_name=memstack``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from ...foundation.errors import InvalidUrl

__all__ = ["SCHEMES", "PostgresUrl", "parse"]

SCHEMES: Final = ("postgresql", "postgres")
DEFAULT_SCHEMA: Final = "memstack"


@dataclass(frozen=True, slots=True)
class PostgresUrl:
    """A parsed engine URL.

    Attributes:
        conninfo: the libpq connection string (memstack's settings added, ``schema`` removed).
        schema: the schema of memstack's tables.
        label: names the server in messages: host, port and database, never credentials.
    """

    conninfo: str
    schema: str
    label: str


def _seconds(value: float) -> str:
    return str(max(1, math.ceil(value)))


def parse(url: str, *, statement_timeout: float, tcp_timeout: float, connect_timeout: float) -> PostgresUrl:
    """Read ``url`` and add the engine's connection settings.

    Raises:
        InvalidUrl: not a postgresql:// or postgres:// URL, an unknown or malformed parameter.
    """
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise InvalidUrl(f"engine URL: malformed PostgreSQL URL ({exc})") from exc
    if parts.scheme.lower() not in SCHEMES:
        raise InvalidUrl(f"engine URL scheme {parts.scheme!r}: the PostgreSQL engine needs postgresql://")
    query = parse_qsl(parts.query, keep_blank_values=True)
    schemas = [v for k, v in query if k == "schema"]
    if len(schemas) > 1:
        raise InvalidUrl("engine URL: the schema parameter is given twice")
    schema = schemas[0] if schemas else DEFAULT_SCHEMA
    rest = urlunsplit(parts._replace(query=urlencode([(k, v) for k, v in query if k != "schema"])))
    try:
        given = conninfo_to_dict(rest)
    except psycopg.ProgrammingError as exc:  # libpq's own refusal names the parameter
        raise InvalidUrl(f"engine URL: {exc}") from None
    options = f"-c extra_float_digits=1 -c statement_timeout={int(statement_timeout * 1000)}"
    if given.get("options"):
        options = f"{options} {given['options']}"
    settings: dict[str, str] = {
        "application_name": "memstack",
        "connect_timeout": _seconds(connect_timeout),
        "keepalives": "1",
        "keepalives_idle": _seconds(tcp_timeout / 2),
        "keepalives_interval": _seconds(tcp_timeout / 6),
        "keepalives_count": "3",
        "tcp_user_timeout": str(int(tcp_timeout * 1000)),
        **{k: str(v) for k, v in given.items() if v is not None},
        "client_encoding": "utf8",  # the engine's text is Unicode, whatever the URL says
        "options": options,
    }
    host = str(given.get("host") or "localhost")
    port = str(given.get("port") or "5432")
    label = f"PostgreSQL at {host}:{port}/{given.get('dbname') or given.get('user') or ''}"
    return PostgresUrl(make_conninfo("", **settings), schema, label)
