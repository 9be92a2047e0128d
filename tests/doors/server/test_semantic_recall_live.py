"""Semantic recall on every surface: a real ``memstack serve --embedder local`` finds "I drink green
tea every morning" for ``beverage`` over HTTP and through the MCP ``search_memory`` tool, including
for entries stored before the server (and its embedder) started: the backfill gives them vectors."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

import memstack

from .live import memstack_serve

pytest.importorskip("mcp")
from mcp import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

GREEN_TEA = "I drink green tea every morning"
UNRELATED = [
    "The quarterly report is due on Friday",
    "My sister lives in Lisbon",
    "The car needs new winter tyres",
    "I am learning to play the cello",
    "The meeting moved to room 4B",
    "Our cat is called Miso",
    "The flight to Oslo leaves at seven",
    "I run five kilometres on Sundays",
    "The wifi password changed last week",
    "My favourite author is Ursula Le Guin",
    "The printer on floor two is broken",
    "We adopted a rescue dog in March",
    "The garden fence needs painting",
    "I prefer aisle seats on planes",
    "The dentist appointment is on Tuesday",
    "My laptop battery drains quickly",
    "The team uses Python for the backend",
    "I collect vintage postcards",
    "The bakery closes at six",
    "My passport expires next year",
]


def _wait_for_backfill(base: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        info = httpx.get(f"{base}/v1/info").json()
        backfill = info["retrieval"]["backfill"]
        if not backfill["running"] or time.monotonic() > deadline:
            return info
        time.sleep(0.1)  # polling a real server process: no clock to inject across processes


def test_beverage_finds_green_tea_over_http_and_mcp(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'recall.db'}"
    with memstack.open(url, embedder="none") as mem:  # stored before any embedder existed: no vectors
        before = mem.long_term()
        for text in UNRELATED[:10]:
            before.save(content=text)
    with memstack_serve(url, "--embedder", "local", "--no-auth") as served:
        base = served.base
        info = _wait_for_backfill(base)
        assert info["retrieval"]["mode"] == "hybrid" and info["retrieval"]["dims"] == 384
        assert info["retrieval"]["backfill"] == {"running": False, "written": 10}
        for text in [GREEN_TEA, *UNRELATED[10:]]:
            assert httpx.post(f"{base}/v1/memories", json={"content": text}).status_code == 201
        deadline = time.monotonic() + 30
        while True:  # vectors of new saves are computed in the background
            hits = httpx.get(f"{base}/v1/memories", params={"query": "beverage"}).json()["items"]
            if (hits and hits[0]["entry"]["content"] == GREEN_TEA) or time.monotonic() > deadline:
                break
            time.sleep(0.1)  # a real server process: no clock to inject across processes
        assert hits[0]["entry"]["content"] == GREEN_TEA
        assert "vector" in hits[0]["sources"] and hits[0]["bm25"] is None  # no shared word
        # the fused score's two terms travel with the hit: all of it is the vector's here
        assert hits[0]["bm25_part"] == 0 and hits[0]["vector_part"] == pytest.approx(hits[0]["score"])
        bm25 = httpx.get(f"{base}/v1/memories", params={"query": "beverage", "mode": "bm25"}).json()
        assert bm25["items"] == []

        async def via_mcp() -> str:
            http = create_mcp_http_client()
            async with http, Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
                result = await client.call_tool("search_memory", {"query": "beverage", "limit": 3})
                return "".join(part.text for part in result.content)

        found = asyncio.run(via_mcp())
        assert found.splitlines()[2].endswith(GREEN_TEA), found


def test_a_bad_embedder_setting_stops_the_start(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bad.db'}"
    with pytest.raises(RuntimeError, match="must be one of"), memstack_serve(url, "--embedder", "bert"):
        pass
