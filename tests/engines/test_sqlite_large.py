"""The SQLite engine with large values: strings and hash fields of hundreds of KB beside small keys,
the schema version 2 layout that keeps them out of other keys' lookups, and the migration of
version 1 files."""

from __future__ import annotations

import random
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from memstack import ManualClock
from memstack.engines.sqlite import SqliteEngine
from memstack.engines.sqlite.schema import SCHEMA_VERSION
from memstack.foundation.errors import EngineError, EngineUnavailable

from .test_sqlite import rows, run_child, url_of

BIG = "b" * 200_000  # overflows many pages: a BM25 snapshot is this size or larger
VECTOR = "v" * 1536  # a 384-dimension vector payload

# The tables memstack wrote with schema version 1 (what its files on disk hold).
V1_SCHEMA = """
CREATE TABLE IF NOT EXISTS keys (
    key TEXT PRIMARY KEY NOT NULL, kind TEXT NOT NULL, value TEXT, expire INTEGER, lo INTEGER, n INTEGER
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
    id INTEGER PRIMARY KEY AUTOINCREMENT, channel TEXT NOT NULL, message TEXT NOT NULL, at REAL NOT NULL
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
PRAGMA user_version = 1;
"""
NOW_MS = 1_000_000


def engine_at(path: Path, clock: ManualClock | None = None) -> SqliteEngine:
    return SqliteEngine(url_of(path), clock or ManualClock(NOW_MS / 1000), sweep_interval=None)


def table_sql(path: Path) -> dict[str, str]:
    return {name: sql for name, sql in rows(path, "SELECT name, sql FROM sqlite_master WHERE type = 'table'")}


def write_v1_file(path: Path) -> None:
    """A file as memstack 1 left it: every type, large values, a TTL."""
    conn = sqlite3.connect(path)
    try:
        conn.executescript(V1_SCHEMA)
        keys = [
            ("s", "string", "small", None, None, None),
            ("s:big", "string", BIG, None, None, None),
            ("s:ttl", "string", BIG, NOW_MS + 5000, None, None),
            ("h", "hash", None, None, 0, 3),
            ("st", "set", None, None, 0, 2),
            ("l", "list", None, None, 0, 2),
            ("z", "zset", None, None, 0, 2),
        ]
        conn.executemany("INSERT INTO keys VALUES (?, ?, ?, ?, ?, ?)", keys)
        conn.executemany(
            "INSERT INTO hashes VALUES (?, ?, ?)", [("h", "a", "1"), ("h", "big", BIG), ("h", "vec", VECTOR)]
        )
        conn.executemany("INSERT INTO sets VALUES (?, ?)", [("st", "x"), ("st", "y")])
        conn.executemany("INSERT INTO lists VALUES (?, ?, ?)", [("l", 0, BIG), ("l", 1, "tail")])
        conn.executemany("INSERT INTO zsets VALUES (?, ?, ?)", [("z", "m", 1.0), ("z", "n", 2.5)])
        conn.commit()
    finally:
        conn.close()


def assert_v1_contents(engine: SqliteEngine) -> None:
    assert engine.mget(["s", "s:big", "s:ttl"]) == ["small", BIG, BIG]
    assert engine.pttl("s:ttl") == 5000
    assert engine.hgetall("h") == {"a": "1", "big": BIG, "vec": VECTOR}
    assert engine.hlen("h") == 3
    assert engine.smembers("st") == {"x", "y"}
    assert engine.lrange("l", 0, -1) == [BIG, "tail"]
    assert engine.zrange("z", 0, -1) == [("m", 1.0), ("n", 2.5)]
    assert sorted(engine.scan("")) == ["h", "l", "s", "s:big", "s:ttl", "st", "z"]


# -- the layout ------------------------------------------------------------------------------
def test_the_tables_holding_values_are_rowid_tables(tmp_path: Path) -> None:
    """A lookup must not compare against (and so read) a large neighbouring row: only rowid
    tables keep rows out of the b-tree searched by key."""
    with engine_at(tmp_path / "new.db"):
        pass
    sql = table_sql(tmp_path / "new.db")
    assert not any("WITHOUT ROWID" in sql[t] for t in ("keys", "hashes", "lists"))
    assert all("WITHOUT ROWID" in sql[t] for t in ("sets", "zsets"))
    assert rows(tmp_path / "new.db", "PRAGMA user_version") == [(SCHEMA_VERSION,)]


def test_large_strings_beside_small_keys(tmp_path: Path) -> None:
    clock = ManualClock(NOW_MS / 1000)
    with engine_at(tmp_path / "s.db", clock) as engine:
        engine.set("k:snap", BIG)
        engine.set("k:snapver", "7")
        engine.set("k:ver", "8", px=1000)
        assert engine.mget(["k:snap", "k:snapver", "k:ver"]) == [BIG, "7", "8"]
        assert engine.set("k:snap", BIG + "!", keepttl=True)
        assert engine.get("k:snap") == BIG + "!"
        assert engine.set("k:snap", "small", xx=True) and engine.get("k:snap") == "small"
        engine.set("k:snap", BIG, px=2000)
        assert engine.copy_ttl("k:snap", "k:snapver") == 1
        assert engine.pttl("k:snapver") == 2000
        with pytest.raises(EngineError):
            engine.hget("k:snap", "f")  # a type check against a large string
        batch = engine.batch()
        batch.require_equal("k:snap", BIG + "?")  # a guard comparing a large value fails ...
        batch.set("k:other", "written")
        assert not batch.execute().applied
        assert engine.get("k:other") is None  # ... and the batch wrote nothing
        batch = engine.batch()
        batch.require_equal("k:snap", BIG)
        batch.set("k:other", "written")
        assert batch.execute().applied and engine.get("k:other") == "written"
        assert engine.delete("k:other") == 1
        assert sorted(engine.scan("k:")) == ["k:snap", "k:snapver", "k:ver"]
        clock.advance(1.5)
        assert engine.get("k:ver") is None and engine.get("k:snap") == BIG
        assert sorted(engine.scan("k:")) == ["k:snap", "k:snapver"]
        assert engine.persist("k:snap") and engine.pttl("k:snap") == -1
        clock.advance(1.0)
        assert engine.get("k:snap") == BIG and engine.get("k:snapver") is None
        assert engine.delete("k:snap") == 1
        assert engine.hset("k:snap", {"f": "v"}) == 1 and engine.hgetall("k:snap") == {"f": "v"}
    assert rows(tmp_path / "s.db", "SELECT count(*) FROM keys WHERE length(value) > 1000") == [(0,)]


def test_large_hash_fields(tmp_path: Path) -> None:
    clock = ManualClock(NOW_MS / 1000)
    with engine_at(tmp_path / "h.db", clock) as engine:
        vectors = {f"e{i}": VECTOR[:-4] + f"{i:04d}" for i in range(300)}
        assert engine.hset("vec", {**vectors, "big": BIG}) == 301
        assert engine.hget("vec", "e17") == vectors["e17"] and engine.hget("vec", "big") == BIG
        assert engine.hmget("vec", ["e0", "nope", "e299"]) == [vectors["e0"], None, vectors["e299"]]
        assert engine.hgetall("vec") == {**vectors, "big": BIG}
        assert engine.hdel("vec", "big", "e0") == 2 and engine.hlen("vec") == 299
        assert engine.hset("vec", {"e1": BIG}) == 0 and engine.hget("vec", "e1") == BIG
        assert engine.pexpire("vec", 100)
        engine.hset("other", {"x": BIG})
        clock.advance(0.2)
        assert engine.hgetall("vec") == {} and engine.hget("vec", "e1") is None
        assert engine.hgetall("other") == {"x": BIG}
        assert engine.sweep() == 1
        engine.set("other", "now a string")  # a retype: the trigger removes its fields
        assert engine.get("other") == "now a string"
    assert rows(tmp_path / "h.db", "SELECT count(*) FROM hashes") == [(0,)]


def test_large_list_elements(tmp_path: Path) -> None:
    """A conversation's messages are list elements: a large one beside small ones, in one list and
    in the list next to it, reads back whole through every list command."""
    with engine_at(tmp_path / "l.db") as engine:
        assert engine.rpush("conv:a:log", "m0", BIG, "m2") == 3
        assert engine.rpush("conv:b:log", BIG, "n1") == 2
        assert engine.lrange("conv:a:log", 0, -1) == ["m0", BIG, "m2"]
        assert engine.lrange("conv:a:log", 2, 2) == ["m2"] and engine.lindex("conv:a:log", 1) == BIG
        assert engine.llen("conv:b:log") == 2 and engine.lrange("conv:b:log", -1, -1) == ["n1"]
        engine.ltrim("conv:a:log", 1, -1)
        assert engine.lpop("conv:a:log") == BIG and engine.lrange("conv:a:log", 0, -1) == ["m2"]
        engine.set("conv:b:log", "now a string")  # a retype: the trigger removes its elements
        assert engine.get("conv:b:log") == "now a string"
    assert rows(tmp_path / "l.db", "SELECT count(*) FROM lists WHERE length(value) > 1000") == [(0,)]


# -- versions --------------------------------------------------------------------------------
def test_version_1_file_is_migrated_in_place(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    write_v1_file(path)
    clock = ManualClock(NOW_MS / 1000)
    with engine_at(path, clock) as engine:
        assert_v1_contents(engine)
        assert engine.delete("h") == 1  # the triggers came back with the new tables
        engine.set("st", "retyped")
        clock.advance(6)
        assert engine.sweep() == 1  # the expiry index too
    assert rows(path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    assert "WITHOUT ROWID" not in table_sql(path)["keys"]
    assert rows(path, "SELECT count(*) FROM hashes") == [(0,)]
    assert rows(path, "SELECT count(*) FROM sets") == [(0,)]
    assert {r[0] for r in rows(path, "SELECT name FROM sqlite_master")} == {
        "keys", "sqlite_autoindex_keys_1", "keys_expire", "hashes", "sqlite_autoindex_hashes_1", "sets",
        "lists", "sqlite_autoindex_lists_1", "zsets", "zsets_order", "events", "sqlite_sequence",
        "keys_delete", "keys_retype",
    }  # fmt: skip
    assert rows(path, "PRAGMA integrity_check") == [("ok",)]


def test_a_busy_migration_leaves_the_version_1_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    write_v1_file(path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(EngineUnavailable):
            SqliteEngine(url_of(path), busy_timeout=0.1, sweep_interval=None)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert rows(path, "PRAGMA user_version") == [(1,)]
    assert "WITHOUT ROWID" in table_sql(path)["keys"]
    with engine_at(path) as engine:
        assert_v1_contents(engine)


def test_memstack_1_opening_a_version_2_file_keeps_it_working(tmp_path: Path) -> None:
    """memstack 1 did not refuse other versions: it ran its schema script and wrote version 1.
    Its statements only create what is missing, so the tables stay rowid tables, and its SQL is
    the SQL of version 2: both read the same rows."""
    path = tmp_path / "v2.db"
    with engine_at(path) as engine:
        engine.set("s", BIG)
        engine.hset("h", {"f": BIG})
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        statement = ""
        for line in V1_SCHEMA.strip().splitlines(keepends=True):
            statement += line
            if sqlite3.complete_statement(statement):
                conn.execute(statement)
                statement = ""
        conn.execute("COMMIT")
        assert conn.execute("SELECT value FROM keys WHERE key = 's'").fetchone() == (BIG,)
    finally:
        conn.close()
    assert rows(path, "PRAGMA user_version") == [(1,)]
    with engine_at(path) as engine:
        assert engine.get("s") == BIG and engine.hget("h", "f") == BIG
    assert rows(path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]


def test_a_newer_file_is_refused_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "newer.db"
    with engine_at(path) as engine:
        engine.set("k", "v")
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    before = table_sql(path)
    with pytest.raises(EngineError, match="newer memstack") as caught:
        engine_at(path)
    assert f"version {SCHEMA_VERSION + 1}" in str(caught.value) and str(path) in str(caught.value)
    assert rows(path, "PRAGMA user_version") == [(SCHEMA_VERSION + 1,)]
    assert table_sql(path) == before and rows(path, "SELECT value FROM keys") == [("v",)]


# -- crashes ---------------------------------------------------------------------------------
CHILD_BIG_WRITER = """
import sys
from memstack.engines import open_engine
engine = open_engine(sys.argv[1])
i = int(sys.argv[2])
while True:
    with engine.batch() as batch:
        batch.set(f"s{i}", str(i) * 50_000)
        batch.hset("vec", {f"e{i}": str(i) * 2_000})
        batch.rpush("log", str(i))
    print(i, flush=True)
    i += 1
"""


@pytest.mark.slow
def test_batches_of_large_values_are_whole_after_sigkill(tmp_path: Path) -> None:
    """Killed while writing batches of a large string, a large hash field and a list element:
    every batch is in the file whole or not at all, and every acknowledged one is there."""
    path = tmp_path / "crash.db"
    rng = random.Random(37)
    done = 0
    for _ in range(8):
        with run_child(CHILD_BIG_WRITER, url_of(path), str(done)) as child:
            assert child.stdout is not None
            assert int(child.stdout.readline()) == done
            time.sleep(rng.uniform(0.0, 0.1))
            child.send_signal(signal.SIGKILL)
            acknowledged = [done, *(int(line) for line in child.stdout.read().split())]
            child.wait(10)
        assert rows(path, "PRAGMA integrity_check") == [("ok",)]
        with engine_at(path) as engine:
            written = [int(v) for v in engine.lrange("log", 0, -1)]
            assert written == list(range(len(written))) and len(written) >= acknowledged[-1] + 1
            strings = engine.mget([f"s{i}" for i in range(len(written) + 1)])
            assert strings == [str(i) * 50_000 for i in range(len(written))] + [None]
            assert engine.hgetall("vec") == {f"e{i}": str(i) * 2_000 for i in range(len(written))}
            done = len(written)
    assert done > 8
