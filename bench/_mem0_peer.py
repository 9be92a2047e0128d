"""mem0 as the peer of ``bench/remember.py``: a loopback embedding server and the script mem0 runs.

mem0 embeds every message it stores. No embedding model can be fetched on this machine, so mem0's
OpenAI-compatible embedder is pointed at :func:`embedding_server`: a ``/v1/embeddings`` endpoint on
127.0.0.1 answering a deterministic hashed bag of words (64 dimensions). Its cost is a loopback
HTTP call per text, which the mem0 row includes (a real embedder costs more).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["DIMS", "MEM0_SCRIPT", "embedding_server", "hashed_vector"]

DIMS = 64


def hashed_vector(text: str) -> list[float]:
    """A unit vector of the words of ``text``, each hashed to one of :data:`DIMS` dimensions."""
    vector = [0.0] * DIMS
    for word in text.lower().split():
        vector[int(hashlib.blake2b(word.encode(), digest_size=2).hexdigest(), 16) % DIMS] += 1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        given = body.get("input", "")
        texts = given if isinstance(given, list) else [given]
        data = [
            {"object": "embedding", "index": i, "embedding": hashed_vector(str(t))}
            for i, t in enumerate(texts)
        ]
        payload = json.dumps(
            {
                "object": "list",
                "data": data,
                "model": "hashed",
                "usage": {"prompt_tokens": 0, "total_tokens": 0},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def embedding_server() -> Iterator[str]:
    """Serve :func:`hashed_vector` embeddings on 127.0.0.1; yields the ``/v1`` base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


MEM0_SCRIPT = r"""
import json, random, sys, time
from mem0 import Memory
url, home, users, turns, queries = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
words = ("bees garden porto lisbon berlin violin jazz coffee tea dog cat sister brother train bike "
         "morning evening weekend dinner book music paris rome project deadline office home piano").split()
config = {
    "embedder": {"provider": "openai", "config": {"model": "hashed", "openai_base_url": url,
                                                  "api_key": "local", "embedding_dims": 64}},
    "vector_store": {"provider": "faiss", "config": {"path": home + "/faiss", "embedding_model_dims": 64}},
    "llm": {"provider": "openai", "config": {"model": "none", "openai_base_url": url, "api_key": "local"}},
    "history_db_path": home + "/history.db",
}
mem = Memory.from_config(config)
rng = random.Random(7)
add, search = [], []
for n in range(users):
    for _ in range(turns):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(6, 14)))
        start = time.perf_counter()
        mem.add([{"role": "user", "content": text}], user_id=f"u{n}", infer=False)
        add.append(time.perf_counter() - start)
for n in range(users):
    for _ in range(queries):
        query = " ".join(rng.choice(words) for _ in range(3))
        start = time.perf_counter()
        mem.search(query, filters={"user_id": f"u{n}"}, limit=10)
        search.append(time.perf_counter() - start)
p50 = lambda v: sorted(v)[len(v) // 2] * 1000
print(json.dumps({"add_p50_ms": p50(add), "search_p50_ms": p50(search)}))
"""
