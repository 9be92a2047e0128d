"""``Closing``: the context-manager face of every object memstack hands out with a ``close()``.

Engines, subscriptions, shared memories, networks and memories all close the same way on leaving a
``with`` block; the two methods live here once.
"""

from __future__ import annotations

from typing import Self

__all__ = ["Closing"]


class Closing:
    """A context manager: ``with`` returns the object and calls :meth:`close` on the way out."""

    __slots__ = ()

    def close(self) -> None:
        """Release what the object holds; idempotent (each subclass says what it releases)."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
