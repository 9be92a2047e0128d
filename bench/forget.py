"""Forgetting users: how long one user's forget takes, that nothing is left, that nobody else is touched.

A user (a ``subject``) has 100 long-term entries in a scope shared with 9 other users, a session
with a few keys and a conversation, all written with ``subject=``. 1,000 users (100 with
``--quick``) share the engine. Then:

1. every read path of every tier is run once while the key count is watched
   (``read_paths_write_keys`` = keys a read created, must be 0);
2. 50 users (20 with ``--quick``) are forgotten one by one (``forget(subject=…)``);
   ``forget_p50_ms`` / ``forget_p99_ms`` time one call; ``remaining`` sums the verification scans;
3. ``others_intact`` = 1 when every entry, session key and message of 20 users that were not
   forgotten is byte-identical.

    python bench/forget.py [--url URL] [--quick | --smoke]

``--smoke``: 25 users, 3 forgotten. The memory is tenant ``default``'s (``--url``: that tenant's keys
are flushed before and after), searched with BM25 alone whatever ``MEMSTACK_EMBEDDER`` says.

Last line: ``RESULT subjects=… entries=… forget_p50_ms=… forget_p99_ms=… remaining=…
others_intact=… read_paths_write_keys=…``. Targets on SQLite: ``remaining == 0``,
``others_intact == 1``, ``read_paths_write_keys == 0``, ``forget_p50_ms <= 50``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import memstack
from _smoke import add_smoke, smoke_tag  # bench/ is on sys.path when the script runs
from memstack import ContextBuilder
from memstack.services.transfer.dump import dump_lines

ENTRIES_PER_USER = 100


USERS_PER_SCOPE = 10


def seed(mem: memstack.Memory, users: int) -> None:
    for u in range(users):
        subject = f"user{u}"
        lt = mem.long_term(f"team{u // USERS_PER_SCOPE}")
        for n in range(ENTRIES_PER_USER):
            lt.save(
                id=f"u{u}n{n}",
                content=f"user {u} fact {n}: likes item {n * 7 % 97} and place {n % 13}",
                subject=subject,
            )
        sid = f"sess{u}"
        mem.sessions.create(sid, subject=subject)
        for k in range(5):
            mem.sessions.put(sid, f"k{k}", {"user": u, "k": k})
        mem.turns.add(sid, "user", f"hello from user {u}")
        first = mem.conversations.append(f"conv{u}", "user", f"question of user {u}", subject=subject)
        mem.conversations.append(f"conv{u}", "assistant", "an answer", parent_message_id=first.message_id)


def user_keys(mem: memstack.Memory, u: int) -> dict[str, Any]:
    """Everything of user ``u``: entries, session keys, messages (to compare before and after)."""
    team = mem.engine.tag(f"team{u // USERS_PER_SCOPE}")
    session = mem.engine.tag(f"sess{u}")
    return {
        "entries": {line["key"]: line["value"] for line in dump_lines(mem.engine, f"lt:{team}:e:u{u}n")},
        "session": {line["key"]: line["value"] for line in dump_lines(mem.engine, f"rr:memory:{session}:")},
        "messages": [m.to_json() for m in mem.conversations.messages(f"conv{u}")],
    }


def read_paths(mem: memstack.Memory) -> int:
    """Run every tier's read paths once; the number of keys they created."""
    before = sum(1 for _ in mem.engine.scan(""))
    mem.long_term("team0").search("item place")
    mem.long_term("nobody").search("item")
    mem.long_term("..").search("item")
    mem.long_term("team0").list_categories()
    mem.sessions.get("sess0", "k0")
    mem.sessions.history("sess1")
    mem.conversations.thread("conv0")
    mem.conversations.thread("nobody")
    mem.working("session/nobody").list()
    mem.turns.turns("sess0")
    mem.dream("team0").history()
    ContextBuilder(mem, scope="team0").build("sess0", "item?", dry_run=True)
    return sum(1 for _ in mem.engine.scan("")) - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", help="engine URL (default: a fresh SQLite file)")
    parser.add_argument("--quick", action="store_true", help="100 users, 20 forgotten")
    add_smoke(parser)
    args = parser.parse_args()
    users, forgotten = (25, 3) if args.smoke else (100, 20) if args.quick else (1000, 50)
    with tempfile.TemporaryDirectory() as tmp:
        url = args.url or f"sqlite:///{Path(tmp) / 'forget.db'}"
        with memstack.open(url, embedder="none") as mem:
            if args.url:
                mem.engine.flush()
            started = time.perf_counter()
            seed(mem, users)
            print(
                f"seeded {users} users x {ENTRIES_PER_USER} entries in {time.perf_counter() - started:.1f} s"
            )
            writes_by_reads = read_paths(mem)
            watched = range(users - 20, users)
            before = {u: user_keys(mem, u) for u in watched}
            timings, remaining = [], 0
            for u in range(forgotten):
                start = time.perf_counter()
                report = mem.forget(subject=f"user{u}")
                timings.append((time.perf_counter() - start) * 1000)
                remaining += report.remaining
                assert report.deleted["long_term"] >= ENTRIES_PER_USER, report
            intact = int(all(user_keys(mem, u) == before[u] for u in watched))
            if args.url:
                mem.engine.flush()
    timings.sort()
    p50 = statistics.median(timings)
    p99 = timings[min(len(timings) - 1, round(0.99 * (len(timings) - 1)))]
    print(f"forgot {forgotten} users: p50 {p50:.1f} ms, p99 {p99:.1f} ms")
    print(
        f"RESULT subjects={users} entries={users * ENTRIES_PER_USER} forget_p50_ms={p50:.2f} "
        f"forget_p99_ms={p99:.2f} remaining={remaining} others_intact={intact} "
        f"read_paths_write_keys={writes_by_reads}{smoke_tag(args)}"
    )


if __name__ == "__main__":
    main()
