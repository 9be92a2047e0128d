"""Crash test on SQLite: a child process running passes is SIGKILLed at 20 random moments; every
pass is afterwards fully applied with its record, or not applied at all."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import memstack
from memstack.services.dream import Dreamer

CHILD = r"""
import re, sys, json
import memstack
from memstack.services.dream import Dreamer
from memstack.llm.scripted import ScriptedChatModel

def reply(messages, tools):
    first = re.search(r"\[ID:([0-9a-z]+)\]", messages[1]["content"]).group(1)
    return json.dumps({"toDelete": [], "toSave": [{"content": "rewritten " + first, "sourceIds": [first]}]})

mem = memstack.open(sys.argv[1])
dreamer = Dreamer(mem.long_term("crash"), model=ScriptedChatModel([reply] * 100000))
print("ready", flush=True)
while True:
    dreamer.consolidate()
"""

ENTRIES = 10


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_during_passes_leaves_whole_passes_only(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'crash.db'}"
    with memstack.open(url) as mem:
        original = {mem.long_term("crash").save(content=f"original fact {i}").id for i in range(ENTRIES)}
    rng = random.Random(13)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for _ in range(20):
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        assert child.stdout is not None
        assert child.stdout.readline().strip() == b"ready", child.stderr.read() if child.stderr else b""
        try:
            child.wait(timeout=rng.uniform(0.0, 0.25))
        except subprocess.TimeoutExpired:
            child.send_signal(signal.SIGKILL)
        child.wait()
        assert child.returncode == -signal.SIGKILL, child.stderr.read() if child.stderr else b""
        if child.stdout:
            child.stdout.close()
        if child.stderr:
            child.stderr.close()
    with memstack.open(url) as mem:
        memory = mem.long_term("crash")
        records = Dreamer(memory).history(limit=100000)
        applied = [r for r in records if r.status == "applied"]
        assert applied, "no pass completed: the kills came too early to test anything"
        ids = {e.id for e in memory.entries()}
        stored_keys = {k.rsplit(":", 1)[1] for k in mem.engine.scan(memory.keys.entry_prefix)}
        assert ids == stored_keys == mem.engine.smembers(memory.keys.ids)
        # each pass supersedes one entry (it stays, as history) and creates one
        current = {h.entry.id for h in memory.search(None, limit=1000)}
        assert len(current) == ENTRIES and len(ids) == ENTRIES + len(applied)
        created = {c.entry.id for r in applied for c in r.created}
        superseded = {x.entry.id for r in applied for x in r.superseded}
        assert ids - original == created  # every new entry has the record of its pass
        assert ids - current == superseded  # every entry no longer current was superseded by one
        assert len(superseded) == len(applied) and len(created) == len(applied)
        passes = {r.actor: r for r in applied}
        for entry_id in ids:  # each history tells the entry's whole story, pass by pass
            events = memory.history(entry_id)
            assert events[0].op == "create" and events[0].new is not None
            assert events[0].actor == "api" if entry_id in original else events[0].actor in passes
            if entry_id in superseded:
                assert [e.op for e in events] == ["create", "supersede"] and events[1].actor in passes
                assert events[1].new == memory.get(entry_id)
