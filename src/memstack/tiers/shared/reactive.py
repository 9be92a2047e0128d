"""Blocking reads and subscriptions of a shared memory: the reactive half of its API.

Both ride on ONE engine subscription per memory instance, opened on first use: a message on the
memory's channel wakes the waiters of its key (on the engine's delivery thread) and queues the
change for the matching callbacks (run by the memory's own drainer thread).

A mixin of :class:`~memstack.tiers.shared.store.SharedMemory`, kept apart so that each file holds one
concept; it relies on the memory's state declared below.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import partial
from typing import Any, Self

from ...engines import Engine, Subscription
from ...foundation.errors import EngineClosed, InvalidInput
from ...foundation.limits import short_repr
from . import reserved as rs
from .change import MemoryChange
from .requests import ReadKeys, Wait
from .serialize import check_key
from .storage import SharedStorage, parse_message
from .subscriptions import Callback, Subscriptions
from .waiters import Waiter, WaiterSet, WaitStep, run_async, run_sync, wait_core

__all__ = ["Reactive", "Wait"]


class Reactive:
    """``get``/``aget`` with waiting, and key/pattern subscriptions."""

    engine: Engine
    name: str
    _store: SharedStorage
    _subs: Subscriptions
    _waiters: WaiterSet
    _lock: threading.Lock
    _listening: Subscription | None
    _closed: bool

    def _reserved_value(self, key: str) -> Any:
        raise NotImplementedError  # provided by SharedMemory

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

    def _core(self, request: ReadKeys, waiter: Waiter) -> WaitStep:
        return wait_core(
            request.keys,
            waiter=waiter,
            waiters=self._waiters,
            present=self._present,
            timeout=request.timeout,
            label=request.wait,
        )

    def get(self, *keys: str, wait: Wait = False) -> Any:
        """The value of one key, or ``{key: value}`` for several.

        Present keys (even holding None) return at once. Missing keys: with ``wait=False`` one key
        gives None and several are left out of the dict; ``wait=True`` blocks until written;
        ``wait=<seconds>`` blocks until one deadline shared by all the keys (real time).

        Raises:
            WaitTimeout: ``"Timeout waiting for 'k' after 0.5 seconds"`` (names the missing keys).
            InvalidKey: a bad key. InvalidValue: a key with a lone surrogate.
            InvalidInput: a bad ``wait`` (not False, True or 0 to ten years of seconds).
            EngineClosed: the memory was closed while waiting.
        """
        return self.read(ReadKeys.of(*keys, wait=wait))

    def read(self, request: ReadKeys) -> Any:
        """:meth:`get` with a request already checked (:meth:`ReadKeys.of`).

        Raises:
            WaitTimeout, EngineClosed: as :meth:`get` says.
        """
        if request.wait is False:
            found = self._present(request.keys)
        else:
            self._listen()
            found = run_sync(partial(self._core, request), request.keys)
        return found.get(request.keys[0]) if request.single else found

    async def aget(self, *keys: str, wait: Wait = False) -> Any:
        """:meth:`get` for asyncio code: waits without blocking the event loop."""
        return await self.aread(ReadKeys.of(*keys, wait=wait))

    async def aread(self, request: ReadKeys) -> Any:
        """:meth:`read` for asyncio code: waits without blocking the event loop."""
        if request.wait is False:
            found = self._present(request.keys)
        else:
            self._listen()
            found = await run_async(partial(self._core, request), request.keys)
        return found.get(request.keys[0]) if request.single else found

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
            raise InvalidInput(
                f"subscribe_pattern {short_repr(pattern)}: the pattern must be a non-empty str"
            )
        self._listen()
        return self._subs.add_pattern(pattern, callback)

    def unsubscribe(self, subscription_id: str) -> bool:
        """Remove a subscription; True if it existed."""
        return self._subs.remove(subscription_id)

    def unsubscribe_keys(self, *keys: str) -> Self:
        """Remove every exact-key subscription on ``keys`` (pattern subscriptions stay)."""
        self._subs.remove_keys([check_key(k) for k in keys])
        return self

    def subscribed(self, key: str) -> bool:
        """True if a subscription (exact or pattern) covers ``key``."""
        return self._subs.subscribed(check_key(key))

    def _listen(self) -> None:
        with self._lock:
            if self._closed:
                raise EngineClosed(f"shared memory {short_repr(self.name)} is closed")
            # Closed too in a child made by fork when it is the parent's: the child listens anew.
            if self._listening is None or self._listening.closed:
                self._listening = self.engine.subscribe(self._store.channel, self._on_message)

    def _on_message(self, text: str) -> None:
        message = parse_message(text)
        key: str = message["k"]
        self._waiters.notify(key, message["v"])
        callbacks = self._subs.matching(key)
        if callbacks:
            self._subs.dispatch(callbacks, partial(_change, text))


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
