"""What only the SQLite engine has: a file, WAL, locks, a sweeper, other processes, crashes."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from memstack import ManualClock
from memstack.engines import open_engine
from memstack.engines.sqlite import SqliteEngine, sqlite_path
from memstack.foundation.errors import EngineUnavailable, InvalidUrl

from .test_conformance import wait_for

SRC = str(Path(__file__).resolve().parents[2] / "src")


def url_of(path: Path) -> str:
    return f"sqlite:///{path}"


def rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def run_child(code: str, *args: str, stdin: bool = False) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        stdout=subprocess.PIPE,
        stdin=subprocess.PIPE if stdin else None,
        text=True,
        env=env,
    )


# -- URLs and files --------------------------------------------------------------------------
def test_urls_relative_absolute_and_parent_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert sqlite_path("sqlite:///data/x.db") == "data/x.db"
    assert sqlite_path("sqlite:////var/lib/x.db") == "/var/lib/x.db"
    monkeypatch.chdir(tmp_path)
    with open_engine("sqlite:///rel/dir/a.db") as engine:
        engine.set("k", "v")
    assert (tmp_path / "rel" / "dir" / "a.db").is_file()
    deep = tmp_path / "abs" / "deeper" / "b.db"
    with open_engine(url_of(deep)) as engine:
        engine.set("k", "v")
    assert rows(deep, "SELECT key, value FROM keys") == [("k", "v")]


@pytest.mark.parametrize("url", ["sqlite://host/x.db", "sqlite:///", "sqlite:///:memory:", "sqlite:///dir/"])
def test_bad_urls(url: str) -> None:
    with pytest.raises(InvalidUrl, match="sqlite"):
        open_engine(url)


def test_unopenable_file_is_unavailable(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(EngineUnavailable, match="file"):
        open_engine(url_of(blocker / "x.db"))
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database" * 100)
    with pytest.raises(EngineUnavailable, match=str(garbage)):
        open_engine(url_of(garbage))


def test_wal_mode_and_synchronous(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    with SqliteEngine(url_of(path)) as engine:
        engine.set("k", "v")
        assert rows(path, "PRAGMA journal_mode") == [("wal",)]
        assert engine._conn.execute("PRAGMA synchronous").fetchone() == (1,)  # NORMAL


def test_close_releases_the_file_and_threads(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    engine = SqliteEngine(url_of(path), sweep_interval=0.01)
    sub = engine.subscribe("ch", lambda m: None)
    engine.set("k", "v")
    names = {t.name for t in threading.enumerate()}
    assert {"memstack-sqlite-sweep", "memstack-sqlite-listen"} <= names
    sub.close()
    engine.close()
    engine.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("memstack-sqlite")]
    # The last connection checkpointed and removed the WAL: the file alone holds the data.
    assert not Path(f"{path}-wal").exists()
    assert rows(path, "PRAGMA integrity_check") == [("ok",)]
    assert rows(path, "SELECT value FROM keys WHERE key = 'k'") == [("v",)]


def test_listener_runs_only_while_subscribed(tmp_path: Path) -> None:
    with SqliteEngine(url_of(tmp_path / "l.db"), sweep_interval=None) as engine:

        def listening() -> bool:
            return any(t.name == "memstack-sqlite-listen" for t in threading.enumerate())

        assert not listening()
        got: list[str] = []
        first = engine.subscribe("a", got.append)
        second = engine.subscribe("b", got.append)
        assert listening()
        first.close()
        assert listening()
        second.close()
        assert wait_for(lambda: not listening())
        third = engine.subscribe("a", got.append)
        engine.publish("a", "again")
        assert wait_for(lambda: got == ["again"])
        third.close()


def test_publishers_prune_old_events(tmp_path: Path) -> None:
    path = tmp_path / "e.db"
    with SqliteEngine(url_of(path), sweep_interval=None) as engine:
        got: list[str] = []
        engine.subscribe("ch", got.append)
        raw = sqlite3.connect(path, isolation_level=None)
        raw.execute("INSERT INTO events (channel, message, at) VALUES ('old', 'stale', 0)")
        raw.close()
        engine._last_prune = 0.0  # due now
        engine.publish("ch", "fresh")
        assert rows(path, "SELECT channel, message FROM events ORDER BY id") == [("ch", "fresh")]
        assert wait_for(lambda: got == ["fresh"])
        engine.publish("ch", "next")  # not due again yet: nothing else goes
        assert rows(path, "SELECT count(*) FROM events") == [(2,)]
        assert wait_for(lambda: got == ["fresh", "next"])


# -- expiry sweep ----------------------------------------------------------------------------
def test_sweep_removes_expired_rows_in_bounded_steps(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    clock = ManualClock()
    with SqliteEngine(url_of(path), clock, sweep_interval=None, sweep_limit=10) as engine:
        for i in range(22):
            engine.set(f"s{i}", "v", px=1000)
        engine.rpush("list", *[str(i) for i in range(50)])
        engine.hset("hash", {"f": "v"})
        engine.pexpire("list", 500)
        engine.pexpire("hash", 500)
        engine.set("keep", "v")
        engine.set("later", "v", px=5000)
        assert engine.sweep() == 0
        clock.advance(1.0)
        removed = [engine.sweep() for _ in range(4)]
        assert removed == [10, 10, 4, 0]
        assert rows(path, "SELECT key FROM keys ORDER BY key") == [("keep",), ("later",)]
        assert rows(path, "SELECT count(*) FROM lists") == [(0,)]
        assert rows(path, "SELECT count(*) FROM hashes") == [(0,)]
        assert engine.get("later") == "v"


def test_background_sweep_runs(tmp_path: Path) -> None:
    path = tmp_path / "b.db"
    clock = ManualClock()
    with SqliteEngine(url_of(path), clock, sweep_interval=0.01) as engine:
        engine.set("gone", "v", px=10)
        clock.advance(0.01)
        assert wait_for(lambda: rows(path, "SELECT count(*) FROM keys") == [(0,)])


def test_expired_rows_purged_by_writes(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    clock = ManualClock()
    with SqliteEngine(url_of(path), clock, sweep_interval=None) as engine:
        engine.rpush("l", "a", "b")
        engine.pexpire("l", 10)
        clock.advance(0.01)
        assert engine.lrange("l", 0, -1) == []  # a read hides it ...
        assert rows(path, "SELECT count(*) FROM lists") == [(2,)]
        assert engine.rpush("l", "c") == 1  # ... a write purges it and starts afresh
        assert rows(path, "SELECT value FROM lists") == [("c",)]


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("sqlite.sequences", "_L_RANGE"),
        ("sqlite.sequences", "_L_AT"),
        ("sqlite.sequences", "_Z_ASC"),
        ("sqlite.sequences", "_Z_DESC"),
        ("sqlite.sequences", "_Z_BY_SCORE"),
        ("sqlite.sequences", "_Z_BY_SCORE_DESC"),
        ("sqlite.tx", "_META"),
    ],
)
def test_range_reads_are_index_searches(tmp_path: Path, module: str, name: str) -> None:
    """Reads seek an index to the requested range: no table scan, no sort of a whole container."""
    import importlib

    sql = getattr(importlib.import_module(f"memstack.engines.{module}"), name)
    with SqliteEngine(url_of(tmp_path / "plan.db"), sweep_interval=None) as engine:
        params = [1] * sql.count("?")
        plan = " | ".join(r[3] for r in engine._conn.execute("EXPLAIN QUERY PLAN " + sql, params))
    assert "SEARCH" in plan, plan
    assert "SCAN" not in plan and "TEMP B-TREE" not in plan, plan


# -- locks -----------------------------------------------------------------------------------
def test_busy_file_raises_unavailable_in_bounded_time(tmp_path: Path) -> None:
    path = tmp_path / "busy.db"
    clock = ManualClock()
    with SqliteEngine(url_of(path), clock, busy_timeout=0.2, sweep_interval=None) as engine:
        engine.set("k", "v")
        engine.set("expired", "v", px=1)
        clock.advance(0.001)
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            started = time.monotonic()
            with pytest.raises(EngineUnavailable, match=str(path)):
                engine.set("k", "w")
            assert time.monotonic() - started < 3.0
            assert engine.get("k") == "v"  # WAL: readers go on while a writer holds the lock
            with pytest.raises(EngineUnavailable):
                engine._sweep(10)  # the background sweep's short wait
            assert engine._conn.execute("PRAGMA busy_timeout").fetchone() == (200,)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert engine.set("k", "w")
        assert engine.get("k") == "w"
        assert engine.sweep() == 1


def test_row_cache_sees_writes_of_other_connections(tmp_path: Path) -> None:
    url = url_of(tmp_path / "cache.db")
    with open_engine(url) as first, open_engine(url) as second:
        first.hset("h", {"a": "1", "b": "2"})
        first.rpush("l", "x")
        second.delete("h")
        second.rpush("l", "y")
        assert first.hset("h", {"c": "3"}) == 1
        assert first.hlen("h") == 1
        assert first.rpush("l", "z") == 3
        assert second.lrange("l", 0, -1) == ["x", "y", "z"]
        assert first.incr("n") == 1  # now cached by first
        raw = sqlite3.connect(tmp_path / "cache.db", isolation_level=None)
        raw.execute("UPDATE keys SET value = '41' WHERE key = 'n'")
        raw.close()
        assert first.incr("n") == 42


# -- other processes -------------------------------------------------------------------------
CHILD_LISTENER = """
import sys
from memstack.engines import open_engine
engine = open_engine(sys.argv[1])
got = []
import threading
done = threading.Event()
def on_message(message):
    got.append(message)
    if len(got) == 2:
        done.set()
engine.subscribe("ch", on_message)
print("ready", flush=True)
done.wait(20)
print("|".join(got), engine.get("k"), flush=True)
engine.set("child", "was here")
engine.publish("back", "from child")
engine.close()
"""


def test_child_process_sees_writes_and_messages(tmp_path: Path) -> None:
    url = url_of(tmp_path / "x.db")
    with open_engine(url) as engine:
        back: list[str] = []
        engine.subscribe("back", back.append)
        with run_child(CHILD_LISTENER, url) as child:
            assert child.stdout is not None
            try:
                assert child.stdout.readline().strip() == "ready"
                with engine.batch() as batch:
                    batch.set("k", "v1")
                    batch.publish("ch", "first")
                engine.publish("ch", "second")
                assert child.stdout.readline().split() == ["first|second", "v1"]
                assert child.wait(20) == 0
            finally:
                child.kill()
        assert engine.get("child") == "was here"
        assert wait_for(lambda: back == ["from child"])


CHILD_INCREMENTER = """
import sys
from memstack.engines import open_engine
engine = open_engine(sys.argv[1])
name = sys.argv[2]
engine.exists("warm-up")
print("ready", flush=True)
sys.stdin.readline()  # start together with the others
for i in range(200):
    with engine.batch() as batch:
        batch.incr("counter")
        batch.rpush("log", f"{name}-{i}")
        batch.hincr("per", name)
    engine.hset("h", {"last": f"{name}-{i}"})
    engine.delete("h")
engine.close()
print("done", flush=True)
"""


def test_processes_increment_one_counter(tmp_path: Path) -> None:
    """Writers in several processes (and this one) serialise on the file; each one's row cache
    notices the others' commits."""
    url = url_of(tmp_path / "inc.db")
    with open_engine(url) as engine:
        children = [run_child(CHILD_INCREMENTER, url, f"p{n}", stdin=True) for n in range(3)]
        try:
            for child in children:
                assert child.stdout is not None and child.stdin is not None
                assert child.stdout.readline().strip() == "ready"
            for child in children:
                assert child.stdin is not None
                child.stdin.write("go\n")
                child.stdin.close()
            for i in range(200):
                engine.incr("counter")
                engine.rpush("log", f"main-{i}")
                engine.hincr("per", "main")
            for child in children:
                assert child.stdout is not None
                assert child.stdout.read().strip() == "done"
                assert child.wait(60) == 0
        finally:
            for child in children:
                child.kill()
                child.wait()
                if child.stdout is not None:
                    child.stdout.close()
        assert engine.get("counter") == "800"
        log = engine.lrange("log", 0, -1)
        assert len(log) == 800 and len(set(log)) == 800
        assert engine.hgetall("per") == {"main": "200", "p0": "200", "p1": "200", "p2": "200"}
        assert not engine.exists("h")


CHILD_WRITER = """
import sys
from memstack.engines import open_engine
engine = open_engine(sys.argv[1])
mode, start = sys.argv[2], int(sys.argv[3])
if mode == "session":
    import memstack
    memory = memstack.Memory(engine)
    if not memory.sessions.exists("crash"):
        memory.sessions.create("crash")
i = start
while True:
    if mode == "session":
        memory.sessions.put("crash", f"k{i}", {"n": i, "text": "x" * (i % 300)})
    else:
        with engine.batch() as batch:
            batch.set(f"crash:k{i}", str(i))
            batch.sadd("crash:__keys__", f"k{i}")
            batch.rpush("crash:__history__", f'{{"op": "put", "key": "k{i}"}}')
    print(i, flush=True)
    i += 1
"""


@pytest.mark.slow
def test_acknowledged_puts_survive_sigkill(tmp_path: Path) -> None:
    """A child writes puts and acknowledges each after the call returned; killing it at random
    moments never corrupts the file nor loses an acknowledged put."""
    path = tmp_path / "crash.db"
    url = url_of(path)
    mode = "session" if _has_sessions() else "batch"
    rng = random.Random(20261121)
    acknowledged: list[int] = []
    for _ in range(20):
        with run_child(CHILD_WRITER, url, mode, str(len(acknowledged))) as child:
            assert child.stdout is not None
            first = child.stdout.readline()  # wait until it writes, then let it run a little
            assert first.strip() == str(len(acknowledged)), first
            acknowledged.append(int(first))
            time.sleep(rng.uniform(0.0, 0.15))
            child.send_signal(signal.SIGKILL)
            rest = child.stdout.read()  # what it acknowledged before dying (the pipe keeps it)
            child.wait(10)
        acknowledged.extend(int(line) for line in rest.split())
        assert acknowledged == list(range(len(acknowledged)))
        assert rows(path, "PRAGMA integrity_check") == [("ok",)]
        with open_engine(url) as engine:
            if mode == "session":
                import memstack

                sessions = memstack.Memory(engine).sessions
                stored = sessions.items("crash")
                for i in acknowledged:
                    assert stored[f"k{i}"] == {"n": i, "text": "x" * (i % 300)}
            else:
                values = engine.mget([f"crash:k{i}" for i in acknowledged])
                assert values == [str(i) for i in acknowledged]
                assert engine.scard("crash:__keys__") >= len(acknowledged)
    assert len(acknowledged) > 20


def _has_sessions() -> bool:
    try:
        from memstack.tiers.session import SessionStore  # noqa: F401 - probing that the tier exists
    except ImportError:
        return False
    return True
