"""One SQLite transaction of the engine: ``keys`` rows through a cache, written back at the end.

Every command starts from the ``keys`` row of its key (type, string value, expire-at, container
bookkeeping). A writing transaction reads those rows through the engine's row cache and *stages*
their changes instead of writing them at once; :meth:`Tx.flush` writes each changed row once,
before ``COMMIT``, touching only the columns that changed. A session put (set, then restore the
TTL, then bump the history length) thus rewrites one row once and leaves the expiry index alone,
and a commit dirties fewer pages, which is what a WAL commit costs.

Deleting a row, or giving it another type, runs at once (after writing the row if it is still only
staged): the schema's triggers then remove its elements before any new element of the same key
is inserted.

The cache is valid across transactions because the engine clears it whenever another connection
committed since its last write (``PRAGMA data_version``) and after any rollback.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any, Final

from ..base import WrongType

__all__ = ["Row", "Tx", "rows_of"]

Row = tuple[Any, ...]
"""``(kind, value, expire, lo, n)``: ``value`` for strings (or ``LONG``), ``lo``/``n`` for containers."""

LONG: Final = object()  # a string value too long to keep in the cache; read it from the file
_CACHED_VALUE_MAX: Final = 512
_MISS: Final = object()
NOT_A_STRING: Final = object()  # what ``Tx.string_at`` finds at a key of another type: equal to nothing

_META: Final = "SELECT kind, value, expire, lo, n FROM keys WHERE key = ?"
_VALUE: Final = "SELECT value FROM keys WHERE key = ?"
_DROP: Final = "DELETE FROM keys WHERE key = ?"
_L_INSERT: Final = "INSERT INTO lists (key, seq, value) VALUES (?, ?, ?)"
# Many keys' rows in one statement; the key list is padded to one of a few lengths so that
# sqlite3 keeps reusing a handful of prepared statements.
_ROWS: Final = "SELECT key, kind, value, expire, lo, n FROM keys WHERE key IN ({})"
_ROWS_SIZES: Final = (16, 128, 512)
_PREFETCH_MIN: Final = 8  # below this, one lookup per key costs no more than the batched one
_INSERT: Final = "INSERT INTO keys (key, kind, value, expire, lo, n) VALUES (?, ?, ?, ?, ?, ?)"
_UPSERT_STRING: Final = (
    "INSERT INTO keys (key, kind, value, expire, lo, n) VALUES (?1, 'string', ?2, ?3, NULL, NULL) "
    "ON CONFLICT (key) DO UPDATE SET kind = 'string', value = ?2, expire = ?3, lo = NULL, n = NULL"
)


# Rewriting value/lo/n costs nothing extra (the row is rewritten anyway), but writing ``expire``
# updates the expiry index even when unchanged, so rows whose expire-at stayed skip that column.
_UPDATE: Final = "UPDATE keys SET value = ?, lo = ?, n = ? WHERE key = ?"
_UPDATE_EXPIRE: Final = "UPDATE keys SET value = ?, lo = ?, n = ?, expire = ? WHERE key = ?"


def rows_of(cur: sqlite3.Cursor, keys: Sequence[str]) -> dict[str, Row]:
    """The ``keys`` rows of ``keys`` (expired ones included) in a few statements; absent keys are
    not in the answer."""
    found: dict[str, Row] = {}
    biggest = _ROWS_SIZES[-1]
    for start in range(0, len(keys), biggest):
        chunk = list(keys[start : start + biggest])
        size = next(s for s in _ROWS_SIZES if s >= len(chunk))
        chunk += [chunk[-1]] * (size - len(chunk))
        for key, *row in cur.execute(_ROWS.format(",".join("?" * size)), chunk):
            found[key] = tuple(row)
    return found


def _trim(row: Row | None) -> Row | None:
    if row is not None and isinstance(row[1], str) and len(row[1]) > _CACHED_VALUE_MAX:
        return (row[0], LONG, row[2], row[3], row[4])
    return row


class Tx:
    """The context of one ``execute``: cursor, engine time, write mode, cached and staged rows.

    A read-only transaction reads rows straight from SQLite and treats expired ones as absent; a
    writing one also purges them.
    """

    __slots__ = ("_base", "_dirty", "_elements", "cache", "cur", "now", "published", "write")

    def __init__(self, cur: sqlite3.Cursor, now: int, write: bool, cache: dict[str, Row | None]) -> None:
        self.cur = cur
        self.now = now
        self.write = write
        self.cache = cache if write else None
        self.published = False
        self._dirty: dict[str, Row] = {}  # key -> staged row (full value)
        self._base: dict[str, Row | None] = {}  # key -> row in the file before staging
        self._elements: list[tuple[str, int, str]] = []  # list elements appended, not yet inserted

    def prefetch(self, keys: Iterable[str]) -> None:
        """Read the rows of ``keys`` that the cache lacks, many per statement (a batch that writes
        thousands of keys then pays a few statements for their rows, not one each)."""
        cache = self.cache
        assert cache is not None  # prefetching is for writing transactions
        missing = [k for k in dict.fromkeys(keys) if k not in cache]
        if len(missing) < _PREFETCH_MIN:
            return
        found = rows_of(self.cur, missing)
        for key in missing:
            cache[key] = _trim(found.get(key))

    def append_element(self, key: str, seq: int, value: str) -> None:
        """Queue inserting one list element; :meth:`settle` inserts the queued ones together."""
        self._elements.append((key, seq, value))

    def settle(self) -> None:
        """Insert the queued list elements: before anything reads or deletes list elements (a
        range, a pop, a trim, a key's delete or retype, whose triggers remove its elements)."""
        if self._elements:
            self.cur.executemany(_L_INSERT, self._elements)
            self._elements.clear()

    def meta(self, key: str) -> Row | None:
        """The live row of ``key`` or None."""
        cache = self.cache
        row: Row | None
        if cache is None:
            row = self.cur.execute(_META, (key,)).fetchone()
        else:
            row = cache.get(key, _MISS)  # type: ignore[arg-type]  # _MISS marks "not cached"
            if row is _MISS:
                row = self.cur.execute(_META, (key,)).fetchone()
                cache[key] = _trim(row)
        if row is not None and row[2] is not None and row[2] <= self.now:
            if self.write:
                self.drop(key)
            return None
        return row

    def typed(self, key: str, kind: str) -> Row | None:
        """The live row of ``key`` or None.

        Raises:
            WrongType: ``key`` holds another type.
        """
        row = self.meta(key)
        if row is not None and row[0] != kind:
            raise WrongType(f"key {key!r} holds a {row[0]}, not a {kind}")
        return row

    def exists(self, key: str) -> bool:
        """True if ``key`` is live."""
        return self.meta(key) is not None

    def string_at(self, key: str) -> object:
        """The string at ``key``, None when absent, :data:`NOT_A_STRING` for another type."""
        row = self.meta(key)
        if row is None:
            return None
        return self.value(key, row) if row[0] == "string" else NOT_A_STRING

    def value(self, key: str, row: Row) -> str:
        """The string value of live string ``row`` of ``key``."""
        value = row[1]
        if value is LONG:
            staged = self._dirty.get(key)
            value = staged[1] if staged is not None else self.cur.execute(_VALUE, (key,)).fetchone()[0]
        return str(value)

    def container(self, key: str, kind: str) -> Row:
        """The live ``kind`` row of ``key``, staged empty when absent.

        Raises:
            WrongType: ``key`` holds another type.
        """
        row = self.typed(key, kind)
        if row is None:
            row = (kind, None, None, 0, 0)
            self.stage(key, row)
        return row

    def stage(self, key: str, row: Row) -> None:
        """``key`` gets ``row`` of the same type (or is created); written by :meth:`flush`.

        Only for a key whose current row the cache knows (every caller read it first).
        """
        assert self.cache is not None  # staging happens in writing transactions only
        if row[1] is LONG:  # a TTL change of a long string: the row written needs its value
            row = (row[0], self.value(key, row), row[2], row[3], row[4])
        if key not in self._dirty:
            self._base[key] = self.cache.get(key)
        self._dirty[key] = row
        self.cache[key] = _trim(row)

    def set_string(self, key: str, value: str, expire: int | None) -> None:
        """``key`` becomes a string (whatever it held)."""
        cache = self.cache
        assert cache is not None  # set is a write
        old: Any = cache.get(key, _MISS)
        if old is _MISS or (old is not None and old[0] != "string"):
            # Unknown row, or a retype whose old elements the trigger must remove now.
            self._write_now(key)
            self.cur.execute(_UPSERT_STRING, (key, value, expire))
            cache[key] = _trim(("string", value, expire, None, None))
        else:
            self.stage(key, ("string", value, expire, None, None))

    def resize(self, key: str, row: Row, n: int, lo: int | None = None) -> None:
        """New element count (and list start) of a container; an empty one no longer exists."""
        if n:
            self.stage(key, (row[0], None, row[2], row[3] if lo is None else lo, n))
        else:
            self.drop(key)

    def drop(self, key: str) -> None:
        """Delete ``key`` now (its elements go with it)."""
        self.settle()
        self._write_now(key)
        self.cur.execute(_DROP, (key,))
        if self.cache is not None:
            self.cache[key] = None

    def drop_live(self, key: str) -> bool:
        """Delete ``key``; True if it was live."""
        live = self.meta(key) is not None
        if live:
            self.drop(key)
        return live

    def _write_now(self, key: str) -> None:
        """Write the staged row of ``key`` before a delete or retype, so the triggers see it and
        remove elements inserted in this transaction."""
        self.settle()
        row = self._dirty.pop(key, None)
        if row is None:
            return
        if self._base.pop(key) is None:
            self.cur.execute(_INSERT, (key, *row))
        # A row already in the file is deleted or retyped next: its staged changes do not matter.

    def flush(self) -> None:
        """Write the queued list elements and every staged row that changed, in at most four
        statements."""
        self.settle()
        inserts: list[tuple[Any, ...]] = []
        updates: list[tuple[Any, ...]] = []
        expiring: list[tuple[Any, ...]] = []
        for key, row in self._dirty.items():
            old = self._base[key]
            if old is None:
                inserts.append((key, *row))
            elif row[2] != old[2]:
                expiring.append((row[1], row[3], row[4], row[2], key))
            elif row[1] != old[1] or row[3] != old[3] or row[4] != old[4]:
                updates.append((row[1], row[3], row[4], key))
        cur = self.cur
        if inserts:
            cur.executemany(_INSERT, inserts)
        if updates:
            cur.executemany(_UPDATE, updates)
        if expiring:
            cur.executemany(_UPDATE_EXPIRE, expiring)
        self._dirty.clear()
        self._base.clear()
