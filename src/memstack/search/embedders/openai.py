"""A client for any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, Ollama, vLLM, LM Studio, ...).

Only the endpoint the caller configures is ever contacted. Requests go in batches; connection errors,
timeouts, HTTP 5xx and 429 are retried with exponential backoff (``Retry-After`` is honoured, capped);
any other failure, or a reply that does not hold one vector per input, raises
:class:`~memstack.EmbeddingError`. Both ``encoding_format`` replies are understood: ``float``
(JSON numbers) and ``base64`` (little-endian float32). Rows are L2-normalised.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import threading
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from memstack.foundation.errors import EmbeddingError, InvalidConfiguration, InvalidInput
from memstack.llm._http import check_client, post_json
from memstack.search.embedders.base import l2_normalise

__all__ = ["OpenAIEmbedder"]

log = logging.getLogger(__name__)

MAX_INPUT_CHARS = 30_000  # the seed's MaxInputChars: longer texts are truncated before embedding


class OpenAIEmbedder:
    """Embeddings from ``POST {base_url}/embeddings``.

    ``base_url`` is the API root, e.g. ``http://127.0.0.1:11434/v1`` or ``https://api.openai.com/v1``;
    ``api_key`` (optional) is sent as a bearer token; ``timeout`` bounds each HTTP request in seconds;
    ``retries`` is the number of retries after a failed attempt; ``dimensions`` is passed to the server
    (models that support shortening) and fixes :attr:`dim`; ``batch_size`` caps inputs per request;
    ``encoding_format`` is what the server is asked for; ``backoff`` is the first retry delay in seconds
    (doubled each retry).

    Raises:
        InvalidConfiguration: an argument is out of range or ``base_url`` is not http(s).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        retries: int = 3,
        dimensions: int | None = None,
        batch_size: int = 64,
        encoding_format: Literal["float", "base64"] = "float",
        backoff: float = 0.5,
    ) -> None:
        check_client(base_url, model, timeout, retries, backoff)
        if dimensions is not None and (not isinstance(dimensions, int) or dimensions < 1):
            raise InvalidConfiguration(f"dimensions={dimensions!r} must be None or an int >= 1")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidConfiguration(f"batch_size={batch_size!r} must be an int >= 1")
        if encoding_format not in ("float", "base64"):
            raise InvalidConfiguration(f"encoding_format={encoding_format!r} must be 'float' or 'base64'")
        self._url = base_url.rstrip("/") + "/embeddings"
        self._model = model
        self._api_key = api_key
        self._timeout = float(timeout)
        self._retries = retries
        self._dimensions = dimensions
        self._batch_size = batch_size
        self._format = encoding_format
        self._backoff = float(backoff)
        self._dim: int | None = dimensions
        self._dim_lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """``"openai:{model}"``, with ``@{dimensions}`` appended when dimensions were requested."""
        return f"openai:{self._model}" + (f"@{self._dimensions}" if self._dimensions else "")

    @property
    def dim(self) -> int:
        """The vector size: ``dimensions`` if given, else learnt from the first reply (embedding a probe
        text if nothing was embedded yet).

        Raises:
            EmbeddingError: the probe request failed.
        """
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None  # set by embed() or it raised
        return self._dim

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts`` (each truncated to 30,000 characters) into unit rows of shape ``(n, dim)``.

        Raises:
            InvalidInput: ``texts`` is a bare string or holds a non-string.
            EmbeddingError: the server is unreachable after the retries, timed out, answered with an
                error, or sent a reply without exactly one vector of the expected size per input.
        """
        if isinstance(texts, str):
            raise InvalidInput("embed() takes a sequence of texts, not a single str")
        items: list[str] = []
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise InvalidInput(f"texts[{i}]={text!r} must be a str")
            items.append(text[:MAX_INPUT_CHARS])
        if not items:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        parts = [
            self._embed_batch(items[i : i + self._batch_size]) for i in range(0, len(items), self._batch_size)
        ]
        return l2_normalise(np.concatenate(parts, axis=0))

    def _embed_batch(self, batch: list[str]) -> npt.NDArray[np.float32]:
        body: dict[str, Any] = {"model": self._model, "input": batch, "encoding_format": self._format}
        if self._dimensions is not None:
            body["dimensions"] = self._dimensions
        reply = self._post(json.dumps(body).encode())
        vectors = _parse(reply, len(batch), self._url)
        with self._dim_lock:
            if self._dim is None:
                self._dim = vectors.shape[1]
        if vectors.shape[1] != self._dim:
            raise EmbeddingError(
                f"{self._url} returned vectors of size {vectors.shape[1]}, expected {self._dim} "
                f"(model {self._model!r} changed?)"
            )
        return vectors

    def _post(self, data: bytes) -> Any:
        return post_json(
            self._url,
            data,
            api_key=self._api_key,
            timeout=self._timeout,
            retries=self._retries,
            backoff=self._backoff,
            error=EmbeddingError,
            what="embedding request",
        )


def _parse(reply: Any, expected: int, url: str) -> npt.NDArray[np.float32]:
    """The vectors of an embeddings reply, in input order (sorted by ``index``)."""
    data = reply.get("data") if isinstance(reply, dict) else None
    if not isinstance(data, list) or len(data) != expected:
        got = len(data) if isinstance(data, list) else "no data list"
        raise EmbeddingError(f"{url} returned {got} embedding(s) for {expected} input(s)")
    rows: dict[int, npt.NDArray[np.float32]] = {}
    for pos, item in enumerate(data):
        if not isinstance(item, dict):
            raise EmbeddingError(f"{url} returned a data item that is not an object: {item!r:.80}")
        index = item.get("index", pos)
        if not isinstance(index, int) or index in rows or not 0 <= index < expected:
            raise EmbeddingError(f"{url} returned a bad or repeated index {index!r}")
        rows[index] = _vector(item.get("embedding"), url)
    sizes = {len(v) for v in rows.values()}
    if len(sizes) != 1 or 0 in sizes:
        raise EmbeddingError(f"{url} returned vectors of sizes {sorted(sizes)} in one reply")
    return np.stack([rows[i] for i in range(expected)])


def _vector(embedding: Any, url: str) -> npt.NDArray[np.float32]:
    if isinstance(embedding, str):
        try:
            raw = base64.b64decode(embedding, validate=True)
        except binascii.Error as exc:
            raise EmbeddingError(f"{url} returned an embedding that is not valid base64") from exc
        if len(raw) % 4:
            raise EmbeddingError(f"{url} returned a base64 embedding of {len(raw)} bytes (not float32s)")
        return np.frombuffer(raw, dtype="<f4").astype(np.float32)
    if isinstance(embedding, list) and all(
        isinstance(x, int | float) and not isinstance(x, bool) for x in embedding
    ):
        return np.asarray(embedding, dtype=np.float32)
    raise EmbeddingError(f"{url} returned an embedding that is neither a number list nor base64")
