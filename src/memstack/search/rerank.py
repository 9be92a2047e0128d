"""A rerank stage: the :class:`Reranker` protocol and a client for ``/v1/rerank``-style servers.

Off by default. A user who runs a cross-encoder server (Jina, Cohere-compatible, vLLM, TEI, llama.cpp)
passes an :class:`HttpReranker` to :class:`~memstack.tiers.longterm.LongTermMemory`; the first ``depth`` fused
results are then re-ordered by the server's relevance scores (the rest keep their order after them). A
failing reranker never fails a search: the fused order is kept and a warning is logged.

The request is ``POST {base_url}/rerank`` with ``{"model", "query", "documents": [str, ...]}``; the
reply holds ``{"results": [{"index": i, "relevance_score": s}, ...]}`` (``score`` is accepted for
``relevance_score``). Only the endpoint the caller configures is contacted.
"""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from memstack.foundation.errors import EmbeddingError, InvalidConfiguration, InvalidInput

__all__ = ["HttpReranker", "Reranker"]


@runtime_checkable
class Reranker(Protocol):
    """Scores documents against a query; higher is more relevant.

    ``depth`` is how many of the best fused results a search hands to :meth:`rerank`.
    """

    @property
    def depth(self) -> int: ...

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """One relevance score per document, in the documents' order."""
        ...


class HttpReranker:
    """A client for ``POST {base_url}/rerank`` (see the module docstring).

    ``base_url`` is the API root (e.g. ``http://127.0.0.1:8080/v1``); ``api_key`` (optional) is sent as
    a bearer token; ``timeout`` bounds the request in seconds; ``depth`` is how many results are reranked.

    Raises:
        InvalidConfiguration: ``base_url`` is not http(s), an empty model, or a bad timeout / depth.
    """

    def __init__(
        self, base_url: str, model: str, api_key: str | None = None, *, timeout: float = 10.0, depth: int = 30
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise InvalidConfiguration(f"base_url={base_url!r} must start with http:// or https://")
        if not isinstance(model, str) or not model:
            raise InvalidConfiguration(f"model={model!r} must be a non-empty string")
        if not (isinstance(timeout, (int, float)) and timeout > 0):
            raise InvalidConfiguration(f"timeout={timeout!r} must be > 0 seconds")
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise InvalidConfiguration(f"depth={depth!r} must be an int >= 1")
        self._url = base_url.rstrip("/") + "/rerank"
        self._model, self._key, self._timeout, self._depth = model, api_key, float(timeout), depth

    @property
    def depth(self) -> int:
        """How many fused results are reranked."""
        return self._depth

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """The server's relevance score of each document, in order.

        Raises:
            InvalidInput: ``query`` or a document is not a string.
            EmbeddingError: the server failed, timed out or gave a reply without one finite score per
                document.
        """
        if not isinstance(query, str) or isinstance(documents, str):
            raise InvalidInput("rerank() takes a query str and a sequence of document strs")
        for i, doc in enumerate(documents):
            if not isinstance(doc, str):
                raise InvalidInput(f"documents[{i}]={doc!r} must be a str")
        if not documents:
            return []
        body = json.dumps({"model": self._model, "query": query, "documents": list(documents)}).encode()
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        request = urllib.request.Request(self._url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                reply: Any = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise EmbeddingError(f"rerank server {self._url} answered HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise EmbeddingError(f"rerank server {self._url} failed: {exc}") from None
        return _scores(reply, len(documents), self._url)


def _scores(reply: Any, count: int, url: str) -> list[float]:
    results = reply.get("results") if isinstance(reply, dict) else None
    if not isinstance(results, list):
        raise EmbeddingError(f"rerank server {url}: the reply has no 'results' list")
    scores: list[float | None] = [None] * count
    for item in results:
        index = item.get("index") if isinstance(item, dict) else None
        score = item.get("relevance_score", item.get("score")) if isinstance(item, dict) else None
        if (
            isinstance(index, int)
            and not isinstance(index, bool)
            and 0 <= index < count
            and isinstance(score, (int, float))
            and math.isfinite(score)
        ):
            scores[index] = float(score)
    if any(s is None for s in scores):
        raise EmbeddingError(f"rerank server {url}: the reply does not score all {count} documents")
    return [s for s in scores if s is not None]
