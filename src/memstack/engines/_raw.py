"""The text of one raw record (:meth:`memstack.engines.base.Engine.raw_items`): its name, then its
content, one line per field, member, element or score, in a stable order."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["raw_text"]


def raw_text(where: str, kind: str, value: Any) -> str:
    """``where`` and ``value`` as text: a string as it is, a hash as ``field\\tvalue`` lines, a set
    sorted, a list in order, a sorted set as ``member\\tscore`` lines (``kind`` names the type)."""
    lines: Iterable[str]
    if kind == "string":
        lines = (str(value),)
    elif kind == "hash":
        assert isinstance(value, Mapping)
        lines = (f"{f}\t{v}" for f, v in sorted(value.items()))
    elif kind == "set":
        lines = sorted(value)
    elif kind == "zset":
        lines = (f"{m}\t{s!r}" for m, s in value)
    else:
        lines = (str(v) for v in value)
    return "\n".join((where, *lines))
