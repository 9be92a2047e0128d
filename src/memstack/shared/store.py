"""``SharedMemory``: a named, reactive key-value memory shared by agents, threads and processes.

Every ``SharedMemory`` opened with the same name on the same engine sees the same data. Writes of
custom keys notify subscribers and wake blocked readers in any process (through the engine's
``publish``/``subscribe``). Reserved keys (``data``, ``results``, ``messages``, ``session_id``,
``cache``) follow :mod:`memstack.shared.reserved` and never notify. Rules for keys, names and
values: :mod:`memstack.shared.serialize`.

Reading a missing key gives None (``m["k"]``, ``m.get("k")``), as in the seed; ``"k" in m``
tells a missing key from a stored None. Each key carries a version: 1 when created, +1 per
write; :meth:`SharedMemory.set_if` writes only when the version is the expected one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from ..engines import Engine, Subscription
from ..errors import Conflict, InvalidInput, InvalidKey
from . import reserved as rs
from .change import MemoryChange
from .proxy import StateProxy
from .serialize import check_key, check_name, check_value
from .storage import Entry, SharedStorage, Write, parse_message
from .subscriptions import Callback, Subscriptions
from .waiters import Waiter, WaiterSet, WaitStep, run_async, run_sync, wait_core

if TYPE_CHECKING:
    from ..search.embedders import Embedder
    from .cache import SemanticCache

__all__ = ["SharedMemory"]

Wait = bool | float | int


def _timeout(wait: Wait) -> float | None:
    if wait is True:
        return None
    if isinstance(wait, bool) or not isinstance(wait, int | float) or wait < 0:
        raise InvalidInput(f"wait {wait!r}: must be False, True or a number of seconds >= 0")
    return float(wait)


class SharedMemory:
    """The shared memory ``name`` on ``engine``.

    Args:
        engine: the storage engine (its clock stamps changes).
        name: 1-128 characters of ``[A-Za-z0-9_.-]``; the same name is the same memory.
        writer: recorded as the writer of this instance's changes (``current_writer``).
        network_name: recorded on changes (set by :class:`~memstack.shared.Network`).
        session_id: when given, written to the ``session_id`` reserved key.
        enable_cache: give ``memory.cache`` a :class:`SemanticCache` (built on first use).
        embedder: the cache's embedder (default: the search package's default embedder).

    Raises:
        InvalidKey: a bad name.
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
        self.current_writer = writer
        self._network_name = network_name
        self._store = SharedStorage(engine, name, network_name)
        self._subs = Subscriptions(name)
        self._waiters = WaiterSet()
        self._lock = threading.Lock()
        self._listening: Subscription | None = None
        self._closed = False
        self._enable_cache = enable_cache
        self._embedder = embedder
        self._cache: SemanticCache | None = None
        if session_id is not None:
            self["session_id"] = session_id

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
        """Reserved keys always; custom keys when stored (even holding None)."""
        if not isinstance(key, str):
            return False
        return key in rs.RESERVED or self._store.read(check_key(key)).exists

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
    def set(self, key: str, value: Any, *, correlation_id: str | None = None) -> Any:
        """Store ``value`` at ``key`` and return it; custom keys notify subscribers and waiters.

        Raises:
            InvalidKey: bad key.
            InvalidValue: ``value`` is not JSON (or does not fit a reserved key).
            InvalidInput: ``key`` is ``cache``.
        """
        key = check_key(key)
        if key in rs.RESERVED:
            stored = rs.normalise(key, value)
            self._store.write(
                [Write(key, lambda _: stored, custom=False, notify=False)], writer=self.current_writer
            )
            return value
        check_value(value)
        self._store.write(
            [Write(key, lambda _: value)], writer=self.current_writer, correlation_id=correlation_id
        )
        return value

    def merge(self, mapping: Mapping[str, Any]) -> SharedMemory:
        """Write every pair of ``mapping`` in ONE atomic batch; custom keys notify, in order.

        Everything is validated first: a bad pair (or ``cache``) means nothing is written.

        Raises:
            InvalidKey, InvalidValue, InvalidInput: as :meth:`set`.
        """
        writes: list[Write] = []
        for key, value in mapping.items():
            key = check_key(key)
            if key in rs.RESERVED:
                stored = rs.normalise(key, value)
                writes.append(Write(key, partial(_const, stored), custom=False, notify=False))
            else:
                writes.append(Write(key, partial(_const, check_value(value))))
        if writes:
            self._store.write(writes, writer=self.current_writer)
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

    def set_if(self, key: str, value: Any, *, version: int | None) -> int:
        """Write ``key`` only if its version is ``version`` (0 or None: only if absent).

        Atomic on every engine; notifies like :meth:`set`. Returns the new version.

        Raises:
            Conflict: the stored version is not ``version`` (names key, expected, actual).
            InvalidKey: bad or reserved key.
            InvalidValue: ``value`` is not JSON.
        """
        key = check_key(key)
        if key in rs.RESERVED:
            raise InvalidKey(f"set_if on reserved key {key!r}: only custom keys are versioned for CAS")
        check_value(value)
        expected = version or 0

        def expect(entries: list[Entry]) -> None:
            if entries[0].version != expected:
                raise Conflict(f"set_if {key!r}: expected version {expected}, found {entries[0].version}")

        [(old, _)] = self._store.write(
            [Write(key, partial(_const, value))], writer=self.current_writer, expect=expect
        )
        return old.version + 1

    # -- reads -------------------------------------------------------------------------------
    def _present(self, keys: Sequence[str]) -> dict[str, Any]:
        custom = [k for k in keys if k not in rs.RESERVED]
        found = dict(zip(custom, self._store.read_many(custom), strict=True))
        out: dict[str, Any] = {}
        for key in keys:
            if key in rs.RESERVED:
                out[key] = self._reserved_value(key)
            elif found[key].exists:
                out[key] = found[key].value
        return out

    def _reserved_value(self, key: str) -> Any:
        if key == "cache":
            return self.cache
        entry = self._store.read(key)
        return entry.value if entry.exists else rs.default_of(key)

    def _plan(self, keys: tuple[str, ...], wait: Wait) -> tuple[list[str], float | None]:
        if not keys:
            raise InvalidInput("get needs at least one key")
        checked = list(dict.fromkeys(check_key(k) for k in keys))
        timeout = None if wait is False else _timeout(wait)
        return checked, timeout

    def _core(self, keys: list[str], timeout: float | None, wait: Wait, waiter: Waiter) -> WaitStep:
        return wait_core(
            keys, waiter=waiter, waiters=self._waiters, present=self._present, timeout=timeout, label=wait
        )

    def get(self, *keys: str, wait: Wait = False) -> Any:
        """The value of one key, or ``{key: value}`` for several.

        Present keys (even holding None) return at once. Missing keys: with ``wait=False`` one key
        gives None and several are left out of the dict; ``wait=True`` blocks until written;
        ``wait=<seconds>`` blocks until one deadline shared by all the keys (real time).

        Raises:
            WaitTimeout: ``"Timeout waiting for 'k' after 0.5 seconds"`` (names the missing keys).
            InvalidKey: a bad key. InvalidInput: a bad ``wait``.
            EngineClosed: the memory was closed while waiting.
        """
        checked, timeout = self._plan(keys, wait)
        if wait is False:
            found = self._present(checked)
        else:
            self._listen()
            found = run_sync(lambda w: self._core(checked, timeout, wait, w), checked)
        return found.get(checked[0]) if len(keys) == 1 else found

    async def aget(self, *keys: str, wait: Wait = False) -> Any:
        """:meth:`get` for asyncio code: waits without blocking the event loop."""
        checked, timeout = self._plan(keys, wait)
        if wait is False:
            found = self._present(checked)
        else:
            self._listen()
            found = await run_async(lambda w: self._core(checked, timeout, wait, w), checked)
        return found.get(checked[0]) if len(keys) == 1 else found

    # -- reserved accessors ------------------------------------------------------------------
    @property
    def data(self) -> StateProxy:
        """The ``data`` reserved key as a live :class:`StateProxy` (writes reach storage)."""
        return StateProxy(partial(self._reserved_value, "data"), self._update_data)

    def _update_data(
        self, fn: Callable[[dict[str, Any]], dict[str, Any]]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        def make(entry: Entry) -> Any:
            current = dict(entry.value) if entry.exists else {}
            return rs.normalise("data", fn(current))

        [(old, new)] = self._store.write(
            [Write("data", make, custom=False, notify=False)], writer=self.current_writer
        )
        return (dict(old.value) if old.exists else {}), new

    @property
    def results(self) -> list[Any]:
        """A copy of the stored results."""
        return list(self._reserved_value("results"))

    @property
    def messages(self) -> list[dict[str, Any]]:
        """A copy of the stored messages."""
        return list(self._reserved_value("messages"))

    @property
    def session_id(self) -> str | None:
        """The ``session_id`` reserved key."""
        value: str | None = self._reserved_value("session_id")
        return value

    @session_id.setter
    def session_id(self, value: str | None) -> None:
        self["session_id"] = value

    def append_result(self, result: Any) -> SharedMemory:
        """Append one result atomically (no notification)."""
        [item] = rs.normalise("results", [result])
        self._append("results", item)
        return self

    def append_message(self, message: Any) -> SharedMemory:
        """Append one message atomically (no notification)."""
        self._append("messages", rs.message(message))
        return self

    def _append(self, key: str, item: Any) -> None:
        def make(entry: Entry) -> Any:
            return [*(entry.value if entry.exists else []), item]

        self._store.write([Write(key, make, custom=False, notify=False)], writer=self.current_writer)

    def set_results(self, results: Sequence[Any]) -> SharedMemory:
        """Replace the results."""
        self["results"] = list(results)
        return self

    def results_from(self, index: int) -> list[Any]:
        """Results from ``index`` on (``[]`` past the end)."""
        return self.results[index:]

    def format_history(self, formatter: Callable[[Any], Sequence[Any]] | None = None) -> list[Any]:
        """Messages followed by every result expanded by ``formatter`` (default: a dict's
        ``output`` list then its ``tool_calls`` list)."""
        expand = formatter or _default_formatter
        return [*self.messages, *(item for r in self.results for item in expand(r))]

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

    # -- subscriptions -----------------------------------------------------------------------
    def subscribe(self, *keys: str | Callback, callback: Callback | None = None) -> str:
        """Call ``callback(change)`` after every write of one of ``keys``; returns the id.

        The callback may also be passed last, positionally. Callbacks run on a background thread
        in write order; their exceptions are logged.

        Raises:
            InvalidInput: no callback (``"Callback required for subscribe"``) or no key.
        """
        names = list(keys)
        if callback is None and names and callable(names[-1]):
            callback = names.pop()  # type: ignore[assignment]  # the trailing positional callable
        if callback is None:
            raise InvalidInput("Callback required for subscribe")
        if not names:
            raise InvalidInput("subscribe needs at least one key")
        checked = [check_key(k) for k in names]
        self._listen()
        return self._subs.add(checked, callback)

    def subscribe_pattern(self, pattern: str, callback: Callback | None = None) -> str:
        """Call ``callback(change)`` for writes of keys matching glob ``pattern``; returns the id.

        Raises:
            InvalidInput: no callback (``"Callback required for subscribe_pattern"``) or a
                pattern that is not a non-empty str.
        """
        if callback is None:
            raise InvalidInput("Callback required for subscribe_pattern")
        if not isinstance(pattern, str) or not pattern:
            raise InvalidInput(f"subscribe_pattern {pattern!r}: the pattern must be a non-empty str")
        self._listen()
        return self._subs.add_pattern(pattern, callback)

    def unsubscribe(self, subscription_id: str) -> bool:
        """Remove a subscription; True if it existed."""
        return self._subs.remove(subscription_id)

    def unsubscribe_keys(self, *keys: str) -> SharedMemory:
        """Remove every exact-key subscription on ``keys`` (pattern subscriptions stay)."""
        self._subs.remove_keys([check_key(k) for k in keys])
        return self

    def subscribed(self, key: str) -> bool:
        """True if a subscription (exact or pattern) covers ``key``."""
        return self._subs.subscribed(check_key(key))

    def _listen(self) -> None:
        with self._lock:
            if self._closed:
                from ..errors import EngineClosed

                raise EngineClosed(f"shared memory {self.name!r} is closed")
            if self._listening is None:
                self._listening = self.engine.subscribe(self._store.channel, self._on_message)

    def _on_message(self, text: str) -> None:
        message = parse_message(text)
        key: str = message["k"]
        self._waiters.notify(key, message["v"])
        callbacks = self._subs.matching(key)
        if callbacks:
            self._subs.dispatch(callbacks, partial(_change, text))

    # -- serialisation -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The snapshot ``{data, results, messages, session_id?, custom}`` (see
        :mod:`memstack.shared.snapshot`); the cache is never included."""
        from .snapshot import to_dict

        return to_dict(self)

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON."""
        from .snapshot import to_json

        return to_json(self)

    @classmethod
    def from_dict(
        cls, engine: Engine, name: str, snapshot: Mapping[str, Any], **options: Any
    ) -> SharedMemory:
        """Open memory ``name`` holding exactly ``snapshot`` (:func:`memstack.shared.snapshot.from_dict`).

        Raises:
            InvalidValue, InvalidKey, InvalidInput: a bad snapshot (nothing is written).
        """
        from .snapshot import from_dict

        return from_dict(engine, name, snapshot, **options)

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

    def __enter__(self) -> SharedMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<SharedMemory {self.name!r} on {self.engine!r}>"


def _const(value: Any, _entry: Entry) -> Any:
    return value


def _default_formatter(result: Any) -> list[Any]:
    if not isinstance(result, Mapping):
        return [result]
    return [*(result.get("output") or []), *(result.get("tool_calls") or [])]


def _change(text: str) -> MemoryChange:
    message = parse_message(text)  # parsed per callback: no two callbacks share a mutable value
    return MemoryChange(
        key=message["k"],
        value=message["v"],
        previous=message["p"],
        writer=message["w"],
        network_name=message["n"],
        timestamp=datetime.fromtimestamp(message["t"] / 1000, UTC),
        correlation_id=message.get("c"),
    )
