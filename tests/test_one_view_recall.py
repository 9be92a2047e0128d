"""One view and one retrieval setting, end to end with real processes and the local model.

A memory saved by ``memstack.open(url)`` with no other argument (the embedder resolved by default:
``MEMSTACK_EMBEDDER`` unset, the local model installed by the dev set-up) is found by a paraphrase,
"beverage" for "I drink green tea every morning", over HTTP, on the CLI and over ``serve --stdio``,
in a scope of 1 entry and of 5; also when it is saved while ``serve`` runs, and when its writer has
no embedder at all (the server's follower gives it a vector). Writers exit 0, run after run.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

import memstack
from doors.server.live import memstack_serve
from memstack.search.embedders import LocalEmbedder
from memstack.tiers.longterm.backfill import pending_vectors

GREEN_TEA = "I drink green tea every morning"
OTHERS = [
    "The quarterly report is due on Friday",
    "My sister lives in Lisbon",
    "The car needs new winter tyres",
    "I am learning to play the cello",
]
WRITER = """
import sys
import memstack

url, scope, *texts = sys.argv[1:]
with memstack.open(url) as mem:
    for text in texts:
        mem.long_term(scope).save(content=text)
"""


@pytest.fixture
def default_resolution(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment of a user who configured nothing (the suite itself runs BM25 alone)."""
    monkeypatch.delenv("MEMSTACK_EMBEDDER")
    with memstack.open("memory://") as mem:
        assert isinstance(mem.embedder, LocalEmbedder)  # the dev set-up installs the model
    return dict(os.environ)


def _write(url: str, scope: str, texts: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WRITER, url, scope, *texts],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and "terminate" not in done.stderr, (done.returncode, done.stderr)


def _cli_top(url: str, scope: str, env: dict[str, str]) -> str | None:
    command = [sys.executable, "-m", "memstack.doors.cli", "--url", url, "--json", "memories", "search"]
    done = subprocess.run(
        [*command, "--scope", scope, "beverage"], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)["items"]
    return str(hits[0]["entry"]["content"]) if hits else None


def _http_top(base: str, scope: str) -> str | None:
    reply = httpx.get(f"{base}/v1/memories", params={"scope": scope, "query": "beverage"}, timeout=30)
    hits = reply.json()["items"]
    return str(hits[0]["entry"]["content"]) if hits else None


def _within(seconds: float, found: Callable[[], str | None]) -> str | None:
    """``found()`` polled until it gives the green tea or ``seconds`` pass (a real server process:
    no clock to inject across processes)."""
    deadline = time.monotonic() + seconds
    while True:
        top = found()
        if top == GREEN_TEA or time.monotonic() > deadline:
            return top
        time.sleep(0.2)


def test_a_paraphrase_finds_what_open_saved_on_every_door(
    tmp_path: Path, default_resolution: dict[str, str]
) -> None:
    url = f"sqlite:///{tmp_path / 'one-view.db'}"
    env = default_resolution
    _write(url, "one", [GREEN_TEA], env)
    _write(url, "five", [*OTHERS[:2], GREEN_TEA, *OTHERS[2:]], env)
    assert _cli_top(url, "one", env) == GREEN_TEA
    assert _cli_top(url, "five", env) == GREEN_TEA
    with memstack_serve(url, "--no-auth") as served:
        assert _http_top(served.base, "one") == GREEN_TEA
        assert _http_top(served.base, "five") == GREEN_TEA
        _write(url, "live", [*OTHERS, GREEN_TEA], env)  # saved while serve runs
        assert _within(30, lambda: _http_top(served.base, "live")) == GREEN_TEA
        bm25_only = {**env, "MEMSTACK_EMBEDDER": "none"}  # a writer with no embedder at all
        _write(url, "plain", [GREEN_TEA, *OTHERS], bm25_only)
        assert _within(30, lambda: _http_top(served.base, "plain")) == GREEN_TEA  # the server's follower
        info = httpx.get(f"{served.base}/v1/info").json()["retrieval"]
        assert info["mode"] == "hybrid" and info["pending"] == 0


def test_serve_stdio_searches_with_the_same_setting(
    tmp_path: Path, default_resolution: dict[str, str]
) -> None:
    pytest.importorskip("mcp")
    from mcp import Client, StdioServerParameters

    url = f"sqlite:///{tmp_path / 'stdio.db'}"
    _write(url, "default", [*OTHERS, GREEN_TEA], default_resolution)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memstack.doors.cli", "--url", url, "serve", "--stdio"],
        env=default_resolution,
    )

    async def search() -> str:
        async with Client(params) as client:
            result = await client.call_tool("search_memory", {"query": "beverage", "limit": 1})
            return "".join(part.text for part in result.content)

    assert GREEN_TEA in asyncio.run(search())


def test_writers_exit_cleanly_and_leave_every_vector(
    tmp_path: Path, default_resolution: dict[str, str]
) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    for run in range(20):  # onnxruntime's threads once aborted 4 runs in 9 at interpreter exit
        _write(url, "runs", [f"{GREEN_TEA}, run {run} note {n}" for n in range(5)], default_resolution)
    with memstack.open(url) as mem:
        assert len(mem.long_term("runs")) == 100
        assert mem.embedder is not None
        assert pending_vectors(mem.engine, mem.embedder) == (0, 0)  # close wrote them all
