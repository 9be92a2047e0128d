"""The inspector explains a fused score: what BM25 explained, what the vector margin added, and what
the conversation (neighbouring turns) brought on top."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from doors.ui._live import Live, live_server
from memstack.engines import Engine
from memstack.search.embedders import FakeEmbedder
from memstack.tiers.longterm.provenance import conversation_metadata

pytest.importorskip("playwright")
from playwright.sync_api import expect

MAY = datetime(2023, 5, 8, tzinfo=UTC)


@pytest.fixture
def live(engine: Engine) -> Iterator[Live]:
    with live_server(engine, embedder=FakeEmbedder(dim=32)) as server:
        yield server


def _search(live: Live, query: str) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 30
    while True:  # vectors of new saves are computed in the server's background worker
        hits: list[dict[str, Any]] = live.api.get(
            "/v1/memories", params={"scope": "ana", "query": query}
        ).json()["items"]
        if all(h["vector"] is not None for h in hits) or time.monotonic() > deadline:
            return hits
        time.sleep(0.05)  # a real server thread: no clock to inject across it


def test_memory_search_shows_the_terms_of_each_fused_score(live: Live, page: Any, shoot: Any) -> None:
    turns = ["Which concert tickets did you buy?", "The jazz ones, for Friday", "Nice, enjoy the evening"]
    for n, text in enumerate(turns):
        body = {"content": text, "metadata": conversation_metadata("c", n, "Ana" if n % 2 else "Bo", MAY)}
        live.api.post("/v1/memories?scope=ana", json=body).raise_for_status()
    hits = _search(live, "concert tickets")
    first = hits[0]
    assert first["bm25_part"] > 0 and first["vector_part"] is not None
    page.goto(f"{live.url}/ui/#memories")
    page.get_by_label("API key").fill(live.token)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("list", name="Scopes").get_by_role("button", name="ana").click()
    page.get_by_label("Query").fill("concert tickets")
    page.get_by_role("button", name="Search").click()
    parts = page.locator("#memory-results tbody tr[data-memory-id] .score-parts")
    expect(parts).to_have_count(len(hits))
    expect(parts.first).to_contain_text(f"BM25 {first['bm25_part']:.3f} + vector {first['vector_part']:.3f}")
    # the answer after the question was lifted by its neighbour: the conversation's share is shown
    expect(page.locator("#memory-results tr", has_text="The jazz ones")).to_contain_text("+ conversation")
    shoot("score-parts")
