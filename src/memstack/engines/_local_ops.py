"""What the in-process engines (memory, SQLite) share: the loop that applies a batch's handlers,
and the handlers written once over the key view both transactions offer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from .commands import GUARDS

__all__ = ["KeyView", "apply", "op_exists", "op_require_equal", "op_require_exists", "op_require_missing"]


class KeyView(Protocol):
    """What a transaction says about one key, on the engine's clock."""

    def exists(self, key: str) -> bool:
        """True if ``key`` is live."""
        ...

    def string_at(self, key: str) -> object:
        """The string at ``key``, None when absent, a marker equal to nothing for another type."""
        ...


def apply(handlers: Mapping[str, Callable[..., Any]], tx: Any, ops: Sequence[Any]) -> tuple[bool, list[Any]]:
    """Run each op's handler on ``tx`` in order; ``(False, results so far)`` at a failing guard.

    Raises:
        MemstackError: what a handler raises (the caller undoes the batch).
    """
    results: list[Any] = []
    for name, args in ops:
        result = handlers[name](tx, *args)
        results.append(result)
        if not result and name in GUARDS:
            return False, results
    return True, results


def op_exists(tx: KeyView, key: str) -> bool:
    return tx.exists(key)


def op_require_exists(tx: KeyView, key: str) -> bool:
    return tx.exists(key)


def op_require_missing(tx: KeyView, key: str) -> bool:
    return not tx.exists(key)


def op_require_equal(tx: KeyView, key: str, value: str | None) -> bool:
    return tx.string_at(key) == value
