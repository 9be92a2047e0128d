"""The exact cosines of a graph-backed search's best hits, from the float vectors the engine stores.

A scope searched through its graph holds its vectors in 4 bits a component (196 bytes an entry at
384 dimensions; :meth:`~memstack.index.vectors.VectorIndex.quantise`): enough to pick the best of
the graph's candidates, not to rank them (each cosine is off by about 0.005, which on clustered
vectors, where a topic's hundred members lie within a few hundredths of each other, kept only 0.72
of the exact top 10). The ``depth`` best by those cosines (the hits fusion reads) are re-scored
here from the float32 vectors the engine stores for them, read in one ``hmget``: the fused ranking
then reads the exact cosine of every vector hit, as the exact scan gives it.

A vector read is used only if it is the one the cache holds for the entry: made by the search's
model, of its dimension, from the entry's text as the cache has it (the text digest every stored
vector carries, compared with the digest of the vector the cache took). A vector changed or
deleted since the cache's version keeps its 4-bit cosine, so the answer stays the one of the
cache's version. Reading never writes.

The digests are taken under the cache's lock (:func:`digests`) and the read is made without it
(:func:`read`), so that concurrent searches of one scope do not wait for each other's round trips
(:meth:`~.reads.LongTermReads._cached` says how a search does it; :func:`reader` reads under the
lock, for the searches that cannot defer it).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from ...engines import Engine
from ...index.codec import unit_rows
from ...index.mirror import CHUNK
from ...search.embedders import Embedder
from .hybrid import valid_vector_ids
from .index_cache import ScopeCache
from .layout import ScopeKeys
from .vectors import Matrix

__all__ = ["Reader", "digests", "float_vectors", "read", "reader"]

Reader = Callable[[list[str]], tuple[Matrix, npt.NDArray[np.bool_]]]
"""``ids`` -> their unit float vectors as rows and which of them were read (the others are zero)."""


def digests(cache: ScopeCache, ids: list[str], model: str) -> list[str | None]:
    """The text digest of the vector the cache holds for each of ``ids`` when ``model`` made it from
    the entry's text as the cache has it (the index holds a vector only while it matches the entry's
    current text: ``index_cache._valid``), else None: what :func:`read` checks a stored vector
    against, taken under ``cache.lock`` so that the read itself needs neither the lock nor the cache."""
    held, texts = cache.vectors, cache.texts
    out: list[str | None] = []
    for entry_id in ids:
        stored = held.get(entry_id)
        ok = stored is not None and stored.model == model and entry_id in texts
        out.append(stored.text_hash if ok and stored is not None else None)
    return out


def read(
    engine: Engine, keys: ScopeKeys, model: str, dim: int, ids: list[str], wanted: list[str | None]
) -> tuple[Matrix, npt.NDArray[np.bool_]]:
    """The unit float vectors of ``ids`` as rows, and which of them were read: a stored vector is
    taken only if ``model`` made it, of ``dim`` components, from the text of its digest in
    ``wanted`` (:func:`digests`; None: not taken). One ``hmget``; the caller holds no lock.

    Raises:
        EngineError: the engine failed.
    """
    head = '{"m":' + json.dumps(model) + ',"d":' + str(dim) + ',"h":"'
    chars = 4 * -(-4 * dim // 3)  # base64 of dim float32s
    raws = engine.hmget(keys.vectors, ids) if ids else []
    rows = np.zeros((len(ids), dim), dtype=np.float32)
    ok = np.zeros(len(ids), dtype=bool)
    plain: list[str] = []  # the base64 of the payloads in the writer's own form, ...
    where: list[int] = []  # ... and their rows
    for n, (raw, digest) in enumerate(zip(raws, wanted, strict=True)):
        if raw is None or digest is None:
            continue
        # :func:`~.vectors.encode_vector`'s payload, byte for byte: its vector is the base64
        # between this head and the closing ``"}`` (no JSON parse needed)
        prefix = head + digest + '","v":"'
        if raw.startswith(prefix) and raw.endswith('"}') and len(raw) == len(prefix) + chars + 2:
            plain.append(raw[len(prefix) : -2])
            where.append(n)
            continue
        found = _decode(raw, model, dim, digest)
        if found is not None:
            rows[n], ok[n] = found, True
    if plain:
        rows[where], ok[where] = _decode_many(plain, dim)
    return unit_rows(rows), ok


def reader(engine: Engine, keys: ScopeKeys, cache: ScopeCache, model: str, dim: int) -> Reader:
    """:func:`read` of the vectors the cache holds for the ids asked, checked against the cache as it
    is at the call (the caller holds ``cache.lock`` while it reads).

    Raises (from the returned call):
        EngineError: the engine failed.
    """
    return lambda ids: read(engine, keys, model, dim, ids, digests(cache, ids, model))


def _decode_many(texts: list[str], dim: int) -> tuple[Matrix, npt.NDArray[np.bool_]]:
    """Base64 ``texts`` of ``dim`` float32s each as rows, and which of them decoded; in one call when
    a vector's base64 has no padding (``dim`` a multiple of 3: the concatenation is one string)."""
    if (4 * dim) % 3 == 0:
        try:
            flat = np.frombuffer(base64.b64decode("".join(texts), validate=True), dtype="<f4")
            return flat.astype(np.float32).reshape(len(texts), dim), np.ones(len(texts), dtype=bool)
        except (binascii.Error, ValueError):
            pass  # one is damaged: each on its own
    rows = np.zeros((len(texts), dim), dtype=np.float32)
    ok = np.zeros(len(texts), dtype=bool)
    for n, text in enumerate(texts):
        try:
            flat = np.frombuffer(base64.b64decode(text, validate=True), dtype="<f4")
        except (binascii.Error, ValueError):
            continue
        if flat.size == dim:
            rows[n], ok[n] = flat, True
    return rows, ok


def _decode(raw: str, model: str, dim: int, digest: str) -> npt.NDArray[np.float32] | None:
    """The one vector of a stored payload (:mod:`memstack.index.codec`'s form) if ``model`` made it,
    of ``dim`` components, from the text of ``digest``; None otherwise or when malformed. The
    payload's fields are checked before its vector is decoded: a miss costs a JSON parse only."""
    try:
        data = json.loads(raw)
        if data.get("m") != model or data.get("h") != digest or int(data.get("d", -1)) != dim:
            return None
        flat = np.frombuffer(base64.b64decode(data["v"], validate=True), dtype="<f4")
    except (ValueError, TypeError, KeyError, AttributeError, binascii.Error):
        return None
    return flat.astype(np.float32) if flat.size == dim else None


def float_vectors(
    engine: Engine, keys: ScopeKeys, cache: ScopeCache, embedder: Embedder
) -> dict[str, list[float]]:
    """Each vector ``embedder`` made from its entry's current text, by id, in float32 as
    stored: for comparing memories with each other (the dedupe pass's cosine threshold of 0.95),
    where a graph-backed scope's 4-bit rows would move a pair across it (each cosine off by about
    0.005). The cache's decoded copy where it holds one; else the engine's, read without the cache's
    lock as a search's exact pass reads it, :data:`~memstack.index.mirror.CHUNK` at a time. A vector
    changed since the cache took it is left out (its entry is then compared by its terms alone).

    Raises:
        EngineError: the engine failed.
    """
    model, dim = embedder.model_id, embedder.dim
    with cache.lock:
        cache.refresh(engine, keys)
        valid = valid_vector_ids(cache, embedder)
        held = {i: cache.vectors[i].vector for i in valid if len(cache.vectors[i].rows)}
        released = sorted(i for i in valid if i not in held)
        wanted = digests(cache, released, model)
    found: dict[str, npt.NDArray[np.float32]] = dict(held)
    for start in range(0, len(released), CHUNK):
        ids = released[start : start + CHUNK]
        rows, ok = read(engine, keys, model, dim, ids, wanted[start : start + CHUNK])
        found.update((i, rows[n]) for n, i in enumerate(ids) if ok[n])
    return {i: [float(x) for x in found[i]] for i in sorted(found)}
