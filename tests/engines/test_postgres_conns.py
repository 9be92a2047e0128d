"""The PostgreSQL engine's connection pool and its prepared-statement call, on a real server."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import psycopg
import pytest

from _forked import held_by_a_thread, in_child
from memstack.engines.postgres import PostgresEngine
from memstack.engines.postgres.codec import encode, escape, lock_ids
from memstack.engines.postgres.conns import Connections, PoolClosed, PoolTimeout, call_prepared

from ._pg import admin


def _pool(server: str, max_size: int = 2, timeout: float = 5.0) -> Connections:
    return Connections(
        lambda: psycopg.Connection.connect(server, autocommit=True), max_size=max_size, timeout=timeout
    )


def test_it_lends_the_connection_given_back_last(server: str) -> None:
    pool = _pool(server)
    try:
        a = pool.lend()
        b = pool.lend()
        assert a is not b and pool.stats()["pool_size"] == 2
        pool.give_back(a)
        pool.give_back(b)
        assert pool.lend() is b  # the warmest one
        stats = pool.stats()
        assert stats["pool_size"] == 2 and stats["pool_available"] == 1 and stats["pool_max"] == 2
        assert stats["requests_waiting"] == 0 and stats["connections_errors"] == 0
        pool.give_back(b)
    finally:
        pool.close()


def test_a_full_pool_waits_for_a_connection_then_times_out(server: str) -> None:
    pool = _pool(server, max_size=1, timeout=0.3)
    try:
        held = pool.lend()
        with pytest.raises(PoolTimeout, match=r"0\.3 s"):
            pool.lend()
        got: list[psycopg.Connection[Any]] = []
        waiter = threading.Thread(target=lambda: got.append(pool.lend()))
        pool._timeout = 10.0  # this wait is woken by the give-back below, long before
        waiter.start()
        while pool.stats()["requests_waiting"] == 0:
            time.sleep(0.01)
        pool.give_back(held)
        waiter.join(5)
        assert got == [held] and pool.stats()["pool_size"] == 1
        pool.give_back(held)
    finally:
        pool.close()


def test_a_broken_connection_is_closed_not_lent_again(server: str) -> None:
    pool = _pool(server)
    try:
        conn = pool.lend()
        pid = conn.info.backend_pid
        admin(server, "SELECT pg_terminate_backend(%s)", (pid,))
        with pytest.raises(psycopg.OperationalError):
            call_prepared(conn, b"SELECT 1", ())
        pool.give_back(conn)
        assert conn.closed and pool.stats()["pool_size"] == 0
        fresh = pool.lend()
        assert fresh.info.backend_pid != pid
        pool.give_back(fresh)
        pool.drop_idle()
        assert fresh.closed and pool.stats()["pool_size"] == 0
    finally:
        pool.close()


def test_a_closed_pool_lends_nothing_and_closes_what_comes_back(server: str) -> None:
    pool = _pool(server)
    lent = pool.lend()
    pool.close()
    with pytest.raises(PoolClosed, match="closed"):
        pool.lend()
    pool.give_back(lent)
    assert lent.closed


def test_a_failed_open_is_counted_and_frees_its_place(server: str) -> None:
    attempts: list[int] = []

    def refuse() -> psycopg.Connection[Any]:
        attempts.append(1)
        raise psycopg.OperationalError("refused")

    pool = Connections(refuse, max_size=1, timeout=0.2)
    for _ in range(2):  # the place a failed open took is free again
        with pytest.raises(psycopg.OperationalError):
            pool.lend()
    assert len(attempts) == 2 and pool.stats()["connections_errors"] == 2 and pool.stats()["pool_size"] == 0


def test_a_statement_is_prepared_once_per_connection_and_errors_keep_their_state(server: str) -> None:
    with psycopg.Connection.connect(server, autocommit=True) as conn:
        for n in range(3):
            assert call_prepared(conn, b"SELECT $1::int + 1", (str(n).encode(),)) == str(n + 1)
        assert call_prepared(conn, b"SELECT NULL::text", ()) is None
        prepared = conn.execute("SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'memstack_%'")
        assert prepared.fetchone() == (2,)
        with pytest.raises(psycopg.errors.DivisionByZero) as caught:
            call_prepared(conn, b"SELECT 1 / $1::int", (b"0",))
        assert caught.value.sqlstate == "22012"
        assert call_prepared(conn, b"SELECT $1::int + 1", (b"41",)) == "42"  # the connection is fine


HOSTILE = [
    'a"b',
    "back\\slash",
    "{braces},comma",
    "NULL",
    "",
    " spaced ",
    "line\nbreak",
    "caf\u00e9 \u2603",
    "nul\x00",
]


def test_the_batch_literal_reads_back_exactly(server: str) -> None:
    ops = [
        ("set", (key, value, None, False, False, False))
        for key, value in zip(HOSTILE, reversed(HOSTILE), strict=True)
    ]
    argv, _ = encode(ops, write=True)
    with psycopg.Connection.connect(server, autocommit=True) as conn:
        elements = call_prepared(conn, b"SELECT array_to_json($1::text[])::text", (argv,))
    assert elements is not None
    keys = [escape(k) for k in HOSTILE]
    flat = [
        item
        for key, value in zip(keys, reversed(HOSTILE), strict=True)
        for item in ("set", "2", key, escape(value))
    ]
    assert json.loads(elements) == [",".join(map(str, lock_ids(keys))), str(len(keys)), *keys, *flat]


def test_python_and_the_server_compute_one_lock_id_per_key(server: str, schema: str) -> None:
    with PostgresEngine(f"{server}?schema={schema}") as engine:
        keys = ["a", "rr:default:session:s1:__meta__", "caf\u00e9 \u2603", "x" * 500, "\x01\x02"]
        for key in keys:
            assert admin(server, f'SELECT "{schema}"._lock_id(%s)', (key,)) == [(lock_ids([key])[0],)]
        assert engine.names.schema == schema


def test_a_forked_child_opens_its_own_pool_though_a_parent_thread_held_the_lock(
    server: str, schema: str
) -> None:
    from memstack.engines.postgres import pool

    url = f"{server}?schema={schema}"
    with PostgresEngine(url) as parent:
        parent.set("k", "parent")

        def child() -> bool:
            with PostgresEngine(url) as engine:
                return engine.get("k") == "parent" and engine.set("k", "child")

        with held_by_a_thread(pool._shared_lock):
            assert in_child(child, deadline=60)  # stuck on the parent's lock: killed, False
        assert parent.get("k") == "child"  # and the parent's pool still serves it
