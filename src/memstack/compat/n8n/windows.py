"""``SlidingWindows``: per-workflow-session message windows with idle expiry (hetumind's SimpleMemory node).

One buffer per workflow session (or per node of it); the keys: :mod:`.window_keys`.
A node whose config says ``shared_across_nodes=True`` uses the workflow's shared buffer, as in hetumind.

The window is the last ``context_window_length`` MESSAGES (hetumind's unit). A window idle for
more than ``buffer_expiry_minutes`` is gone: checked lazily on every access (reads and writes
refresh the access time) and by :meth:`SlidingWindows.sweep`, which a background thread runs
every ``cleanup_interval`` seconds once the first window is touched; ``close()`` stops it. The
keys also carry an engine TTL of twice the expiry, so storage is reclaimed even when no process
sweeps. Each buffer keeps at most ``max_messages`` messages (oldest evicted). A child made by
``fork`` starts its own thread on its first touch (:mod:`~memstack.foundation.forks`).
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ...engines.base import Engine
from ...foundation.errors import Conflict, InvalidConfiguration, InvalidValue
from ...foundation.forks import renew_in_children
from ...foundation.keyspace import check_subject, family_of, register
from ...foundation.limits import MAX_COUNT, short_repr
from ...tiers.conversation.inputs import check_window_messages, id_text
from ...tiers.conversation.twins import Face, Twin
from ...tiers.conversation.window_keys import BUFFER, META, PREFIX, SEEN, window_base
from .config import SimpleMemoryConfig
from .inputs import is_idle, iso, parse_input_messages

__all__ = ["AsyncSlidingWindows", "SimpleMemoryConfig", "SlidingWindows", "is_idle", "parse_input_messages"]

_RETRIES: Final = 20
_SEEN_FAMILIES: Final = ("window.seen", "window.node_seen")
_log = logging.getLogger(__name__)

Config = SimpleMemoryConfig | Mapping[str, Any] | None


@dataclass(frozen=True, slots=True)
class _Window:
    """One call's window: its config, workflow, session, the node whose buffer it is (None: the
    workflow's shared one) and the buffer's base key."""

    cfg: SimpleMemoryConfig
    workflow_id: str
    session_id: str
    node_id: str | None
    base: str


class SlidingWindows:
    """Sliding-window buffers on one engine (see the module docstring).

    Args:
        engine: the storage engine (its clock decides idleness).
        cleanup_interval: seconds between background sweeps (None: no background thread).
        max_messages: most messages one buffer keeps.
    """

    def __init__(
        self, engine: Engine, *, cleanup_interval: float | None = 300.0, max_messages: int = 100
    ) -> None:
        if cleanup_interval is not None and cleanup_interval <= 0:
            raise InvalidConfiguration(f"cleanup_interval {cleanup_interval!r}: must be > 0 or None")
        if not 1 <= max_messages <= MAX_COUNT:
            raise InvalidConfiguration(
                f"max_messages {short_repr(max_messages)}: must be >= 1 (at most 2**53)"
            )
        self.engine = engine
        self.cleanup_interval = cleanup_interval
        self.max_messages = max_messages
        self._stop = threading.Event()
        self._renew_in_child()
        renew_in_children(self)

    def _renew_in_child(self) -> None:
        """No thread (in a forked child the parent's is not this process's: the next call starts
        one), a new lock and a new stop flag, set if this was closed."""
        stopped, self._stop = self._stop.is_set(), threading.Event()
        if stopped:
            self._stop.set()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def aio(self) -> AsyncSlidingWindows:
        """The async face: the same methods as coroutines (:mod:`memstack.tiers.conversation.aio`)."""
        return AsyncSlidingWindows(self)

    # -- scope -------------------------------------------------------------------------------
    def session_id(self, input: Mapping[str, Any], config: Config = None) -> str:  # noqa: A002 - hetumind's name
        """The session id: the input's ``session_id`` field, or the configured custom key.

        Raises:
            InvalidConfiguration: ``from_input`` and the input has no non-empty ``session_id``.
        """
        cfg = SimpleMemoryConfig.coerce(config)
        if cfg.session_id_type == "custom_key":
            return id_text(cfg.custom_session_key, "custom_session_key")
        value = input.get("session_id") if isinstance(input, Mapping) else None
        if value is None or value == "":
            raise InvalidConfiguration(
                "session_id: the input has no 'session_id' field (session_id_type is from_input); "
                "send one or use session_id_type='custom_key'"
            )
        return id_text(value, "session_id")

    def _base(self, workflow_id: str, session_id: str, node_id: str | None = None) -> str:
        return window_base(self.engine, workflow_id, session_id, node_id)

    def _window(
        self, workflow_id: str, data: Mapping[str, Any], config: Config, node_id: str | None
    ) -> _Window:
        """The window a call of the agent-loop or node API works on: its config, its session (from
        the input ``data``), its buffer's node and base key.

        Raises:
            InvalidConfiguration: invalid config or no session id.
            InvalidKey: a malformed workflow, node or session id.
        """
        cfg = SimpleMemoryConfig.coerce(config)
        session = self.session_id(data, cfg)
        node = None if cfg.shared_across_nodes else node_id
        return _Window(cfg, workflow_id, session, node, self._base(workflow_id, session, node))

    # -- core --------------------------------------------------------------------------------
    def _touch(
        self, window: _Window, new: list[dict[str, Any]], subject: str | None = None
    ) -> tuple[list[dict[str, Any]], int]:
        """Lazily expire, append ``new`` (one batch), refresh the access time; return the window and
        the number of stored messages. ``subject`` registers the session as theirs."""
        cfg, base = window.cfg, window.base
        check_window_messages(new)
        if subject is not None:
            check_subject(subject)
        self._ensure_sweeper()
        now = self.engine.now_ms()
        expiry_ms = None if cfg.buffer_expiry_minutes is None else int(cfg.buffer_expiry_minutes * 60_000)
        records = [
            json.dumps(
                {
                    "role": m["role"],
                    "content": m["content"],
                    "timestamp": iso(now),
                    "message_id": m.get("message_id") or str(uuid.uuid4()),
                    "metadata": m.get("metadata") or {},
                },
                ensure_ascii=False,
            )
            for m in new
        ]
        for _ in range(_RETRIES):
            seen = self._live_seen(base, now)
            batch = self.engine.batch()
            batch.require_equal(base + SEEN, seen)  # a sweep or another writer may act in between
            register(self.engine, batch, subject, "session", window.session_id)
            batch.set(base + SEEN, str(now), px=2 * expiry_ms if expiry_ms else None)
            if seen is None:
                meta = {
                    "workflow_id": window.workflow_id,
                    "session_id": window.session_id,
                    "created": str(now),
                }
                if window.node_id is not None:
                    meta["node_id"] = window.node_id
                batch.hset(base + META, meta)
            batch.hset(base + META, {"expiry_ms": str(expiry_ms or 0)})
            if records:
                batch.rpush(base + BUFFER, *records)
                batch.ltrim(base + BUFFER, -self.max_messages, -1)
            for key in (BUFFER, META):
                if expiry_ms:
                    batch.pexpire(base + key, 2 * expiry_ms)
                else:
                    batch.persist(base + key)
            batch.lrange(base + BUFFER, -cfg.context_window_length, -1)
            batch.llen(base + BUFFER)
            result = batch.execute()
            if result.applied:
                return [json.loads(r) for r in result.results[-2]], int(result.results[-1])
        raise Conflict(f"window {base!r}: gave up after {_RETRIES} concurrent changes")

    def _live_seen(self, base: str, now: int) -> str | None:
        """The window's last-access stamp, or None when absent or idle too long (then dropped)."""
        with self.engine.batch() as read:
            read.get(base + SEEN)
            read.hget(base + META, "expiry_ms")
        assert read.result is not None
        seen, expiry = read.result.results
        if seen is not None and is_idle(int(seen), int(expiry or 0), now):
            self._expire(base, seen)
            return None
        return str(seen) if seen is not None else None

    def _expire(self, base: str, seen: str) -> bool:
        with self.engine.batch() as batch:
            batch.require_equal(base + SEEN, seen)
            batch.delete(base + BUFFER, base + META, base + SEEN)
        assert batch.result is not None
        return batch.result.applied

    # -- agent-loop API ----------------------------------------------------------------------
    def load(
        self,
        workflow_id: str,
        input: Mapping[str, Any],  # noqa: A002 - hetumind's name
        config: Config = None,
        *,
        node_id: str | None = None,
    ) -> dict[str, Any]:
        """``{memory_key: window}``: message dicts, or one ``Human:/AI:`` string when
        ``return_messages`` is False. ``node_id``: the node's own buffer (see the module docstring).

        Raises:
            InvalidConfiguration: invalid config or no session id.
            InvalidKey: a malformed workflow, node or session id.
            Conflict: other writers kept changing the window (after retries).
        """
        window = self._window(workflow_id, input, config, node_id)
        stored, _ = self._touch(window, [])
        messages = [{"role": m["role"], "content": m["content"]} for m in stored]
        cfg = window.cfg
        if cfg.return_messages:
            return {cfg.memory_key: messages}
        prefixes = {"user": "Human", "assistant": "AI", "system": "System", "tool": "Tool"}
        return {cfg.memory_key: "\n".join(f"{prefixes[m['role']]}: {m['content']}" for m in messages)}

    def save(
        self,
        workflow_id: str,
        input: Mapping[str, Any],  # noqa: A002 - hetumind's name
        output: Mapping[str, Any],
        config: Config = None,
        *,
        node_id: str | None = None,
        subject: str | None = None,
    ) -> None:
        """Store ``input[input_key]`` as the user message and ``output[output_key]`` as the answer,
        together in one batch. ``node_id``: the node's own buffer (see the module docstring);
        ``subject``: the end user the session is about (a ``forget(subject=…)`` then forgets it).

        Raises:
            InvalidConfiguration: invalid config or no session id.
            InvalidKey: a malformed workflow, node or session id.
            Conflict: other writers kept changing the window (after retries).
            InvalidValue: the input or output field is missing or not a string, a bad subject.
        """
        window = self._window(workflow_id, input, config, node_id)
        cfg, pair = window.cfg, []
        for role, data, key in (("user", input, cfg.input_key), ("assistant", output, cfg.output_key)):
            text = data.get(key) if isinstance(data, Mapping) else None
            if not isinstance(text, str):
                raise InvalidValue(
                    f"{key!r}: the {role} message must be a string field, got {short_repr(text)}"
                )
            pair.append({"role": role, "content": text})
        self._touch(window, pair, subject)

    # -- node API ---------------------------------------------------------
    def execute(
        self,
        workflow_id: str,
        input: Mapping[str, Any],  # noqa: A002 - hetumind's name
        config: Config = None,
        *,
        node_id: str | None = None,
        subject: str | None = None,
    ) -> dict[str, Any]:
        """Run the SimpleMemory node: store the input's messages, then return the window with them.
        ``node_id``: the node's own buffer (see the module docstring); ``subject``: as :meth:`save`.

        Raises:
            InvalidConfiguration: invalid config or no session id.
            InvalidKey: a malformed workflow, node or session id.
            Conflict: other writers kept changing the window (after retries).
            InvalidValue: a malformed input message, a bad subject.
        """
        window = self._window(workflow_id, input, config, node_id)
        stored, total = self._touch(window, parse_input_messages(input), subject)
        return {
            "session_id": window.session_id,
            "workflow_id": workflow_id,
            "config": window.cfg.to_dict(),
            "chat_history": stored,
            "stats": {
                "total_messages": total,
                "session_id": window.session_id,
                "context_window_length": window.cfg.context_window_length,
                "timestamp": iso(self.engine.now_ms()),
            },
        }

    # -- inspection and lifecycle ------------------------------------------------------------
    def messages(
        self, workflow_id: str, session_id: str, *, node_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Every stored message of a live window (no refresh of its access time); ``node_id``
        names a node's own buffer, None the workflow's shared one.

        Raises:
            InvalidKey: a malformed workflow, node or session id.
        """
        base = self._base(workflow_id, session_id, node_id)
        with self.engine.batch() as read:
            read.get(base + SEEN)
            read.hget(base + META, "expiry_ms")
            read.lrange(base + BUFFER, 0, -1)
        assert read.result is not None
        seen, expiry, records = read.result.results
        if seen is None or is_idle(int(seen), int(expiry or 0), self.engine.now_ms()):
            return []
        return [json.loads(r) for r in records]

    def clear(self, workflow_id: str, session_id: str, *, node_id: str | None = None) -> bool:
        """Drop one window (a node's own with ``node_id``); True if it existed.

        Raises:
            InvalidKey: a malformed workflow, node or session id.
        """
        base = self._base(workflow_id, session_id, node_id)
        return self.engine.delete(base + BUFFER, base + META, base + SEEN) > 0

    def sweep(self) -> dict[str, int]:
        """Drop every window idle for longer than its expiry; hetumind's cleanup statistics.

        Returns:
            ``{"total_entries", "expired_entries", "active_entries"}``.
        """
        now = self.engine.now_ms()
        total = expired = 0
        for key in list(self.engine.scan(PREFIX)):
            _, found = family_of(key)
            if found is None or found[0].name not in _SEEN_FAMILIES:
                continue
            base = key[: -len(SEEN)]
            with self.engine.batch() as read:
                read.get(key)
                read.hget(base + META, "expiry_ms")
            assert read.result is not None
            seen, expiry = read.result.results
            if seen is None:
                continue
            total += 1
            if is_idle(int(seen), int(expiry or 0), now) and self._expire(base, seen):
                expired += 1
        if expired:
            _log.info("sliding windows: %d of %d idle windows removed", expired, total)
        return {"total_entries": total, "expired_entries": expired, "active_entries": total - expired}

    def _ensure_sweeper(self) -> None:
        if self.cleanup_interval is None or self._thread is not None or self._stop.is_set():
            return
        with self._lock:
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(target=self._run, name="memstack-windows-sweep", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        assert self.cleanup_interval is not None
        while not self._stop.wait(self.cleanup_interval):
            try:
                self.sweep()
            except Exception:
                _log.exception("sliding-window sweep failed")

    @property
    def sweeping(self) -> bool:
        """True while the background sweep thread runs."""
        return self._thread is not None and self._thread.is_alive()

    def close(self) -> None:
        """Stop the background sweep (idempotent); the engine stays open."""
        self._stop.set()
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=10)


class AsyncSlidingWindows(Face[SlidingWindows]):
    """:class:`SlidingWindows` for asyncio code (:mod:`memstack.tiers.conversation.aio`)."""

    load = Twin(SlidingWindows.load)
    save = Twin(SlidingWindows.save)
    execute = Twin(SlidingWindows.execute)
    messages = Twin(SlidingWindows.messages)
    clear = Twin(SlidingWindows.clear)
    sweep = Twin(SlidingWindows.sweep)
    close = Twin(SlidingWindows.close)
