"""The SQLite engine's schema and connection settings.

One ``keys`` row per key (type, string value, expire-at, container bookkeeping) and one table per
container type. Deleting a ``keys`` row, or turning it into another type, removes its elements
through triggers, inside SQLite, so no command pays a Python round trip for the cleanup.
"""

from __future__ import annotations

import sqlite3
from typing import Final

__all__ = ["SCHEMA", "connect"]

SCHEMA_VERSION: Final = 1

SCHEMA: Final = f"""
CREATE TABLE IF NOT EXISTS keys (
    key TEXT PRIMARY KEY NOT NULL,
    kind TEXT NOT NULL,
    value TEXT,
    expire INTEGER,
    lo INTEGER,
    n INTEGER
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS keys_expire ON keys (expire) WHERE expire IS NOT NULL;
CREATE TABLE IF NOT EXISTS hashes (
    key TEXT NOT NULL, field TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (key, field)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sets (
    key TEXT NOT NULL, member TEXT NOT NULL, PRIMARY KEY (key, member)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lists (
    key TEXT NOT NULL, seq INTEGER NOT NULL, value TEXT NOT NULL, PRIMARY KEY (key, seq)
) WITHOUT ROWID;
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


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create the tables once per file (a no-op when another process already did).

    Raises:
        sqlite3.Error: the file is locked past the busy timeout or unusable.
    """
    if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in _statements(SCHEMA):
            conn.execute(statement)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


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
