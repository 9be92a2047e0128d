"""An on-disk cache of embeddings for the LoCoMo bench (experiments re-run without re-embedding).

The cache lives outside the repository (default ``/tmp/memstack-locomo-cache``), one ``.npz`` per
model id, keyed by the exact text (and whether it was embedded as a query). It only ever returns what
the wrapped embedder computed for that same text, so recall figures are unchanged by it.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memstack.search.embedders import Embedder, embed_queries


class CachedEmbedder:
    """Wraps an embedder; vectors of texts seen before come from the cache file."""

    def __init__(self, inner: Embedder, directory: Path) -> None:
        self.inner = inner
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in inner.model_id)
        self.path = directory / f"{safe}.npz"
        self._lock = threading.Lock()
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}
        self._dirty = False
        self.hits = self.misses = 0
        if self.path.is_file():
            with np.load(self.path) as data:
                self._vectors = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._get(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._get(texts, query=True)

    def _get(self, texts: Sequence[str], *, query: bool) -> npt.NDArray[np.float32]:
        keys = [
            ("q:" if query else "p:") + hashlib.blake2b(t.encode(), digest_size=16).hexdigest() for t in texts
        ]
        with self._lock:
            missing = [i for i, k in enumerate(keys) if k not in self._vectors]
        if missing:
            todo = [texts[i] for i in missing]
            fresh = embed_queries(self.inner, todo) if query else self.inner.embed(todo)
            with self._lock:
                for i, vector in zip(missing, fresh, strict=True):
                    self._vectors[keys[i]] = vector
                self._dirty = True
        with self._lock:
            self.hits += len(texts) - len(missing)
            self.misses += len(missing)
            rows = [self._vectors[k] for k in keys]
        return np.vstack(rows).astype(np.float32) if rows else np.zeros((0, self.dim), dtype=np.float32)

    def save(self) -> None:
        with self._lock:
            if not self._dirty:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            keys = list(self._vectors)
            tmp = self.path.with_suffix(".tmp.npz")
            np.savez(tmp, keys=np.array(keys), vectors=np.vstack([self._vectors[k] for k in keys]))
            tmp.replace(self.path)
            self._dirty = False
