"""``SharedMemory``: a named, reactive key-value memory shared by agents, threads and processes.

Every ``SharedMemory`` opened with the same name on the same engine sees the same data. Writes of
custom keys notify subscribers and wake blocked readers in any process (through the engine's
``publish``/``subscribe``). Reserved keys (``data``, ``results``, ``messages``, ``session_id``,
``cache``) follow :mod:`memstack.tiers.shared.reserved` and never notify. Rules for keys, names and
values: :mod:`memstack.tiers.shared.serialize`.

Reading a missing key gives None (``m["k"]``, ``m.get("k")``), as in RobotLab; ``"k" in m``
tells a missing key from a stored None. Each key carries a version: 1 when created, +1 per
write; :meth:`SharedMemory.set_if` writes only when the version is the expected one.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from ...engines import Engine, Subscription
from ...foundation.closing import Closing
from ...foundation.errors import Conflict, InvalidInput
from ...foundation.forks import renew_in_children
from ...foundation.keyspace import check_subject
from ...foundation.limits import check_text, short_repr
from . import reserved as rs
from .accessors import ReservedAccessors
from .document_methods import DocumentMethods
from .reactive import Reactive
from .requests import SetIfVersion, SetKey
from .serialize import check_key, check_name, check_value
from .storage import Entry, SharedStorage, Write
from .subscriptions import Subscriptions
from .waiters import WaiterSet

if TYPE_CHECKING:
    from ...search.embedders import Embedder
    from .cache import SemanticCache

__all__ = ["SharedMemory"]


class SharedMemory(Closing, Reactive, ReservedAccessors, DocumentMethods):
    """The shared memory ``name`` on ``engine``.

    Args:
        engine: the storage engine (its clock stamps changes).
        name: 1-128 characters of ``[A-Za-z0-9_.-]``; the same name is the same memory.
        writer: recorded as the writer of this instance's changes (``current_writer``).
        network_name: recorded on changes (set by :class:`~memstack.tiers.shared.Network`).
        session_id: when given, written to the ``session_id`` reserved key.
        enable_cache: give ``memory.cache`` a :class:`SemanticCache` (built on first use).
        embedder: the cache's embedder (default: :func:`~memstack.tiers.shared.cache.default_embedder`)
            and the document store's (default: none, BM25 search); see :meth:`store_document`.

    Raises:
        InvalidKey: a bad name.
        InvalidValue: a ``writer`` with a lone surrogate or over 1024 bytes.
    """

    def __init__(
        self,
        engine: Engine,
        name: str,
        *,
        writer: str | None = None,
        network_name: str | None = None,
        session_id: str | None = None,
        enable_cache: bool = True,
        embedder: Embedder | None = None,
    ) -> None:
        self.engine = engine
        self.name = check_name(name)
        self.current_writer = None if writer is None else check_text(writer, "writer", max_bytes=1024)
        self._network_name = network_name
        self._store = SharedStorage(engine, name, network_name)
        self._subs = Subscriptions(name)
        self._waiters = WaiterSet()
        self._lock = threading.Lock()
        self._listening: Subscription | None = None
        self._closed = False
        renew_in_children(self)
        self._enable_cache = enable_cache
        self._embedder = embedder
        self._cache: SemanticCache | None = None
        if session_id is not None:
            self["session_id"] = session_id

    def _renew_in_child(self) -> None:
        """In a forked child: a new lock (a parent thread held it while subscribing, which waits
        for the server). The engine subscription is the parent's: the first wait or callback of
        the child subscribes again."""
        self._lock = threading.Lock()

    @property
    def network_name(self) -> str | None:
        """The network this memory belongs to (read-only)."""
        return self._network_name

    # -- mapping protocol --------------------------------------------------------------------
    def __getitem__(self, key: str) -> Any:
        """Reserved keys give their accessor (``data`` → :class:`StateProxy`); else :meth:`get`."""
        key = check_key(key)
        if key == "data":
            return self.data
        if key == "cache":
            return self.cache
        return self.get(key)

    def __setitem__(self, key: str, value: Any) -> None:
        """:meth:`set`."""
        self.set(key, value)

    def __delitem__(self, key: str) -> None:
        """:meth:`delete`."""
        self.delete(key)

    def __contains__(self, key: object) -> bool:
        """Reserved keys always; custom keys when stored (even holding None); never raises."""
        if key in rs.RESERVED:
            return True
        try:
            checked = check_key(key)
        except InvalidInput:
            return False  # a key that breaks the rule (or holds a lone surrogate) is never stored
        return self._store.read(checked).exists

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def keys(self) -> list[str]:
        """Custom keys, in creation order."""
        return self._store.custom_keys()

    def all_keys(self) -> list[str]:
        """Reserved keys, then custom keys."""
        return [*rs.RESERVED, *self.keys()]

    # -- writes ------------------------------------------------------------------------------
    def set(
        self, key: str, value: Any, *, correlation_id: str | None = None, subject: str | None = None
    ) -> Any:
        """Store ``value`` at ``key`` and return it; custom keys notify subscribers and waiters.
        ``subject``: the end user this version is about (:mod:`memstack.foundation.keyspace.subjects`).

        Raises:
            InvalidKey: bad key.
            InvalidValue: ``value`` is not JSON within :mod:`memstack.foundation.limits` (or does not fit a
                reserved key), or a lone surrogate in ``key`` or ``correlation_id``.
            InvalidInput: ``key`` is ``cache``.
        """
        return self.put(SetKey.of(key, value, correlation_id=correlation_id, subject=subject))

    def put(self, request: SetKey) -> Any:
        """:meth:`set` with a request already checked (:meth:`SetKey.of`); returns its value."""
        if request.reserved:
            stored = request.stored
            self._store.write(
                [Write(request.key, lambda _: stored, custom=False, notify=False)],
                writer=self.current_writer,
                subject=request.subject,
            )
            return request.value
        value = request.value
        self._store.write(
            [Write(request.key, lambda _: value)],
            writer=self.current_writer,
            correlation_id=request.correlation_id,
            subject=request.subject,
        )
        return value

    def merge(
        self, mapping: Mapping[str, Any], *, notify: bool = True, subject: str | None = None
    ) -> SharedMemory:
        """Write every pair of ``mapping`` in ONE atomic batch; custom keys notify, in order
        (``notify=False``: a quiet write, e.g. restoring a copy); ``subject`` labels every version.

        Everything is validated first: a bad pair (or ``cache``) means nothing is written.

        Raises:
            InvalidKey, InvalidValue, InvalidInput: as :meth:`set`.
        """
        if subject is not None:
            check_subject(subject)
        writes: list[Write] = []
        for key, value in mapping.items():
            key = check_key(key)
            if key in rs.RESERVED:
                stored = rs.normalise(key, value)
                writes.append(Write(key, partial(_const, stored), custom=False, notify=False))
            else:
                writes.append(Write(key, partial(_const, check_value(value)), notify=notify))
        if writes:
            self._store.write(writes, writer=self.current_writer, subject=subject)
        return self

    def delete(self, key: str) -> Any:
        """Remove custom ``key``; returns its value (None if absent). Does not notify.

        Raises:
            InvalidKey: ``key`` is reserved (``"Cannot delete reserved key: {key}"``) or bad.
        """
        key = check_key(key)
        if key in rs.RESERVED:
            rs.reject_reserved_delete(key)
        return self._store.delete(key, custom=True).value

    def clear(self) -> SharedMemory:
        """Delete every custom key (reserved keys untouched). Does not notify."""
        self._store.drop(self.keys())
        return self

    def reset(self) -> SharedMemory:
        """Delete custom keys and put reserved keys back to their initial values (the cache,
        subscriptions and waiters stay). Does not notify."""
        self._store.drop(self.keys(), also=rs.STORED_RESERVED)
        return self

    # -- versions and compare-and-set --------------------------------------------------------
    def version(self, key: str) -> int:
        """The version of ``key``: 0 when absent, 1 once created, +1 per write."""
        return self._store.read(check_key(key)).version

    def get_with_version(self, key: str) -> tuple[Any, int]:
        """``(value, version)`` of ``key``; ``(None, 0)`` when absent."""
        key = check_key(key)
        entry = self._store.read(key)
        if key in rs.STORED_RESERVED and not entry.exists:
            return rs.default_of(key), 0
        return entry.value, entry.version

    def set_if(self, key: str, value: Any, *, version: int | None, subject: str | None = None) -> int:
        """Write ``key`` only if its version is ``version`` (0 or None: only if absent).

        Atomic on every engine; notifies like :meth:`set`. Returns the new version.

        Raises:
            Conflict: the stored version is not ``version`` (names key, expected, actual).
            InvalidKey: bad or reserved key.
            InvalidValue: ``value`` is not JSON, ``version`` is not None nor an int from 0 to 2**53.
        """
        return self.put_if(SetIfVersion.of(key, value, version=version, subject=subject))

    def put_if(self, request: SetIfVersion) -> int:
        """:meth:`set_if` with a request already checked (:meth:`SetIfVersion.of`).

        Raises:
            Conflict: as :meth:`set_if` says.
        """
        key, expected = request.key, request.version

        def expect(entries: list[Entry]) -> None:
            if entries[0].version != expected:
                raise Conflict(
                    f"set_if {short_repr(key)}: expected version {expected}, found {entries[0].version}"
                )

        [(old, _)] = self._store.write(
            [Write(key, partial(_const, request.value))],
            writer=self.current_writer,
            expect=expect,
            subject=request.subject,
        )
        return old.version + 1

    # -- reads -------------------------------------------------------------------------------
    def _reserved_value(self, key: str) -> Any:
        if key == "cache":
            return self.cache
        entry = self._store.read(key)
        return entry.value if entry.exists else rs.default_of(key)

    @property
    def cache(self) -> SemanticCache | None:
        """The semantic cache of this memory (None when ``enable_cache=False``); read-only."""
        if not self._enable_cache:
            return None
        with self._lock:
            if self._cache is None:
                from .cache import SemanticCache, default_embedder

                self._cache = SemanticCache(
                    self.engine, self.name, embedder=self._embedder or default_embedder()
                )
            return self._cache

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "cache":
            rs.reject_cache_write()
        object.__setattr__(self, name, value)

    # -- serialisation -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The snapshot ``{data, results, messages, session_id?, custom}`` (see
        :mod:`memstack.tiers.shared.snapshot`); the cache is never included."""
        from .snapshot import to_dict

        return to_dict(self)

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON."""
        from .snapshot import to_json

        return to_json(self)

    def clone(self, name: str, **options: Any) -> SharedMemory:
        """A copy of this memory under ``name`` (replacing what ``name`` held), written without
        notifications; subscriptions are not copied. ``options`` default to this memory's
        ``network_name``, writer and cache setting.

        Raises:
            InvalidKey: a bad name.
        """
        from .snapshot import pairs_of, to_dict

        defaults = {
            "network_name": self.network_name,
            "writer": self.current_writer,
            "enable_cache": self._enable_cache,
            "embedder": self._embedder,
        }
        return type(self)._restored(
            self.engine, name, pairs_of(to_dict(self)), False, {**defaults, **options}
        )

    @classmethod
    def from_dict(
        cls, engine: Engine, name: str, snapshot: Mapping[str, Any], **options: Any
    ) -> SharedMemory:
        """Open memory ``name`` holding exactly ``snapshot`` (see :mod:`memstack.tiers.shared.snapshot`):
        everything is checked before anything is written, then the content is written in one batch
        after a :meth:`reset` (custom keys notify, as RobotLab's ``[]=`` does).

        Raises:
            InvalidValue, InvalidKey, InvalidInput: a bad snapshot (nothing is written).
        """
        from .snapshot import pairs_of

        return cls._restored(engine, name, pairs_of(snapshot), True, options)

    @classmethod
    def _restored(
        cls, engine: Engine, name: str, pairs: Mapping[str, Any], notify: bool, options: Mapping[str, Any]
    ) -> SharedMemory:
        from .snapshot import write_into

        memory = cls(engine, name, **options)
        try:
            write_into(memory, pairs, notify=notify)
        except BaseException:
            memory.close()
            raise
        return memory

    # -- lifecycle ---------------------------------------------------------------------------
    def close(self) -> None:
        """Stop listening, wake waiters with ``EngineClosed``, drop subscriptions; idempotent."""
        with self._lock:
            self._closed = True
            listening, self._listening = self._listening, None
        if listening is not None:
            listening.close()
        self._waiters.cancel_all()
        self._subs.close()

    def __repr__(self) -> str:
        return f"<SharedMemory {self.name!r} on {self.engine!r}>"


def _const(value: Any, _entry: Entry) -> Any:
    return value
