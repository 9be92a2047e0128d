"""The semantic cache and the documents of shared memory over HTTP and as service tools (MCP),
on every engine, with tenant isolation."""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from memstack import Memory
from memstack.ops.tools import run_tool, tool_specs


def test_cache_lookup_store_search_stats_clear(client: TestClient) -> None:
    base = "/v1/shared/bot/cache"
    miss = client.post(f"{base}/lookup", json={"query": "What is the capital of France?"})
    assert miss.status_code == 200 and miss.json() == {"name": "bot", "hit": False, "entry": None}
    stored = client.post(
        f"{base}/entries", json={"query": "What is the capital of France?", "response": {"text": "Paris"}}
    )
    assert stored.status_code == 201
    hit = client.post(f"{base}/lookup", json={"query": "what is the capital of france"}).json()
    assert hit["hit"] is True and hit["entry"]["response"] == {"text": "Paris"}
    assert hit["entry"]["id"] == stored.json()["id"] and hit["entry"]["similarity"] > 0.92
    strict = client.post(f"{base}/lookup", json={"query": "capital city of France", "threshold": 1}).json()
    assert strict["hit"] is False
    found = client.post(f"{base}/search", json={"query": "France", "limit": 3}).json()["items"]
    assert [e["response"] for e in found] == [{"text": "Paris"}]
    assert client.get(f"{base}/stats").json() == {
        "name": "bot", "hits": 1, "misses": 2, "hit_rate": 1 / 3, "entries": 1,
    }  # fmt: skip
    gone = client.post(f"{base}/invalidate", json={"query": "What is the capital of France?"}).json()
    assert gone == {"name": "bot", "count": 1}
    client.post(f"{base}/entries", json={"query": "q", "response": 1})
    cleared = client.delete(base).json()
    assert cleared == {"name": "bot", "hits": 0, "misses": 0, "hit_rate": 0.0, "entries": 0}


def test_cache_input_errors(client: TestClient) -> None:
    assert client.post("/v1/shared/bot/cache/lookup", json={"query": "q", "threshold": 2}).status_code == 422
    assert client.post("/v1/shared/bad name/cache/lookup", json={"query": "q"}).status_code == 400
    assert (
        client.post("/v1/shared/bot/cache/entries", json={"query": "q", "response": 1, "ttl": 0}).status_code
        == 422
    )


def test_documents_over_http(client: TestClient) -> None:
    base = "/v1/shared/kb/documents"
    put = client.put(
        f"{base}/readme", json={"content": "Set REDIS_URL to configure redis.", "metadata": {"v": 1}}
    )
    assert put.status_code == 200 and put.json()["key"] == "readme" and put.json()["metadata"] == {"v": 1}
    client.put(f"{base}/faq", json={"content": "Workers restart on deploy."})
    assert client.get(base).json() == {"name": "kb", "items": ["faq", "readme"]}
    hits = client.post(f"{base}/search", json={"query": "configure redis"}).json()["items"]
    assert [h["key"] for h in hits] == ["readme"] and hits[0]["score"] > 0
    faq = client.get(f"{base}/faq").json()
    assert faq["text"] == "Workers restart on deploy."
    assert faq["created_at"] == faq["updated_at"] and faq["created_at"].endswith("Z")  # ISO-8601 UTC
    assert client.delete(f"{base}/faq").json() == {"name": "kb", "key": "faq", "deleted": True}
    assert client.delete(f"{base}/faq").status_code == 404
    assert client.get(f"{base}/faq").status_code == 404
    assert client.put(f"{base}/x", json={"content": 5}).status_code == 422


def test_other_tenants_see_nothing(tenant_clients: tuple[TestClient, TestClient]) -> None:
    acme, beta = tenant_clients
    acme.put("/v1/shared/kb/documents/secret", json={"content": "acme plans"})
    acme.post("/v1/shared/kb/cache/entries", json={"query": "acme question", "response": "acme answer"})
    assert beta.get("/v1/shared/kb/documents").json()["items"] == []
    assert beta.get("/v1/shared/kb/documents/secret").status_code == 404
    assert beta.post("/v1/shared/kb/cache/lookup", json={"query": "acme question"}).json()["hit"] is False


def test_service_tools(mem: Memory) -> None:
    names = {spec["function"]["name"] for spec in tool_specs()}
    assert {"cache_lookup", "cache_store", "cache_stats", "document_store", "document_search"} <= names
    miss = json.loads(run_tool(mem, "cache_lookup", {"name": "bot", "query": "Who wrote Dune?"}))
    assert miss == {"name": "bot", "hit": False, "entry": None}
    stored = json.loads(
        run_tool(mem, "cache_store", {"name": "bot", "query": "Who wrote Dune?", "response": "Frank Herbert"})
    )
    hit = json.loads(run_tool(mem, "cache_lookup", {"name": "bot", "query": "who wrote dune"}))
    assert hit["hit"] is True and hit["entry"]["response"] == "Frank Herbert"
    assert hit["entry"]["id"] == stored["id"]
    assert json.loads(run_tool(mem, "cache_stats", {"name": "bot"}))["hits"] == 1
    run_tool(
        mem, "document_store", {"name": "kb", "key": "dune", "content": "Dune is a novel by Frank Herbert."}
    )
    found = json.loads(run_tool(mem, "document_search", {"name": "kb", "query": "novel Herbert"}))
    assert found["items"][0]["key"] == "dune"
    assert json.loads(run_tool(mem, "document_keys", {"name": "kb"}))["items"] == ["dune"]
    assert json.loads(run_tool(mem, "document_delete", {"name": "kb", "key": "dune"}))["deleted"] is True
    assert run_tool(mem, "document_delete", {"name": "kb", "key": "dune"}).startswith(
        "Error: document_delete failed: shared memory 'kb' has no document 'dune'"
    )
    bad = run_tool(mem, "document_store", {"name": "kb", "key": "", "content": "x"})
    assert bad.startswith("Error:")


def test_mcp_lists_and_runs_the_tools(mem: Memory) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from memstack.doors.server.mcp import build_server

    async def run() -> tuple[set[str], str]:
        async with Client(build_server(lambda ctx: mem)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            await client.call_tool("document_store", {"name": "kb", "key": "k", "content": "tea with lemon"})
            result = await client.call_tool("document_search", {"name": "kb", "query": "lemon"})
            return names, "".join(part.text for part in result.content)

    names, text = asyncio.run(run())
    assert {"cache_lookup", "document_search"} <= names
    assert json.loads(text)["items"][0]["key"] == "k"
