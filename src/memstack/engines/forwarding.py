"""A view of another engine that passes every call of the seam through: the base of wrappers that
change one or two calls (a timer, a tenant prefix, a counter in a test) and leave the rest as is.

Every method of :class:`~memstack.engines.base.Engine` a caller can reach is forwarded here by name
and typed, so a subclass overrides only what it changes and a method added to the seam fails the
test that compares the two lists until it is forwarded too. Command methods (``get``, ``hset``...)
and :meth:`Engine.batch` reach the inner engine through :meth:`execute`, so an override of it sees
them all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from .base import SCAN_PAGE, BatchResult, Engine, Op, Subscription

__all__ = ["ForwardingEngine"]


class ForwardingEngine(Engine):
    """``inner`` seen through a view: same name, clock, clustering and scan behaviour, every call
    passed on. Closing the view leaves ``inner`` open: it belongs to whoever opened it."""

    def __init__(self, inner: Engine) -> None:
        super().__init__(inner.url, inner.clock)
        self.inner = inner
        self.name = inner.name
        self.clustered = inner.clustered
        self.scan_repeats = inner.scan_repeats

    @property
    def identity(self) -> str:
        return self.inner.identity

    def execute(self, ops: Sequence[Op]) -> BatchResult:
        return self.inner.execute(ops)

    def execute_many(self, batches: Sequence[Sequence[Op]]) -> list[BatchResult]:
        return self.inner.execute_many(batches)

    def scan(self, prefix: str) -> Iterator[str]:
        return self.inner.scan(prefix)

    def scan_pages(self, prefix: str, page: int = SCAN_PAGE) -> Iterator[list[str]]:
        return self.inner.scan_pages(prefix, page)

    def subscribe(self, channel: str, callback: Callable[[str], None]) -> Subscription:
        return self.inner.subscribe(channel, callback)

    def flush(self) -> None:
        self.inner.flush()

    def raw_items(self) -> Iterator[tuple[str, str]]:
        return self.inner.raw_items()

    def internal_items(self) -> Iterator[tuple[str, str]]:
        return self.inner.internal_items()

    def drop_internal(self, wheres: Iterable[str]) -> int:
        return self.inner.drop_internal(wheres)

    def compact(self, *, vacuum: bool = False) -> None:
        self.inner.compact(vacuum=vacuum)

    def ping(self) -> bool:
        return self.inner.ping()

    def close(self) -> None:
        """A no-op: the inner engine belongs to whoever opened it."""
