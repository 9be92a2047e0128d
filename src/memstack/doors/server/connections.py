"""What a connection may hold before it is a request: time limits and a cap on connections.

uvicorn waits for a request head as long as the client likes: a half-sent header line held a
connection open for minutes, and a thousand of them left no descriptor for ``/healthz``. The
protocol of :func:`guarded_protocol` (uvicorn's own HTTP/1.1 protocol, h11, with three rules
added) bounds what an anonymous client can hold:

* **head deadline**: the request line and headers must be complete within ``head_timeout``
  seconds of the connection (or of the first byte of the next request on a kept-alive one), else
  the connection is closed;
* **body deadline**: a request body must be complete within ``body_timeout`` seconds of its head
  (a body trickled a byte at a time is cut whole, not per read);
* **connection cap**: at most ``max_connections`` open at once. A connection past the cap makes
  room by closing the one that has waited longest for its head (slow or half-open clients go
  first; a request being answered is never cut); when every open connection is busy with a
  request, the new one is closed at once.

Reading stops at the end of a head until the app asks for the body, which it does only after
the key is checked: a request without a key is answered 401 with its body unread. The rest of
a small body is then read and dropped (never kept) for at most 2 seconds, so that an honest client
reads its answer, then the connection is closed; a body declared larger than 64 KiB is not
read at all (its connection is closed at once).
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import sys
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from ...foundation.errors import InvalidConfiguration
from .defaults import BODY_TIMEOUT, HEAD_TIMEOUT, MAX_CONNECTIONS

__all__ = ["DEFAULT_LIMITS", "ConnectionLimits", "guarded_protocol", "uvicorn_options"]


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """The limits of :mod:`memstack.doors.server.connections` (``memstack serve`` options of the same
    names): seconds for a head, seconds for a body, connections open at once."""

    head_timeout: float = HEAD_TIMEOUT.default
    body_timeout: float = BODY_TIMEOUT.default
    max_connections: int = MAX_CONNECTIONS.default

    def __post_init__(self) -> None:
        for name in ("head_timeout", "body_timeout"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 3600:
                raise InvalidConfiguration(f"{name}={value!r}: must be seconds in (0, 3600]")
        cap = self.max_connections
        if isinstance(cap, bool) or not isinstance(cap, int) or not 1 <= cap <= 1_000_000:
            raise InvalidConfiguration(f"max_connections={cap!r}: must be an int from 1 to 1000000")


DEFAULT_LIMITS: Final = ConnectionLimits()
READ_SIZE: Final = 16 * 1024
DRAIN_BYTES: Final = 64 * 1024
DRAIN_SECONDS: Final = 2.0
"""How long the unread body of an answered request is read and dropped (up to DRAIN_BYTES), or
left unread behind a FIN (a larger one), before the connection is closed."""
FLOOD: Final = 256
"""Connections open at once that count as a flood (see :class:`_Flood`)."""


class _Flood:
    """Gives memory back after a flood of connections: once the open connections fall to a
    quarter of a high mark of at least :data:`FLOOD` (their buffers and objects freed), the
    garbage is collected and the C allocator returns its free pages to the system (glibc's
    ``malloc_trim``; elsewhere only the collection). Without it the process kept the flood's peak."""

    def __init__(self) -> None:
        self.high = 0
        self._trim = _malloc_trim()

    def rise(self, open_now: int) -> None:
        self.high = max(self.high, open_now)

    def ebb(self, open_now: int) -> None:
        if self.high >= FLOOD and open_now <= self.high // 4:
            self.high = open_now
            gc.collect()
            if self._trim is not None:
                self._trim(0)


def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None
    return trim


def _half_close(transport: Any, flow: Any) -> None:
    """No more reading; a FIN after what was written (the answer), the socket kept open."""
    flow.pause_reading()
    if transport.can_write_eof():
        transport.write_eof()


def guarded_protocol(limits: ConnectionLimits = DEFAULT_LIMITS) -> type[H11Protocol]:
    """uvicorn's h11 protocol with ``limits`` (give it as ``uvicorn.Config(http=...)``)."""
    # Connections waiting for a head, oldest first: the ones a new connection past the cap evicts.
    waiting: OrderedDict[int, _Guarded] = OrderedDict()
    flood = _Flood()

    class _Guarded(H11Protocol):
        _phase: str | None = None
        _timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            flood.rise(len(self.connections))
            if isinstance(getattr(transport, "max_size", None), int):
                # asyncio reads 256 KiB at a time: a buffer of that size per connection before the
                # key is checked, whose freed memory the allocator keeps. 16 KiB reads are enough.
                transport.max_size = READ_SIZE  # type: ignore[attr-defined]
            self._arm("head")
            if len(self.connections) > limits.max_connections:
                oldest = next((p for p in waiting.values() if p is not self), None)
                (oldest or self).transport.close()

        def connection_lost(self, exc: Exception | None) -> None:
            self._arm(None)
            super().connection_lost(exc)
            flood.ebb(len(self.connections))

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._follow()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self.conn.their_state is h11.SEND_BODY:
                # Answered before its body came (a request without a key): a small rest is read
                # and dropped for a moment, so that an honest client reads its answer instead of
                # a reset. A large one is never read: the answer is followed by a FIN and the
                # socket lingers a moment before it closes (closing with unread bytes sends a
                # reset, which makes the client's kernel drop the answer it had not read yet).
                if self._declared() <= DRAIN_BYTES:
                    self._arm("drain")
                else:
                    _half_close(self.transport, self.flow)
                    self._arm("linger")
            else:
                self._follow()

        def _declared(self) -> int:
            value = dict(self.headers or ()).get(b"content-length", b"")
            return int(value) if value.isdigit() else DRAIN_BYTES + 1  # chunked: unknown, large

        def _follow(self) -> None:
            state = self.conn.their_state
            if state is h11.SEND_BODY and self._phase in ("drain", "linger"):
                return
            if state is h11.SEND_BODY and self._phase != "body":
                # Nothing more is read until the app asks for the body (after the key check):
                # uvicorn's receive() resumes reading.
                self.flow.pause_reading()
            self._arm("head" if state is h11.IDLE else "body" if state is h11.SEND_BODY else None)

        def _arm(self, phase: str | None) -> None:
            if phase == self._phase:
                return
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._phase = phase
            if phase in ("head", "drain", "linger"):  # the first to go when the cap is reached
                waiting[id(self)] = self
            else:
                waiting.pop(id(self), None)
            if phase is not None:
                seconds = {"head": limits.head_timeout, "body": limits.body_timeout}.get(phase, DRAIN_SECONDS)
                self._timer = self.loop.call_later(seconds, self._expired)

        def _expired(self) -> None:
            self._timer = None
            if not self.transport.is_closing():
                self.transport.close()

    return _Guarded


def uvicorn_options(limits: ConnectionLimits, forwarded_allow_ips: str | None) -> dict[str, Any]:
    """The ``uvicorn.Config`` keywords of these limits and of the trusted proxies: forwarded
    headers are read only from the addresses named (none by default)."""
    return {
        "http": guarded_protocol(limits),
        "proxy_headers": bool(forwarded_allow_ips),
        "forwarded_allow_ips": forwarded_allow_ips or "",
    }
