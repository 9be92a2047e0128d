"""``SemanticCache``: answers to earlier queries, found again by embedding similarity
(RubyLLM's ``SemanticCache`` as RobotLab's ``memory.cache``).

Entries live on the engine (:mod:`memstack.tiers.shared.cache_store`: layout, writes, the live lookup),
so every process using the same cache name shares them. Only entries embedded with the cache's
own model id and dimension are compared, never across models. A stored entry may carry the
subject label of the end user it is about (``subject=``), so ``forget(subject=…)`` finds it.

:meth:`SemanticCache.wrap` puts the cache around a chat call (:mod:`memstack.tiers.shared.cached_chat`).
"""

from __future__ import annotations

import threading
import uuid
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final, Unpack, cast

from ...engines import Engine
from ...foundation.errors import InvalidInput, InvalidValue
from ...foundation.keyspace import check_subject, labelled
from ...foundation.limits import short_repr
from ...index.codec import Matrix as Vector
from ...index.codec import pack, unit_rows
from ...search.embedders import Embedder, FakeEmbedder
from .cache_settings import KEEP, Keep, MaxMessages, check_max_messages, check_threshold, ttl_ms
from .cache_store import CacheEntries
from .cached_chat import CachedChat, WrapOptions
from .serialize import check_name, check_value, dumps

__all__ = ["DEFAULT_THRESHOLD", "SemanticCache", "default_embedder"]

DEFAULT_THRESHOLD: Final = 0.92
"""RubyLLM's ``similarity_threshold`` default."""
EMBED_MEMO: Final = 1024
"""Query vectors one cache remembers (the same prompt again is not embedded again)."""


def default_embedder() -> Embedder:
    """The embedder a shared memory's cache uses when none is given.

    memstack ships no model here, so this is the deterministic hashed bag-of-terms embedder
    (dimension 256): it matches near-identical queries (case, punctuation, inflection, word
    order), not paraphrases. Pass ``embedder=`` for real semantic matching.
    """
    return FakeEmbedder(dim=256)


class SemanticCache:
    """A semantic cache named ``name`` on ``engine``.

    Args:
        engine: where entries live.
        name: 1-128 characters of ``[A-Za-z0-9_.-]``.
        embedder: turns queries into vectors.
        threshold: least cosine similarity for a hit (0..1).
        ttl: default lifetime of stored entries in seconds (None: forever).
        max_messages: default of :meth:`wrap` (see :mod:`memstack.tiers.shared.cached_chat`).

    Raises:
        InvalidConfiguration: threshold outside [0, 1], ttl not > 0, bad max_messages.
        InvalidKey: a bad name.
    """

    def __init__(
        self,
        engine: Engine,
        name: str,
        *,
        embedder: Embedder,
        threshold: float = DEFAULT_THRESHOLD,
        ttl: float | None = None,
        max_messages: MaxMessages = 1,
    ) -> None:
        self.engine = engine
        self.name = check_name(name, "cache name")
        self.embedder = embedder
        self.threshold = check_threshold(threshold)
        self._ttl_ms = ttl_ms(ttl)
        self.ttl = ttl
        self.max_messages = check_max_messages(max_messages)
        self._entries = CacheEntries(engine, self.name)
        self._memo: OrderedDict[str, Vector] = OrderedDict()
        self._memo_lock = threading.Lock()

    # -- settings ----------------------------------------------------------------------------
    @property
    def config(self) -> dict[str, Any]:
        """The settings: ``{namespace, similarity_threshold, ttl, max_messages, embedding_model,
        embedding_dimensions}`` (RubyLLM's names)."""
        return {
            "namespace": self.name,
            "similarity_threshold": self.threshold,
            "ttl": self.ttl,
            "max_messages": self.max_messages,
            "embedding_model": self.embedder.model_id,
            "embedding_dimensions": self.embedder.dim,
        }

    def configure(
        self,
        *,
        threshold: float | Keep = KEEP,
        ttl: float | Keep | None = KEEP,
        max_messages: MaxMessages | Keep = KEEP,
        embedder: Embedder | None = None,
    ) -> dict[str, Any]:
        """Change the given settings (all checked before any changes) and return :attr:`config`.

        Entries stay on the engine (other processes share them); the in-process index is
        looked up again, so a new ``embedder`` compares only the entries of its own model.

        Raises:
            InvalidConfiguration: a bad threshold, ttl or max_messages.
        """
        new_threshold = self.threshold if isinstance(threshold, Keep) else check_threshold(threshold)
        new_ttl_ms = self._ttl_ms if isinstance(ttl, Keep) else ttl_ms(ttl)
        new_max = self.max_messages if isinstance(max_messages, Keep) else check_max_messages(max_messages)
        self.threshold, self._ttl_ms, self.max_messages = new_threshold, new_ttl_ms, new_max
        if not isinstance(ttl, Keep):
            self.ttl = ttl
        if embedder is not None:
            self.embedder = embedder
            with self._memo_lock:
                self._memo.clear()
        return self.config

    # -- embedding and lookup ----------------------------------------------------------------
    def embed(self, query: str) -> Vector:
        """The unit vector of ``query``.

        Raises:
            InvalidInput: ``query`` is not a str. EmbeddingError: the embedder failed.
        """
        if not isinstance(query, str):
            raise InvalidInput(f"query {short_repr(query)}: must be a str")
        with self._memo_lock:
            vector = self._memo.get(query)
            if vector is not None:
                self._memo.move_to_end(query)
                return vector
        vector = cast(Vector, unit_rows(self.embedder.embed([query])[0])[0])  # one row of the matrix
        vector.flags.writeable = False  # shared by later calls with the same query
        with self._memo_lock:
            self._memo[query] = vector
            while len(self._memo) > EMBED_MEMO:
                self._memo.popitem(last=False)
        return vector

    def lookup(self, vector: Vector, threshold: float | None = None) -> dict[str, Any] | None:
        """The nearest stored entry if similar enough (no hit or miss counted).

        Raises:
            InvalidConfiguration: a bad threshold.
        """
        least = self.threshold if threshold is None else check_threshold(threshold)
        found = self._live(vector, least, 1)
        return found[0] if found else None

    def _live(self, vector: Vector, least: float, limit: int) -> list[dict[str, Any]]:
        return self._entries.live(self.embedder.model_id, self.embedder.dim, vector, least, limit)

    def count(self, hit: bool) -> None:
        """Count one hit or one miss in :meth:`stats`."""
        self._entries.count(hit)

    # -- API ---------------------------------------------------------------------------------
    def fetch(
        self,
        query: str,
        compute: Callable[[], Any],
        *,
        threshold: float | None = None,
        ttl: float | None = None,
        subject: str | None = None,
    ) -> Any:
        """The cached response of the nearest stored query when similar enough (a hit), else
        ``compute()``, stored under ``query`` (labelled ``subject``) and returned (a miss).

        Raises:
            InvalidInput: ``query`` is not a str, or no ``compute`` callable ("Block required").
            InvalidValue: the computed response is not JSON, a bad subject.
            InvalidConfiguration: bad threshold/ttl.
        """
        if subject is not None:
            check_subject(subject)
        if not callable(compute):
            raise InvalidInput(f"Block required: fetch needs a compute callable, got {short_repr(compute)}")
        vector = self.embed(query)
        hit = self.lookup(vector, threshold)
        if hit is not None:
            self.count(True)
            return hit["response"]
        try:
            response = compute()
        except BaseException:
            self.count(False)
            raise
        try:
            self.store(query, response, ttl=ttl, subject=subject, vector=vector, miss=True)
        except InvalidValue:
            self.count(False)  # a miss all the same
            raise
        return response

    def store(
        self,
        query: str,
        response: Any,
        metadata: dict[str, Any] | None = None,
        ttl: float | None = None,
        *,
        subject: str | None = None,
        vector: Vector | None = None,
        miss: bool = False,
    ) -> str:
        """Store ``response`` for ``query``; returns the new entry id. ``subject``: the end user
        the entry is about (:mod:`memstack.foundation.keyspace.subjects`). ``vector``: the query's,
        already computed by :meth:`embed` (one embedding per call); ``miss``: count a miss in the
        same write.

        Raises:
            InvalidValue: response or metadata not JSON, a bad subject. InvalidConfiguration: bad ttl.
        """
        if subject is not None:
            check_subject(subject)
        check_value(response, "response")
        check_value(metadata or {}, "metadata")
        px = self._ttl_ms if ttl is None else ttl_ms(ttl)
        if vector is None:
            vector = self.embed(query)
        entry_id = uuid.uuid4().hex
        entry = {
            "query": query,
            "response": response,
            "metadata": metadata or {},
            "vector": pack(vector),
            "model": self.embedder.model_id,
            "dim": self.embedder.dim,
            "created": self.engine.now_ms(),
        }
        self._entries.put(entry_id, dumps(labelled(entry, subject)), px, miss=miss, subject=subject)
        return entry_id

    def put(self, query: str, response: Any, **options: Any) -> str:
        """Deprecated since :meth:`store` took its keywords (``metadata``, ``ttl``, ``vector``,
        ``miss``, ``subject``); kept so that callers of ``put`` keep working.

        Raises:
            as :meth:`store`; TypeError: a keyword :meth:`store` does not take.
        """
        warnings.warn("SemanticCache.put is deprecated: use store", DeprecationWarning, stacklevel=2)
        return self.store(query, response, **options)

    def search(self, query: str, limit: int = 5) -> list[dict[str, Any]]:
        """Up to ``limit`` stored entries, best first: ``{id, query, response, similarity, metadata}``.

        Raises:
            InvalidInput: a bad query or limit.
        """
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInput(f"limit {short_repr(limit)}: must be an int >= 1")
        return self._live(self.embed(query), -1.0, limit)

    def exists(self, query: str, *, threshold: float | None = None) -> bool:
        """True if a stored query is similar enough to ``query``.

        Raises:
            InvalidInput: a bad query. InvalidConfiguration: a bad threshold.
        """
        return self.lookup(self.embed(query), threshold) is not None

    def delete(self, query: str, *, threshold: float | None = None) -> bool:
        """Delete the nearest entry if similar enough; True if one was deleted.

        Raises:
            InvalidInput: a bad query. InvalidConfiguration: a bad threshold.
        """
        hit = self.lookup(self.embed(query), threshold)
        return self._entries.remove([hit["id"]] if hit else []) > 0

    def invalidate(self, query: str, *, threshold: float | None = None, limit: int = 100) -> int:
        """Delete up to ``limit`` entries similar enough to ``query``; returns how many.

        Raises:
            InvalidInput: a bad query or limit. InvalidConfiguration: a bad threshold.
        """
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInput(f"limit {short_repr(limit)}: must be an int >= 1")
        least = self.threshold if threshold is None else check_threshold(threshold)
        return self._entries.remove([e["id"] for e in self._live(self.embed(query), least, limit)])

    def clear(self) -> None:
        """Delete every entry and reset the hit and miss counters (RubyLLM's ``clear!``)."""
        self._entries.clear()

    def stats(self) -> dict[str, Any]:
        """``{hits, misses, hit_rate (0.0 when none), entries}`` (live entries only)."""
        return self._entries.stats()

    def wrap(self, chat: Any, **options: Unpack[WrapOptions]) -> CachedChat:
        """``chat`` with this cache around its calls (see :mod:`memstack.tiers.shared.cached_chat`);
        ``options``: ``threshold``, ``ttl``, ``on_cache_hit``, ``max_messages`` of
        :class:`~memstack.tiers.shared.cached_chat.CachedChat`.

        Raises:
            InvalidConfiguration: a bad threshold, ttl or max_messages.
            InvalidInput: ``chat`` is not callable.
        """
        return CachedChat(self, chat, **options)

    def __repr__(self) -> str:
        return f"<SemanticCache {self.name!r} model={self.embedder.model_id!r} threshold={self.threshold}>"
