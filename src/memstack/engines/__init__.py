"""Storage engines behind one seam; :func:`open_engine` picks one from a URL.

| scheme | engine |
|---|---|
| ``memory://`` | :class:`~memstack.engines.memory.MemoryEngine` |
| ``sqlite:///relative/or//absolute/path.db`` | :class:`~memstack.engines.sqlite.SqliteEngine` |
| ``redis://host:port/db``, ``rediss://…``, ``unix://…`` | :class:`~memstack.engines.redis.RedisEngine` |
| ``redis+cluster://host:port[,host:port…]`` | :class:`~memstack.engines.redis.RedisEngine` (clustered) |
| ``postgresql://user:pass@host:port/db`` | :class:`~memstack.engines.postgres.PostgresEngine` |
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from ..foundation.clock import Clock
from ..foundation.errors import InvalidUrl
from ..foundation.redact import redact_url
from .base import BatchResult, Engine, Subscription, WrongType

__all__ = [
    "BatchResult",
    "Engine",
    "Subscription",
    "WrongType",
    "default_sqlite_url",
    "default_url",
    "open_engine",
]

SCHEMES = (
    "memory",
    "sqlite",
    "redis",
    "rediss",
    "unix",
    "redis+cluster",
    "rediss+cluster",
    "postgresql",
    "postgres",
)


def default_url() -> str:
    """``$MEMSTACK_URL`` or the embedded SQLite file in the user's data directory.

    The data directory is ``$MEMSTACK_HOME`` if set, else the platform's user data dir
    (``~/.local/share/memstack`` on Linux).
    """
    return os.environ.get("MEMSTACK_URL") or default_sqlite_url()


def default_sqlite_url() -> str:
    """The embedded SQLite file: ``$MEMSTACK_HOME/memstack.db`` or the user data directory's."""
    home = os.environ.get("MEMSTACK_HOME")
    if home:
        base = Path(home)
    else:
        from platformdirs import user_data_dir

        base = Path(user_data_dir("memstack", appauthor=False))
    return f"sqlite:///{(base / 'memstack.db').as_posix()}"


def open_engine(url: str | None = None, *, clock: Clock | None = None) -> Engine:
    """Open the engine named by ``url`` (default: :func:`default_url`).

    Raises:
        InvalidUrl: unknown scheme or malformed URL.
        EngineUnavailable: the engine cannot be reached.
    """
    url = url or default_url()
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError as exc:  # urllib's own refusals (e.g. an unclosed IPv6 bracket)
        raise InvalidUrl(f"engine URL {redact_url(url)!r}: malformed ({exc})") from exc
    if scheme == "memory":
        from .memory import MemoryEngine

        return MemoryEngine(url, clock)
    if scheme == "sqlite":
        from .sqlite import SqliteEngine

        return SqliteEngine(url, clock)
    if scheme in ("redis", "rediss", "unix", "redis+cluster", "rediss+cluster"):
        from .redis import RedisEngine

        return RedisEngine(url, clock)
    if scheme in ("postgresql", "postgres"):
        try:
            from .postgres import PostgresEngine
        except ImportError as exc:  # psycopg is the optional `postgres` extra
            raise InvalidUrl(
                f"engine URL {redact_url(url)!r}: the PostgreSQL engine needs psycopg ({exc}); "
                "pip install 'memstack[postgres]'"
            ) from exc

        return PostgresEngine(url, clock)
    raise InvalidUrl(
        f"engine URL {redact_url(url)!r}: unknown scheme {scheme!r}; expected one of {', '.join(SCHEMES)}"
    )
