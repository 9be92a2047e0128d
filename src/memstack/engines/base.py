"""The storage seam: a narrow, Redis-shaped vocabulary every engine implements.

Tiers talk to storage only through :class:`Engine`. An engine implements one method,
:meth:`Engine.execute`, which applies a list of :data:`Op` atomically; every command method
(``get``, ``hset``, ``zadd``, ...) is written once in :class:`Commands` and shared by engines
(run at once) and batches (queued); :meth:`Engine.execute_many` applies several independent
batches together. Scans, subscriptions and ``close`` are the only other engine methods.

Semantics every engine follows (the conformance suite in ``tests/engines/`` pins them):

* Keys, values, hash fields, set and sorted-set members are ``str``; scores are ``float``.
* A key holds one type (string, hash, set, list, zset). Using a command of another type on it
  raises :class:`WrongType`. A hash, set, list or zset that becomes empty no longer exists.
* Time comes from the engine's clock (milliseconds, ``int(clock.now() * 1000)``). A key with
  expire-at ``E`` is live while ``now < E``; an expired key behaves as absent everywhere and is
  purged lazily (and by a bounded background sweep where the engine has one).
* ``set`` without ``keepttl`` clears the TTL, like Redis; other writes keep it.
* Guards (``require_exists``, ``require_missing``, ``require_equal``) must come before the first
  write of a batch. If any guard fails, nothing of the batch is applied and the result has
  ``applied=False``.
* A batch checks everything it can fail on before its first write (arguments: the rules of
  ``engines._checks``, the same on every engine; key types and stored numbers: each engine), so
  a batch that raises changes nothing.
* ``publish`` inside a batch is delivered only if the batch applied, after it committed.
* In a clustered engine every key of one ``execute`` must hash to one slot (use
  :meth:`Engine.tag`), else :class:`~memstack.foundation.errors.CrossSlot`.
"""

from __future__ import annotations

import abc
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..foundation.clock import Clock, SystemClock
from ..foundation.closing import Closing
from ..foundation.errors import InvalidInput, MemstackError, WrongType
from ..foundation.forks import generation
from ..foundation.redact import redact_url, register_url
from ._calls import Commands, Number
from .commands import GUARDS, OPS, READS, WRITES

__all__ = [
    "GUARDS",
    "OPS",
    "READS",
    "SCAN_PAGE",
    "WRITES",
    "Batch",
    "BatchResult",
    "Commands",
    "Engine",
    "Number",
    "Op",
    "Subscription",
    "WrongType",
]

SCAN_PAGE = 1000
"""Keys per page of :meth:`Engine.scan_pages`: what a streaming scan holds at once."""

Op = tuple[str, tuple[Any, ...]]
"""One command: its name (a key of :data:`OPS`, from the table in ``engines.commands``) and its
positional arguments."""


@dataclass(frozen=True, slots=True)
class BatchResult:
    """What :meth:`Engine.execute` returns.

    ``applied`` is False when a guard failed; then nothing was written and ``results`` holds the
    results up to and including the failed guard.
    """

    applied: bool
    results: list[Any] = field(default_factory=list)

    def __getitem__(self, index: int) -> Any:
        return self.results[index]


class Subscription(Closing):
    """A live subscription to one channel; ``close()`` stops delivery. Context manager.

    In a child made by ``fork`` a subscription of the parent is closed: nothing is delivered to it
    there, and closing it changes nothing of the child's own subscriptions (see
    :mod:`~memstack.foundation.forks`).
    """

    def __init__(self, on_close: Callable[[], None]) -> None:
        self._on_close: Callable[[], None] | None = on_close
        self._generation = generation()

    def close(self) -> None:
        """Stop delivery; idempotent."""
        on_close, self._on_close = self._on_close, None
        if on_close is not None and self._generation == generation():
            on_close()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran, and in a forked child for a subscription of its parent."""
        return self._on_close is None or self._generation != generation()


class Batch(Commands):
    """Commands queued for one atomic :meth:`Engine.execute`.

    Use as a context manager (executes on a clean exit) or call :meth:`execute`. Command methods
    return placeholders; read the real values from :attr:`result` after execution.
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self.ops: list[Op] = []
        self.result: BatchResult | None = None
        self._wrote = False

    def _op(self, name: str, *args: Any) -> Any:
        if name in GUARDS and self._wrote:
            raise InvalidInput(f"guard {name!r} after a write: guards must come first in a batch")
        if name in WRITES:
            self._wrote = True
        self.ops.append((name, args))
        return None

    def execute(self) -> BatchResult:
        """Apply the queued ops atomically (once)."""
        if self.result is None:
            self.result = self._engine.execute(self.ops)
        return self.result

    def __enter__(self) -> Batch:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.execute()


class Engine(Closing, Commands):
    """A storage engine. Subclasses implement :meth:`execute`, :meth:`scan`,
    :meth:`subscribe`, :meth:`flush`, :meth:`close` and :meth:`raw_items`; an engine that keeps
    records of its own (events, batch replies) also :meth:`internal_items` and
    :meth:`drop_internal`.

    Attributes:
        name: ``memory``, ``sqlite``, ``redis``, ``redis-cluster`` or ``postgres``.
        url: the URL the engine was opened with, its credentials masked
            (:func:`~memstack.foundation.redact.redact_url`:
            ``postgresql://app:***@db/app``): what messages, ``repr`` and diagnoses show. The engine
            connects with the URL it was given; this attribute never holds a password.
        clock: the engine's time source.
        clustered: True when keys of one batch must share a hash slot.
        scan_repeats: True when :meth:`scan_pages` may give a key twice (Redis: its ``SCAN``
            returns a key again when the server resizes its table during the scan).
    """

    name: str = "engine"
    clustered: bool = False
    scan_repeats: bool = False

    def __init__(self, url: str, clock: Clock | None = None) -> None:
        register_url(url)  # its credentials never appear in any message of this process
        self.url = redact_url(url)
        self.clock: Clock = clock if clock is not None else SystemClock()

    @property
    def identity(self) -> str:
        """What in-process caches of tier data key on: two engines with the same identity hold
        the same data (the URL; a prefixed view adds its prefix, so tenants never share a cache)."""
        return self.url

    def now_ms(self) -> int:
        """The engine clock in integer milliseconds."""
        return int(self.clock.now() * 1000)

    def _op(self, name: str, *args: Any) -> Any:
        result = self.execute([(name, args)])
        return result.results[0] if result.results else None

    def batch(self) -> Batch:
        """A new :class:`Batch` bound to this engine."""
        return Batch(self)

    def tag(self, scope: str) -> str:
        """``scope`` as a Redis Cluster hash tag (``{scope}``) on clustered engines, else as is.

        Keys that must share one atomic batch embed the same tag.
        """
        return "{" + scope + "}" if self.clustered else scope

    @abc.abstractmethod
    def execute(self, ops: Sequence[Op]) -> BatchResult:
        """Apply ``ops`` atomically and return their results in order.

        Raises:
            InvalidInput: a malformed op or argument (``engines._checks``; nothing applied).
            InvalidValue: text with a lone surrogate, a TTL out of range, a NaN score...
            WrongType: a command met a key of another type (nothing applied).
            NotANumber: ``incr``/``hincr`` met a non-number (nothing applied).
            CrossSlot: clustered engine, keys of several slots.
            EngineUnavailable: the storage cannot be reached.
        """

    def execute_many(self, batches: Sequence[Sequence[Op]]) -> list[BatchResult]:
        """Apply each of ``batches`` atomically, as :meth:`execute` does, and return their results
        in order. The batches are independent of one another (on a clustered engine each keeps to
        one slot, not necessarily the same), so an engine may send them together: Redis sends one
        pipeline per node, one round trip where :meth:`execute` takes one per batch. Batches of one
        slot apply in the order given; batches of different nodes in any order.

        This default runs them one after the other.

        Raises:
            What :meth:`execute` raises, for the first batch that fails: that batch changed
            nothing, and the others may or may not have been applied (each whole or not at all).
        """
        return [self.execute(ops) for ops in batches]

    @abc.abstractmethod
    def scan(self, prefix: str) -> Iterator[str]:
        """Live keys starting with ``prefix``, in no particular order."""

    def scan_pages(self, prefix: str, page: int = SCAN_PAGE) -> Iterator[list[str]]:
        """Live keys starting with ``prefix``, in pages of about ``page`` keys read as the caller
        iterates, so a scan over millions of keys holds one page at a time. Every key live
        throughout the scan is in some page; a key written or deleted during it may or may not
        be; pages are disjoint unless :attr:`scan_repeats`. The caller may delete the keys of a
        page before it asks for the next.

        This default pages :meth:`scan` (fit for an engine whose keys are in memory anyway).

        Raises:
            InvalidInput: ``page`` is not a positive integer.
            EngineUnavailable: the engine cannot be reached.
        """
        check_page(page)
        keys = list(self.scan(prefix))
        return iter([keys[start : start + page] for start in range(0, len(keys), page)])

    @abc.abstractmethod
    def subscribe(self, channel: str, callback: Callable[[str], None]) -> Subscription:
        """Call ``callback(message)`` for every message published on ``channel``.

        Callbacks run on one background thread per engine, in publication order; an exception
        in a callback is logged and never reaches the publisher.
        """

    @abc.abstractmethod
    def flush(self) -> None:
        """Delete every key (tests, ``memstack reset``)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release connections and background threads; idempotent."""

    @abc.abstractmethod
    def raw_items(self) -> Iterator[tuple[str, str]]:
        """Every record this engine stores, internal ones included, as ``(where, text)`` pairs.

        ``where`` names the record (a key, or ``table:rowid`` for rows that are not keys, e.g.
        SQLite's ``events`` table, Redis batch replies ``ms:batch:...``); ``text`` is its whole content
        as text (the key, its fields, members, scores and values). Unordered; may be slow (forget
        verification and tests only). On a prefixed (tenant) view it yields the inner engine's items
        (verification must look everywhere), expired-but-unpurged records included.

        Raises:
            EngineUnavailable: the engine cannot be reached.
        """

    def internal_items(self) -> Iterator[tuple[str, str]]:
        """The records this engine keeps for itself, as :meth:`raw_items` gives them: the part of
        the raw items no tier wrote (SQLite's change events, Redis' batch replies). None by default:
        an engine that keeps no such record (memory) has nothing to give.

        Raises:
            EngineUnavailable: the engine cannot be reached.
        """
        return iter(())

    def drop_internal(self, wheres: Iterable[str]) -> int:
        """Make the internal records named by ``wheres`` (from :meth:`internal_items`) hold nothing
        any more, so a forget leaves no copy of forgotten data in them; returns how many were
        dropped. A record whose loss would weaken a guarantee keeps a husk (a Redis batch reply stays
        as "applied, reply withdrawn", so a retry of its batch is still refused). Names that are not
        internal records are ignored.

        Raises:
            EngineUnavailable: the engine cannot be reached.
        """
        return 0

    def compact(self, *, vacuum: bool = False) -> None:
        """Make deleted data unrecoverable from the engine's own files where it keeps any (SQLite:
        checkpoint and truncate the WAL, whose frames may still hold deleted pages; with
        ``vacuum``, also rebuild the file, the only way to drop stale cell copies that earlier
        page splits left in unused page space); a no-op for engines that keep no such copies
        (memory) or cannot be told to (Redis: its AOF/RDB rewrite is the server operator's).

        Raises:
            EngineUnavailable: the engine cannot be reached.
        """

    def ping(self) -> bool:
        """True when the engine answers (raises EngineUnavailable otherwise)."""
        self.exists("__memstack_ping__")
        return True

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {redact_url(self.url)!r}>"


def ensure_memstack_error(exc: BaseException) -> bool:
    """True if ``exc`` is one of ours (helps engines decide what to wrap)."""
    return isinstance(exc, MemstackError)


def started(pages: Iterator[list[str]]) -> Iterator[list[str]]:
    """``pages`` with its first page read now: a scan that cannot start raises at the call, as
    an eager scan would, and the rest is read as the caller iterates."""
    first = next(pages, None)
    return iter(()) if first is None else itertools.chain((first,), pages)


def check_page(page: object) -> int:
    """``page`` if it is a valid scan page size.

    Raises:
        InvalidInput: ``page`` is not an integer of at least 1.
    """
    if not isinstance(page, int) or isinstance(page, bool) or page < 1:
        raise InvalidInput(f"scan page {page!r}: must be an integer of at least 1")
    return page
