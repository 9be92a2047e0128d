"""Per-turn context build latency with a realistically full memory.

    python bench/context_build.py [--url URL] [--quick | --smoke]

One engine (default: a temporary SQLite file) holding one long-term scope of 10,000 entries, 50
working-memory entries in the session's namespace, 20 patrol entries (in 4 patrol namespaces),
5 sub-agent entries (one ``-index``) and a 200-turn conversation (the turn tier keeps its last 50,
its retention). Timed call: ``ContextBuilder.build`` for 1,000 varied user messages in that
session. Delta injection would make recall shrink turn after turn, so the session's injection
record is cleared before every build (outside the timing): every build does the full work,
recall included. ``--quick``: 2,000 entries and 300 builds; ``--smoke``: 100 entries and 20 builds.

Peer in the same run: the same build on the in-process ``memory://`` engine with the same data,
as ``vs_memory`` (how much the storage engine adds). Target on SQLite: ``p50_ms <= 5``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _smoke import add_smoke, smoke_tag  # bench/ is on sys.path when the script runs
from memstack import Memory
from memstack.agent.context import ContextBuilder
from memstack.engines import open_engine

WORDS = [
    "jazz",
    "concert",
    "music",
    "guitar",
    "piano",
    "chicago",
    "paris",
    "travel",
    "flight",
    "hotel",
    "budget",
    "invoice",
    "report",
    "meeting",
    "deadline",
    "project",
    "launch",
    "review",
    "design",
    "database",
    "cluster",
    "latency",
    "memory",
    "agent",
    "context",
    "prompt",
    "token",
    "python",
    "rust",
    "garden",
    "recipe",
    "pasta",
    "coffee",
    "tea",
    "running",
    "marathon",
    "doctor",
    "dentist",
    "birthday",
    "gift",
    "family",
    "sister",
    "brother",
    "manager",
    "client",
    "contract",
    "security",
    "password",
    "backup",
    "server",
    "deploy",
    "release",
    "feature",
    "bug",
]
CATEGORIES = ["user-preferences/music", "user-preferences/food", "project-context/memstack", "people", None]
SESSION = "bench-session"


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def populate(mem: Memory, entries: int, rng: random.Random) -> float:
    started = time.perf_counter()
    memories = mem.long_term("bench")
    for _ in range(entries):
        tags = rng.sample(WORDS, 2)
        memories.save(content=sentence(rng, rng.randint(6, 18)), category=rng.choice(CATEGORIES), tags=tags)
    own = mem.working(f"session/{SESSION}")
    for i in range(50):
        own.set(f"scratch_{i:02d}", sentence(rng, 40), ttl=3600, category="scratch", tags=[rng.choice(WORDS)])
    for i in range(20):
        patrol = mem.working(f"patrol/task{i % 4}")
        patrol.set(f"finding-{i}", sentence(rng, 30), ttl=3600, category="patrol-finding")
    sub = mem.working("subagent/research1")
    sub.set("report-index", "outline", ttl=3600)
    for i in range(4):
        sub.set(f"report-chunk-{i}", sentence(rng, 50), ttl=3600)
    for i in range(200):
        mem.turns.add(SESSION, "user" if i % 2 == 0 else "assistant", sentence(rng, rng.randint(5, 30)))
    return time.perf_counter() - started


def run(url: str, entries: int, builds: int, seed: int) -> tuple[list[float], dict[str, float]]:
    rng = random.Random(seed)
    with Memory(open_engine(url)) as mem:
        setup = populate(mem, entries, rng)
        builder = ContextBuilder(mem, scope="bench", system_prompt="You are a helpful assistant.")
        messages = [sentence(rng, rng.randint(3, 12)) + "?" for _ in range(builds)]
        for message in messages[:20]:  # warm-up: index load, statement caches
            builder.tracker.clear(SESSION)
            builder.build(SESSION, message)
        times: list[float] = []
        sizes: list[int] = []
        recalled: list[int] = []
        for message in messages:
            builder.tracker.clear(SESSION)
            started = time.perf_counter()
            built = builder.build(SESSION, message)
            times.append((time.perf_counter() - started) * 1000)
            sizes.append(len(built.messages))
            recalled.append(sum(1 for i in built.explain if i.kind == "recall" and i.included))
        info = {
            "setup_s": setup,
            "messages": statistics.mean(sizes),
            "recalled": statistics.mean(recalled),
        }
        return times, info


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--url", help="engine URL (default: a temporary SQLite file)")
    parser.add_argument("--quick", action="store_true", help="2,000 entries and 300 builds")
    add_smoke(parser)
    args = parser.parse_args()
    entries, builds = (100, 20) if args.smoke else (2_000, 300) if args.quick else (10_000, 1_000)
    with tempfile.TemporaryDirectory(prefix="memstack-bench-") as tmp:
        url = args.url or f"sqlite:///{Path(tmp) / 'bench.db'}"
        engine_name = open_engine(url)
        name = engine_name.name
        if name.startswith("redis"):
            engine_name.flush()
        engine_name.close()
        print(f"context build: {entries} long-term entries, 50 working + 20 patrol + 5 sub-agent entries, ")
        print(f"200 turns (50 kept), {builds} builds; injection record cleared before each build")
        results = {}
        for label, target in ((name, url), ("memory", "memory://")):
            times, info = run(target, entries, builds, seed=7)
            results[label] = times
            print(
                f"  {label:14s} setup {info['setup_s']:6.1f} s   p50 {pct(times, 0.5):6.2f} ms   "
                f"p90 {pct(times, 0.9):6.2f} ms   p99 {pct(times, 0.99):6.2f} ms   "
                f"mean {statistics.mean(times):6.2f} ms   ({info['messages']:.1f} messages, "
                f"{info['recalled']:.1f} recalled per build)"
            )
            if name == "memory":
                break
    p50, p99 = pct(results[name], 0.5), pct(results[name], 0.99)
    ratio = p50 / pct(results["memory"], 0.5)
    print(f"  {name} vs memory (p50): {ratio:.2f}x")
    print(f"RESULT engine={name} p50_ms={p50:.3f} p99_ms={p99:.3f} vs_memory={ratio:.3f}{smoke_tag(args)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
