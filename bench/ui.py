"""The inspector in Chromium: first load, memory search, conversation tree, live board update.

    python bench/ui.py [--url ENGINE_URL] [--quick | --smoke] [--runs N]

Seeds one tenant (10k long-term memories, 100 conversations of 200 messages; ``--quick``: 2k
memories and 5 conversations; ``--smoke``: 50 memories, 2 conversations of 20 messages, one run)
on the engine (default: a fresh SQLite file), serves the app on a free loopback port with an API
key, and drives Debian's Chromium (Playwright) over ``/ui`` while a writer keeps a shared board
busy (about 100 writes/s). Each figure is the p50 over the runs:

- first_load_ms: a fresh tab (key already in its session storage) until the sessions list shows;
- search_view_ms: from submitting a search (10k memories) until the results table is drawn;
- conversation_tree_ms: from opening a 200-message conversation until its tree is drawn;
- board_update_ms: from a write through the library until the watched board shows it.

Last line: ``RESULT first_load_ms=… search_view_ms=… conversation_tree_ms=… board_update_ms=…``
(targets 500, 300, 300, 100).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from _smoke import add_smoke, smoke_tag  # noqa: E402 - after the path set-up above
from doors.ui._live import live_server  # noqa: E402
from doors.ui.conftest import CHROMIUM_ARGS, chromium_path  # noqa: E402
from memstack import Memory  # noqa: E402
from memstack.engines import open_engine  # noqa: E402
from memstack.engines.prefixed import tenant_engine  # noqa: E402
from memstack.tiers.shared import SharedMemory  # noqa: E402

WORDS = " ".join(
    [
        "tea coffee chicago paris garden piano marathon salmon allergy python rust budget flight",
        "hotel sister birthday cat dog vegan jazz museum invoice meeting doctor football novel",
        "mountain bicycle pasta sushi guitar painting deadline project friday summer winter",
    ]
).split()
TENANT = "bench"


def seed(engine: Any, memories: int, conversations: int, messages: int) -> None:
    rng = random.Random(7)
    memory = Memory(tenant_engine(engine, TENANT))
    long_term = memory.long_term("default")
    for i in range(memories):
        text = " ".join(rng.choice(WORDS) for _ in range(8))
        long_term.save(content=f"memory {i}: {text}", category=f"topic-{i % 12}", tags=[f"t{i % 7}"])
    for c in range(conversations):
        parent: str | None = None
        previous: str | None = None
        for m in range(messages):
            role = "user" if m % 2 == 0 else "assistant"
            text = " ".join(rng.choice(WORDS) for _ in range(12))
            previous, parent = (
                parent,
                memory.conversations.append(f"conv-{c:03d}", role, text, parent_message_id=parent).message_id,
            )
        # A regeneration of the last answer, so every tree has a branch.
        memory.conversations.append(f"conv-{c:03d}", "assistant", "regenerated", parent_message_id=previous)
    memory.sessions.create("bench-session")
    memory.sessions.put("bench-session", "topic", {"plan": "inspect"})
    memory.close()


class BusyBoard:
    """A thread writing ~100 keys/s to board ``busy`` until stopped."""

    def __init__(self, engine: Any) -> None:
        self.board = SharedMemory(tenant_engine(engine, TENANT), "busy", enable_cache=False)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        i = 0
        while not self.stop.wait(0.01):
            self.board[f"worker-{i % 20}"] = {"step": i}
            i += 1

    def __enter__(self) -> BusyBoard:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        self.board.close()


def p50(values: list[float]) -> float:
    return round(statistics.median(values), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="engine URL (default: a fresh SQLite file)")
    parser.add_argument("--quick", action="store_true", help="short run (< 60 s)")
    parser.add_argument("--runs", type=int, default=None)
    add_smoke(parser)
    args = parser.parse_args()
    memories, conversations = (50, 2) if args.smoke else (2000, 5) if args.quick else (10_000, 100)
    messages = 20 if args.smoke else 200
    runs = args.runs or (1 if args.smoke else 5 if args.quick else 15)
    path = chromium_path()
    if path is None:
        sys.exit("bench/ui.py needs Debian's chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    url = args.url or f"sqlite:///{tempfile.mkdtemp(prefix='memstack-bench-ui-')}/bench.db"
    engine = open_engine(url)
    if args.url:
        engine.flush()
    started = time.perf_counter()
    seed(engine, memories, conversations, messages)
    print(f"engine={engine.name} seeded {memories} memories, {conversations}x{messages} messages "
          f"in {time.perf_counter() - started:.1f} s")  # fmt: skip
    figures: dict[str, list[float]] = {"first_load": [], "search": [], "tree": [], "board": []}
    with live_server(engine, TENANT) as live, BusyBoard(engine) as busy, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS, headless=True)
        context = browser.new_context(viewport={"width": 1366, "height": 768})
        # The key goes where the sign-in form puts it (session storage), never in a URL.
        context.add_init_script(f"sessionStorage.setItem('memstack.key', {live.token!r})")
        rng = random.Random(3)
        for run in range(runs + 1):  # run 0 warms caches (server indexes, browser) and is not counted
            page = context.new_page()
            t0 = time.perf_counter()
            page.goto(f"{live.url}/ui/#sessions")
            page.locator("#session-list li").first.wait_for()
            first_load = (time.perf_counter() - t0) * 1000

            page.get_by_role("button", name="Long-term memories").click()
            page.get_by_role("list", name="Scopes").get_by_role("button", name="default").click()
            page.locator("#memory-summary").filter(has_text="newest").wait_for()
            page.locator("#memory-query").fill(f"{rng.choice(WORDS)} {rng.choice(WORDS)}")
            page.evaluate("delete document.body.dataset.searchMs")
            page.get_by_role("button", name="Search").click()
            page.locator("body[data-search-ms]").wait_for(state="attached")
            search = float(page.evaluate("document.body.dataset.searchMs"))

            page.get_by_role("button", name="Conversations").click()
            page.evaluate("delete document.body.dataset.treeMs")
            page.locator("#conversation-list button").nth(run % conversations).click()
            page.locator("body[data-tree-ms]").wait_for(state="attached")
            tree = float(page.evaluate("document.body.dataset.treeMs"))

            page.get_by_role("button", name="Shared boards").click()
            page.get_by_role("list", name="Boards").get_by_role("button", name="busy").click()
            page.locator("body[data-board-live='busy']").wait_for(state="attached")
            value = f"probe-{run}-{rng.random()}"
            written = time.time() * 1000
            busy.board["probe"] = value
            row = page.locator("#board-keys tr[data-key='probe']").filter(has_text=value)
            row.wait_for()
            board = float(row.get_attribute("data-at") or "nan") - written
            page.close()
            if run == 0:
                continue
            for name, figure in zip(figures, (first_load, search, tree, board), strict=True):
                figures[name].append(figure)
            print(f"run {run}: first_load {first_load:.0f} ms, search {search:.0f} ms, "
                  f"tree {tree:.0f} ms, board {board:.0f} ms")  # fmt: skip
        browser.close()
    engine.close()
    print(
        f"RESULT first_load_ms={p50(figures['first_load'])} search_view_ms={p50(figures['search'])} "
        f"conversation_tree_ms={p50(figures['tree'])} board_update_ms={p50(figures['board'])}"
        f"{smoke_tag(args)}"
    )


if __name__ == "__main__":
    main()
