"""OpenAIEmbedder against a real HTTP server on 127.0.0.1 that speaks ``/v1/embeddings``."""

from __future__ import annotations

import base64
import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from memstack.foundation.errors import EmbeddingError, InvalidConfiguration, InvalidInput
from memstack.search.embedders import Embedder, OpenAIEmbedder


def _vector_for(text: str, dim: int) -> list[float]:
    """A deterministic, un-normalised vector per text (so the client's normalisation is visible)."""
    rng = np.random.default_rng(sum(map(ord, text)) + len(text))
    return (rng.standard_normal(dim) * 3.0).astype(np.float32).tolist()


@dataclass
class Script:
    """What the fake server does; tests edit it."""

    dim: int = 8
    fail_first: list[int] = field(default_factory=list)  # status codes to answer before succeeding
    delay: float = 0.0
    shuffle: bool = True
    override: dict[str, Any] | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)


@pytest.fixture
def server() -> Iterator[tuple[str, Script]]:
    script = Script()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002  # stdlib signature
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            script.requests.append(body)
            script.headers.append(dict(self.headers))
            if self.path != "/v1/embeddings":
                self._send(404, {"error": "not found"})
                return
            if script.fail_first:
                self._send(script.fail_first.pop(0), {"error": {"message": "try later"}})
                return
            if script.delay:
                script.release.wait(script.delay)
            if script.override is not None:
                self._send(200, script.override)
                return
            dim = body.get("dimensions", script.dim)
            data = []
            for i, text in enumerate(body["input"]):
                vec = _vector_for(text, dim)
                if body.get("encoding_format") == "base64":
                    emb: Any = base64.b64encode(np.asarray(vec, dtype="<f4").tobytes()).decode()
                else:
                    emb = vec
                data.append({"object": "embedding", "index": i, "embedding": emb})
            if script.shuffle:
                data.reverse()  # clients must sort by index
            self._send(200, {"object": "list", "data": data, "model": body["model"]})

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            raw = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up
                self.wfile.write(raw)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", script
    finally:
        script.release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def _expected(texts: list[str], dim: int) -> np.ndarray:
    rows = np.array([_vector_for(t, dim) for t in texts], dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_float_reply_sorted_by_index_and_normalised(server: tuple[str, Script]) -> None:
    url, script = server
    e = OpenAIEmbedder(url, "nomic-embed-text", api_key="sk-test", backoff=0)
    out = e.embed(["alpha", "beta", "gamma"])
    assert out.dtype == np.float32
    assert out.shape == (3, 8)
    np.testing.assert_allclose(out, _expected(["alpha", "beta", "gamma"], 8), rtol=1e-5)
    assert script.requests[0] == {
        "model": "nomic-embed-text",
        "input": ["alpha", "beta", "gamma"],
        "encoding_format": "float",
    }
    assert script.headers[0]["Authorization"] == "Bearer sk-test"
    assert (e.model_id, e.dim) == ("openai:nomic-embed-text", 8)
    assert isinstance(e, Embedder)


def test_base64_reply(server: tuple[str, Script]) -> None:
    url, script = server
    e = OpenAIEmbedder(url, "m", encoding_format="base64", backoff=0)
    out = e.embed(["one", "two"])
    np.testing.assert_allclose(out, _expected(["one", "two"], 8), rtol=1e-5)
    assert script.requests[0]["encoding_format"] == "base64"
    assert "Authorization" not in script.headers[0]


def test_batches_and_dimensions(server: tuple[str, Script]) -> None:
    url, script = server
    e = OpenAIEmbedder(url, "m", dimensions=4, batch_size=2, backoff=0)
    texts = ["a", "b", "c", "d", "e"]
    out = e.embed(texts)
    assert out.shape == (5, 4)
    np.testing.assert_allclose(out, _expected(texts, 4), rtol=1e-5)
    assert [r["input"] for r in script.requests] == [["a", "b"], ["c", "d"], ["e"]]
    assert all(r["dimensions"] == 4 for r in script.requests)
    assert e.model_id == "openai:m@4"


def test_dim_probe_and_empty_input(server: tuple[str, Script]) -> None:
    url, script = server
    e = OpenAIEmbedder(url, "m", backoff=0)
    assert e.embed([]).shape == (0, 0)
    assert script.requests == []
    assert e.dim == 8
    assert len(script.requests) == 1
    assert e.embed([]).shape == (0, 8)


def test_retries_after_500_and_429(server: tuple[str, Script]) -> None:
    url, script = server
    script.fail_first = [500, 429]
    out = OpenAIEmbedder(url, "m", retries=2, backoff=0).embed(["x"])
    assert out.shape == (1, 8)
    assert len(script.requests) == 3


def test_gives_up_after_retries(server: tuple[str, Script]) -> None:
    url, script = server
    script.fail_first = [503, 503, 503]
    with pytest.raises(EmbeddingError, match=r"after 2 attempt\(s\): HTTP 503"):
        OpenAIEmbedder(url, "m", retries=1, backoff=0).embed(["x"])
    assert len(script.requests) == 2


def test_client_errors_are_not_retried(server: tuple[str, Script]) -> None:
    url, script = server
    script.fail_first = [400]
    with pytest.raises(EmbeddingError, match="HTTP 400"):
        OpenAIEmbedder(url, "m", retries=3, backoff=0).embed(["x"])
    assert len(script.requests) == 1


def test_wrong_path_is_a_clear_error(server: tuple[str, Script]) -> None:
    url, _ = server
    with pytest.raises(EmbeddingError, match="HTTP 404"):
        OpenAIEmbedder(url.removesuffix("/v1"), "m", backoff=0).embed(["x"])


def test_timeout(server: tuple[str, Script]) -> None:
    url, script = server
    script.delay = 5.0
    with pytest.raises(EmbeddingError, match="2 attempt"):
        OpenAIEmbedder(url, "m", timeout=0.2, retries=1, backoff=0).embed(["slow"])
    assert len(script.requests) == 2


def test_connection_refused() -> None:
    import socket

    with socket.socket() as sock:  # a port that nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(EmbeddingError, match="Connection"):
        OpenAIEmbedder(f"http://127.0.0.1:{port}/v1", "m", retries=1, backoff=0).embed(["x"])


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ({"data": []}, "0 embedding"),
        ({"nope": 1}, "no data list"),
        ({"data": [{"index": 0, "embedding": "!!"}]}, "base64"),
        ({"data": [{"index": 0, "embedding": ["a"]}]}, "neither"),
        ({"data": [{"index": 5, "embedding": [1.0]}]}, "index 5"),
    ],
)
def test_bad_replies(server: tuple[str, Script], reply: dict[str, Any], message: str) -> None:
    url, script = server
    script.override = reply
    with pytest.raises(EmbeddingError, match=message):
        OpenAIEmbedder(url, "m", backoff=0).embed(["x"])


def test_dimension_change_is_detected(server: tuple[str, Script]) -> None:
    url, script = server
    e = OpenAIEmbedder(url, "m", backoff=0)
    e.embed(["x"])
    script.dim = 16
    with pytest.raises(EmbeddingError, match="size 16, expected 8"):
        e.embed(["y"])


def test_long_inputs_are_truncated(server: tuple[str, Script]) -> None:
    url, script = server
    OpenAIEmbedder(url, "m", backoff=0).embed(["x" * 40_000])
    assert len(script.requests[0]["input"][0]) == 30_000


def test_bad_configuration_and_input() -> None:
    with pytest.raises(InvalidConfiguration, match="base_url"):
        OpenAIEmbedder("ftp://x", "m")
    with pytest.raises(InvalidConfiguration, match="retries"):
        OpenAIEmbedder("http://127.0.0.1:1/v1", "m", retries=-1)
    with pytest.raises(InvalidConfiguration, match="timeout"):
        OpenAIEmbedder("http://127.0.0.1:1/v1", "m", timeout=0)
    with pytest.raises(InvalidInput, match="single str"):
        OpenAIEmbedder("http://127.0.0.1:1/v1", "m").embed("x")
