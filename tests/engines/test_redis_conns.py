"""The idle connections of one Redis node: reuse, the idle check, fresh ones, forks, closing.

Against the real shared standalone server; a manual ``monotonic`` stands in for idle time.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import redis as redis_py

from memstack.engines.redis.conns import IDLE_CHECK_S, Connections
from memstack.engines.redis.url import parse


class Ticks:
    """A manual monotonic clock for idle times."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def url(redis_urls: tuple[str, str] | None) -> str:
    if redis_urls is None:
        pytest.skip("no redis-server on this machine")
    return redis_urls[0]


@pytest.fixture
def pool(url: str) -> Callable[[], Any]:
    """A factory of connections to the shared server, as the engine's transport builds them."""
    target = parse(url)
    options = {**target.node_options(target.seeds[0]), "decode_responses": True}
    return lambda: redis_py.Connection(**options)


def ask(conn: Any, *command: str) -> Any:
    conn.send_command(*command)
    return conn.read_response()


def test_a_given_back_connection_is_reused(pool: Callable[[], Any]) -> None:
    conns = Connections(pool, keep=4)
    first = conns.take()
    ident = ask(first, "CLIENT", "ID")
    conns.give(first)
    again = conns.take()
    assert again is first
    assert ask(again, "CLIENT", "ID") == ident  # the same socket, no reconnect
    second = conns.take()  # none free: a new one
    assert second is not first
    conns.give(again)
    conns.give(second)
    assert len(conns) == 2
    conns.close()
    assert len(conns) == 0


def test_more_than_keep_are_closed_when_given_back(pool: Callable[[], Any]) -> None:
    conns = Connections(pool, keep=1)
    a, b = conns.take(), conns.take()
    conns.give(a)
    conns.give(b)
    assert len(conns) == 1
    assert b._sock is None  # disconnected, not kept
    conns.close()


def test_an_idle_connection_the_server_closed_is_replaced(pool: Callable[[], Any], url: str) -> None:
    ticks = Ticks()
    conns = Connections(pool, keep=4, monotonic=ticks)
    conn = conns.take()
    ident = ask(conn, "CLIENT", "ID")
    conns.give(conn)
    with redis_py.Redis.from_url(url) as admin:
        assert admin.client_kill_filter(_id=ident) == 1  # as a restart or `timeout` would
    ticks.now += IDLE_CHECK_S + 0.001
    conn = conns.take()
    assert ask(conn, "PING") == "PONG"
    assert ask(conn, "CLIENT", "ID") != ident
    conns.give(conn)
    conns.close()


def test_a_recently_used_connection_is_trusted(pool: Callable[[], Any], url: str) -> None:
    """Inside the window nothing is checked: a connection killed meanwhile fails its next
    request (the engine reports EngineUnavailable and disconnects it) and then works again."""
    ticks = Ticks()
    conns = Connections(pool, keep=4, monotonic=ticks)
    conn = conns.take()
    ident = ask(conn, "CLIENT", "ID")
    conns.give(conn)
    with redis_py.Redis.from_url(url) as admin:
        admin.client_kill_filter(_id=ident)
    ticks.now += IDLE_CHECK_S / 2
    conn = conns.take()
    with pytest.raises(redis_py.ConnectionError):
        ask(conn, "PING")
    conns.give(conn)  # disconnected by redis-py on the failed read
    conn = conns.take()
    assert ask(conn, "PING") == "PONG"  # reconnected on use
    conns.give(conn)
    conns.close()


def test_a_forked_child_never_uses_the_parents_socket(pool: Callable[[], Any]) -> None:
    conns = Connections(pool, keep=4)
    conn = conns.take()
    ident = ask(conn, "CLIENT", "ID")
    conns.give(conn)
    with warnings.catch_warnings():
        # Python 3.12+ warns about forking a process with threads; this child only talks to Redis.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit status
        code = 3
        try:
            child = conns.take()
            code = 0 if ask(child, "CLIENT", "ID") != ident else 1
            conns.give(child)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    conn = conns.take()
    assert ask(conn, "CLIENT", "ID") == ident  # the child did not shut the parent's socket down
    conns.give(conn)
    conns.close()


def test_given_back_after_close_is_disconnected(pool: Callable[[], Any]) -> None:
    conns = Connections(pool, keep=4)
    conn = conns.take()
    conns.close()
    conns.give(conn)
    assert len(conns) == 0
    assert conn._sock is None


def test_fresh_never_reuses_and_drop_idle_closes_the_free_ones(pool: Callable[[], Any]) -> None:
    conns = Connections(pool, keep=4)
    a, b = conns.take(), conns.take()
    conns.give(a)
    conns.give(b)
    new = conns.fresh()
    assert new is not a and new is not b
    assert new._sock is not None  # connected already
    assert len(conns) == 2  # the free list untouched
    conns.drop_idle()
    assert len(conns) == 0
    assert a._sock is None and b._sock is None
    assert ask(new, "PING") == "PONG"  # the one in use is not touched
    conns.give(new)
    conns.close()
