"""The SQLite engine's schema and connection settings.

One ``keys`` row per key (type, string value, expire-at, container bookkeeping) and one table per
container type. Deleting a ``keys`` row, or turning it into another type, removes its elements
through triggers, inside SQLite, so no command pays a Python round trip for the cleanup.

``keys``, ``hashes`` and ``lists`` (the tables that hold values) are rowid tables (their primary
keys are separate indexes); ``sets`` and ``zsets`` are ``WITHOUT ROWID``. A ``WITHOUT ROWID``
table keeps whole rows in its b-tree, dividers of interior pages included, and SQLite reads an
overflowing cell's whole payload each time a search compares a key against it: one string or hash
value of a few hundred KB (a long-term scope's BM25 snapshot) made every lookup of a key beside it
read that value (bench/sqlite_large_rows.py). In a rowid table a lookup searches the small index,
then fetches its one row by rowid, whatever its neighbours hold. A list element is a value too (a
conversation's message, a session's history entry), and a range read of one list ends by reading
the row after its last: the next list's first element, read whole when it is large
(bench/sqlite_large_rows.py, ``lrange``). Sets and sorted sets hold only keys.

Versions (``PRAGMA user_version``): 1 had ``keys``, ``hashes`` and ``lists`` ``WITHOUT ROWID``; 2
rebuilds them as rowid tables (same columns, same SQL, so memstack 1 still reads and writes a
version 2 file correctly). A file of a higher version than :data:`SCHEMA_VERSION` is refused,
unchanged.
"""

from __future__ import annotations

import sqlite3
from typing import Final

from ...foundation.errors import EngineError

__all__ = ["SCHEMA", "SCHEMA_VERSION", "connect", "ensure_schema"]

SCHEMA_VERSION: Final = 2

SCHEMA: Final = f"""
CREATE TABLE IF NOT EXISTS keys (
    key TEXT PRIMARY KEY NOT NULL,
    kind TEXT NOT NULL,
    value TEXT,
    expire INTEGER,
    lo INTEGER,
    n INTEGER
);
CREATE INDEX IF NOT EXISTS keys_expire ON keys (expire) WHERE expire IS NOT NULL;
CREATE TABLE IF NOT EXISTS hashes (
    key TEXT NOT NULL, field TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (key, field)
);
CREATE TABLE IF NOT EXISTS sets (
    key TEXT NOT NULL, member TEXT NOT NULL, PRIMARY KEY (key, member)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lists (
    key TEXT NOT NULL, seq INTEGER NOT NULL, value TEXT NOT NULL, PRIMARY KEY (key, seq)
);
CREATE TABLE IF NOT EXISTS zsets (
    key TEXT NOT NULL, member TEXT NOT NULL, score REAL NOT NULL, PRIMARY KEY (key, member)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS zsets_order ON zsets (key, score, member);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    channel TEXT NOT NULL,
    message TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE TRIGGER IF NOT EXISTS keys_delete AFTER DELETE ON keys WHEN old.kind <> 'string' BEGIN
    DELETE FROM hashes WHERE old.kind = 'hash' AND key = old.key;
    DELETE FROM sets WHERE old.kind = 'set' AND key = old.key;
    DELETE FROM lists WHERE old.kind = 'list' AND key = old.key;
    DELETE FROM zsets WHERE old.kind = 'zset' AND key = old.key;
END;
CREATE TRIGGER IF NOT EXISTS keys_retype AFTER UPDATE OF kind ON keys
WHEN old.kind <> new.kind AND old.kind <> 'string' BEGIN
    DELETE FROM hashes WHERE old.kind = 'hash' AND key = old.key;
    DELETE FROM sets WHERE old.kind = 'set' AND key = old.key;
    DELETE FROM lists WHERE old.kind = 'list' AND key = old.key;
    DELETE FROM zsets WHERE old.kind = 'zset' AND key = old.key;
END;
PRAGMA user_version = {SCHEMA_VERSION};
"""


def connect(path: str, busy_timeout: float) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), WAL, ``synchronous=NORMAL``.

    Raises:
        sqlite3.Error: the file cannot be opened or set up (the engine maps it).
    """
    conn = sqlite3.connect(
        path, timeout=busy_timeout, isolation_level=None, check_same_thread=False, cached_statements=256
    )
    try:
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        if str(mode).lower() != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        # Freed pages are zeroed, so a deleted value does not linger in the file: forgetting is
        # real (tests/services/lifecycle/test_forget_sqlite_bytes.py; its cost: bench/session_ops.py).
        conn.execute("PRAGMA secure_delete = ON")
    except BaseException:
        conn.close()
        raise
    return conn


def ensure_schema(conn: sqlite3.Connection, path: str) -> None:
    """Create the tables once per file (a no-op when another process already did), or migrate a
    file of an earlier version, in one transaction.

    Raises:
        EngineError: the file was written by a newer memstack (nothing is changed).
        sqlite3.Error: the file is locked past the busy timeout or unusable.
    """
    if _version(conn, path) == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Another process may have created or migrated the file since the check above.
        if _version(conn, path) != SCHEMA_VERSION:
            _rebuild_as_rowid(conn)
            for statement in _statements(SCHEMA):
                conn.execute(statement)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _version(conn: sqlite3.Connection, path: str) -> int:
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise EngineError(
            f"sqlite file {path} has schema version {version}, written by a newer memstack; this one "
            f"knows versions up to {SCHEMA_VERSION} and will not write it: upgrade memstack"
        )
    return version


_RESHAPED: Final = ("keys", "hashes", "lists")  # the tables version 2 keeps as rowid tables


def _rebuild_as_rowid(conn: sqlite3.Connection) -> None:
    """Copy ``keys``, ``hashes`` and ``lists`` of a version 1 file into rowid tables of the same
    columns.

    Checked by the tables' own definitions, not the version number: memstack 1 relabels a
    version 2 file as 1 when it opens it (it rewrites ``user_version``), and its tables are
    already right. The index and triggers on them go first (renaming a table would point the
    triggers at the old copy); :data:`SCHEMA` creates them again.
    """
    found = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall())
    old = [t for t in _RESHAPED if "WITHOUT ROWID" in str(found.get(t, "")).upper()]
    if not old:
        return
    for drop in (
        "TRIGGER IF EXISTS keys_delete",
        "TRIGGER IF EXISTS keys_retype",
        "INDEX IF EXISTS keys_expire",
    ):
        conn.execute(f"DROP {drop}")
    creates = {
        create.split()[5]: create for create in _statements(SCHEMA) if create.startswith("CREATE TABLE")
    }
    for table in old:
        conn.execute(f"ALTER TABLE {table} RENAME TO {table}_v1")
        conn.execute(creates[table])
        conn.execute(f"INSERT INTO {table} SELECT * FROM {table}_v1")
        conn.execute(f"DROP TABLE {table}_v1")


def _statements(script: str) -> list[str]:
    """Split the script at statement ends (triggers hold ``;`` inside ``BEGIN … END``)."""
    out: list[str] = []
    buffer = ""
    for line in script.strip().splitlines():
        buffer += line + "\n"
        if sqlite3.complete_statement(buffer):
            out.append(buffer.strip())
            buffer = ""
    return out
