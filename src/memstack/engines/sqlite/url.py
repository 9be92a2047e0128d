"""The SQLite engine's URL: ``sqlite:///relative/path.db`` or ``sqlite:////absolute/path.db``, and the
file path it names."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

from ...foundation.errors import InvalidUrl
from ...foundation.redact import redact_url

__all__ = ["sqlite_path"]


def sqlite_path(url: str) -> str:
    """The file path of a ``sqlite:///relative.db`` or ``sqlite:////absolute.db`` URL.

    Raises:
        InvalidUrl: not a sqlite URL, a host part, no path, or an in-memory database.
    """
    parts = urlsplit(url)
    if parts.scheme.lower() != "sqlite":
        raise InvalidUrl(f"engine URL {redact_url(url)!r}: the SQLite engine needs a sqlite:/// URL")
    if parts.netloc:
        raise InvalidUrl(
            f"engine URL {redact_url(url)!r}: a SQLite URL has no host; use sqlite:///relative.db or sqlite:////abs.db"
        )
    path = unquote(parts.path[1:])
    if not path or path.endswith("/"):
        raise InvalidUrl(f"engine URL {redact_url(url)!r}: names no database file")
    if path == ":memory:":
        raise InvalidUrl(f"engine URL {redact_url(url)!r}: use memory:// for an in-process store")
    return path
