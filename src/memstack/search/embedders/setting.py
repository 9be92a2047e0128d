"""The one retrieval setting of a process, resolved the same way by every door.

:func:`resolve_embedder` is the rule the library (``memstack.open(url, embedder=...)``), the CLI
(root ``--embedder``), ``memstack serve`` and ``memstack serve --stdio`` (``--embedder``) all apply:

1. the explicit argument (an :class:`Embedder`, or a setting text below), else
2. ``$MEMSTACK_EMBEDDER``, else
3. the local model when its package is installed (the ``embeddings`` extra), else
4. BM25 alone.

| setting | embedder | search mode |
|---|---|---|
| ``local`` | the default local model (:data:`~memstack.search.embedders.DEFAULT_EMBEDDER`) | hybrid |
| ``minilm``, ``e5-small`` | that row of :data:`~memstack.search.embedders.EMBEDDERS` | hybrid |
| ``openai:BASE_URL[#MODEL]`` | :class:`OpenAIEmbedder` on that endpoint (key from the environment) | hybrid |
| ``none`` | none | bm25 |
| unset (``auto``) | ``local`` when its package is installed, else ``none`` | either |

The key of an ``openai:`` endpoint comes from ``MEMSTACK_EMBEDDER_API_KEY``, else
``OPENAI_API_KEY``; it never appears in a setting (settings are printed). The setting is read once,
when a memory, a server or a command starts; a bad one stops the start (fail closed). Resolving is
cheap: the local model is loaded on its first embedding, not here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Final

from memstack.foundation.errors import InvalidConfiguration
from memstack.foundation.limits import short_repr
from memstack.search.embedders.base import Embedder
from memstack.search.embedders.openai import OpenAIEmbedder
from memstack.search.embedders.registry import DEFAULT_EMBEDDER, EMBEDDERS, available_embedder, make_embedder

__all__ = [
    "DEFAULT_OPENAI_MODEL",
    "ENV",
    "describe_embedder",
    "embedder_from_setting",
    "resolve_embedder",
    "resolve_setting",
]

ENV: Final = "MEMSTACK_EMBEDDER"
DEFAULT_OPENAI_MODEL: Final = "text-embedding-3-small"
_FORMS: Final = "local, minilm, e5-small, openai:BASE_URL[#MODEL], none or auto"


def resolve_setting(setting: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The setting in force: ``setting`` if given, else ``$MEMSTACK_EMBEDDER``, else ``auto``
    (stripped, lower-cased except an ``openai:`` URL)."""
    env = os.environ if environ is None else environ
    raw = setting if setting is not None else env.get(ENV, "")
    text = raw.strip()
    if not text:
        return "auto"
    return text if text.lower().startswith("openai:") else text.lower()


def embedder_from_setting(
    setting: str | None = None, environ: Mapping[str, str] | None = None
) -> Embedder | None:
    """The embedder a setting names (None: BM25 only). See the module table.

    Raises:
        InvalidConfiguration: an unknown form (the message lists the accepted ones), a local model
            whose package is not installed, or a malformed ``openai:`` URL.
    """
    env = os.environ if environ is None else environ
    text = resolve_setting(setting, env)
    if text == "none":
        return None
    if text == "auto":
        return available_embedder(DEFAULT_EMBEDDER)
    if text == "local":
        return make_embedder(DEFAULT_EMBEDDER)
    if text in EMBEDDERS:
        return make_embedder(text)
    if text.lower().startswith("openai:"):
        base_url, _, model = text[len("openai:") :].partition("#")
        if not base_url.startswith(("http://", "https://")):
            raise InvalidConfiguration(
                f"embedder {short_repr(text)}: openai:BASE_URL needs an http:// or https:// URL"
            )
        key = env.get("MEMSTACK_EMBEDDER_API_KEY") or env.get("OPENAI_API_KEY") or None
        return OpenAIEmbedder(base_url.rstrip("/"), model.strip() or DEFAULT_OPENAI_MODEL, key)
    raise InvalidConfiguration(f"embedder {short_repr(text)}: must be one of {_FORMS}")


def resolve_embedder(
    embedder: Embedder | str | None = None, environ: Mapping[str, str] | None = None
) -> Embedder | None:
    """The embedder in force (None: BM25 alone), by the rule of the module docstring: ``embedder``
    itself when it is an :class:`Embedder`, else the setting it names, else ``$MEMSTACK_EMBEDDER``,
    else the local model when installed.

    Raises:
        InvalidConfiguration: as :func:`embedder_from_setting`; also an ``embedder`` that is
            neither None, a setting text nor an :class:`Embedder`.
    """
    if embedder is None or isinstance(embedder, str):
        return embedder_from_setting(embedder, environ)
    if isinstance(embedder, Embedder):
        return embedder
    raise InvalidConfiguration(
        f"embedder {short_repr(embedder)}: must be an Embedder, a setting ({_FORMS}) or None"
    )


def describe_embedder(embedder: Embedder | None) -> dict[str, Any]:
    """``{"mode", "model", "dims"}`` as ``GET /v1/info`` and ``memstack doctor`` report it.

    Raises:
        EmbeddingError: an endpoint whose vector size is not known yet could not be probed.
    """
    if embedder is None:
        return {"mode": "bm25", "model": None, "dims": None}
    return {"mode": "hybrid", "model": embedder.model_id, "dims": embedder.dim}
