"""What only the PostgreSQL engine has: URLs, a schema with a version, batch ids, lost connections,
timeouts, vacuum, the records of every table (notifications: ``test_postgres_notify.py``).

Every test runs against the real server of the ``postgres_url`` fixture (each test that needs a
schema of its own names one after the test, so xdist workers never share it).
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from urllib.parse import parse_qsl, urlsplit

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from _postgres_server import with_schema
from _redis_relay import Relay
from memstack import ManualClock
from memstack.engines import open_engine
from memstack.engines.base import Op
from memstack.engines.postgres import PostgresEngine
from memstack.engines.postgres.codec import encode, lock_ids
from memstack.engines.postgres.schema import SCHEMA_VERSION
from memstack.engines.postgres.url import parse
from memstack.foundation.errors import (
    EngineClosed,
    EngineError,
    EngineUnavailable,
    InvalidConfiguration,
    InvalidUrl,
)

from ._pg import admin, port_of, via
from .test_conformance import wait_for


# -- URLs ------------------------------------------------------------------------------------
def test_urls_name_the_schema_and_refuse_unknown_parameters() -> None:
    target = parse(
        "postgres://alice:s3cret@db.example:6543/app?sslmode=require&schema=team_a",
        statement_timeout=30, tcp_timeout=10, connect_timeout=5,
    )  # fmt: skip
    assert target.schema == "team_a"
    assert "s3cret" not in target.label and target.label == "PostgreSQL at db.example:6543/app"
    settings = conninfo_to_dict(target.conninfo)
    assert settings["sslmode"] == "require" and settings["client_encoding"] == "utf8"
    assert settings["password"] == "s3cret" and "statement_timeout=30000" in str(settings["options"])
    with pytest.raises(InvalidUrl, match="sslmod"):
        parse("postgresql://h/db?sslmod=require", statement_timeout=1, tcp_timeout=1, connect_timeout=1)
    with pytest.raises(InvalidUrl, match="schema"):
        open_engine("postgresql://h/db?schema=Bad-Name")
    with pytest.raises(InvalidUrl, match="twice"):
        parse("postgresql://h/db?schema=a&schema=b", statement_timeout=1, tcp_timeout=1, connect_timeout=1)


def test_an_unreachable_server_is_unavailable_quickly() -> None:
    with contextlib.closing(__import__("socket").socket()) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: connections are refused
        started = time.monotonic()
        with pytest.raises(EngineUnavailable, match=r"127\.0\.0\.1"):
            PostgresEngine(f"postgresql://postgres@127.0.0.1:{port}/postgres", connect_timeout=1)
    assert time.monotonic() - started < 10


# -- schema ----------------------------------------------------------------------------------
def test_schema_is_created_once_by_racing_processes_and_versioned(server: str, schema: str) -> None:
    url = with_schema(server, schema)
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            engine = PostgresEngine(url, max_connections=2)
            engine.set("k", "v")
            engine.close()
        except BaseException as exc:  # re-raised below
            errors.append(exc)

    # Different pool sizes: each thread opens its own pool, as separate processes would.
    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert admin(server, f'SELECT value FROM "{schema}".meta WHERE name = %s', ("schema_version",)) == [
        (str(SCHEMA_VERSION),)
    ]


def test_a_newer_schema_is_never_written(server: str, schema: str) -> None:
    url = with_schema(server, schema)
    PostgresEngine(url).close()
    admin(
        server,
        f"UPDATE \"{schema}\".meta SET value = %s WHERE name = 'schema_version'",
        (str(SCHEMA_VERSION + 1),),
    )
    admin(server, f"UPDATE \"{schema}\".meta SET value = 'other' WHERE name = 'functions'")
    # Another process: this one remembers the schema it already checked.
    code = (
        "import sys\nfrom memstack.engines.postgres import PostgresEngine\n"
        "try:\n    PostgresEngine(sys.argv[1])\nexcept Exception as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code, url], capture_output=True, text=True, timeout=60).stdout
    assert out.startswith("EngineError") and "newer" in out and str(SCHEMA_VERSION + 1) in out
    assert admin(server, f"SELECT value FROM \"{schema}\".meta WHERE name = 'functions'") == [("other",)]


def test_changed_functions_of_the_same_version_are_replaced(server: str, schema: str) -> None:
    url = with_schema(server, schema)
    with PostgresEngine(url) as engine:
        engine.set("kept", "yes")
    admin(server, f"UPDATE \"{schema}\".meta SET value = 'stale' WHERE name = 'functions'")
    admin(server, f'DROP FUNCTION "{schema}".batch_read')
    import subprocess
    import sys

    code = (
        "import sys\nfrom memstack.engines.postgres import PostgresEngine\n"
        "e = PostgresEngine(sys.argv[1]); print(e.get('kept')); e.close()\n"
    )
    out = subprocess.run([sys.executable, "-c", code, url], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "yes", out.stderr


def test_a_database_that_is_not_utf8_is_refused(server: str) -> None:
    name = f"latin_{os.environ.get('PYTEST_XDIST_WORKER', 'gw0')}"
    admin(server, f"DROP DATABASE IF EXISTS {name}")
    admin(
        server, f"CREATE DATABASE {name} ENCODING 'SQL_ASCII' TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C'"
    )
    try:
        parts = urlsplit(server)
        with pytest.raises(InvalidConfiguration, match="UTF8"):
            PostgresEngine(parts._replace(path=f"/{name}").geturl())
    finally:
        admin(server, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_schemas_are_separate_stores(server: str, schema: str) -> None:
    other = schema[:55] + "_other"
    admin(server, f'DROP SCHEMA IF EXISTS "{other}" CASCADE')
    try:
        with (
            PostgresEngine(with_schema(server, schema)) as a,
            PostgresEngine(with_schema(server, other)) as b,
        ):
            a.set("k", "a")
            heard: list[str] = []
            with b.subscribe("ch", heard.append):
                a.publish("ch", "for a's listeners only")
                b.publish("ch", "b")
                assert wait_for(lambda: heard == ["b"])
            assert b.get("k") is None and list(b.scan("")) == []
    finally:
        admin(server, f'DROP SCHEMA IF EXISTS "{other}" CASCADE')


# -- batch ids and retries -------------------------------------------------------------------
def _argv(ops: list[Op]) -> str:
    """A write batch's ``argv`` as the engine sends it (a ``text[]`` literal)."""
    return encode(ops, write=True)[0].decode()


def test_a_replayed_batch_answers_its_first_reply_and_applies_nothing(server: str, schema: str) -> None:
    url = with_schema(server, schema)
    with PostgresEngine(url) as engine:
        call = f'SELECT "{schema}".batch_write(%s::text[], %s::bigint, %s::bigint, %s::bigint, %s)'
        argv = _argv([("incr", ("n", 5)), ("rpush", ("l", "x"))])
        first = admin(server, call, (argv, engine.now_ms(), 42, 60_000, False))
        again = admin(server, call, (argv, engine.now_ms(), 42, 60_000, True))
        assert first == again == [('[true,["5",1]]',)]
        assert engine.get("n") == "5" and engine.lrange("l", 0, -1) == ["x"]
        assert ("batches:42", 'batches:42\n[true,["5",1]]\n["n", "l"]') in list(engine.raw_items())
        # A replay whose first run never committed applies once.
        assert admin(server, call, (argv, engine.now_ms(), 43, 60_000, True)) == [('[true,["10",2]]',)]


class BatchReplyCutter(Relay):
    """Drops the next ``cuts`` replies of batch functions (the chunk holding ``[true,``): the
    server committed the batch, the engine never hears back, its connection is closed."""

    def __init__(self, target: int) -> None:
        self.cuts = 0
        super().__init__(target)

    def relay(self, src: object, data: bytes, to_server: bool) -> bool:
        with self._lock:
            if to_server or self.cuts <= 0 or b"[true," not in data:
                return True
            self.cuts -= 1
            return False


def test_a_write_whose_reply_was_lost_is_retried_once_and_applied_once(server: str, schema: str) -> None:
    relay = BatchReplyCutter(port_of(server))
    try:
        with PostgresEngine(with_schema(via(server, relay.port), schema), max_connections=2) as engine:
            engine.set("n", "0")
            for _ in range(5):
                relay.cuts = 1  # the first reply is lost: the retry replays the batch id
                engine.incr("n")
            assert engine.get("n") == "5"
            relay.cuts = 2  # the replay's reply is lost too
            with pytest.raises(EngineUnavailable, match="may have been applied"):
                engine.incr("n")
            relay.cuts = 2
            with pytest.raises(EngineUnavailable) as raised:  # a read: nothing to apply
                engine.get("n")
            assert "may have been applied" not in str(raised.value)
            assert engine.get("n") == "6"
    finally:
        relay.close()


def test_terminated_backends_cost_no_call(server: str, schema: str) -> None:
    name = f"memstack-{schema}"[:63]  # only this test's backends are terminated
    url = with_schema(server, schema) + f"&application_name={name}"
    with PostgresEngine(url, max_connections=4) as engine:
        engine.set("n", "0")
        for i in range(3):
            killed = admin(
                server,
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = %s",
                (name,),
            )
            assert killed[0][0] >= 1
            assert engine.incr("n") == i + 1
        assert engine.get("n") == "3"


def test_a_statement_timeout_applies_nothing_and_says_so(server: str, schema: str) -> None:
    url = with_schema(server, schema)
    with PostgresEngine(url, statement_timeout=0.3) as engine:
        engine.set("busy", "0")
        lock = engine.names.lock
        batch = engine.batch()
        batch.set("other", "x")
        batch.incr("busy")
        with psycopg.connect(server, autocommit=True) as holder:
            holder.execute("SELECT pg_advisory_lock(%s, %s)", (lock, lock_ids(["busy"])[0]))
            with pytest.raises(EngineUnavailable, match="nothing applied"):
                batch.execute()
        assert engine.get("busy") == "0" and engine.get("other") is None


# -- expiry, compaction, records -------------------------------------------------------------
def test_sweep_removes_expired_keys_under_the_engine_clock(server: str, schema: str) -> None:
    clock = ManualClock()
    with PostgresEngine(with_schema(server, schema), clock, sweep_interval=None) as engine:
        engine.set("a", "1", px=1000)
        engine.hset("h", {"f": "v"})
        engine.pexpire("h", 1000)
        engine.set("stays", "1")
        assert engine.sweep() == 0
        clock.advance(1.0)
        assert engine.sweep() == 2
        assert admin(server, f'SELECT key FROM "{schema}".keys') == [("stays",)]
        assert admin(server, f'SELECT count(*) FROM "{schema}".hashes') == [(0,)]


def _files_holding(server: str, schema: str, data_dir: str, marker: bytes) -> list[str]:
    admin(server, "CHECKPOINT")  # whatever shared buffers still hold reaches the files
    paths = [
        os.path.join(data_dir, str(r[0]))
        for r in admin(
            server,
            "SELECT pg_relation_filepath(c.oid) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND pg_relation_filepath(c.oid) IS NOT NULL",
            (schema,),
        )
    ]
    assert paths
    holding = []
    for path in paths:
        if os.path.exists(path):
            with open(path, "rb") as handle:
                if marker in handle.read():
                    holding.append(path)
    return holding


def test_vacuum_full_leaves_no_copy_in_the_table_files(server: str, schema: str) -> None:
    rows = admin(server, "SELECT current_setting('data_directory')")
    data_dir = str(rows[0][0])
    if not os.access(data_dir, os.R_OK):
        pytest.skip("the server's data directory is not readable here")
    marker = "forget-me-" + os.urandom(6).hex()
    with PostgresEngine(with_schema(server, schema)) as engine:
        engine.set("s", marker)
        engine.hset("h", {"f": marker})
        engine.zadd("z", {marker: 1.0})
        assert _files_holding(server, schema, data_dir, marker.encode())  # the check can see it
        engine.delete("s", "h", "z")
        engine.flush()  # batch replies hold the marker too
        assert not any(marker in text for _, text in engine.raw_items())
        # VACUUM keeps row versions that a transaction begun before the delete may still read
        # (other tests share the server): it drops them once those transactions are over.
        deadline = time.monotonic() + 30
        while True:
            engine.compact(vacuum=True)
            holding = _files_holding(server, schema, data_dir, marker.encode())
            if not holding or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert holding == []


def test_raw_items_cover_every_table(server: str, schema: str) -> None:
    with PostgresEngine(with_schema(server, schema)) as engine:
        engine.rpush("l", "first", "second")
        engine.zadd("z", {"m": 2.5, "n": math.inf})
        engine.hset("h", {"f": "v\x00"})
        engine.publish("ch", "said")
        items = dict(engine.raw_items())
        assert items["l"] == "l\nfirst\nsecond" and items["z"] == "z\nm\t2.5\nn\tinf"
        assert items["h"] == "h\nf\tv\x00"
        assert any(
            where.startswith("events:") and text.endswith("\nch\nsaid") for where, text in items.items()
        )
        assert any(where.startswith("batches:") and '"z"' in text for where, text in items.items())
        assert items["meta:schema_version"] == f"meta:schema_version\n{SCHEMA_VERSION}"
        assert all(text.startswith(where) for where, text in items.items())


def test_a_forget_withdraws_batch_replies_and_a_retry_still_applies_nothing(server: str, schema: str) -> None:
    with PostgresEngine(with_schema(server, schema)) as engine:
        engine.set("secret", "alice's")
        call = f'SELECT "{schema}".batch_write(%s::text[], %s::bigint, %s::bigint, %s::bigint, %s)'
        argv = _argv([("get", ("secret",)), ("incr", ("n", 1))])
        assert admin(server, call, (argv, engine.now_ms(), 7, 60_000, False)) == [
            ('[true,["alice\'s","1"]]',)
        ]
        internal = dict(engine.internal_items())
        assert "alice's" in internal["batches:7"] and '"secret"' in internal["batches:7"]
        assert engine.drop_internal(["batches:7", "events:999999", "secret", "batches:x"]) == 1
        assert dict(engine.internal_items())["batches:7"] == "batches:7\nMSWITHDRAWN\n[]"
        assert not any("alice" in text for _, text in engine.raw_items() if not text.startswith("secret"))
        assert engine.get("secret") == "alice's"  # the data itself stays
        assert admin(server, call, (argv, engine.now_ms(), 7, 60_000, True)) == [("MSWITHDRAWN",)]
        assert engine.get("n") == "1"


def test_details_and_closing(server: str, schema: str) -> None:
    engine = PostgresEngine(with_schema(server, schema))
    details = engine.details()
    assert details["server"].startswith("PostgreSQL ") and schema in details["schema"]
    assert "max 16" in details["pool"]
    engine.close()
    engine.close()
    with pytest.raises(EngineClosed):
        engine.get("k")
    with pytest.raises(EngineClosed):
        list(engine.scan(""))
    assert isinstance(EngineClosed("x"), EngineError)


def test_query_parameters_reach_the_server(server: str, schema: str) -> None:
    url = with_schema(server, schema) + "&application_name=memstack-test"
    assert dict(parse_qsl(urlsplit(url).query))["application_name"] == "memstack-test"
    with PostgresEngine(url) as engine:
        engine.set("k", "v")
        names = admin(server, "SELECT application_name FROM pg_stat_activity WHERE datname = 'postgres'")
        assert ("memstack-test",) in names


def test_doctor_shows_the_server_the_schema_and_the_pool(server: str, schema: str) -> None:
    import subprocess
    import sys

    env = {**os.environ, "MEMSTACK_URL": with_schema(server, schema), "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-m", "memstack.doors.cli", "doctor", "--embedder", "none"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "engine server" in done.stdout and "PostgreSQL" in done.stdout
    assert f"{schema} (version {SCHEMA_VERSION}" in done.stdout and "engine pool" in done.stdout
