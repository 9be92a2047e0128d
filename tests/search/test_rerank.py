"""The rerank stage: HttpReranker against a real loopback /v1/rerank stub, and LongTermMemory using it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from memstack import Memory
from memstack.foundation.errors import EmbeddingError, InvalidConfiguration, InvalidInput
from memstack.search.rerank import HttpReranker, Reranker


class Stub:
    """A /v1/rerank server: scores a document by how often it holds the query's last word."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.mode = "ok"
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
                if stub.mode == "500":
                    self.send_response(500)
                    self.end_headers()
                    return
                word = body["query"].split()[-1]
                results = [
                    {"index": i, "relevance_score": doc.count(word)}
                    for i, doc in enumerate(body["documents"])
                ]
                if stub.mode == "short":
                    results = results[:-1]
                reply = json.dumps({"results": results[::-1]}).encode()  # any order: "index" says which
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:  # idempotent: a test may close the server early
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def stub() -> Iterator[Stub]:
    server = Stub()
    yield server
    server.close()


def test_client_sends_the_request_and_reads_scores_by_index(stub: Stub) -> None:
    client = HttpReranker(stub.url, "bge-reranker", api_key="k", depth=5)
    assert isinstance(client, Reranker)
    assert client.rerank("about jazz", ["rock", "jazz jazz", "jazz"]) == [0.0, 2.0, 1.0]
    assert stub.requests == [
        {"path": "/v1/rerank", "auth": "Bearer k", "model": "bge-reranker", "query": "about jazz",
         "documents": ["rock", "jazz jazz", "jazz"]}
    ]  # fmt: skip
    assert client.rerank("q", []) == []
    assert len(stub.requests) == 1  # nothing to rank: no request


def test_client_failures_are_typed(stub: Stub) -> None:
    client = HttpReranker(stub.url, "m")
    stub.mode = "500"
    with pytest.raises(EmbeddingError, match="HTTP 500"):
        client.rerank("q", ["a"])
    stub.mode = "short"
    with pytest.raises(EmbeddingError, match="does not score all 2"):
        client.rerank("q", ["a", "b"])
    with pytest.raises(InvalidInput):
        client.rerank("q", "ab")
    with pytest.raises(InvalidInput):
        client.rerank("q", ["a", 1])  # type: ignore[list-item]  # a wrong type on purpose
    stub.close()
    with pytest.raises(EmbeddingError, match="failed"):
        HttpReranker(stub.url, "m", timeout=2).rerank("q", ["a"])


@pytest.mark.parametrize(
    ("args", "match"),
    [(("ftp://x", "m"), "base_url"), (("http://x", ""), "model"), (("http://x", "m", None, 0), "timeout")],
)
def test_client_configuration_is_checked(args: tuple[Any, ...], match: str) -> None:
    with pytest.raises(InvalidConfiguration, match=match):
        HttpReranker(*args[:3], timeout=args[3] if len(args) > 3 else 10.0)
    with pytest.raises(InvalidConfiguration, match="depth"):
        HttpReranker("http://x", "m", depth=0)


def test_long_term_search_reranks_the_head_only_when_configured(mem: Memory, stub: Stub) -> None:
    lt = mem.long_term("rr")
    lt.save(id="once", content="jazz night downtown")
    lt.save(id="twice", content="jazz jazz jazz festival with jazz bands and more jazz music all day long")
    lt.save(id="none", content="festival")
    plain = [h.entry.id for h in lt.search("jazz festival")]
    assert stub.requests == []  # off by default
    reranked = mem.long_term("rr", reranker=HttpReranker(stub.url, "m", depth=2)).search("jazz festival")
    assert [h.sources[-1] for h in reranked[:2]] == ["rerank", "rerank"]
    assert [h.entry.id for h in reranked[2:]] == plain[2:]  # beyond depth: fused order
    stub.requests.clear()
    head = mem.long_term("rr", reranker=HttpReranker(stub.url, "m", depth=3)).search("jazz")
    assert [h.entry.id for h in head][:2] == ["twice", "once"]
    assert stub.requests[0]["query"] == "jazz" and len(stub.requests[0]["documents"]) == 2


def test_a_failing_reranker_keeps_the_fused_order(
    mem: Memory, stub: Stub, caplog: pytest.LogCaptureFixture
) -> None:
    lt = mem.long_term("rf")
    lt.save(id="a", content="jazz jazz")
    lt.save(id="b", content="jazz")
    plain = [(h.entry.id, h.score) for h in lt.search("jazz")]
    stub.mode = "500"
    got = mem.long_term("rf", reranker=HttpReranker(stub.url, "m")).search("jazz")
    assert [(h.entry.id, h.score) for h in got] == plain
    assert "reranking failed" in caplog.text
