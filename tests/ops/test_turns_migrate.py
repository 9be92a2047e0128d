"""``turns.migrate`` on every engine, through the library, the command line and HTTP: the turn-log
entries written before turns went to conversations are copied once, each into its own user's
conversation, and a second run copies nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from memstack import ManualClock, Memory
from memstack.doors.cli import app as cli_app
from memstack.doors.server import create_app
from memstack.engines.prefixed import tenant_engine
from memstack.services.dream.sources import pass_turns
from memstack.tiers.conversation.turns import _LOG


def _legacy(mem: Memory, at: float) -> None:
    """Three log entries as written before turns went to conversations (no conversation copy)."""
    entries: list[dict[str, Any]] = [
        {
            "session_id": "s1",
            "role": "user",
            "content": "alice likes figs",
            "message_id": "a1",
            "subject": "alice",
        },
        {
            "session_id": "s1",
            "role": "user",
            "content": "bob likes kiwis",
            "message_id": "b1",
            "subject": "bob",
        },
        {"session_id": "s/2", "role": "user", "content": "nobody likes dust"},
    ]
    for n, entry in enumerate(entries):
        mem.engine.rpush(mem.turns._base + _LOG, json.dumps({**entry, "timestamp": at + n}))


def _read(mem: Memory, user: str) -> list[tuple[str, str]]:
    turns = pass_turns(user, None, conversations=mem.conversations, turns=None)
    return [(t["content"], t["message_id"]) for t in turns]


def _copied_once(mem: Memory, clock: ManualClock) -> None:
    """What any door's migration must have left: each user's turn in their own conversation."""
    assert _read(mem, "alice") == [("alice likes figs", "a1")]
    assert _read(mem, "bob") == [("bob likes kiwis", "b1")]
    (alice,) = pass_turns("alice", None, conversations=mem.conversations, turns=None)
    assert alice["timestamp"] == clock.now() - 1000  # the turn's own time, not the migration's
    assert [m.content for m in mem.conversations.messages("s1")] == ["alice likes figs"]


def test_the_library_copies_each_entry_once(mem: Memory, clock: ManualClock) -> None:
    _legacy(mem, clock.now() - 1000)
    assert _read(mem, "alice") == []  # not in a conversation yet: no pass reads it
    assert mem.turns.migrate() == 3
    assert mem.turns.migrate() == 0
    _copied_once(mem, clock)
    mem.turns.add("s3", "user", "carol likes plums", subject="carol", message_id="c1")
    assert mem.turns.migrate() == 0  # a turn recorded now is in its conversation already


@pytest.fixture
def tenant(mem: Memory) -> Iterator[Memory]:
    """Tenant ``default``'s memory: what a server without keys and the command line act for."""
    memory = Memory(tenant_engine(mem.engine, "default"))
    yield memory
    memory.close()


def test_http_answers_the_number_copied(mem: Memory, tenant: Memory, clock: ManualClock) -> None:
    _legacy(tenant, clock.now() - 1000)
    with TestClient(create_app(mem.engine)) as client:
        first = client.post("/v1/turns/migrate")
        again = client.post("/v1/turns/migrate")
    assert (first.status_code, first.json()) == (200, {"copied": 3})
    assert (again.status_code, again.json()) == (200, {"copied": 0})
    _copied_once(tenant, clock)


def test_the_command_line_answers_the_number_copied(
    engine_kind: str, engine_url_for: str, tenant: Memory, clock: ManualClock
) -> None:
    if engine_kind == "memory":
        pytest.skip("memory:// lives inside one engine object: the command line opens its own")
    _legacy(tenant, clock.now() - 1000)
    runner = CliRunner()
    first = runner.invoke(cli_app, ["--url", engine_url_for, "--json", "turns", "migrate"])
    again = runner.invoke(cli_app, ["--url", engine_url_for, "turns", "migrate"])
    assert (first.exit_code, json.loads(first.stdout)) == (0, {"copied": 3}), first.stderr
    assert (again.exit_code, again.stdout.strip()) == (0, "copied: 0"), again.stderr
    _copied_once(tenant, clock)
