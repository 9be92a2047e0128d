"""The PostgreSQL engine's notifications: long messages, aborted batches, and listeners that lose
their connection (they catch up from the event table, or poll it through the pool)."""

from __future__ import annotations

import contextlib
import os
import time

import pytest

from _postgres_server import with_schema
from _redis_relay import Relay
from memstack.engines.postgres import PostgresEngine

from ._pg import admin, port_of, via
from .test_conformance import wait_for


def test_long_messages_and_aborted_batches(server: str, schema: str) -> None:
    from memstack.foundation.errors import NotANumber

    with PostgresEngine(with_schema(server, schema)) as engine:
        heard: list[str] = []
        with engine.subscribe("ch", heard.append):
            long = "é" * 20_000  # past NOTIFY's 8000 bytes: read from the event table
            engine.set("text", "abc")
            aborting = engine.batch()
            aborting.publish("ch", "from a batch that aborts")
            aborting.incr("text")
            with pytest.raises(NotANumber):
                aborting.execute()
            engine.publish("ch", long)
            engine.publish("ch", "a\x00b")
            assert wait_for(lambda: len(heard) == 2)
            assert heard == [long, "a\x00b"]


class Gate(Relay):
    """A relay that can cut every connection, or refuse only new ones, until opened again."""

    def __init__(self, target: int) -> None:
        self.closed = False
        self._kept: set[object] = set()
        super().__init__(target)

    def relay(self, src: object, data: bytes, to_server: bool) -> bool:
        return not self.closed or src in self._kept

    def refuse_new(self) -> None:
        """Connections open now carry on; new ones die on their first bytes."""
        self._kept = set(self._relayed)
        self.closed = True

    def shut(self) -> None:
        self._kept = set()
        self.closed = True
        for sock in list(self._relayed):
            with contextlib.suppress(OSError):
                sock.shutdown(2)


def test_a_lost_listener_catches_up_on_messages_committed_meanwhile(server: str, schema: str) -> None:
    gate = Gate(port_of(server))
    try:
        direct = PostgresEngine(with_schema(server, schema))
        behind = PostgresEngine(with_schema(via(server, gate.port), schema))
        heard: list[str] = []
        with behind.subscribe("ch", heard.append):
            direct.publish("ch", "before")
            assert wait_for(lambda: heard == ["before"])
            gate.shut()  # the listener's connection dies and cannot come back yet
            time.sleep(0.3)
            for i in range(3):
                direct.publish("ch", f"while down {i}")
            direct.publish("other", "not ours")
            gate.closed = False
            assert wait_for(lambda: len(heard) == 4, timeout=10)
            direct.publish("ch", "after")
            assert wait_for(lambda: len(heard) == 5)
        assert heard == ["before", "while down 0", "while down 1", "while down 2", "after"]
        behind.close()
        direct.close()
    finally:
        gate.close()


def test_a_listener_that_cannot_reconnect_still_delivers_by_polling(server: str, schema: str) -> None:
    gate = Gate(port_of(server))
    name = f"memstack-poll-{os.environ.get('PYTEST_XDIST_WORKER', 'gw0')}"
    try:
        direct = PostgresEngine(with_schema(server, schema))
        behind = PostgresEngine(with_schema(via(server, gate.port), schema) + f"&application_name={name}")
        heard: list[str] = []
        with behind.subscribe("ch", heard.append):
            behind.get("warm")  # the pool has a connection through the gate
            gate.refuse_new()
            killed = admin(
                server,
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = %s",
                (f"{name}:listen",),
            )
            assert killed == [(1,)]
            direct.publish("ch", "while the listener is out")
            assert wait_for(lambda: heard == ["while the listener is out"], timeout=10)
            gate.closed = False
            assert wait_for(lambda: behind._listener._ready, timeout=10)
            direct.publish("ch", "back")
            assert wait_for(lambda: heard == ["while the listener is out", "back"])
        behind.close()
        direct.close()
    finally:
        gate.close()


def test_a_subscriber_hears_nothing_published_before_it(server: str, schema: str) -> None:
    with PostgresEngine(with_schema(server, schema)) as engine:
        first: list[str] = []
        with engine.subscribe("ch", first.append):
            engine.publish("ch", "one")
            second: list[str] = []
            with engine.subscribe("ch", second.append):
                engine.publish("ch", "two")
                assert wait_for(lambda: first == ["one", "two"] and second == ["two"])
