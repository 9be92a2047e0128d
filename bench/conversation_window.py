"""History retrieval cost against conversation length, measured in the same run.

    python bench/conversation_window.py [--url URL] [--quick | --smoke]

Two conversations on one engine (default: a temporary SQLite file): a small one of 100 messages
and a large one of 100,000, both with regeneration branches (every 10th answer is regenerated, the
thread continuing from the new answer). Timed call: ``ConversationStore.history`` of the active
thread with ``max_token_limit=2000`` (default ``message_limit``: 500), repeated; p50 per conversation.
Target: ``large_vs_small <= 1.5`` — the cost follows the window, not the conversation.

Peer in the same run: a Dify-style read of the large conversation (load the newest 500 stored
messages in one read, extract the thread, prune), as ``dify_style_vs_paged``.

``--quick`` uses fewer timed calls (and still builds all 100,000 messages unless the engine is
slow to write; it then says how many it built). ``--smoke`` builds 1,000 messages and times 5 calls.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _smoke import add_smoke, smoke_tag  # bench/ is on sys.path when the script runs
from memstack.engines import open_engine
from memstack.llm.tokens import MESSAGE_OVERHEAD
from memstack.tiers.conversation import ConversationStore, Message, extract_thread, prune
from memstack.tiers.conversation.history import drop_in_flight

WORDS = [
    "memory",
    "agent",
    "context",
    "token",
    "window",
    "thread",
    "branch",
    "answer",
    "question",
    "regenerate",
    "model",
    "prompt",
    "history",
    "store",
    "engine",
    "cluster",
    "redis",
    "sqlite",
    "turn",
    "session",
    "user",
    "assistant",
    "message",
    "reply",
    "idea",
    "plan",
    "travel",
    "dinner",
    "weekend",
    "project",
    "deadline",
    "book",
    "music",
    "garden",
    "coffee",
    "morning",
    "evening",
]


def text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def rows(count: int, rng: random.Random) -> list[dict[str, Any]]:
    """``count`` messages: Q/A turns, every 10th answer regenerated (a branch)."""
    out: list[dict[str, Any]] = []
    turn = 0
    while len(out) < count:
        question = f"q{turn}"
        out.append({"role": "user", "content": text(rng, 12), "message_id": question})
        out.append({"role": "assistant", "content": text(rng, 35), "message_id": f"a{turn}"})
        if turn % 10 == 9 and len(out) < count:
            out.append(
                {
                    "role": "assistant",
                    "content": text(rng, 35),
                    "message_id": f"r{turn}",
                    "parent_message_id": question,
                }
            )
        turn += 1
    return out[:count]


def build(store: ConversationStore, cid: str, count: int, budget_s: float, chunk: int = 2000) -> int:
    """Append ``count`` messages in batches of ``chunk``; stop early past ``budget_s``; return how many."""
    data = rows(count, random.Random(7))
    start = time.perf_counter()
    written = 0
    for offset in range(0, len(data), chunk):
        store.extend(cid, data[offset : offset + chunk])
        written += len(data[offset : offset + chunk])
        if time.perf_counter() - start > budget_s:
            break
    return written


def p50_ms(call: Any, repeats: int) -> float:
    call()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def dify_style(store: ConversationStore, cid: str, limit: int = 500, max_tokens: int = 2000) -> list[Message]:
    """Load the newest ``limit`` messages in one read, extract, drop in-flight, prune (Dify's shape)."""
    newest_first = store.messages(cid, -limit, -1)[::-1]
    thread = drop_in_flight(extract_thread(newest_first))[::-1]
    tokens = [MESSAGE_OVERHEAD + m.token_count for m in thread]
    return prune(thread, [m.role for m in thread], tokens, max_tokens)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="engine URL (default: a temporary SQLite file)")
    parser.add_argument("--quick", action="store_true", help="fewer timed calls; finishes in < 60 s")
    add_smoke(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memstack-bench-") as tmp:
        url = args.url or f"sqlite:///{Path(tmp) / 'bench.db'}"
        engine = open_engine(url)
        store = ConversationStore(engine)
        small_id, large_id = f"bench-small-{uuid.uuid4().hex[:8]}", f"bench-large-{uuid.uuid4().hex[:8]}"
        repeats = 5 if args.smoke else 50 if args.quick else 300
        wanted = 1_000 if args.smoke else 100_000
        try:
            start = time.perf_counter()
            small = build(store, small_id, 100, budget_s=60)
            large = build(store, large_id, wanted, budget_s=30 if args.quick or args.smoke else 600)
            build_s = time.perf_counter() - start
            print(f"engine {engine.name} ({url})")
            print(f"built {small} + {large} messages in {build_s:.1f} s ({large / build_s:,.0f} messages/s)")
            if large < wanted:
                print(f"NOTE: built only {large:,} of {wanted:,} messages (write budget reached)")
            history_small = store.history(small_id)
            history_large = store.history(large_id)
            print(f"history: {len(history_small)} messages (small), {len(history_large)} messages (large)")
            small_ms = p50_ms(lambda: store.history(small_id, max_token_limit=2000), repeats)
            large_ms = p50_ms(lambda: store.history(large_id, max_token_limit=2000), repeats)
            dify_ms = p50_ms(lambda: dify_style(store, large_id), max(10, repeats // 5))
            ratio = large_ms / small_ms
            print(f"history p50, {repeats} calls: small {small_ms:.3f} ms, large {large_ms:.3f} ms")
            print(f"large vs small: {ratio:.2f}x (target <= 1.5)")
            dify_ratio = dify_ms / large_ms
            print(f"Dify-style read of 500 messages (large): {dify_ms:.3f} ms ({dify_ratio:.2f}x paged)")
            print(
                f"RESULT engine={engine.name} messages_large={large} p50_ms_small={small_ms:.4f} "
                f"p50_ms_large={large_ms:.4f} large_vs_small={ratio:.3f} "
                f"p50_ms_dify_style={dify_ms:.4f} dify_style_vs_paged={dify_ratio:.3f}{smoke_tag(args)}"
            )
        finally:
            if args.url:
                store.delete(small_id)
                store.delete(large_id)
            engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
