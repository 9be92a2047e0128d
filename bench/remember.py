"""The memory loop's cost: ``remember`` against a bare conversation append, and ``recall``.

    python bench/remember.py [--url URL] [--quick | --smoke] [--mem0-python PATH]

One engine (default: a temporary SQLite file). ``users`` users each say ``turns`` messages of a
made-up chat. Timed, per message: ``ConversationStore.append`` alone (the floor: what storing the
message costs), then ``Memory.remember`` of the same messages for other users (the append, plus
the turn saved and indexed in the user's scope; no chat model: nothing queued). Then ``recall``
of a few queries per user. Printed: throughput (messages/s) and p50/p99 per call, and
``remember_vs_append`` (p50 ratio).

Peer in the same run, when it installs: mem0's ``Memory.add(messages, user_id=…, infer=False)``
and ``search(query, user_id=…)`` on the same messages, run by ``--mem0-python`` (a Python with
``mem0ai`` and ``faiss-cpu`` installed; default ``$MEM0_PYTHON``). mem0 embeds every message; no
embedding model can be fetched here, so it is given a deterministic local embedder (hashed
bag of words, 64 dimensions) through its OpenAI-compatible embedder pointed at a loopback server
of this script: nothing leaves the machine. When mem0 is missing, the row says why.

Last line: ``RESULT remember_per_s=… remember_p50_ms=… remember_p99_ms=… append_p50_ms=…
append_p99_ms=… remember_vs_append=… recall_p50_ms=… mem0_add_p50_ms=… mem0_search_p50_ms=…``
(``na`` when mem0 was not measured).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import memstack
from _mem0_peer import MEM0_SCRIPT, embedding_server
from _smoke import add_smoke, smoke_tag  # bench/ is on sys.path when the script runs

WORDS = [
    "bees",
    "garden",
    "porto",
    "lisbon",
    "berlin",
    "violin",
    "jazz",
    "coffee",
    "tea",
    "dog",
    "cat",
    "sister",
    "brother",
    "train",
    "bike",
    "morning",
    "evening",
    "weekend",
    "dinner",
    "book",
    "music",
    "paris",
    "rome",
    "project",
    "deadline",
    "office",
    "home",
    "piano",
]


def chat(rng: random.Random, turns: int) -> list[str]:
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))) for _ in range(turns)]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def measure(url: str, users: int, turns: int, queries: int) -> dict[str, float]:
    rng = random.Random(7)
    texts = {f"u{n}": chat(rng, turns) for n in range(users)}
    out: dict[str, float] = {}
    with memstack.open(url, embedder="none") as mem:
        run = uuid.uuid4().hex[:6]
        mem.conversations.append(f"warm-{run}", "user", "warm up")  # opens the file: not timed
        mem.remember("warm up", user=f"warm-{run}")
        mem.recall("warm", user=f"warm-{run}")
        append, remember = [], []
        for user, said in texts.items():
            for text in said:
                start = time.perf_counter()
                mem.conversations.append(f"bare-{run}-{user}", "user", text)
                append.append(time.perf_counter() - start)
        for user, said in texts.items():
            for text in said:
                start = time.perf_counter()
                mem.remember(text, user=f"{user}-{run}")
                remember.append(time.perf_counter() - start)
        recall = []
        for user in texts:
            for _ in range(queries):
                query = " ".join(rng.choice(WORDS) for _ in range(3))
                start = time.perf_counter()
                mem.recall(query, user=f"{user}-{run}")
                recall.append(time.perf_counter() - start)
    out["remember_per_s"] = len(remember) / sum(remember)
    out["remember_p50_ms"], out["remember_p99_ms"] = pct(remember, 0.5), pct(remember, 0.99)
    out["append_p50_ms"], out["append_p99_ms"] = pct(append, 0.5), pct(append, 0.99)
    out["remember_vs_append"] = statistics.median(remember) / statistics.median(append)
    out["recall_p50_ms"] = pct(recall, 0.5)
    return out


def mem0_row(python: str | None, users: int, turns: int, queries: int) -> tuple[dict[str, float], str]:
    """mem0's add(infer=False)/search p50 on the same kind of data, or why it was not measured."""
    if not python:
        return {}, "mem0 not measured: no --mem0-python (a Python with mem0ai and faiss-cpu installed)"
    check = subprocess.run([python, "-c", "import mem0, faiss"], capture_output=True, text=True)
    if check.returncode != 0:
        return {}, f"mem0 not measured: {python} cannot import mem0/faiss ({check.stderr.strip()[-200:]})"
    with embedding_server() as url, tempfile.TemporaryDirectory() as home:
        # MEM0_TELEMETRY off: mem0 would otherwise send usage events out of the machine
        env = {
            **os.environ,
            "MEM0_DIR": home,
            "HOME": home,
            "OPENAI_API_KEY": "local",
            "MEM0_TELEMETRY": "False",
        }
        argv = [python, "-c", MEM0_SCRIPT, url, home, str(users), str(turns), str(queries)]
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        return {}, f"mem0 not measured: its run failed ({done.stderr.strip()[-300:]})"
    return json.loads(done.stdout.strip().splitlines()[-1]), "mem0 measured in the same run"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="engine URL (default: a temporary SQLite file)")
    parser.add_argument("--quick", action="store_true", help="fewer users and turns")
    parser.add_argument("--mem0-python", default=os.environ.get("MEM0_PYTHON"), help="a Python with mem0ai")
    add_smoke(parser)
    args = parser.parse_args()
    users, turns, queries = (2, 10, 2) if args.smoke else (5, 60, 10) if args.quick else (20, 200, 20)
    with tempfile.TemporaryDirectory() as tmp:
        url = args.url or f"sqlite:///{Path(tmp) / 'remember.db'}"
        got = measure(url, users, turns, queries)
    peer, why = mem0_row(args.mem0_python, users, turns, queries)
    n = users * turns
    print(f"{n} messages, {users} users; engine {args.url or 'sqlite (temporary file)'}")
    print(f"bare conversation append  p50 {got['append_p50_ms']:.3f} ms  p99 {got['append_p99_ms']:.3f} ms")
    print(
        f"remember                  p50 {got['remember_p50_ms']:.3f} ms  p99 {got['remember_p99_ms']:.3f} ms"
        f"  ({got['remember_per_s']:.0f} messages/s, {got['remember_vs_append']:.1f}x the bare append)"
    )
    print(f"recall                    p50 {got['recall_p50_ms']:.3f} ms")
    if peer:
        add, search = peer["add_p50_ms"], peer["search_p50_ms"]
        print(f"mem0 add(infer=False)     p50 {add:.3f} ms  search p50 {search:.3f} ms")
    print(why)
    fields = {
        **got,
        "mem0_add_p50_ms": peer.get("add_p50_ms"),
        "mem0_search_p50_ms": peer.get("search_p50_ms"),
    }
    line = " ".join(f"{k}={'na' if v is None else f'{v:.3f}'}" for k, v in fields.items())
    print(f"RESULT {line}{smoke_tag(args)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
