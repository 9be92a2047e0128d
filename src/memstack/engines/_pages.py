"""Keyset pagination over a sorted key index (SQLite, PostgreSQL): a streaming scan's pages."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from .base import started


def keyset_pages(read: Callable[[str, str], list[str]], prefix: str, page: int) -> Iterator[list[str]]:
    """Pages of keys from ``read(op, low)``, the keys (at most ``page``, in key order) that compare
    ``op`` (``>=`` or ``>``) to ``low``: ``>=`` the prefix first, then ``>`` the last key given.
    Each page is one short indexed read resuming where the last stopped, so a key deleted behind
    the scan changes nothing ahead of it; the first page is read now (see :func:`started`)."""

    def pages() -> Iterator[list[str]]:
        low, op = prefix, ">="
        while True:
            keys = read(op, low)
            if keys:
                yield keys
            if len(keys) < page:
                return
            low, op = keys[-1], ">"

    return started(pages())
